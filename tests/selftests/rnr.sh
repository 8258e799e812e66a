#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Receiver not ready, with and without packet loss: shca_stream_test -m
# rnr sends 16 SENDs, SEND_WITH_IMMs and RDMA WRITE_WITH_IMMs (1 byte to
# 3 MTUs) to a receiver that posts its receives late, one every 15 ms
# (times SHCA_TIME_SCALE, as the ACK timeout stretches with it).
# With rnr_retry 7 every message must arrive, every byte verified; with
# rnr_retry 0 (or 3, under loss) and 3 receives, the 4th message must fail
# with RNR_RETRY_EXC_ERR and the rest be flushed.  Between two shca devices
# (shca_rc_test's rnr cases in rc_errors.sh cover SENDs without loss)
# and with rdma_rxe as the peer in both directions.
. "$(dirname "$0")/lib.sh"

if ! modprobe sch_netem 2>/dev/null; then
	echo "1..0 # SKIP sch_netem not available"
	exit $KSFT_SKIP
fi
have_rxe=0
modprobe rdma_rxe 2>/dev/null && have_rxe=1
tap_plan 15

tap_check "module loads" shca_load
tap_check "two hosts" two_hosts 1500
g1=$(gid_index shca_ns1 198.18.0.1)
g2=$(gid_index shca_ns2 198.18.0.2)

# rnr DEV1 GIDX1 DEV2 GIDX2 ARGS...: shca_stream_test -m rnr, DEV1 sends
rnr() {
	local d1=$1 i1=$2 d2=$3 i2=$4 rc

	shift 4
	timeout "$(tmo 120)" shca_stream_test -m rnr -n 16 "$@" "$d1" "$i1" "$d2" "$i2" \
		> /tmp/rnr.out 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then
		grep '^# ' /tmp/rnr.out | grep -v '^# seed'
	else
		sed 's/^/# /' /tmp/rnr.out | tail -30
	fi
	return "$rc"
}

# rnr_case DESC "SENDER" "RECEIVER" ARGS...: one run; the RNR NAK
# counters of the shca devices involved must have moved.  Every device's
# counters are printed after it, rdma_rxe's too: a stalled case then
# shows whether the requester still sent and what the responder dropped.
rnr_case() {
	local desc=$1 snd=$2 rcv=$3 devs="" all="" d rc t0=$EPOCHREALTIME

	shift 3
	for d in ${snd% *} ${rcv% *}; do
		all="$all $d"
		case $d in shca*) devs="$devs $d" ;; esac
	done
	# shellcheck disable=SC2086
	ctr_snap $all
	# shellcheck disable=SC2086
	rnr $snd $rcv "$@" > /tmp/case.out
	rc=$?
	# shellcheck disable=SC2086
	if [ "$rc" = 0 ] && [ "$(ctr_sum "$devs" rnr_nak_sent rnr_nak_rcvd)" -le 0 ]; then
		echo "# no RNR NAK counted on$devs" >> /tmp/case.out
		rc=1
	fi
	tap_ok "$rc" "$desc"
	cat /tmp/case.out
	# shellcheck disable=SC2086
	ctr_diag $all
	diag "$(elapsed "$t0") s"
}

lossy() {	# NS DEV ... pairs: 5 % loss on each
	while [ $# -ge 2 ]; do
		netem "$1" "$2" loss 5%
		shift 2
	done
}

A="shca_ns1 $g1"
B="shca_ns2 $g2"
rnr_case "shca: rnr_retry 7, receives posted late" "$A" "$B" -I 15
rnr_case "shca: rnr_retry 0, 3 receives: the 4th message fails, the rest flush" \
	"$A" "$B" -R 0 -P 3
lossy shns1 shv1 shns2 shv2
rnr_case "shca, loss 5%: rnr_retry 7, receives posted late" "$A" "$B" -I 15
rnr_case "shca, loss 5%: rnr_retry 0, 3 receives: the 4th fails, the rest flush" \
	"$A" "$B" -R 0 -P 3
rnr_case "shca, loss 5%: rnr_retry 3, 3 receives: the 4th fails, the rest flush" \
	"$A" "$B" -R 3 -P 3 -t 1
two_hosts_del

rxe_cases=(
	"rxe peer: shca sends, rnr_retry 7, receives posted late|shca|-I 15"
	"rxe peer: rxe sends, rnr_retry 7, receives posted late|rxe|-I 15"
	"rxe peer, loss 5%: shca sends, rnr_retry 7, receives posted late|shca|-I 15"
	"rxe peer, loss 5%: rxe sends, rnr_retry 7, receives posted late|rxe|-I 15"
	"rxe peer, loss 5%: shca sends, rnr_retry 0, 3 receives|shca|-R 0 -P 3"
	"rxe peer, loss 5%: rxe sends, rnr_retry 0, 3 receives|rxe|-R 0 -P 3"
)
if [ "$have_rxe" = 1 ] && tap_check "rxe in the initial namespace, shca in another" rxe_peer; then
	for c in "${rxe_cases[@]}"; do
		IFS='|' read -r desc who args <<< "$c"
		case $desc in *"loss 5%"*) lossy - shvr shns2 shv2 ;; esac
		# shellcheck disable=SC2086
		if [ "$who" = shca ]; then
			rnr_case "$desc" "shca_i $gs" "rxe_i $gr" $args
		else
			rnr_case "$desc" "rxe_i $gr" "shca_i $gs" $args
		fi
	done
	rxe_peer_del
else
	[ "$have_rxe" = 1 ] || tap_skip "rxe peer" "rdma_rxe not available"
	for c in "${rxe_cases[@]}"; do
		tap_skip "${c%%|*}" "no rxe peer"
	done
fi
tap_check "rmmod shca" shca_unload
modprobe -r rdma_rxe 2>/dev/null
tap_done
