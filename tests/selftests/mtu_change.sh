#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Path MTU lowered (and raised) on RTS RC QPs while messages are in
# flight, with packet loss from netem on the veth pair: packets lost
# before the change are retransmitted after it and must be rebuilt from
# the transmit history as they were first cut (seed 004).  shca_mtu_test
# drives both devices and switches the loss on and off itself (root netem
# qdiscs on both veth ends); it checks every byte, every completion
# exactly once, the counters (retransmit_pkts, hist_replays, timeouts,
# dup_rd_atomic), the packet count of messages started after a change,
# refused changes, and retry exhaustion across a change.
. "$(dirname "$0")/lib.sh"

tap_plan 5

tap_check "module loads" shca_load || tap_done
if ! modprobe sch_netem 2>/dev/null; then
	tap_skip "two hosts" "no sch_netem module"
	tap_skip "netem on both veth ends" "no sch_netem module"
	tap_skip "shca_mtu_test" "no sch_netem module"
	tap_check "rmmod shca" shca_unload
	tap_done
fi
# veth MTU 9000: the port's active MTU is 4096, so path MTU 4096 fits
tap_check "two hosts, one shca device each" two_hosts 9000 || {
	two_hosts_del
	shca_unload
	tap_done
}
tap_check "netem on both veth ends" sh -c \
	'ip netns exec shns1 tc qdisc add dev shv1 root netem loss 0% &&
	 ip netns exec shns2 tc qdisc add dev shv2 root netem loss 0%'
g1=$(gid_index shca_ns1 198.18.0.1)
g2=$(gid_index shca_ns2 198.18.0.2)
diag "gid indexes: $g1 $g2"

timeout "$(tmo 240)" shca_mtu_test shca_ns1 "$g1" shca_ns2 "$g2" shns1:shv1 \
	shns2:shv2 > /tmp/mtu_test.out 2>&1
rc=$?
sed 's/^/# /' /tmp/mtu_test.out
[ "$rc" = 124 ] && diag "shca_mtu_test timed out (hang)"
[ "$rc" != 0 ] && shca_counters_diag
tap_ok "$rc" "shca_mtu_test (path MTU changes in flight, loss, retransmission)"

two_hosts_del
tap_check "rmmod shca" shca_unload
tap_done
