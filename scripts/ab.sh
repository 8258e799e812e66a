#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ab.sh: a same-boot A/B of two builds of the module.  One VM boot loads
# each build in turn, round after round (the order flipping), runs the
# same perftest tests on each, and prints per test the medians of both
# and the ratio B/A of each round's pair: a change is kept only if the
# pairs show it beyond their spread (the README's rule).
#
# Usage: scripts/ab.sh [--kver KVER] [--rounds N] [--setting one|two]
#                      [--mtu MTU] [--out DIR] A.ko B.ko TEST...
#
#   A.ko B.ko       the two builds (for the guest kernel)
#   TEST            perftest test:size:iterations, e.g. send_lat:64:2000
#   --kver KVER     guest kernel (default: the newest 6.1)
#   --rounds N      rounds (default 6)
#   --setting S     two (default): two devices in two namespaces over a
#                   veth pair; one: one device talking to itself on lo
#   --mtu MTU       MTU of the veth pair (default 9000)
#   --out DIR       results directory (default build/ab)
#
# scripts/ab-guest.sh runs in the VM; scripts/ab_report.py makes the
# table (DIR/report.md).
set -uo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
kver=
rounds=6
setting=two
mtu=9000
out=$top/build/ab

usage() {
	sed -n '4,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
}

while [[ $# -gt 0 ]]; do
	case $1 in
	--kver) kver=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--setting) setting=$2; shift 2 ;;
	--mtu) mtu=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-*) usage ;;
	*) break ;;
	esac
done
[[ $# -ge 3 && -f $1 && -f $2 ]] || usage
[[ $rounds =~ ^[1-9][0-9]?$ && $setting =~ ^(one|two)$ ]] || usage
[[ -n $kver ]] || kver=$("$top/scripts/newest-kernel.sh" 6.1)
a=$1 b=$2
shift 2
for t in "$@"; do
	[[ $t =~ ^[a-z_]+:[0-9]+:[0-9]+$ ]] || usage
done

rm -rf "$out"
mkdir -p "$out/snap"
cp "$a" "$out/snap/a.ko" && cp "$b" "$out/snap/b.ko" || exit 1
{
	echo "a=$a ($(md5sum < "$a" | cut -c1-8))"
	echo "b=$b ($(md5sum < "$b" | cut -c1-8))"
	echo "kver=$kver rounds=$rounds setting=$setting mtu=$mtu"
} > "$out/info"
# each perftest pair: a few seconds of set-up, plus its iterations
timeout=$((600 + rounds * $# * 2 * 60))
echo "ab.sh: booting $kver; progress: tail -f $out/vm/output.log" >&2
"$top/scripts/vm.sh" --kver "$kver" --timeout "$timeout" --out "$out/vm" -- \
	scripts/ab-guest.sh "$out/snap" "$rounds" "$setting" "$mtu" "$@" \
	> "$out/vm.log" 2>&1
rc=$?
[[ $rc == 0 ]] || echo "ab.sh: the VM run ended with rc $rc (see $out/vm.log)" >&2
python3 "$top/scripts/ab_report.py" "$out" > "$out/report.md" || exit 1
cat "$out/report.md"
exit "$rc"
