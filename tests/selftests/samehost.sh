#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Same-host delivery (shca_net_rcv_local(), wire/shca_udp_rx.c): a packet
# to an address of the sender's own namespace goes straight into the
# receiving device's engine, with no IP stack and no ICRC computed or
# checked.  The data tests run over it in two settings:
#   one device talking to itself: both QPs on shca_ns1 (198.18.0.1);
#   two devices of one namespace: shca_a on sha1 (198.18.7.1) and shca_b
#   on sha2 (198.18.7.2), a veth pair whose ends are both in shns1.
# In each: shca_rc_test (every RC operation with guard bytes, multi-SGE,
# inline, atomics, windows, SEND_WITH_INV, SQD, RNR, every completion
# error with flush and recovery, no head-of-line blocking), a
# shca_stream_test stream (SEND, WRITE and READ of random sizes, every
# byte and completion checked), atomics and RNR with late receives, the
# invalidation race (not one byte lands or is read after an
# invalidation completed: the R_Key fence holds for a same-host copy),
# and a UD ping-pong.  With two devices the short size runs
# shca_rc_test (which has atomics and RNR cases of its own), the stream
# and UD; the separate atomics, RNR and race tests there only at the
# long size (SHCA_LONG=1).  Each setting's counters must show the packets
# delivered same-host (tx_local_pkts), none through the IP stack's
# veth, and no ICRC drop.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faults_lib.sh"

TRIES=$(sized 2 6)
# the invalidation race's cases: at the short size one invalidation by
# another QP (a window) and one deregistration (an MR), for WRITE, READ
# and a queued READ: what differs on this path is the delivery into and
# out of the memory, not how the key is taken back
INV_CASES=()
[ -n "$LONG" ] || INV_CASES=(-t "linv_other,mr_dereg")
LONG=$(sized "" 1)

tap_plan "$(sized 17 20)"

# two_devs_one_ns: the veth pair sha1/sha2, both ends in namespace shns1,
# with shca_a and shca_b on them
two_devs_one_ns() {
	# The RDMA core resolves shca_b's MAC by ARP over the veth: sha2
	# must accept a request whose source is an address of its own host.
	ip netns exec shns1 sysctl -qw net.ipv4.conf.all.accept_local=1 \
		net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 &&
	ip -n shns1 link add sha1 type veth peer name sha2 &&
	ip -n shns1 -force -b - <<-EOF || return 1
		link set sha1 up
		link set sha2 up
		addr add 198.18.7.1/24 dev sha1
		addr add 198.18.7.2/24 dev sha2
	EOF
	ip netns exec shns1 rdma link add shca_a type shca netdev sha1 &&
	ip netns exec shns1 rdma link add shca_b type shca netdev sha2 &&
	wait_for 50 gid_index shca_a 198.18.7.1 &&
	wait_for 50 gid_index shca_b 198.18.7.2
}

two_devs_del() {
	rdma link delete shca_a 2>/dev/null
	rdma link delete shca_b 2>/dev/null
	ip -n shns1 link del sha1 2>/dev/null
	return 0
}

# run_prog PROG ARGS...: PROG in the test's own namespaces (the verbs
# need none: a GID names its netdev; the counters in sysfs are read as
# the other selftests read them), its output as diagnostics
run_prog() {
	local rc

	timeout "$(tmo 300)" "$@" > /tmp/samehost.out 2>&1
	rc=$?
	sed 's/^/# /' /tmp/samehost.out | tail -40
	[ "$rc" = 124 ] && diag "$1 timed out (hang)"
	[ "$rc" != 0 ] && shca_counters_diag
	return "$rc"
}

