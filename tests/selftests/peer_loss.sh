#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A peer that disappears while RDMA WRITEs and READs are outstanding:
# its link goes down, its device is deleted (after its process died), or
# the network silently drops everything.  shca_stream_test -m peer checks
# that the sender's oldest WR fails with RETRY_EXC_ERR after at least
# retry_cnt + 1 ACK timeouts and within (retry_cnt + 1) x the timeout
# (4.096 us x 2^timeout) plus slack, that every other outstanding WR and
# receive is flushed in order, and that the QP is in the error state.
# The peer is another shca device, then rdma_rxe.  On a slow (debug)
# kernel the timeouts grow with the time scale (shca_stream_test), so the
# ones named below are the stock kernels'.
#
# A route change is a peer gone too: a connected QP caches its route to
# the peer (tx_route_cached), and a new route for the peer's address,
# through a gateway that does not exist, must take its packets from then
# on, over IPv4 and IPv6 (a stale cached route would keep them flowing).
# Once that route is deleted, a new connection's packets flow again, by
# a cached route.  (An unreachable or prohibit route would not do: a
# lookup bound to the device, as the QP's is, treats the destination as
# on-link when the tables say no.)
. "$(dirname "$0")/lib.sh"

tap_plan 14

modprobe sch_netem 2>/dev/null
tap_check "module loads" shca_load
tap_check "two hosts" two_hosts 1500
g1=$(gid_index shca_ns1 198.18.0.1)
g2=$(gid_index shca_ns2 198.18.0.2)

# gone DESC DEV1 GIDX1 DEV2 GIDX2 ARGS...: DEV1 sends, its peer DEV2 goes
gone() {
	local desc=$1 rc t0=$EPOCHREALTIME

	shift
	timeout "$(tmo 120)" shca_stream_test -m peer -q 16 "${@:5}" "$1" "$2" "$3" "$4" \
		> /tmp/peer.out 2>&1
	rc=$?
	tap_ok "$rc" "$desc"
	if [ "$rc" = 0 ]; then
		grep '^# ' /tmp/peer.out | grep -v '^# seed'
	else
		sed 's/^/# /' /tmp/peer.out | tail -30
	fi
	diag "$(elapsed "$t0") s"
}

# rerouted DESC PREFIX GATEWAY G1 G2: while a stream runs, the peer's
# address (PREFIX) gets a route of its own through GATEWAY, an on-link
# address nobody has, so that the packets go nowhere.  Then that route
# goes and a new stream flows again.
rerouted() {
	local desc=$1 pfx=$2 gw=$3 c t

	gone "$desc" shca_ns1 "$4" shca_ns2 "$5" -T 12 -r 3 \
		-x "ip -n shns1 route add $pfx via $gw dev shv1"
	ip -n shns1 route del "$pfx" via "$gw" dev shv1 || return 1
	ctr_snap shca_ns1
	timeout "$(tmo 120)" shca_stream_test -b 1 -q 4 shca_ns1 "$4" shca_ns2 "$5" \
		> /tmp/peer.out 2>&1 ||
		{ sed 's/^/# /' /tmp/peer.out | tail; return 1; }
	c=$(ctr_sum shca_ns1 tx_route_cached)
	t=$(ctr_sum shca_ns1 tx_pkts)
	diag "route deleted: a new stream sent $t packets, $c by a cached route"
	[ "$t" -gt 0 ] && [ "$c" -ge $((t * 9 / 10)) ]
}
g1v6=$(gid_index shca_ns1 2001:db8::1)
g2v6=$(gid_index shca_ns2 2001:db8::2)
rerouted "the peer's address is routed elsewhere: its cached route gives way (IPv4)" 198.18.0.2/32 \
	198.18.0.99 "$g1" "$g2"
tap_ok $? "IPv4: once that route is deleted, a new stream flows by a cached route"
rerouted "the peer's address is routed elsewhere: its cached route gives way (IPv6)" 2001:db8::2/128 \
	2001:db8::99 "$g1v6" "$g2v6"
tap_ok $? "IPv6: once that route is deleted, a new stream flows by a cached route"

gone "the network drops everything, ports stay up (timeout 12 = 17 ms, retry_cnt 7)" \
	shca_ns1 "$g1" shca_ns2 "$g2" -T 12 -r 7 \
	-x "ip netns exec shns1 tc qdisc add dev shv1 root netem loss 100%"
netem shns1 shv1
gone "peer's link goes down (timeout 14 = 67 ms, retry_cnt 3)" \
	shca_ns1 "$g1" shca_ns2 "$g2" -T 14 -r 3 \
	-x "ip -n shns2 link set shv2 down"
ip -n shns2 link set shv2 up
tap_check "peer's link up again" wait_for 50 gid_index shca_ns2 198.18.0.2

gone "peer's device deleted after its process died (timeout 14, retry_cnt 3)" \
	shca_ns1 "$g1" shca_ns2 "$g2" -T 14 -r 3 -k \
	-x "rdma link delete shca_ns2"
two_hosts_del

if tap_check "rxe peer in the initial namespace, shca in another" rxe_peer; then
	gone "rxe peer's link goes down (timeout 14, retry_cnt 3)" \
		shca_i "$gs" rxe_i "$gr" -T 14 -r 3 -x "ip link set shvr down"
	ip link set shvr up
	wait_for 50 gid_index rxe_i 198.18.1.1
	gone "rxe peer's device deleted after its process died (timeout 14, retry_cnt 3)" \
		shca_i "$gs" rxe_i "$gr" -T 14 -r 3 -k -x "rdma link delete rxe_i"
	rxe_peer_del
else
	rxe_peer_del
	tap_skip "rxe peer's link goes down" "no rxe peer"
	tap_skip "rxe peer's device deleted" "no rxe peer"
fi
tap_check "rmmod shca" shca_unload
modprobe -r rdma_rxe 2>/dev/null
tap_done
