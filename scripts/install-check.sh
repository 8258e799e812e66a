#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-install: shca installed the way a user installs it, and used
# with nothing of the build tree.
#
#   scripts/install-check.sh [--no-build]
#
# 1. The Debian packages (scripts/package.sh: dpkg-buildpackage, lintian
#    with no error or warning left unjustified); --no-build takes those
#    already in build/pkg.
# 2. `make install DESTDIR=...` puts the files where the system looks.
# 3. In a private mount namespace, an overlay of this machine's root with
#    a tmpfs on top (a scratch root nothing outside sees, gone when the
#    script ends): the packages installed with dpkg, so DKMS builds the
#    module for the newest kernel; the other test kernel gets it as its
#    kernel hook would (dkms autoinstall -k); `dkms status` must show it
#    installed for both, and modprobe must resolve rdma-link-shca to it.
# 4. The test VM booted on that root, once per test kernel, runs
#    tests/install/installed.sh: rdma link add with no insmod, plain
#    ibv_devinfo, pingpongs and rping with no RDMAV_DRIVERS, the
#    shca@.service template's commands; the kernel log must stay clean.
# 5. The packages purged: no shca file, DKMS entry or modules.dep line
#    left that was not there before.
#
# Ends with "N passed, N failed"; exits 1 when anything failed.  Needs
# root (mount namespace, overlayfs, chroot).

set -uo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PKG=$TOP/build/pkg
PKGS=(shca-dkms ibverbs-provider-shca libshca-dev)
VERSION=$(cat "$TOP/VERSION")

npass=0
nfail=0
result() {
	if [[ $1 == pass ]]; then
		npass=$((npass + 1))
	else
		nfail=$((nfail + 1))
	fi
	echo "install-check: $1: $2"
}

# check DESCRIPTION CMD...: one result, CMD's output shown when it fails
check() {
	local desc=$1 out

	shift
	if out=$("$@" 2>&1); then
		result pass "$desc"
	else
		result fail "$desc"
		tail -n 30 <<< "$out" | sed 's/^/install-check:   /'
	fi
}

finish() {
	echo "$npass passed, $nfail failed"
	((nfail == 0))
}

kvers=$("$TOP/scripts/newest-kernel.sh" 6.12; "$TOP/scripts/newest-kernel.sh" 6.1)
kvers=${SHCA_CHECK_KVERS:-$kvers}

# --- 1, 2: the packages and make install (outside the namespace) ----------

