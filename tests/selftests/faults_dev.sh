#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault survival: devices and netdevs pulled from under a running
# process (shca_fault_test traffic: RC pairs, SRQ, MRs, windows, UD).
#
# - rdma link delete of a device in use returns; the process gets
#   IBV_EVENT_DEVICE_FATAL and exits; its objects are freed; the device
#   can be created again and carries traffic.
# - ip link set down: the process gets IBV_EVENT_PORT_ERR and error
#   completions and exits; traffic fails while the link is down and works
#   again once it is up.
# - ip link del of the veth, and deleting a namespace, under traffic:
#   both devices go, the process gets DEVICE_FATAL and exits, nothing is
#   left.
# - ip link del of a netdev whose device has a client slow to let go
#   (tests/kmod/shca_slow_client.ko): the network core repeats
#   NETDEV_UNREGISTER every second meanwhile; the device and the netdev
#   still go.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faults_lib.sh"

tap_plan 31

tap_check "module loads" shca_load
tap_check "two hosts" two_hosts 1500
tap_check "object counts readable (debugfs shca/objects)" objs_mount
objs_base 2

gids() {
	g1=$(gid_index shca_ns1 198.18.0.1)
	g2=$(gid_index shca_ns2 198.18.0.2)
	devs="shca_ns1 $g1 shca_ns2 $g2"
}
gids

# neigh_ok NS ADDR: NS has a usable neighbour entry for ADDR (a datagram
# to the discard port asks for one if there is none)
neigh_ok() {
	ip netns exec "$1" bash -c "echo > /dev/udp/$2/9" 2>/dev/null
	ip -n "$1" neigh show "$2" |
		grep -Eq 'REACHABLE|STALE|DELAY|PROBE|PERMANENT'
}

# traffic_after_up: verified traffic; on failure, the neighbour tables
traffic_after_up() {
	# shellcheck disable=SC2086	# devs: the arguments, split on purpose
	timeout "$(tmo 120)" shca_fault_test -d 2 -n 4 traffic $devs && return 0
	diag "shns1: $(ip -n shns1 neigh show dev shv1 | tr '\n' ';')"
	diag "shns2: $(ip -n shns2 neigh show dev shv2 | tr '\n' ';')"
	return 1
}

# --- rdma link delete under traffic -----------------------------------
# shellcheck disable=SC2086	# devs: the arguments, split on purpose
ft_start -n 16 traffic $devs
tap_check "traffic running" ft_wait_ready
tap_check "rdma link delete shca_ns2 under traffic returns" \
	timeout "$(tmo 60)" rdma link delete shca_ns2
ft_wait 300
tap_check "the process exits on DEVICE_FATAL" ft_expect 2
tap_check "...reported for shca_ns2" ft_saw shca_ns2 DEVICE_FATAL
tap_check "every object of the process freed" wait_objs_idle 1
tap_check "shca_ns2 created again" sh -c '
	ip netns exec shns2 rdma link add shca_ns2 type shca netdev shv2'
wait_for 50 gid_index shca_ns2 198.18.0.2
gids
# shellcheck disable=SC2086	# devs: the arguments, split on purpose
tap_check "verified traffic over the new device" \
	timeout "$(tmo 120)" shca_fault_test -d 2 -n 4 traffic $devs

# --- netdev down / up under traffic -----------------------------------
# shellcheck disable=SC2086	# devs: the arguments, split on purpose
ft_start -n 16 traffic $devs
tap_check "traffic running" ft_wait_ready
ip -n shns1 link set shv1 down
ft_wait 300
tap_check "link down: the process gets errors and exits" ft_expect 3
tap_check "...after PORT_ERR on shca_ns1" ft_saw shca_ns1 PORT_ERR
tap_check "every object of the process freed" wait_objs_idle 2
# shellcheck disable=SC2086	# devs: the arguments, split on purpose
tap_check_fails "traffic while the link is down fails" \
	timeout "$(tmo 120)" shca_fault_test -d 2 -n 2 traffic $devs
