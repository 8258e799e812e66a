#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# SRQ: receives through an SRQ, the SRQ limit event, bad SRQ arguments
# (shca_srq_test, a UD QP sending to itself through the same-host path).
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119	# no module parameters
shca_load || exit $KSFT_FAIL
veth_pair veth7a veth7b
ip addr add 198.18.7.1/24 dev veth7a
rdma link add shca0 type shca netdev veth7a || exit $KSFT_FAIL
wait_for 50 gid_index shca0 198.18.7.1
shca_srq_test shca0 "$(gid_index shca0 198.18.7.1)"
rc=$?
rdma link delete shca0
ip link del veth7a
shca_unload || rc=$KSFT_FAIL
exit $rc
