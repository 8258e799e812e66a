#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Device lifecycle: rdma link add/delete cycles leave no reference
# behind, deleting the netdev (or its namespace) removes the device, rmmod
# with devices present removes them, also while devices are being
# removed by rdma link delete and by netdev deletion at the same time.
#
# Sizes: 10 add/delete cycles and 4 rmmod races (100 and 20 under
# SHCA_LONG=1).  One cycle shows a reference left behind; 10 reuse the
# device's name, its function number and its slots many times over.  Each
# race round lets the three removals meet in another order; the long size
# is for the rarer interleavings.
. "$(dirname "$0")/lib.sh"

cycles=$(sized 10 100)
races=$(sized 4 20)
tap_plan 13

tap_check "module loads" shca_load
veth_pair veth2a veth2b

cycle() {
	local i

	for ((i = 0; i < cycles; i++)); do
		rdma link add shca0 type shca netdev veth2a || return 1
		rdma link delete shca0 || return 1
	done
}
tap_check "$cycles x rdma link add/delete" cycle
# shellcheck disable=SC2016	# for the sh -c to expand
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

module_gone() {
	! lsmod | grep -q '^shca '
}

# rmmod racing the two other ways a device goes: rdma link delete of one
# device and the deletion of the other's netdev (which takes the whole
# veth pair) start together with the unload.  Whichever wins, every
# device goes, rmmod succeeds (at once or, if a deletion held the
# module, when retried) and the module loads again.
race_rmmod() {
	local i

	for ((i = 1; i <= races; i++)); do
		shca_load || return 1
		veth_pair rca rcb || return 1
		rdma link add shr0 type shca netdev rca &&
			rdma link add shr1 type shca netdev rcb || return 1
		rdma link delete shr0 2>/dev/null &
		ip link del rcb 2>/dev/null &
		timeout "$(tmo 60)" rmmod shca 2>/dev/null
		wait
		wait_for 100 sh -c 'rmmod shca 2>/dev/null; ! lsmod | grep -q "^shca "' ||
			{ echo "# round $i: the module stays loaded"; return 1; }
		{ rdma_dev_gone shr0 && rdma_dev_gone shr1; } ||
			{ echo "# round $i: a device outlived the module"; return 1; }
		ip link del rca 2>/dev/null
	done
	module_gone
}
tap_check "$races x rmmod racing rdma link delete and netdev deletion" race_rmmod
tap_check "module loads after the races" shca_load
shca_unload

# tx_nice out of range is clamped to what the scheduler has: the
# parameter reads the clamped value and a device's stage thread runs at it.
nice_clamped() {
	local p ni rc=1

	shca_load tx_nice=50 || return 1
	veth_pair ncl0 ncl1 || return 1
	if rdma link add shn0 type shca netdev ncl0; then
		p=$(cat /sys/module/shca/parameters/tx_nice)
		ni=$(ps -o ni= -C shca_tx/ncl0 | tr -d ' ')
		echo "# tx_nice=50: parameter $p, thread nice '$ni'"
		[ "$p" = 19 ] && [ "$ni" = 19 ] && rc=0
		rdma link delete shn0
	fi
	ip link del ncl0
	shca_unload
	return "$rc"
}
tap_check "tx_nice out of range is clamped" nice_clamped
tap_done
