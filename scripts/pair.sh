#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-pair: two test VMs joined by a virtual Ethernet link (QEMU's
# dgram backend between two virtio-net NICs, nothing outside this
# machine), shca on each, tests/pair/run.sh on the first and its peer
# (tests/pair/peer.sh, commands through tests/pair/agent.py) on the
# second.  The two guests run different kernels: a real NIC driver's
# receive path and another kernel's stack between the two devices.
#
#   scripts/pair.sh [KVER1 KVER2]   (default: the newest 6.12 and 6.1)
#
# Ends with "N passed, N failed" (the run's TAP results, and each guest's
# run and kernel log); exits 1 when anything failed.

set -uo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
k1=${1:-$("$TOP/scripts/newest-kernel.sh" 6.12)}
k2=${2:-$("$TOP/scripts/newest-kernel.sh" 6.1)}

make -C "$TOP" -s modules-all provider selftest-bins > /dev/null ||
	{ echo "pair.sh: build failed" >&2; exit 1; }

mkdir -p "$TOP/build/vm"
dir=$(mktemp -d "$TOP/build/vm/pair.XXXXXX")
mkdir "$dir/1" "$dir/2"
echo "pair.sh: guest 1 $k1, guest 2 $k2, results in $dir"

# the peer first: it serves until guest 1 says quit (or its time is up)
"$TOP/scripts/vm.sh" --kver "$k2" --checks --link "$dir:2" --out "$dir/2" \
	--timeout 1800 -- tests/pair/peer.sh > "$dir/2/check.log" 2>&1 &
peer=$!
"$TOP/scripts/vm.sh" --kver "$k1" --checks --link "$dir:1" --out "$dir/1" \
	--timeout 1800 -- tests/pair/run.sh > "$dir/1/check.log" 2>&1
rcs=($?)
wait "$peer"
rcs+=($?)

npass=0
nfail=0
while IFS= read -r line; do
	case $line in
	"ok "*) npass=$((npass + 1)); echo "pair.sh: pass: ${line#* - }" ;;
	"not ok "*) nfail=$((nfail + 1)); echo "pair.sh: FAIL: ${line#* - }" ;;
	"#"*) echo "pair.sh:   $line" ;;
	esac
done < "$dir/1/output.log"
for n in 1 2; do
	rc=${rcs[n - 1]}
	if [[ $rc == 0 ]]; then
		npass=$((npass + 1))
		echo "pair.sh: pass: guest $n ran, kernel log clean"
	else
		nfail=$((nfail + 1))
		echo "pair.sh: FAIL: guest $n (vm.sh exit $rc; $dir/$n/check.log)"
		tail -n 15 "$dir/$n/check.log" | sed 's/^/pair.sh:   /'
	fi
done
echo "$npass passed, $nfail failed"
((nfail == 0))
