#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# shca talks to the kernel's own Soft-RoCE (rdma_rxe) on the wire: rxe in
# the initial namespace on one end of a veth pair (rxe works only there),
# shca in its own namespace on the other, traffic verified in both
# directions.
. "$(dirname "$0")/lib.sh"

tap_plan 18

if ! modprobe rdma_rxe 2>/dev/null; then
	echo "1..0 # SKIP rdma_rxe not available"
	exit $KSFT_SKIP
fi
modprobe -a rdma_cm rdma_ucm 2>/dev/null
tap_check "module loads" shca_load

tap_check "rxe in the initial namespace, shca in another" rxe_peer

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
	"ib_write_bw -d rxe_i -x $gr -F $PT_OPTS -n 100 -p 18804" \
	"ib_write_bw -d shca_i -x $gs -F $PT_OPTS -n 100 -p 18804 198.18.1.1" 18804
# rxe answers AckReq alone: shca, asking for an ACK only where nothing
# follows at once, must still have every message answered without timeouts.
small_to_rxe() {
	local n=2000 acks tmo

	ctr_snap shca_i
	rxe_serves "ib_write_bw -d rxe_i -x $gr -F $PT_OPTS -s 64 -n $n -p 18809" \
		"ib_write_bw -d shca_i -x $gs -F $PT_OPTS -s 64 -n $n -p 18809 198.18.1.1" \
		18809 || return 1
	acks=$(ctr_sum shca_i ack_rcvd)
	tmo=$(ctr_sum shca_i timeouts)
	echo "# $n WRITEs of 64 B to rxe: $acks ACKs, $tmo timeouts"
	[ "$acks" -lt $((n / 2)) ] && [ "$tmo" = 0 ]
}
tap_check "ib_write_bw 64 B stream: shca -> rxe, ACKs coalesced" small_to_rxe
tap_check "ib_read_bw: rxe reads from shca" shca_serves \
	"ib_read_bw -d shca_i -x $gs -F $PT_OPTS -n 100 -p 18805" \
	"ib_read_bw -d rxe_i -x $gr -F $PT_OPTS -n 100 -p 18805 198.18.1.2" 18805
tap_check "ib_read_bw: shca reads from rxe" rxe_serves \
	"ib_read_bw -d rxe_i -x $gr -F $PT_OPTS -n 100 -p 18806" \
	"ib_read_bw -d shca_i -x $gs -F $PT_OPTS -n 100 -p 18806 198.18.1.1" 18806
tap_check "ib_send_bw: shca -> rxe" rxe_serves \
	"ib_send_bw -d rxe_i -x $gr -F $PT_OPTS -n 100 -p 18807" \
	"ib_send_bw -d shca_i -x $gs -F $PT_OPTS -n 100 -p 18807 198.18.1.1" 18807
tap_check "ib_atomic_bw: shca -> rxe" rxe_serves \
	"ib_atomic_bw -d rxe_i -x $gr -F $PT_OPTS -n 100 -p 18808" \
	"ib_atomic_bw -d shca_i -x $gs -F $PT_OPTS -n 100 -p 18808 198.18.1.1" 18808
tap_check "rping -v over rdma_cm: rxe server, shca client" rxe_serves \
	"rping -s -a 198.18.1.1 -C 10 -v -V" \
	"$(declare -f retry); retry 5 rping -c -a 198.18.1.1 -C 10 -v -V" cm
# The RC data cases of shca_rc_test with one QP on each side (the first
# device is the requester).  Error cases are left out: rxe's own choices
# differ there (e.g. it answers a too-long SEND with a remote operational
# error NAK).
# (-t matches substrings: "atomic" also selects the atomic error cases,
# which rxe's provider refuses at post time, so rxe requests atomic_1000;
# "atomic" selects the ATOMIC WRITE cases too, and "atomic_write" them
# alone: IBA 1.5's ATOMIC WRITE, which rxe has from Linux 6.2 on, both
# ways on 6.12; the cases skip when a device does not report it)
RC_DATA="send_0 send_1 send_4097 send_64k send_sges send_inline send_imm
	 write_0 write_1m write_sges write_imm read_1 read_1m read_sges
	 wc_fields unsignaled"
# shellcheck disable=SC2086
tap_check "RC data cases, shca requester -> rxe responder" \
	rc_cases shca_i "$gs" rxe_i "$gr" $RC_DATA atomic
# shellcheck disable=SC2086
tap_check "RC data cases, rxe requester -> shca responder" \
	rc_cases rxe_i "$gr" shca_i "$gs" $RC_DATA atomic_1000 atomic_write
# IBA 1.5's FLUSH (rxe has it from Linux 6.2 on, and must then interoperate;
# before, the program skips: no device reports it)
must=$(flush_must)
tap_check "FLUSH cases, shca requester -> rxe responder" \
	rc56 shca_flush_test shca_i rxe_i ${must:+"$must"}
tap_check "FLUSH cases, rxe requester -> shca responder" \
	rc56 shca_flush_test rxe_i shca_i ${must:+"$must"}
tap_check "SEND_WITH_INV from rxe invalidates a type 2 window on shca" \
	rc_cases rxe_i "$gr" shca_i "$gs" mw2_inv
rxe_peer_del
tap_check "rmmod shca" shca_unload
modprobe -r rdma_ucm rdma_cm rdma_rxe 2>/dev/null
tap_done
