#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# shca on the netdevs users stack on their Ethernet (macvlan children are
# funcs.sh's and container.sh's):
# - a VLAN on each end of the two hosts' veth, the devices on the veth
#   ends: the RDMA core gives each device a GID of its VLAN's address with
#   the VLAN as the GID's netdev; rping (rdma_cm, whose CM matches a
#   request's VLAN, reported by the GSI QP's completion, against that GID)
#   connects over it with its data checked, and the packets leave through
#   the VLAN devices.  (A device on the VLAN device itself is refused:
#   bad_input.sh.)
# - a device on an active-backup bond and one on a bridge, one on each
#   end: their addresses are their GIDs; RC and UD pingpong with data
#   checks between them.
. "$(dirname "$0")/lib.sh"

VID=42

tap_plan 10

# vlan_hosts: two_hosts, and VLAN VID on each veth end, shvN.VID with
# 198.18.VID.N/24, both GIDs listed
vlan_hosts() {
	local n

	two_hosts 1500 || return 1
	for n in 1 2; do
		ip -n "shns$n" link add link "shv$n" name "shv$n.$VID" \
			type vlan id "$VID" &&
		ip -n "shns$n" addr add "198.18.$VID.$n/24" dev "shv$n.$VID" &&
		ip -n "shns$n" link set "shv$n.$VID" up || return 1
	done
	wait_for 50 gid_index shca_ns1 "198.18.$VID.1" &&
	wait_for 50 gid_index shca_ns2 "198.18.$VID.2"
}

# vlan_gid N: the GID of shvN.VID's address names shvN.VID as its netdev
vlan_gid() {
	local i

	i=$(gid_index "shca_ns$1" "198.18.$VID.$1") || return 1
	grep -qx "shv$1.$VID" \
		"/sys/class/infiniband/shca_ns$1/ports/1/gid_attrs/ndevs/$i"
}

# vlan_tx N: packets shvN.VID sent
vlan_tx() {
	ip netns exec "shns$1" \
		cat "/sys/class/net/shv$1.$VID/statistics/tx_packets"
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

modprobe -a rdma_cm rdma_ucm ib_cm 8021q 2>/dev/null
tap_check "module loads" shca_load
tap_check "VLAN $VID on both ends: its addresses become GIDs" vlan_hosts
tap_check "the VLAN's GIDs have the VLAN devices as their netdevs" \
	eval 'vlan_gid 1 && vlan_gid 2'
t1=$(vlan_tx 1)
t2=$(vlan_tx 2)
tap_check "rping -V over the VLAN" server_client 120 \
	"rping -s -a 198.18.$VID.1 -C 10 -V" \
	"$(declare -f retry); retry 5 rping -c -a 198.18.$VID.1 -C 10 -V" cm
tap_check "both ends sent through their VLAN device" \
	test "$(vlan_tx 1)" -gt "$((t1 + 20))" -a "$(vlan_tx 2)" -gt "$((t2 + 20))"

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