# local_only DEVS NETDEV: since the snapshot, the devices' packets went
# same-host (tx_local_pkts moved as much as tx_pkts), no ICRC drop, and
# NETDEV (seen from shns1) sent fewer than 50 packets (ARP, neighbour
# discovery; not the megabytes the tests moved)
local_only() {
	local devs=$1 nd=$2 tx loc bad sent

	tx=$(ctr_sum "$devs" tx_pkts)
	loc=$(ctr_sum "$devs" tx_local_pkts)
	bad=$(ctr_sum "$devs" rx_drop_bad_icrc)
	sent=$(($(ip netns exec shns1 cat "/sys/class/net/$nd/statistics/tx_packets") - nd0))
	diag "tx_pkts $tx, tx_local_pkts $loc, rx_drop_bad_icrc $bad; $nd sent $sent packets"
	[ "$tx" -gt 1000 ] && [ "$loc" = "$tx" ] && [ "$bad" = 0 ] &&
		[ "$sent" -lt 50 ]
}

# setting DESC D1 G1 D2 G2 DEVS NETDEV: the data tests from D1 to D2
setting() {
	local desc=$1 d1=$2 g1=$3 d2=$4 g2=$5 devs=$6 nd=$7

	# shellcheck disable=SC2086	# DEVS: a list of names, split on purpose
	ctr_snap $devs
	nd0=$(ip netns exec shns1 cat "/sys/class/net/$nd/statistics/tx_packets")
	tap_check "$desc: shca_rc_test (RC data path and error cases)" \
		run_prog shca_rc_test "$d1" "$g1" "$d2" "$g2"
	tap_check "$desc: shca_stream_test, 8 MiB of SEND, WRITE and READ, every byte checked" \
		run_prog shca_stream_test -b 8 -M 4096 -z 262144 -q 32 \
		"$d1" "$g1" "$d2" "$g2"
	if [ "$d1" != "$d2" ] && [ -z "$LONG" ]; then
		ud_local "$desc" "$d1" "$g1" "$d2" "$g2" "$devs" "$nd"
		return
	fi
	tap_check "$desc: 2000 atomics, results checked" \
		run_prog shca_stream_test -m atomic -n 2000 \
		"$d1" "$g1" "$d2" "$g2"
	tap_check "$desc: RNR: receives posted late, every message arrives" \
		run_prog shca_stream_test -m rnr -n 8 -I 15 \
		"$d1" "$g1" "$d2" "$g2"
	tap_check "$desc: invalidation race (timing and holds): no byte after the invalidation" \
		run_prog shca_inv_test -n "$TRIES" -m all "${INV_CASES[@]}" \
		"$d2" "$g2" "$d1" "$g1"
	ud_local "$desc" "$d1" "$g1" "$d2" "$g2" "$devs" "$nd"
}

# ud_local DESC D1 G1 D2 G2 DEVS NETDEV: a UD ping-pong, then the
# setting's counters
ud_local() {
	local desc=$1 d1=$2 g1=$3 d2=$4 g2=$5 devs=$6 nd=$7

	tap_check "$desc: ibv_ud_pingpong -c" ns_server_client shns1 shns1 60 \
		"ibv_ud_pingpong -d $d1 -g $g1 -c -n 100 -s 1024" \
		"ibv_ud_pingpong -d $d2 -g $g2 -c -n 100 -s 1024 ${addr2}" 18515
	tap_check "$desc: every packet delivered same-host, no ICRC drop, none on the netdev" \
		local_only "$devs" "$nd"
}

tap_check "module loads" shca_load || tap_done
tap_check "two hosts, one shca device each" two_hosts 1500 || {
	two_hosts_del
	shca_unload
	tap_done
}
tap_check "debugfs: object counts and fault injection" objs_mount
objs_base 2
g1=$(gid_index shca_ns1 198.18.0.1)

addr2=198.18.0.1
setting "one device" shca_ns1 "$g1" shca_ns1 "$g1" shca_ns1 shv1

tap_check "two devices in one namespace" two_devs_one_ns
ga=$(gid_index shca_a 198.18.7.1)
gb=$(gid_index shca_b 198.18.7.2)
addr2=198.18.7.1
setting "two devices" shca_a "$ga" shca_b "$gb" "shca_a shca_b" sha1

two_devs_del
two_hosts_del
tap_check "no object left" wait_objs_idle 0
tap_check "rmmod shca" shca_unload
tap_done
