#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The provider (libshca) from plain libibverbs C programs on one device
# talking to itself: opening, querying and PDs (shca_pd_test); thread and
# parent domains with the application's allocators (shca_pdom_test);
# completion timestamps and the device clock (shca_cqts_test); a context,
# PD and MR imported (shca_import_test); FLUSH, through rdma-core 56.1's
# libibverbs (shca_flush_test; skipped on Linux 6.1).
. "$(dirname "$0")/lib.sh"

PD_CASES=11	# shca_pd_test's results with --mr
PDOM_CASES=12	# shca_pdom_test's
CQTS_CASES=6	# shca_cqts_test's
IMPORT_CASES=6	# shca_import_test's
FLUSH_CASES=10	# shca_flush_test's

tap_plan $((PD_CASES + PDOM_CASES + CQTS_CASES + IMPORT_CASES + FLUSH_CASES + 4))
# shellcheck disable=SC2119	# no module parameters
tap_check "module loads" shca_load || tap_done
tap_check "shca0 on lo" rdma link add shca0 type shca netdev lo
shca_pd_test shca0 --mr > /tmp/provider.pd 2>&1
tap_relay /tmp/provider.pd "$PD_CASES" "shca_pd_test: "
shca_pdom_test shca0 > /tmp/provider.pdom 2>&1
tap_relay /tmp/provider.pdom "$PDOM_CASES" "shca_pdom_test: "
shca_cqts_test shca0 > /tmp/provider.cqts 2>&1
tap_relay /tmp/provider.cqts "$CQTS_CASES" "shca_cqts_test: "
shca_import_test shca0 > /tmp/provider.import 2>&1
tap_relay /tmp/provider.import "$IMPORT_CASES" "shca_import_test: "
must=$(flush_must)
rc56 shca_flush_test shca0 shca0 ${must:+"$must"} > /tmp/provider.flush 2>&1
tap_relay /tmp/provider.flush "$FLUSH_CASES" "shca_flush_test: "
tap_check "shca0 deleted" rdma link delete shca0
tap_check "rmmod shca" shca_unload
tap_done
