#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kdebug.sh: build, once, a debug kernel for the test VM from Debian's own
# kernel source, with Debian's config trimmed to the modules the selftests
# load (scripts/kdebug/modules.txt), the build options of
# scripts/kdebug/common.config and one of two sets of checks (KASAN and
# KCSAN do not go together in one kernel):
#   default  KASAN (generic, inline), lockdep, kmemleak, sleep-in-atomic
#            checks, debugobjects and UBSAN bounds checks
#            (scripts/kdebug/debug.config); release <version>-shca-debug
#   --kcsan  KCSAN, the data-race detector, and sleep-in-atomic checks
#            (scripts/kdebug/kcsan.config); release <version>-shca-kcsan
#
# Usage: scripts/kdebug.sh [--kver] [--kcsan] SERIES
#
#   SERIES  6.1 or 6.12: the source is /usr/src/linux-source-SERIES.tar.xz
#           (Debian package linux-source-SERIES), the starting config
#           /boot/config-<newest installed Debian SERIES kernel>
#   --kver  print the kernel release this build has (or will have); build
#           nothing
#
# Results, in build/kdebug/SERIES/ (SERIES-kcsan/ for --kcsan; under
# $SHCA_KDEBUG_DIR instead if set):
#   linux-source-SERIES/  the source tree, built in place; shca's modules
#                         build against it (root/lib/modules/KVER/build)
#   root/boot/            vmlinuz-KVER, config-KVER, System.map-KVER
#                         (scripts/vm.sh boots these)
#   root/lib/modules/KVER the modules, stripped
#   kver                  the kernel release, KVER
#   inputs                hash of everything the build came from: when it
#                         matches, nothing is rebuilt
#   build.log, seconds    the last build's output and how long it took
#
# Prints KVER on stdout.  Exit status 0 when the kernel is there, 1 if the
# build failed (the end of build.log is shown).

set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cfgdir=$top/scripts/kdebug

msg() { echo "kdebug.sh: $*" >&2; }
die() { msg "$*"; exit 1; }

only_kver=
flavour=debug
while [[ ${1:-} == --* ]]; do
	case $1 in
	--kver) only_kver=1 ;;
	--kcsan) flavour=kcsan ;;
	*) break ;;
	esac
	shift
done
[[ $# -eq 1 && $1 =~ ^6\.(1|12)$ ]] ||
	die "usage: kdebug.sh [--kver] [--kcsan] 6.1|6.12"
series=$1
suffix=-shca-$flavour
# the fragments applied after localmodconfig, in order
frags=("$cfgdir/common.config" "$cfgdir/$flavour.config")

tarball=/usr/src/linux-source-$series.tar.xz
[[ -f $tarball ]] || die "no $tarball (apt-get install linux-source-$series)"
base=$(printf '%s\n' /boot/config-"$series".* | grep -v -- "-shca-" |
       sort -V | tail -n 1)
[[ -f $base ]] || die "no Debian $series kernel config in /boot"

dir=${SHCA_KDEBUG_DIR:-$top/build/kdebug}/$series
[[ $flavour == debug ]] || dir+=-$flavour
src=$dir/linux-source-$series
root=$dir/root

# The release: the source's version and our suffix.
tar_version() {
	tar -xJOf "$tarball" "linux-source-$series/Makefile" |
		awk -F' *= *' '$1 == "VERSION" { v = $2 }
			       $1 == "PATCHLEVEL" { p = $2 }
			       $1 == "SUBLEVEL" { s = $2 }
			       END { print v "." p "." s }'
}
kver=$(tar_version)$suffix
if [[ -n $only_kver ]]; then
	echo "$kver"
	exit 0
fi

# Everything the result depends on.  The tarball is named by its package
# version (hashing 140 MB on every run would cost seconds).
inputs=$( {
	dpkg-query -W -f '${Version}\n' "linux-source-$series" 2>/dev/null ||
		stat -c '%s %Y' "$tarball"
	sha256sum "${BASH_SOURCE[0]}" "${frags[@]}" \
		  "$cfgdir/modules.txt" "$base" | cut -d' ' -f1
	gcc --version | head -n 1
} | sha256sum | cut -d' ' -f1)

if [[ -f $dir/inputs && $(< "$dir/inputs") == "$inputs" &&
      -f $root/boot/vmlinuz-$kver && -f $dir/kver ]]; then
	echo "$kver"
	exit 0
fi

mkdir -p "$dir"
rm -f "$dir/inputs"
log=$dir/build.log
: > "$log"
t0=$SECONDS

# A fresh tree when the source changed; otherwise kbuild rebuilds what
# the new config touches.
src_id=$(dpkg-query -W -f '${Version}' "linux-source-$series" 2>/dev/null ||
	 stat -c '%s %Y' "$tarball")
if [[ ! -f $src/.shca-source || $(< "$src/.shca-source") != "$src_id" ]]; then
	msg "extracting $tarball"
	rm -rf "$src"
	tar -xJf "$tarball" -C "$dir"
	echo "$src_id" > "$src/.shca-source"
fi

# Config: Debian's, its modules trimmed to the list (the list in lsmod's
# format, as localmodconfig reads it), then the debug options.
msg "configuring from $base"
cp "$base" "$src/.config"
{
	echo "Module Size Used by"
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$cfgdir/modules.txt" |
		awk '{ print $1 " 0 0" }'
} > "$dir/lsmod.txt"
{ yes '' || :; } | make -C "$src" -s LSMOD="$dir/lsmod.txt" localmodconfig \
	>> "$log" 2>&1 || die "localmodconfig failed (see $log)"
grep -hE '^CONFIG_' "${frags[@]}" | while IFS='=' read -r opt val; do
	case $val in
	n) "$src/scripts/config" --file "$src/.config" --disable "${opt#CONFIG_}" ;;
	y) "$src/scripts/config" --file "$src/.config" --enable "${opt#CONFIG_}" ;;
	m) "$src/scripts/config" --file "$src/.config" --module "${opt#CONFIG_}" ;;
	\"*) "$src/scripts/config" --file "$src/.config" \
		--set-str "${opt#CONFIG_}" "$(eval echo "$val")" ;;
	*) "$src/scripts/config" --file "$src/.config" --set-val "${opt#CONFIG_}" "$val" ;;
	esac