ip -n shns1 link set shv1 up
tap_check "ports active again after link up" \
	wait_for 100 sh -c 'grep -q ACTIVE /sys/class/infiniband/shca_ns1/ports/1/state &&
		grep -q ACTIVE /sys/class/infiniband/shca_ns2/ports/1/state'
wait_for 50 gid_index shca_ns1 198.18.0.1
gids
# The RDMA core resolves an RC QP's destination MAC inside modify_qp (to
# RTR) with a 1 s limit of its own and fails the call with ETIMEDOUT past
# it, before shca sees the call; after the link came back, ARP starts
# over on both sides.  The neighbours are resolved first, so the
# check is about shca, not about the kernel's ARP timing.
wait_for 50 neigh_ok shns1 198.18.0.2 || diag "shns1: 198.18.0.2 unresolved"
wait_for 50 neigh_ok shns2 198.18.0.1 || diag "shns2: 198.18.0.1 unresolved"
tap_check "verified traffic after link up" traffic_after_up
tap_check "every object freed again" wait_objs_idle 2

# --- the veth deleted under traffic -----------------------------------
# shellcheck disable=SC2086	# devs: the arguments, split on purpose
ft_start -n 16 traffic $devs
tap_check "traffic running" ft_wait_ready
tap_check "ip link del shv1 under traffic returns" \
	timeout "$(tmo 60)" ip -n shns1 link del shv1
ft_wait 300
tap_check "the process exits on DEVICE_FATAL" ft_expect 2
tap_check "both devices removed" \
	wait_for 100 sh -c '[ ! -e /sys/class/infiniband/shca_ns1 ] &&
		[ ! -e /sys/class/infiniband/shca_ns2 ]'
tap_check "every object freed" wait_objs_idle 0

# --- a namespace deleted under traffic --------------------------------
two_hosts 1500
gids
# shellcheck disable=SC2086	# devs: the arguments, split on purpose
ft_start -n 16 traffic $devs
tap_check "traffic running" ft_wait_ready
tap_check "ip netns del shns2 under traffic returns" \
	timeout "$(tmo 60)" ip netns del shns2
ft_wait 300
tap_check "the process exits on DEVICE_FATAL" ft_expect 2
ns_gone() {
	wait_for 100 rdma_dev_gone shca_ns2 && wait_objs_idle 0
}
tap_check "its devices removed, every object freed" ns_gone
two_hosts_del

# --- a netdev deleted while a client's removal is slow ----------------
SLOW_KO=$SHCA_TOP/build/kmod/$SHCA_KVER/tests/kmod/shca_slow_client.ko
# (in a namespace of its own: the initial one's RoCEv2 port may be
# rdma_rxe's, which an earlier selftest loaded)
slow_setup() {
	ip netns add shslow &&
	ip -n shslow link add shslow0 type veth peer name shslow1 &&
	ip -n shslow link set shslow0 up &&
	in_ns shslow rdma link add shca_slow type shca netdev shslow0 &&
	insmod "$SLOW_KO" dev=shca_slow remove_ms=3000
}
# slow_gone PID: ip link del (PID) returned, device and netdev are gone
slow_gone() {
	! kill -0 "$1" && rdma_dev_gone shca_slow &&
	! ip -n shslow link show shslow0
}
tap_check "a device with a client slow to remove" slow_setup
ip -n shslow link del shslow0 &
slow_pid=$!
if tap_check "ip link del of its netdev returns, the device goes" \
	wait_for 600 slow_gone "$slow_pid"; then
	tap_check "...after the client's slow removal" \
		grep -qx 1 /sys/module/shca_slow_client/parameters/removed
	rmmod shca_slow_client
	ip netns del shslow
else
	# the device is stuck: nothing after this can run
	diag "$(ps -o pid,stat,wchan:32,cmd -p "$slow_pid")"
	tap_done
fi

leaks0=$(dmesg | grep -c 'shca: leak')
shca_unload
tap_check "module unloads with no leak report" \
	sh -c "! lsmod | grep -q '^shca ' && [ \$(dmesg | grep -c 'shca: leak') = $leaks0 ]"
tap_done
