#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# shca and rdma_rxe loaded together: shca on another UDP port, both
# devices work.  On rxe's own port shca gets a clean -EADDRINUSE.
. "$(dirname "$0")/lib.sh"

tap_plan 8

if ! modprobe rdma_rxe 2>/dev/null; then
	echo "1..0 # SKIP rdma_rxe not available"
	exit $KSFT_SKIP
fi
veth_pair veth6a veth6b
rdma link add rxe0 type rxe netdev veth6b
tap_check "rdma_rxe device rxe0 created (binds UDP 4791)" rdma_dev_exists rxe0

tap_check "shca loads with udp_port=4792" shca_load udp_port=4792
tap_check "shca0 created beside rxe0" rdma link add shca0 type shca netdev veth6a
tap_check "ibv_devices lists both" \
	sh -c 'ibv_devices | grep -qw shca0 && ibv_devices | grep -qw rxe0'
tap_check "both ports active" \
	sh -c 'ibv_devinfo -d shca0 | grep -q PORT_ACTIVE &&
	       ibv_devinfo -d rxe0 | grep -q PORT_ACTIVE'
rdma link delete shca0
shca_unload

shca_load udp_port=4791
tap_check_fails "shca on rxe's port 4791 in the same namespace fails" \
	rdma link add shca0 type shca netdev veth6a
tap_check "rxe0 still works" \
	sh -c 'ibv_devinfo -d rxe0 | grep -q PORT_ACTIVE'
tap_check "rmmod shca" shca_unload
rdma link delete rxe0
ip link del veth6a
modprobe -r rdma_rxe
tap_done