done
make -C "$src" -s olddefconfig >> "$log" 2>&1 || die "olddefconfig failed (see $log)"

# Every option of the fragments must have survived olddefconfig (a missing
# dependency silently drops one), except those this kernel has no longer
# or not yet (the fragments serve both series).
grep -rhoE --include='Kconfig*' '^[[:space:]]*(menu)?config [A-Z0-9_]+' "$src" |
	awk '{ print "CONFIG_" $2 }' | sort -u > "$dir/symbols"
bad=0
while IFS='=' read -r opt val; do
	if ! grep -qxF "$opt" "$dir/symbols"; then
		msg "$opt: not an option of this kernel, skipped"
	elif [[ $val == n ]]; then
		if grep -q "^$opt=" "$src/.config"; then
			msg "$opt is still set"
			bad=1
		fi
	elif ! grep -qxF "$opt=$val" "$src/.config"; then
		msg "$opt=$val did not stick: $(grep "^$opt=" "$src/.config" || echo unset)"
		bad=1
	fi
done < <(grep -hE '^CONFIG_' "${frags[@]}")
((bad == 0)) || die "the debug config is incomplete"

# Every module of the list must be built (a module name that localmodconfig
# could not map to an option is lost without a word).
msg "building $kver with $(nproc) jobs (log: $log)"
if ! nice make -C "$src" -j"$(nproc)" bzImage modules >> "$log" 2>&1; then
	tail -n 40 "$log" >&2
	die "kernel build failed"
fi
rel=$(< "$src/include/config/kernel.release")
[[ $rel == "$kver" ]] || die "the tree built $rel, not $kver"
rm -rf "$root"
mkdir -p "$root/boot"
make -C "$src" -s INSTALL_MOD_PATH="$root" INSTALL_MOD_STRIP=1 \
	modules_install >> "$log" 2>&1 || die "modules_install failed (see $log)"
missing=()
while read -r m only; do
	[[ -n $m ]] || continue
	# "NAME SERIES": a module only that series has
	[[ -z $only || " $only " == *" $series "* ]] || continue
	grep -qE "/${m//_/[_-]}\.ko" "$root/lib/modules/$kver/modules.dep" \
		"$root/lib/modules/$kver/modules.builtin" || missing+=("$m")
done < <(sed -e 's/#.*//' "$cfgdir/modules.txt")
((${#missing[@]} == 0)) || die "modules not built: ${missing[*]}"

cp "$src/arch/x86/boot/bzImage" "$root/boot/vmlinuz-$kver"
cp "$src/.config" "$root/boot/config-$kver"
cp "$src/System.map" "$root/boot/System.map-$kver"
ln -sfn "$src" "$root/lib/modules/$kver/build"
echo "$kver" > "$dir/kver"
echo $((SECONDS - t0)) > "$dir/seconds"
echo "$inputs" > "$dir/inputs"
msg "built $kver in $((SECONDS - t0)) s"
echo "$kver"
