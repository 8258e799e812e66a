#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# shca talks to the kernel's own Soft-RoCE (rdma_rxe) on the wire: rxe in
# the initial namespace on one end of a veth pair (rxe works only there),
# shca in its own namespace on the other, traffic verified in both
# directions.
. "$(dirname "$0")/lib.sh"

tap_plan 12

if ! modprobe rdma_rxe 2>/dev/null; then
	echo "1..0 # SKIP rdma_rxe not available"
	exit $KSFT_SKIP
fi
modprobe -a rdma_cm rdma_ucm 2>/dev/null
tap_check "module loads" shca_load

setup() {
	ip netns add shns2 &&
	ip link add shvr type veth peer name shv2 netns shns2 &&
	ip link set shvr up && ip -n shns2 link set shv2 up &&
	ip -n shns2 link set lo up &&
	ip addr add 198.18.1.1/24 dev shvr &&
	ip -n shns2 addr add 198.18.1.2/24 dev shv2 &&
	rdma link add rxe_i type rxe netdev shvr &&
	in_ns shns2 rdma link add shca_i type shca netdev shv2 &&
	wait_for 50 gid_index rxe_i 198.18.1.1 &&
	wait_for 50 gid_index shca_i 198.18.1.2
}
tap_check "rxe in the initial namespace, shca in another" setup
gr=$(gid_index rxe_i 198.18.1.1)
gs=$(gid_index shca_i 198.18.1.2)

# rxe_serves / shca_serves "SERVER CMD" "CLIENT CMD" [PORT]: the server on
# the rxe side (initial namespace) or on the shca side (shns2).
rxe_serves() {
	ns_server_client - shns2 120 "$@"
}

shca_serves() {
	ns_server_client shns2 - 120 "$@"
}

tap_check "ibv_rc_pingpong -c: rxe server, shca client" rxe_serves \
	"ibv_rc_pingpong -d rxe_i -g $gr -c -n 100 -p 18801" \
	"ibv_rc_pingpong -d shca_i -g $gs -c -n 100 -p 18801 198.18.1.1" 18801
tap_check "ibv_rc_pingpong -c 16 KiB: shca server, rxe client" shca_serves \
	"ibv_rc_pingpong -d shca_i -g $gs -c -s 16384 -n 50 -p 18802" \
	"ibv_rc_pingpong -d rxe_i -g $gr -c -s 16384 -n 50 -p 18802 198.18.1.2" 18802
tap_check "ibv_ud_pingpong -c: shca server, rxe client" shca_serves \
	"ibv_ud_pingpong -d shca_i -g $gs -c -s 512 -n 50 -p 18803" \
	"ibv_ud_pingpong -d rxe_i -g $gr -c -s 512 -n 50 -p 18803 198.18.1.2" 18803
tap_check "ib_write_bw (with immediate-free RDMA WRITE): shca -> rxe" rxe_serves \
	"ib_write_bw -d rxe_i -x $gr -F -n 100 -p 18804" \
	"ib_write_bw -d shca_i -x $gs -F -n 100 -p 18804 198.18.1.1" 18804
tap_check "ib_read_bw: rxe reads from shca" shca_serves \
	"ib_read_bw -d shca_i -x $gs -F -n 100 -p 18805" \
	"ib_read_bw -d rxe_i -x $gr -F -n 100 -p 18805 198.18.1.2" 18805
tap_check "ib_read_bw: shca reads from rxe" rxe_serves \
	"ib_read_bw -d rxe_i -x $gr -F -n 100 -p 18806" \
	"ib_read_bw -d shca_i -x $gs -F -n 100 -p 18806 198.18.1.1" 18806
tap_check "ib_send_bw: shca -> rxe" rxe_serves \
	"ib_send_bw -d rxe_i -x $gr -F -n 100 -p 18807" \
	"ib_send_bw -d shca_i -x $gs -F -n 100 -p 18807 198.18.1.1" 18807
tap_check "ib_atomic_bw: shca -> rxe" rxe_serves \
	"ib_atomic_bw -d rxe_i -x $gr -F -n 100 -p 18808" \
	"ib_atomic_bw -d shca_i -x $gs -F -n 100 -p 18808 198.18.1.1" 18808
tap_check "rping -v over rdma_cm: rxe server, shca client" rxe_serves \
	"rping -s -a 198.18.1.1 -C 10 -v -V" \
	"$(declare -f retry); retry 5 rping -c -a 198.18.1.1 -C 10 -v -V"
rdma link delete rxe_i
rdma link delete shca_i
ip netns del shns2
ip link del shvr 2>/dev/null
tap_check "rmmod shca" shca_unload
modprobe -r rdma_ucm rdma_cm rdma_rxe 2>/dev/null
tap_done