# the files `make install` puts under DESTDIR, as the system finds them
destdir_files() {
	local d=$1 libdir f

	libdir=$(pkg-config --variable=libdir libibverbs)
	compgen -G "$d/lib/modules/$2/updates/kernel/shca.ko*" >/dev/null ||
		{ echo "missing the module"; return 1; }
	for f in \
		 "etc/libibverbs.d/shca.driver" \
		 "${libdir#/}/libibverbs/libshca-rdmav34.so" \
		 "${libdir#/}/libshca.so.1" \
		 "usr/include/infiniband/shcadv.h" \
		 "lib/systemd/system/shca@.service"; do
		[[ -e $d/$f ]] || { echo "missing $f"; return 1; }
	done
	# the provider link resolves inside DESTDIR (a relative link)
	[[ $(readlink "$d/${libdir#/}/libibverbs/libshca-rdmav34.so") == ../* ]] ||
		{ echo "the provider link is not relative"; return 1; }
	grep -qx 'driver shca' "$d/etc/libibverbs.d/shca.driver"
}

make_install() {
	local d=$TOP/build/install-destdir kver

	read -r kver _ <<< "${kvers//$'\n'/ }"

	rm -rf "$d"
	make -C "$TOP" -s install DESTDIR="$d" KVER="$kver" >/dev/null || return 1
	destdir_files "$d" "$kver"
}

if [[ ${1:-} != --inside ]]; then
	[[ $(id -u) == 0 ]] || { echo "install-check.sh: needs root" >&2; exit 2; }
	if [[ ${1:-} != --no-build ]]; then
		make -C "$TOP" -s provider >/dev/null 2>&1
		check "Debian packages build, lintian clean" "$TOP/scripts/package.sh" "$PKG"
	fi
	check "make install DESTDIR= puts every file in place" make_install
	SHCA_CHECK_KVERS=$kvers unshare -m --propagation private \
		"${BASH_SOURCE[0]}" --inside "$npass" "$nfail"
	exit $?
fi
npass=$2
nfail=$3

# --- 3: the scratch root ---------------------------------------------------

scratch=$(mktemp -d /tmp/shca-install.XXXXXX)
R=$scratch/root
cleanup() {
	umount -R "$R" 2>/dev/null
	umount "$scratch" 2>/dev/null
	rmdir "$scratch" 2>/dev/null
}
trap cleanup EXIT
if ! { mount -t tmpfs tmpfs "$scratch" &&
	mkdir "$scratch/upper" "$scratch/work" "$R" &&
	mount -t overlay overlay \
		-o "lowerdir=/,upperdir=$scratch/upper,workdir=$scratch/work" "$R"; }; then
	result fail "scratch root (overlayfs over /)"
	finish
	exit 1
fi

binds_on() {
	mount -t proc proc "$R/proc" &&
	mount --rbind /sys "$R/sys" && mount --make-rslave "$R/sys" &&
	mount --rbind /dev "$R/dev" && mount --make-rslave "$R/dev"
}
binds_off() {
	umount -R "$R/proc" "$R/sys" "$R/dev"
}
inroot() {
	chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		DEBIAN_FRONTEND=noninteractive "$@"
}

# what was there before: shca files under the places the packages use
shca_files() {
	(cd "$R" && find lib/modules usr/src usr/lib etc var/lib/dkms \
		-name '*shca*' 2>/dev/null | sort)
	grep -l 'shca' "$R"/lib/modules/*/modules.dep 2>/dev/null
}
before=$(shca_files)

install_pkgs() {
	mkdir -p "$R/var/tmp/shca-pkgs" &&
	cp "$PKG"/*_"$VERSION"_*.deb "$R/var/tmp/shca-pkgs/" &&
	rm -f "$R"/var/tmp/shca-pkgs/*-dbgsym_*.deb &&
	inroot sh -c 'dpkg -i /var/tmp/shca-pkgs/*.deb'
}

dkms_all_kernels() {
	local k

	for k in $kvers; do
		inroot dkms status -m shca -v "$VERSION" -k "$k" | grep -q installed &&
			continue
		inroot dkms autoinstall -k "$k" || return 1
	done
	inroot dkms status
}

dkms_status_both() {
	local k st

	st=$(inroot dkms status -m shca)
	echo "$st"
	for k in $kvers; do
		grep -q "^shca/$VERSION, $k, x86_64: installed" <<< "$st" || return 1
	done
}

modprobe_resolves() {
	local k line

	for k in $kvers; do
		line=$(inroot modprobe -S "$k" --show-depends rdma-link-shca) || return 1
		echo "$line"
		grep -q "insmod /lib/modules/$k/updates/dkms/shca.ko" <<< "$line" ||
			return 1
	done
}

# systemd-analyze prints nothing for a unit it finds no fault in
unit_verifies() {
	local out

	out=$(inroot sh -c 'cd /lib/systemd/system &&
		systemd-analyze verify --man=no ./shca@eth0.service' 2>&1)
	echo "$out"
	[[ -z $out ]]
}

binds_on || { result fail "mounts in the scratch root"; finish; exit 1; }
check "dpkg -i ${PKGS[*]} (DKMS builds the module)" install_pkgs
check "dkms autoinstall for every test kernel" dkms_all_kernels
check "dkms status: shca $VERSION installed for ${kvers//$'\n'/, }" dkms_status_both
check "modprobe resolves rdma-link-shca to the DKMS module" modprobe_resolves
check "systemd-analyze verify shca@eth0.service" unit_verifies
binds_off

# --- 4: the VM on the scratch root -----------------------------------------

for k in $kvers; do
	out=$TOP/build/vm/install.$k
	rm -rf "$out"
	mkdir -p "$out"
	"$TOP/scripts/vm.sh" --root "$R" --kver "$k" --nic --checks \
		--timeout 900 --out "$out" -- tests/install/installed.sh \
		> "$out/check.log" 2>&1
	rc=$?
	grep -E '^(not )?ok ' "$out/output.log" 2>/dev/null |
		sed 's/^/install-check:   /'
	if ((rc == 0)); then
		result pass "$k: installed shca in the VM, dmesg clean"
	else
		result fail "$k: installed shca in the VM (rc $rc, $out)"
		tail -n 20 "$out/check.log" | sed 's/^/install-check:   /'
	fi
done

# --- 5: purge ----------------------------------------------------------------

purge_clean() {
	local after

	inroot dpkg --purge "${PKGS[@]}" || return 1
	after=$(shca_files)
	[[ $after == "$before" ]] || { diff <(echo "$before") <(echo "$after"); return 1; }
	! inroot dkms status -m shca | grep -q .
}

binds_on || { result fail "mounts in the scratch root"; finish; exit 1; }
check "dpkg --purge leaves no shca file, DKMS entry or modules.dep line" purge_clean
binds_off

finish
