#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Device lifecycle: 100 rdma link add/delete cycles leave no reference
# behind, deleting the netdev (or its namespace) removes the device, rmmod
# with devices present removes them.
. "$(dirname "$0")/lib.sh"

tap_plan 10

tap_check "module loads" shca_load
veth_pair veth2a veth2b

cycle() {
	local i

	for i in $(seq 100); do
		rdma link add shca0 type shca netdev veth2a || return 1
		rdma link delete shca0 || return 1
	done
}
tap_check "100 x rdma link add/delete" cycle
tap_check "module refcount back to 0" \
	sh -c '[ "$(cat /sys/module/shca/refcnt)" = 0 ]'

rdma link add shca0 type shca netdev veth2a
ip link del veth2a
tap_check "deleting the netdev removes the device" \
	wait_for 50 rdma_dev_gone shca0

ip netns add nsx
ip link add veth4a type veth peer name veth4b
ip link set veth4a netns nsx
ip -n nsx link set veth4a up
ip netns exec nsx rdma link add shca2 type shca netdev veth4a
tap_check "device on a netdev in another namespace" rdma_dev_exists shca2
ip netns del nsx
tap_check "deleting the namespace removes its device" \
	wait_for 100 rdma_dev_gone shca2

veth_pair veth3a veth3b
tap_check "two devices on a veth pair" sh -c '
	rdma link add shca3 type shca netdev veth3a &&
	rdma link add shca4 type shca netdev veth3b &&
	[ -e /sys/class/infiniband/shca3 ] && [ -e /sys/class/infiniband/shca4 ]'
tap_check "rmmod with two devices present succeeds" shca_unload
tap_check "...and removed both devices" \
	sh -c '! ls /sys/class/infiniband 2>/dev/null | grep -q shca'
tap_check "module loads again afterwards" shca_load
shca_unload
ip link del veth3a
tap_done
