#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# soak.sh: run the fault, loss, interop, invalidation and multicast
# selftests again and again on the test kernels, for a given time, and
# count every failure.
#
# Usage: scripts/soak.sh [--minutes N] [--slice N] [--kvers "K1 K2"]
#                        [--long] [--out DIR] [TEST...]
#
#   --minutes N   total time (default 60); a round that has started runs to
#                 its end
#   --slice N     minutes per VM boot (default 20): the kernels take turns,
#                 one boot each, until the time is up
#   --kvers LIST  kernels (default: newest installed 6.1 and 6.12 Debian
#                 kernels; a debug kernel's release works too)
#   --long        the tests' own long variants (SHCA_SOAK=1: 60 kills and
#                 10 runs of each scale load; SHCA_LOSS_MIB=64 and
#                 SHCA_LOSS_ATOMICS=10000: 64 MiB per loss case, perftest
#                 included); default: the variants make check runs
#   --out DIR     results (default build/soak): one directory per boot
#                 (boot-N-KVER/, with the guest's soak.log, output.log,
#                 dmesg.log) and summary.txt
#   TEST...       selftests (default: the fault, loss and interop ones,
#                 and the invalidation race and multicast tests)
#
# Every round runs each TEST once (tests/selftests/run.sh).  The summary
# lists, per kernel and test, the runs and failures, each failure with the
# checks that failed, and the dmesg verdict of each boot.  Exit status 0
# only when nothing failed.

set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$top" || exit 2

minutes=60
slice=20
kvers=
out=$top/build/soak
long=()
while [[ $# -gt 0 ]]; do
	case $1 in
	--minutes) minutes=$2; shift 2 ;;
	--slice) slice=$2; shift 2 ;;
	--kvers) kvers=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--long) long=(SHCA_SOAK=1 SHCA_LOSS_MIB=64 SHCA_LOSS_ATOMICS=10000
		      SHCA_TEST_TIMEOUT=1800); shift ;;
	-h|--help) sed -n '4,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
	-*) echo "soak.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[[ $minutes =~ ^[1-9][0-9]*$ && $slice =~ ^[1-9][0-9]*$ ]] ||
	{ echo "soak.sh: --minutes and --slice take whole minutes" >&2; exit 2; }

tests=("$@")
[[ ${#tests[@]} -gt 0 ]] || tests=(faults_dev.sh faults_kill.sh faults_scale.sh
	loss.sh peer_loss.sh rnr.sh rxe_interop.sh rxe_loss.sh rxe_coexist.sh
	invalidation.sh mcast.sh)

[[ -n $kvers ]] || kvers=$(scripts/newest-kernel.sh 6.1 6.12 | tr '\n' ' ')
read -ra kvers <<< "$kvers"

make -s modules-all provider selftest-bins >&2 || exit 2
for k in "${kvers[@]}"; do
	[[ -f build/kmod/$k/kernel/shca.ko ]] ||
		make -s "build/kmod/$k/kernel/shca.ko" >&2 || exit 2
done

rm -rf "$out"
mkdir -p "$out"
end=$((SECONDS + minutes * 60))
boot=0
while ((SECONDS < end)); do
	k=${kvers[boot % ${#kvers[@]}]}
	boot=$((boot + 1))
	left=$(( (end - SECONDS + 59) / 60 ))
	((left < slice)) || left=$slice
	dir=$out/boot-$boot-$k
	mkdir -p "$dir"
	echo "soak.sh: boot $boot, $k, $left min" >&2
	# the kernel's own checks as in make check (vm.sh --checks); the
	# guest loops until its deadline; the VM limit leaves room for the
	# last round (a slow round takes a few minutes)
	scripts/vm.sh --kver "$k" --out "$dir" --checks \
		--timeout $(( (left + 30) * 60 )) \
		-- env SHCA_SOAK_SECONDS=$((left * 60)) "${long[@]}" \
		scripts/soak-guest.sh "${tests[@]}" > "$dir/vm.log" 2>&1
	echo $? > "$dir/vm-rc"
done

# Summary: per kernel and test, runs and failures, from each boot's
# soak.log ("ROUND TEST ok|fail SECONDS [failed checks]").
{
	echo "soak: ${minutes} min requested, $((SECONDS / 60)) min run, $boot boot(s)"
	echo "tests: ${tests[*]}"
	for dir in "$out"/boot-*; do
		verdict="exit $(cat "$dir/vm-rc")"
		grep -q "dmesg check FAILED" "$dir/vm.log" && verdict="$verdict, dmesg FLAGGED"
		echo "${dir##*/}: $(grep -c . "$dir/soak.log" 2>/dev/null) test runs, $verdict"
	done
	for dir in "$out"/boot-*; do
		name=${dir##*/}
		sed "s|^|${name#boot-*-} |" "$dir/soak.log" 2>/dev/null
	done | awk '{ key = $1 " " $3; runs[key]++; if ($4 != "ok") fails[key]++ }
		END { for (k in runs) printf "%s: %d runs, %d failed\n", k, runs[k], fails[k] }' |
		sort
	echo "failures:"
	for dir in "$out"/boot-*; do
		grep -v '^[0-9]* [^ ]* ok ' "$dir/soak.log" 2>/dev/null |
			sed "s|^|    ${dir##*/}: round |"
	done
} > "$out/summary.txt"
cat "$out/summary.txt"

bad=0
for dir in "$out"/boot-*; do
	[[ $(cat "$dir/vm-rc") == 0 ]] || bad=1
done
if ((bad == 0)); then
	echo "soak: PASS"
else
	echo "soak: FAIL (details in $out)"
fi
exit $bad
