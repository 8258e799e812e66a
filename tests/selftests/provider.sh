#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The provider (libshca) opens the device, queries it and allocates PDs,
# from a plain libibverbs C program.
. "$(dirname "$0")/lib.sh"

# shellcheck disable=SC2119	# no module parameters
shca_load || exit $KSFT_FAIL
rdma link add shca0 type shca netdev lo || exit $KSFT_FAIL
shca_pd_test shca0
rc=$?
rdma link delete shca0
shca_unload || rc=$KSFT_FAIL
exit $rc
