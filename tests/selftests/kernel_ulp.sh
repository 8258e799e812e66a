#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# shca used the way kernel ULPs (nvme-rdma, iSER, NFS/RDMA) use it:
# tests/kmod/shca_ulp_test.ko connects RC QPs between two devices from the
# kernel and runs fast registration (FRWR), LOCAL_INV and SEND_WITH_INV
# and the errors around them, every byte and completion checked.  Its
# init runs the cases and leaves one TAP line per case in debugfs
# (shca_ulp_test/results); each becomes one result here.
#
# - two shca devices in two namespaces (two_hosts): the functional cases
#   (while a process holds a device-memory range of shca_ns1, so that its
#   QPs' flushes reach the DM window's lock: a WR posted to a QP in error
#   is flushed outside the poster's IRQs-off context),
#   then (race=1) LOCAL_INV racing a 1 MiB RDMA WRITE and READ, on a
#   plain veth pair and with the owner's packets delayed by netem;
# - the module removed, every shca object freed (debugfs shca/objects);
# - the functional cases again with rdma_rxe as the peer device (rxe in
#   the initial namespace: rxe_peer), when rdma_rxe is available.
#
# Each race case makes 8 tries per invalidating QP (20 under SHCA_LONG=1,
# the module's default): their LOCAL_INVs go at 0, 1/6, ..., 7/6 of the
# undisturbed transfer's time after it was posted, so before it starts,
# at six points while it runs and after it ended; the long size sweeps
# the same span in finer steps.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faults_lib.sh"

ULP_KO=$SHCA_TOP/build/kmod/$SHCA_KVER/tests/kmod/shca_ulp_test.ko
ULP_RESULTS=/sys/kernel/debug/shca_ulp_test/results
ULP_CASES=11	# the module's functional cases
ULP_RACES=2	# and its race cases
RACE_TRIES=$(sized 8 20)

if [ ! -f "$ULP_KO" ]; then
	echo "1..0 # SKIP $ULP_KO not built (make modules-all)"
	exit $KSFT_SKIP
fi

tap_plan $((ULP_CASES * 2 + ULP_RACES * 2 + 13))

# ulp_run NAME ARGS...: load shca_ulp_test with ARGS (its init runs the
# cases), keep its results in /tmp/ulp.NAME, unload it.  Fails when the
# module did not load (its set-up failed) or left no results.
ulp_run() {
	local out=/tmp/ulp.$1 t0=$EPOCHREALTIME rc

	shift
	rm -f "$out"
	insmod "$ULP_KO" "$@" > /tmp/ulp.insmod 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then
		cat "$ULP_RESULTS" > "$out"
		rmmod shca_ulp_test || rc=1
	else
		sed 's/^/# /' /tmp/ulp.insmod
		dmesg | grep 'shca_ulp_test:' | tail -20 | sed 's/^/# /'
	fi
	diag "shca_ulp_test $*: exit $rc after $(elapsed "$t0") s"
	[ "$rc" = 0 ] && [ -s "$out" ]
}

# The test module is gone and every shca object it made freed.
ulp_gone() {
	! lsmod | grep -q '^shca_ulp_test ' && wait_objs_idle 2
}

# ulp_report NAME N PREFIX: the N results of run NAME (tap_relay)
ulp_report() {
	tap_relay "/tmp/ulp.$1" "$2" "$3"
}

tap_check "module loads" shca_load || tap_done
tap_check "two hosts, one shca device each" two_hosts 1500
tap_check "object counts readable (debugfs shca/objects)" objs_mount
objs_base 2
g1=$(gid_index shca_ns1 198.18.0.1)
g2=$(gid_index shca_ns2 198.18.0.2)
diag "gid indexes: $g1 $g2; idle objects: $(objs_show)"

# (ip netns exec execs the program: $! is its pid)
ip netns exec shns1 "$SHCA_TOP/build/tests/shca_dm_test" --hold shca_ns1 1 \
	> /tmp/ulp_dm.out 2>&1 &
dm_pid=$!
tap_check "a process holds a DM range of shca_ns1" \
	wait_for 300 grep -q "^holding" /tmp/ulp_dm.out
tap_check "shca_ulp_test: functional cases run" \
	ulp_run func dev_a=shca_ns1 gid_a="$g1" dev_b=shca_ns2 gid_b="$g2"
ulp_report func "$ULP_CASES" ""
kill "$dm_pid"
wait "$dm_pid" 2>/dev/null

# The packets of a race run were not changed after they were built: the
# owner writes its memory only once a LOCAL_INV completed, so a packet
# whose payload still referenced it then (a READ response sent from its
# pages) reaches the reader with an ICRC that no longer matches; the
# reader drops it, which mostly hides the bytes from shca_ulp_test.
ulp_icrc() {
	local n

	n=$(ctr_sum "shca_ns1 shca_ns2" rx_drop_bad_icrc)
	echo "rx_drop_bad_icrc +$n"
	[ "$n" = 0 ]
}

# ulp_retries: what retries the race run took, both devices together (a
# READ that ends in RETRY_EXC_ERR instead of its remote access error is
# explained by these)
ulp_retries() {
	local c line=

	for c in timeouts retransmit_pkts dup_req dup_rd_atomic \
		 nak_other_sent nak_other_rcvd rx_drop_psn; do
		line+=" $c +$(ctr_sum "shca_ns1 shca_ns2" "$c")"
	done
	diag "both devices:$line"
}

ctr_snap shca_ns1 shca_ns2
ulp_run race dev_a=shca_ns1 gid_a="$g1" dev_b=shca_ns2 gid_b="$g2" race=1 \
	race_tries="$RACE_TRIES"
ulp_report race "$ULP_RACES" ""
ulp_retries
tap_check "race: no packet changed after it was built (no ICRC drop)" ulp_icrc

# The same with the owner's packets held 2 ms in a queue (netem on its
# RoCE packets), as a NIC's ring or a busy link would: READ responses
# built before the LOCAL_INV completed then leave after it.
if tap_check "netem: 2 ms delay on the owner's RoCE packets" \
	netem shns1 shv1 delay 2ms; then
	ctr_snap shca_ns1 shca_ns2
	ulp_run race_netem dev_a=shca_ns1 gid_a="$g1" dev_b=shca_ns2 \
		gid_b="$g2" race=1 race_tries="$RACE_TRIES"
fi
netem shns1 shv1
ulp_report race_netem "$ULP_RACES" "owner's packets delayed 2 ms: "
ulp_retries
tap_check "owner's packets delayed 2 ms: race: no packet changed after it was built (no ICRC drop)" \
	ulp_icrc

tap_check "shca_ulp_test gone, every object it made freed" ulp_gone
two_hosts_del

if modprobe rdma_rxe 2>/dev/null; then
	tap_check "rdma_rxe peer: rxe in the initial namespace, shca in another" \
		rxe_peer 1500
	tap_check "rdma_rxe peer: functional cases run" \
		ulp_run rxe dev_a=shca_i gid_a="$gs" dev_b=rxe_i gid_b="$gr"
	ulp_report rxe "$ULP_CASES" "rdma_rxe peer: "
	tap_check "rdma_rxe peer: every shca object freed" wait_objs_idle 1
else
	tap_skip "rdma_rxe peer" "rdma_rxe not available"
	tap_skip "rdma_rxe peer: functional cases run"
	for i in $(seq "$ULP_CASES"); do
		tap_skip "rdma_rxe peer: case $i"
	done
	tap_skip "rdma_rxe peer: every shca object freed"
fi
rxe_peer_del

tap_check "rmmod shca" shca_unload
modprobe -r rdma_rxe 2>/dev/null
tap_done
