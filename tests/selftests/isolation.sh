#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One user cannot take the device from another.  A flooder process
# (shca_flood_test) posts the send queues of 20 RC QPs full (4096 1 KiB
# SENDs each, more than the engine's whole transmit queue) towards QPNs
# that do not exist at the other host, and holds them: every WQE waits
# minutes for an ACK.  Meanwhile another process's RC traffic and rping
# through rdma_cm (the GSI QP) and a kernel ULP (shca_ulp_test's
# functional cases: FRWR, invalidation, SEND) between the two hosts
# must go on, the
# flooder's waits must be counted (the device counters and its QPs'
# details in `rdma resource`), and once it is killed its entries come
# back.
. "$(dirname "$0")/lib.sh"

FLOOD=$SHCA_TOP/build/tests/shca_flood_test
HW=/sys/class/infiniband/shca_ns1/ports/1/hw_counters
ULP_KO=$SHCA_TOP/build/kmod/$SHCA_KVER/tests/kmod/shca_ulp_test.ko
ULP_RESULTS=/sys/kernel/debug/shca_ulp_test/results

tap_plan 14

# ulp_cases: shca_ulp_test's functional cases (30 REG_MR cycles) between
# the two hosts all pass
ulp_cases() {
	mountpoint -q /sys/kernel/debug ||
		mount -t debugfs debugfs /sys/kernel/debug
	insmod "$ULP_KO" dev_a=shca_ns1 gid_a="$g1" dev_b=shca_ns2 		gid_b="$g2" cycles=30 > /tmp/ulp.insmod 2>&1 || {
		sed 's/^/# /' /tmp/ulp.insmod
		dmesg | grep 'shca_ulp_test:' | tail -10 | sed 's/^/# /'
		return 1
	}
	cat "$ULP_RESULTS" > /tmp/ulp.flood
	rmmod shca_ulp_test
	grep -E '^not ok|cases failed' /tmp/ulp.flood | sed 's/^/# /'
	grep -q '^# 0 of [0-9]* cases failed' /tmp/ulp.flood
}

tap_check "module loads" shca_load
modprobe -a rdma_cm rdma_ucm ib_cm 2>/dev/null
tap_check "two hosts, one shca device each" two_hosts 1500
g1=$(gid_index shca_ns1 198.18.0.1)
g2=$(gid_index shca_ns2 198.18.0.2)

read -r qw0 < "$HW/tx_qp_credit_waits"
read -r cw0 < "$HW/tx_ctx_credit_waits"
# (ip netns exec execs the program: $! is its pid)
ip netns exec shns1 "$FLOOD" shca_ns1 198.18.0.2 20 4096 > /tmp/flood.out 2>&1 &
fpid=$!
tap_check "the flooder posted 81920 SENDs and holds them" \
	wait_for 600 grep -qx "holding 81920" /tmp/flood.out
sed 's/^/#   /' /tmp/flood.out

tap_check "another process's ibv_rc_pingpong while the flooder holds" \
	pp ibv_rc_pingpong -c -n 200 -s 1024
tap_check "rping through rdma_cm while the flooder holds" \
	server_client 120 "rping -s -a 198.18.0.1 -C 5 -v -V" \
	"$(declare -f retry); retry 5 rping -c -a 198.18.0.1 -C 5 -v -V" cm
if [ -f "$ULP_KO" ]; then
	tap_check "a kernel ULP's FRWR, invalidation and SENDs while the flooder holds" \
		ulp_cases
else
	tap_skip "a kernel ULP while the flooder holds" "$ULP_KO not built"
fi

# waits_counted: the device counted the flooder's waits at its QPs' and
# its user context's limits, and `rdma resource` shows them on its QPs
waits_counted() {
	local qw cw sum

	read -r qw < "$HW/tx_qp_credit_waits"
	read -r cw < "$HW/tx_ctx_credit_waits"
	sum=$(in_ns shns1 rdma -dd resource show qp link shca_ns1/1 \
		pid "$fpid" | grep -o 'ctx_credit_waits [0-9]*' |
		awk '{ s += $2 } END { print s + 0 }')
	diag "tx_qp_credit_waits +$((qw - qw0)), tx_ctx_credit_waits" \
	     "+$((cw - cw0)), flooder's QPs: ctx_credit_waits $sum"
	shca_counters_diag | grep -E 'llq|tx_pkts|timeouts'
	[ $((qw - qw0)) -gt 0 ] && [ $((cw - cw0)) -gt 0 ] && [ "$sum" -gt 0 ]
}
tap_check "the flooder's waits are counted against it" waits_counted
tap_check "the flooder is still alive" kill -0 "$fpid"
kill "$fpid"
wait "$fpid" 2>/dev/null
# (its exit destroyed them)
tap_check "the flooder's QPs are gone" wait_for 600 no_rc_qps shns1 shca_ns1
tap_check "ibv_rc_pingpong after the flooder" pp ibv_rc_pingpong -c -n 50
# user_entries N: the QPs of all user contexts hold N transmit entries
user_entries() {
	local v

	read -r v < "$HW/tx_user_entries"
	[ "$v" = "$1" ]
}
tap_check "its transmit entries came back (tx_user_entries 0)" \
	wait_for 100 user_entries 0
# A QP moved to RESET with WQEs in flight gives their credits back too:
# 4 QPs of 2048 SENDs, each reset after posting
rm -f /tmp/flood.out
ip netns exec shns1 "$FLOOD" shca_ns1 198.18.0.2 4 2048 reset \
	> /tmp/flood.out 2>&1 &
fpid=$!
tap_check "a flooder that resets its QPs after posting 8192 SENDs" \
	wait_for 600 grep -qx "holding 8192" /tmp/flood.out
tap_check "their transmit entries came back (tx_user_entries 0)" \
	wait_for 100 user_entries 0
kill "$fpid"
wait "$fpid" 2>/dev/null
two_hosts_del
tap_check "rmmod shca" shca_unload
modprobe -r rdma_ucm rdma_cm 2>/dev/null
tap_done
