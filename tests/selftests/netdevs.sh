#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# shca on the netdevs users stack on their Ethernet:
# - a VLAN, then a macvlan, then an ipvlan on each end of the two hosts'
#   veth, the devices on the veth ends (no function on the upper netdev:
#   macvlan functions are funcs.sh's and container.sh's): the RDMA core
#   gives each device a GID of its upper netdev's address with that
#   netdev as the GID's; rping (rdma_cm, whose CM matches a request's
#   VLAN, reported by the GSI QP's completion, against that GID) connects
#   over it with its data checked, and the packets leave through the
#   upper netdevs and come in through them.  (A device on the VLAN device
#   itself is refused: bad_input.sh.)
# - a device on an active-backup bond and one on a bridge, one on each
#   end: their addresses are their GIDs; RC and UD pingpong with data
#   checks between them.
. "$(dirname "$0")/lib.sh"

VID=42

tap_plan 19

# upper_add SUFFIX NET TYPE-ARGS...: an upper netdev shvN<SUFFIX> on each
# veth end (ip link add ... TYPE-ARGS) with 198.18.NET.N/24; both
# addresses become GIDs
upper_add() {
	local sfx=$1 net=$2 n

	shift 2
	for n in 1 2; do
		ip -n "shns$n" link add link "shv$n" name "shv$n$sfx" "$@" &&
		ip -n "shns$n" addr add "198.18.$net.$n/24" dev "shv$n$sfx" &&
		ip -n "shns$n" link set "shv$n$sfx" up || return 1
	done
	wait_for 50 gid_index shca_ns1 "198.18.$net.1" &&
	wait_for 50 gid_index shca_ns2 "198.18.$net.2"
}

# upper_gid SUFFIX NET: the GIDs of 198.18.NET.N name shvN<SUFFIX> as
# their netdevs
upper_gid() {
	local n i

	for n in 1 2; do
		i=$(gid_index "shca_ns$n" "198.18.$2.$n") || return 1
		grep -qx "shv$n$1" \
			"/sys/class/infiniband/shca_ns$n/ports/1/gid_attrs/ndevs/$i" ||
			return 1
	done
}

# upper_pkts SUFFIX N: packets shvN<SUFFIX> sent and received
upper_pkts() {
	local st="/sys/class/net/shv$2$1/statistics" n

	n=$(ip netns exec "shns$2" cat "$st/tx_packets" "$st/rx_packets")
	echo $((${n//$'\n'/+}))
}

# upper_checks WHAT SUFFIX NET TYPE-ARGS...: the four checks of an upper
# netdev, removed again after them
upper_checks() {
	local what=$1 sfx=$2 net=$3 p1 p2

	shift 3
	tap_check "$what on both ends: its addresses become GIDs" \
		upper_add "$sfx" "$net" "$@"
	tap_check "the $what's GIDs have the $what devices as their netdevs" \
		upper_gid "$sfx" "$net"
	p1=$(upper_pkts "$sfx" 1)
	p2=$(upper_pkts "$sfx" 2)
	tap_check "rping -V over the $what" server_client 120 \
		"rping -s -a 198.18.$net.1 -C 10 -V" \
		"$(declare -f retry); retry 5 rping -c -a 198.18.$net.1 -C 10 -V" cm
	tap_check "both ends sent and received through their $what device" \
		test "$(upper_pkts "$sfx" 1)" -gt "$((p1 + 40))" \
		-a "$(upper_pkts "$sfx" 2)" -gt "$((p2 + 40))"
	ip -n shns1 link del "shv1$sfx"
	ip -n shns2 link del "shv2$sfx"
}

# bond_bridge_hosts: shns1's veth end enslaved to bond0 (active-backup),
# shns2's a port of bridge br0; the addresses and the devices on bond0
# and br0
bond_bridge_hosts() {
	two_hosts_link || return 1
	ip -n shns1 -b - <<-EOF || return 1
		link set lo up
		link add bond0 type bond mode active-backup miimon 100
		link set shv1 master bond0
		link set shv1 up
		link set bond0 up
		addr add 198.18.0.1/24 dev bond0
	EOF
	ip -n shns2 -b - <<-EOF || return 1
		link set lo up
		link add br0 type bridge
		link set shv2 master br0
		link set shv2 up
		link set br0 up
		addr add 198.18.0.2/24 dev br0
	EOF
	in_ns shns1 rdma link add shca_ns1 type shca netdev bond0 &&
	in_ns shns2 rdma link add shca_ns2 type shca netdev br0 &&
	wait_for 50 gid_index shca_ns1 198.18.0.1 &&
	wait_for 50 gid_index shca_ns2 198.18.0.2
}

modprobe -a rdma_cm rdma_ucm ib_cm 8021q macvlan 2>/dev/null
tap_check "module loads" shca_load
tap_check "two hosts" two_hosts 1500
upper_checks "VLAN $VID" ".$VID" "$VID" type vlan id "$VID"
upper_checks macvlan m 44 type macvlan mode bridge
if modprobe ipvlan 2>/dev/null; then
	upper_checks ipvlan i 46 type ipvlan mode l2
else
	for c in "ipvlan on both ends" "the ipvlan's GIDs" \
		 "rping -V over the ipvlan" "through the ipvlan devices"; do
		tap_skip "$c" "this kernel has no ipvlan module"
	done
fi

# (a debug kernel built before bonding and bridge joined its module set
# has neither)
if modprobe bonding max_bonds=0 2>/dev/null && modprobe bridge 2>/dev/null; then
	tap_check "a bond and a bridge: devices on them, their addresses GIDs" \
		bond_bridge_hosts
	g1=$(gid_index shca_ns1 198.18.0.1)
	g2=$(gid_index shca_ns2 198.18.0.2)
	tap_check "ibv_rc_pingpong -c, bond to bridge" \
		pp ibv_rc_pingpong -c -n 100
	tap_check "ibv_ud_pingpong -c, bond to bridge" \
		pp ibv_ud_pingpong -c -n 100 -s 1024
else
	for c in "a bond and a bridge" "ibv_rc_pingpong -c, bond to bridge" \
		 "ibv_ud_pingpong -c, bond to bridge"; do
		tap_skip "$c" "this kernel has no bonding or bridge module"
	done
fi
tap_check "devices removed" two_hosts_del
tap_check "rmmod shca" shca_unload
tap_done
