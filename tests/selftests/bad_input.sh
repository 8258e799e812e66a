#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bad `rdma link` input gets a clean error and breaks nothing.
. "$(dirname "$0")/lib.sh"

tap_plan 10

tap_check "module loads" shca_load
veth_pair veth5a veth5b
rdma link add shca0 type shca netdev veth5a

tap_check_fails "rdma link add on a non-existent netdev fails" \
	rdma link add shca1 type shca netdev nosuchdev0
tap_check_fails "duplicate device name fails" \
	rdma link add shca0 type shca netdev veth5b
# fill_funcs: 15 more devices on veth5a make 16 functions of its engine
fill_funcs() {
	local i

	for i in $(seq 1 15); do
		rdma link add "shcaf$i" type shca netdev veth5a || return 1
	done
}

# drop_funcs: delete them again
drop_funcs() {
	local i rc=0

	for i in $(seq 1 15); do
		rdma link delete "shcaf$i" || rc=1
	done
	return "$rc"
}

tap_check "16 devices on one netdev: the functions of its engine" fill_funcs
tap_check_fails "a 17th device on the same netdev fails" \
	rdma link add shca1 type shca netdev veth5a
tap_check "the 15 extra functions go" drop_funcs
ip link add link veth5b name veth5b.5 type vlan id 5
tap_check_fails "a VLAN netdev is refused" \
	rdma link add shca1 type shca netdev veth5b.5
# shellcheck disable=SC2016	# for the sh -c to expand
tap_check "nothing else was created" \
	sh -c '[ "$(ls /sys/class/infiniband | grep -c .)" = 1 ]'
tap_check "the existing device still works" \
	sh -c 'ibv_devinfo -d shca0 | grep -q PORT_ACTIVE'
rdma link delete shca0
ip link del veth5a
tap_check "rmmod shca" shca_unload
tap_done
