#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The device as verbs tools see it: ibv_devices / ibv_devinfo -v show the
# port active with the MTU and RoCEv2 GIDs of its netdev, the port follows
# the netdev's carrier and MTU, sysfs and counters are there.
. "$(dirname "$0")/lib.sh"

tap_plan 21

devinfo() {
	ibv_devinfo -v -d "$1" 2>&1
}

port_field() {	# DEV FIELD -> value of "FIELD: value" in ibv_devinfo -v
	devinfo "$1" | sed -n "s/^[[:space:]]*$2:[[:space:]]*//p" | head -1
}

mtu_is() {	# DEV MTU
	[ "$(port_field "$1" active_mtu)" = "$2 ($(mtu_enum "$2"))" ]
}

mtu_enum() {
	case $1 in 256) echo 1 ;; 512) echo 2 ;; 1024) echo 3 ;;
	2048) echo 4 ;; 4096) echo 5 ;; esac
}

state_is() {	# DEV STATE
	port_field "$1" state | grep -q "^$2"
}

has_gid() {	# DEV GID-TEXT
	devinfo "$1" | grep -Eq "GID\[ *[0-9]+\]:[[:space:]]+$2, RoCE v2"
}

tap_check "module loads" shca_load
veth_pair veth1a veth1b 1500
ip addr add 198.18.11.1/24 dev veth1a
ip -6 addr add 2001:db8:11::1/64 dev veth1a nodad
tap_check "rdma link add shca0 on a veth" \
	rdma link add shca0 type shca netdev veth1a
tap_check "ibv_devices lists shca0" sh -c 'ibv_devices | grep -qw shca0'
tap_check "ibv_devinfo opens shca0 through libshca" \
	sh -c 'ibv_devinfo -d shca0 | grep -q "hca_id:[[:space:]]*shca0"'
tap_check "port is PORT_ACTIVE" state_is shca0 PORT_ACTIVE
# shellcheck disable=SC2016	# for the sh -c to expand
tap_check "link layer is Ethernet" \
	sh -c '[ "$(ibv_devinfo -v -d shca0 | sed -n "s/^[[:space:]]*link_layer:[[:space:]]*//p")" = Ethernet ]'
tap_check "active_mtu 1024 on a 1500-byte netdev" mtu_is shca0 1024
tap_check "RoCEv2 GID for the IPv4 address" \
	wait_for 50 has_gid shca0 ::ffff:198.18.11.1
tap_check "RoCEv2 GID for the IPv6 address" \
	wait_for 50 has_gid shca0 2001:db8:11::1
ip link set veth1a mtu 9000; ip link set veth1b mtu 9000
tap_check "active_mtu follows the netdev MTU (9000 -> 4096)" \
	mtu_is shca0 4096
ip link set veth1a mtu 600
tap_check "active_mtu follows the netdev MTU (600 -> 256)" mtu_is shca0 256
ip link set veth1b down
tap_check "peer down: carrier lost, port leaves ACTIVE" \
	wait_for 30 state_is shca0 PORT_DOWN
ip link set veth1b up
tap_check "peer up: port ACTIVE again" wait_for 30 state_is shca0 PORT_ACTIVE
ip link set veth1a down
tap_check "netdev down: port DOWN" wait_for 30 state_is shca0 PORT_DOWN
ip link set veth1a up
wait_for 30 state_is shca0 PORT_ACTIVE
# shellcheck disable=SC2016	# for the sh -c to expand
tap_check "sysfs hca_type is shca, parent is the netdev" \
	sh -c '[ "$(cat /sys/class/infiniband/shca0/hca_type)" = shca ] &&
	       [ "$(cat /sys/class/infiniband/shca0/parent)" = veth1a ]'
tap_check "hw counters readable with rdma statistic" \
	sh -c 'rdma statistic show link shca0/1 | grep -q rx_pkts'
tap_check "rdma -dd resource show qp: the GSI QP's engine state" \
	sh -c 'rdma -dd resource show qp link shca0/1 lqpn 1 |
	       grep -q "drv_req_psn 0x[0-9a-f]* .*drv_fetched [0-9]* .*drv_db_state 0"'
tap_check "rdma link add shca1 on lo" rdma link add shca1 type shca netdev lo
tap_check "lo device: active_mtu 4096, GID ::ffff:127.0.0.1" \
	sh -c "$(declare -f devinfo port_field mtu_is mtu_enum has_gid wait_for); mtu_is shca1 4096 && wait_for 50 has_gid shca1 ::ffff:127.0.0.1"
tap_check "rdma link delete removes both devices" \
	sh -c 'rdma link delete shca0 && rdma link delete shca1 &&
	       ! ibv_devices | grep -q shca'
ip link del veth1a
tap_check "rmmod shca" shca_unload
tap_done
