#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The rdma-core example programs between two shca devices in two network
# namespaces (two "hosts" on a veth pair), with data validation where the
# program has it.
. "$(dirname "$0")/lib.sh"

tap_plan 9

tap_check "module loads" shca_load
tap_check "two hosts, one shca device each" two_hosts 1500
g1=$(gid_index shca_ns1 198.18.0.1)
g2=$(gid_index shca_ns2 198.18.0.2)
diag "gid indexes: $g1 $g2"

tap_check "ibv_rc_pingpong -c (validated)" pp ibv_rc_pingpong -c -n 200
tap_check "ibv_rc_pingpong 64 KiB messages" pp ibv_rc_pingpong -c -s 65536 -n 50
tap_check "ibv_uc_pingpong -c" pp ibv_uc_pingpong -c -n 200
tap_check "ibv_ud_pingpong -c" pp ibv_ud_pingpong -c -n 200 -s 1024
tap_check "ibv_srq_pingpong" pp ibv_srq_pingpong -n 100 -q 4

# RoCEv2 over IPv6: the GIDs of 2001:db8::1 and ::2
v6=$(gid_index shca_ns1 2001:db8::1)
w6=$(gid_index shca_ns2 2001:db8::2)
diag "IPv6 gid indexes: $v6 $w6"
tap_check "ibv_rc_pingpong -c over IPv6 GIDs" server_client 120 \
	"ibv_rc_pingpong -d shca_ns1 -g $v6 -c -n 200 -s 8192" \
	"ibv_rc_pingpong -d shca_ns2 -g $w6 -c -n 200 -s 8192 198.18.0.1" 18515
two_hosts_del
tap_check "rmmod shca" shca_unload
tap_done
