#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault survival at scale: repeated runs leave nothing behind.
#
# - 1000 RC QP pairs (1000 QPs on each device), each QP moving verified
#   data (A: RDMA WRITE + SEND, B: RDMA WRITE with immediate), 200 pairs
#   at a time, then everything torn down; 3 runs.
# - MR churn: 8 rounds of 512 user MRs of assorted sizes (17 B to 4 MiB,
#   unaligned starts), type 1 and type 2 windows bound and written
#   through, deregistration refused while a window is bound; 3 runs.
#
# After every run: the module's object counts are back to the idle
# devices' own, and every user page pinned by a registration is unpinned
# again (/proc/vmstat nr_foll_pin_*).  From run 2 to the last run,
# unreclaimable slab + vmalloc may grow by at most 1 MiB.  That bound
# catches one leaked allocation per QP or MR that the object counts do
# not see: the smallest per-QP one, the 528-byte copy of the receive WQE
# being placed (a 1 KiB slab object), is 2 MiB per run of 2000 QPs; a
# ring page per QP 8 MiB; an MR's page array (8 bytes per page, the MRs
# here average 218 pages) per registration 7 MiB per run of 4096 MRs.
# Between identical runs the figure moved by at most 0.25 MiB on either
# test kernel (kernel noise: deferred frees, per-CPU caches).
#
# SHCA_SOAK=1: 10 runs of each.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faults_lib.sh"

runs=3
[ -n "${SHCA_SOAK:-}" ] && runs=10
tap_plan $((2 * runs + 7))

tap_check "module loads" shca_load
tap_check "two hosts" two_hosts 1500
tap_check "object counts readable (debugfs shca/objects)" objs_mount
objs_base 2
g1=$(gid_index shca_ns1 198.18.0.1)
g2=$(gid_index shca_ns2 198.18.0.2)
devs="shca_ns1 $g1 shca_ns2 $g2"
pins0=$(pins)

pins_back() {
	[ "$(pins)" = "$pins0" ]
}

# run_load WHAT ARGS...: one run of shca_fault_test ARGS; then the object
# counts and pins; the kernel memory after it is appended to
# /tmp/kmem.WHAT.
run_load() {
	local what=$1

	shift
	# shellcheck disable=SC2086	# devs: the arguments, split on purpose
	timeout "$(tmo 280)" shca_fault_test "$@" $devs || return 1
	wait_objs_idle 2 || return 1
	if ! wait_for 100 pins_back; then
		echo "pinned pages: $(pins), $pins0 before"
		return 1
	fi
	kmem >> "/tmp/kmem.$what"
}

# no_growth WHAT: compare the memory after run 2 and after the last run:
# at most 1 MiB more.  On a debug kernel KASAN's quarantine holds freed
# objects back (up to 1/32 of memory) and lets them go in batches, so
# slab usage there moves by megabytes either way; 16 MiB is allowed, and
# kmemleak (scanned after the suite) is what finds a leak.
no_growth() {
	local a b max=1024

	case $SHCA_KVER in *-shca-debug | *-shca-kcsan) max=16384 ;; esac
	a=$(sed -n 2p "/tmp/kmem.$1")
	b=$(tail -1 "/tmp/kmem.$1")
	echo "slab+vmalloc after each run: $(tr '\n' ' ' < "/tmp/kmem.$1")KiB (growth allowed: $max KiB)"
	[ -n "$a" ] && [ -n "$b" ] && [ "$((b - a))" -le "$max" ]
}

rm -f /tmp/kmem.qps /tmp/kmem.mrs
for i in $(seq "$runs"); do
	tap_check "run $i: 1000 RC QP pairs, verified traffic on each, torn down" \
		run_load qps -n 1000 -w 200 qps
	diag "$(grep 'RC QP pairs' /tmp/tap_check.out)"
done
tap_check "no kernel memory growth over $runs runs of 1000 QP pairs" \
	no_growth qps
diag "$(cat /tmp/tap_check.out)"
for i in $(seq "$runs"); do
	tap_check "run $i: 8 rounds of 512 MRs with windows, all freed and unpinned" \
		run_load mrs -n 512 -r 8 mrs
	diag "$(grep 'rounds of' /tmp/tap_check.out)"
done
tap_check "no kernel memory growth over $runs runs of MR churn" \
	no_growth mrs
diag "$(cat /tmp/tap_check.out)"
two_hosts_del
leaks0=$(dmesg | grep -c 'shca: leak')
tap_check "rmmod shca" shca_unload
tap_check "no leak report at unload" \
	sh -c "[ \$(dmesg | grep -c 'shca: leak') = $leaks0 ]"
tap_done
