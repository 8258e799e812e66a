#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Device limits: the queue limits shca reports hold at the limit and are
# refused one past it (shca_limits_test, two RC QPs of one device talking
# through the same-host path); the device's attributes read the same
# through ibv_devinfo.
. "$(dirname "$0")/lib.sh"

shca_load || exit $KSFT_FAIL
veth_pair veth8a veth8b
ip addr add 198.18.8.1/24 dev veth8a
rdma link add shca0 type shca netdev veth8a || exit $KSFT_FAIL
wait_for 50 gid_index shca0 198.18.8.1
shca_limits_test shca0
rc=$?
ibv_devinfo -v -d shca0 | grep -E "max_(cqe|qp_wr|sge|srq_wr|mr_size|qp|cq|mr):" |
	sed 's/^[[:space:]]*/# /'
rdma link delete shca0
ip link del veth8a
shca_unload || rc=$KSFT_FAIL
exit $rc
