#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdma_cm over shca: connection setup through the GSI QP (QP1) and the
# kernel's CM, with rping verifying data and ucmatose.
. "$(dirname "$0")/lib.sh"

tap_plan 6

modprobe -a rdma_cm rdma_ucm ib_cm 2>/dev/null
tap_check "module loads" shca_load
tap_check "two hosts" two_hosts 1500
tap_check "rping -v, 20 verified transfers" server_client 120 \
	"rping -s -a 198.18.0.1 -C 20 -v -V" \
	"$(declare -f retry); retry 5 rping -c -a 198.18.0.1 -C 20 -v -V" cm
tap_check "ucmatose, 4 connections" server_client 120 \
	"ucmatose -b 198.18.0.1 -c 4 -C 10" \
	"$(declare -f retry); retry 5 ucmatose -s 198.18.0.1 -b 198.18.0.2 -c 4 -C 10" cm
two_hosts_del
tap_check "rmmod shca" shca_unload
tap_check "rdma_cm unloads" modprobe -r rdma_ucm rdma_cm
tap_done
