#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run selftests inside the test VM, kselftest style: each test's own TAP is
# indented with "# ", followed by one result line per test.
#
#   run.sh [TEST...]     TEST is a file name in this directory (default:
#                        every executable test here)
# Exit status: 0 when no test failed (skips allowed), 1 otherwise.
# SHCA_TEST_TIMEOUT (seconds, default 300 times the time scale) bounds each
# test; SHCA_TIME_SCALE is lib.sh's.

dir=$(cd "$(dirname "$0")" && pwd)
cd "$dir" || exit 1

# shellcheck source=lib.sh
. ./lib.sh

if [ $# -gt 0 ]; then
	tests=("$@")
else
	tests=()
	for t in *.sh; do
		case $t in lib.sh|run.sh) continue ;; esac
		[ -x "$t" ] && tests+=("$t")
	done
fi

# show_stuck: after a test ran out of time, what is still running and
# where each process sleeps in the kernel, as diagnostics; the stacks of
# the CPUs go to the kernel log.
show_stuck() {
	local p stack line

	echo "# processes left after the timeout:"
	ps -eo pid,ppid,stat,wchan:28,etime,args --no-headers |
		awk '$6 !~ /^\[/' | cut -c1-200 | sed 's/^/#   /'
	for p in /proc/[0-9]*; do
		stack=$(cat "$p/stack" 2>/dev/null) || continue
		case $stack in *shca*|*uverbs*|*ib_core*|*rdma*) ;; *) continue ;; esac
		echo "# kernel stack of ${p#/proc/} ($(cat "$p/comm" 2>/dev/null)):"
		while IFS= read -r line; do echo "#     $line"; done <<< "$stack"
	done
	[ -w /proc/sysrq-trigger ] && echo l > /proc/sysrq-trigger
}

echo "TAP version 13"
echo "1..${#tests[@]}"
n=0
failed=0
for t in "${tests[@]}"; do
	n=$((n + 1))
	echo "# selftests: shca: $t"
	start=$(date +%s)
	timeout -k 10 "${SHCA_TEST_TIMEOUT:-$((300 * SHCA_TIME_SCALE))}" "./$t" > /tmp/run.out 2>&1
	rc=$?
	sed 's/^/# /' /tmp/run.out
	# 124: stopped by the timeout; 137: killed 10 s after it
	case $rc in 124|137) show_stuck ;; esac
	# a test that stops early but exits 0 has not passed: the number of
	# results must match its plan
	planned=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' /tmp/run.out | head -1)
	got=$(grep -cE '^(not )?ok [0-9]' /tmp/run.out)
	if [ "$rc" = 0 ] && [ -n "$planned" ] && [ "$planned" != "$got" ]; then
		echo "# $t: planned $planned results, got $got"
		rc=1
	fi
	secs=$(( $(date +%s) - start ))
	case $rc in
	0) echo "ok $n selftests: shca: $t (${secs}s)" ;;
	4) echo "ok $n selftests: shca: $t # SKIP (${secs}s)" ;;
	124) echo "not ok $n selftests: shca: $t # TIMEOUT ${secs}s"
	     failed=$((failed + 1)) ;;
	*) echo "not ok $n selftests: shca: $t # exit=$rc (${secs}s)"
	   failed=$((failed + 1)) ;;
	esac
	# a failed test may leave the module or devices behind: clean up
	for d in /sys/class/infiniband/*; do
		[ -e "$d" ] || continue
		rdma link delete "$(basename "$d")" >/dev/null 2>&1
	done
	for ns in $(ip netns list 2>/dev/null | cut -d' ' -f1); do
		ip netns del "$ns"
	done
	# (container.sh puts the RDMA core in exclusive mode; a test killed
	# by its timeout may leave it so)
	rdma system show 2>/dev/null | grep -q "netns exclusive" &&
		rdma system set netns shared
	lsmod | grep -q '^shca ' && rmmod shca 2>/dev/null
done
[ "$failed" = 0 ]
