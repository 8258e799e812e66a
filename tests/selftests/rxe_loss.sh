#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# loss.sh's network conditions with the kernel's rdma_rxe as the peer:
# rxe in the initial namespace on one end of a veth pair (rxe works only
# there), shca in its own namespace on the other, tc netem on the RoCE
# packets both ends send (see netem in lib.sh).
# Each case runs shca_stream_test both ways (shca requester -> rxe
# responder, rxe requester -> shca responder) and one perftest program,
# then checks shca's recovery counters; atomics under 5 % loss both
# ways (not 10 %: see loss.sh).  (perftest costs ~10 s a run in the TCG
# guest: outside the soak only the 5 % case runs it.)
#
# Sizes: half of SHCA_LOSS_MIB MiB per case and direction (default 2),
# SHCA_LOSS_ATOMICS / 2 atomics (default 500).  See loss.sh for the soak.
. "$(dirname "$0")/lib.sh"

MIB=$(( ${SHCA_LOSS_MIB:-4} / 2 > 0 ? ${SHCA_LOSS_MIB:-4} / 2 : 1 ))
SOAK=$(( ${SHCA_LOSS_MIB:-4} >= 16 ))
ATOMICS=$(( ${SHCA_LOSS_ATOMICS:-1000} / 2 ))

# rdma_rxe's own bugs, which the cases steer around on the kernels that
# have them (6.1's rxe has neither; Documentation/testing.md has the
# evidence):
# - a retransmitted RDMA READ after a zero-byte RDMA WRITE/READ, and any
#   retransmitted zero-byte READ, fail in rxe's responder (6.12
#   rxe_resp.c: read_reply() takes the MR of the newest request's
#   length, duplicate_request() compares the R_Key with the 0 it saved
#   for a zero-byte READ): while rxe is the responder, shca_stream_test
#   sends no zero-byte RDMA WRITE/READ (-Z);
# - an ACK that arrives after newer READ response packets (reordered, or
#   a copy netem's duplication enqueued again at the root qdisc behind
#   them) makes rxe's completer complete the READ early, without the rest
#   of its data, and WARN (6.12 rxe_comp.c: check_psn() passes it on,
#   check_ack() ends the READ state, then COMPST_ERROR with a success
#   status): while rxe is the requester, reordering and duplication spare
#   shca's ACKs.
case $SHCA_KVER in
6.1.*)	RXE_RESP_ARGS=(); RXE_SPARE_ACKS= ;;
*)	RXE_RESP_ARGS=(-Z); RXE_SPARE_ACKS=1 ;;
esac

if ! modprobe rdma_rxe 2>/dev/null || ! modprobe sch_netem 2>/dev/null; then
	echo "1..0 # SKIP rdma_rxe or sch_netem not available"
	exit $KSFT_SKIP
fi
tap_plan 30

tap_check "module loads" shca_load
tap_check "rxe in the initial namespace, shca in another, MTU 9000" \
	rxe_peer 9000 || {
	rxe_peer_del
	shca_unload
	tap_done
}

# stream DIR MIB ARGS...: shca_stream_test, DIR "shca" = shca requester
stream() {
	local dir=$1 mib=$2 rc

	shift 2
	if [ "$dir" = shca ]; then
		set -- "${RXE_RESP_ARGS[@]}" "$@" shca_i "$gs" rxe_i "$gr"
	else
		set -- "$@" rxe_i "$gr" shca_i "$gs"
	fi
	timeout "$(tmo 280)" shca_stream_test -b "$mib" -M 4096 -z 262144 -q 32 "$@" \
		> /tmp/stream.out 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then
		grep '^# ' /tmp/stream.out | grep -v '^# seed'
	else
		sed 's/^/# /' /tmp/stream.out | tail -40
	fi
	return "$rc"
}

port=18800
# perf DIR TEST MIB: perftest, the client (requester) on side DIR
perf() {
	local dir=$1 t=$2 n=$3 rc

	port=$((port + 1))
	if [ "$dir" = shca ]; then
		ns_server_client - shns2 280 \
			"$t -d rxe_i -x $gr -F $PT_OPTS -p $port -s 131072 -n $((n * 8))" \
			"$t -d shca_i -x $gs -F $PT_OPTS -p $port -s 131072 -n $((n * 8)) 198.18.1.1" \
			"$port" > /tmp/perf.out
	else
		ns_server_client shns2 - 280 \
			"$t -d shca_i -x $gs -F $PT_OPTS -p $port -s 131072 -n $((n * 8))" \
			"$t -d rxe_i -x $gr -F $PT_OPTS -p $port -s 131072 -n $((n * 8)) 198.18.1.2" \
			"$port" > /tmp/perf.out
	fi
	rc=$?
	[ "$rc" = 0 ] || sed -n '/^# client rc/,$p' /tmp/perf.out | grep -v '^#  *-*$'
	return "$rc"
}

# moved "COUNTER..." ...: each group of shca counters moved; no fatal NAK
moved() {
	ctr_moved shca_i "$@"
}

# netem_drops NS DEV: the packets DEV's netem has dropped so far (its
# "Sent ... (dropped N, ...)" line; 0 without a netem)
netem_drops() {
	local tc=(tc)

	[ "$1" = - ] || tc=(tc -n "$1")
	"${tc[@]}" -s qdisc show dev "$2" | awk '
		/^qdisc netem/ { on = 1; next }
		on && /dropped/ { sub(/,/, "", $7); n = $7; exit }
		END { print n + 0 }'
}

# net_case NAME "NETEM ARGS" MIB "PERFTEST DIR" "COUNTERS"...
# A group naming retransmit_pkts is asked to move only when netem dropped
# one of shca's packets in the shca -> rxe stream, where all of them are
# requests: at 1 % loss a stream of some 400 packets loses none about
# once in 70 runs, and then there is nothing to retransmit.
net_case() {
	local name=$1 args=$2 mib=$3 pt=$4 t0=$EPOCHREALTIME d0 lost g
	local groups=()

	shift 4
	# shellcheck disable=SC2086
	case $args in
	1way*)	netem - shvr && netem shns2 shv2 ${args#1way} ;;
	*)	netem - shvr $args && netem shns2 shv2 $args ;;
	esac || diag "netem $args failed"
	ctr_snap shca_i rxe_i
	d0=$(netem_drops shns2 shv2)
	stream shca "$mib" > /tmp/case.out
	tap_ok $? "$name: shca_stream_test shca -> rxe, $mib MiB checked"
	cat /tmp/case.out
	lost=$(($(netem_drops shns2 shv2) - d0))
	for g in "$@"; do
		if [ "$lost" = 0 ] && [ "$g" = retransmit_pkts ]; then
			diag "$name: netem dropped none of shca's requests: no retransmission asked for"
			continue
		fi
		groups+=("$g")
	done
	# shellcheck disable=SC2086
	case $args in
	*reorder*|*duplicate*)	[ -z "$RXE_SPARE_ACKS" ] ||
			NETEM_SPARE_ACKS=1 netem shns2 shv2 $args ;;
	esac
	stream rxe "$mib" > /tmp/case.out
	tap_ok $? "$name: shca_stream_test rxe -> shca, $mib MiB checked"
	cat /tmp/case.out
	# shellcheck disable=SC2086
	case $args in
	*reorder*|*duplicate*)	netem shns2 shv2 $args ;;
	esac
	# shellcheck disable=SC2086
	if [ "$SOAK" = 1 ] || [ "$name" = "loss 5%" ]; then
		tap_check "$name: ${pt% *} ${pt#* } requester, $mib MiB" \
			perf ${pt#* } ${pt% *} "$mib"
	else
		tap_skip "$name: ${pt% *}" "perftest only in the soak (SHCA_LOSS_MIB >= 16)"
	fi
	tap_check "$name: shca's recovery counters moved, no fatal NAK" \
		moved "${groups[@]}"
	ctr_diag shca_i rxe_i
	diag "$name: $(elapsed "$t0") s"
}

net_case "loss 1%" "loss 1%" "$MIB" "ib_write_bw shca" \
	retransmit_pkts "nak_seq_sent rx_drop_psn dup_req"
net_case "loss 5%" "loss 5%" "$MIB" "ib_send_bw rxe" \
	retransmit_pkts "nak_seq_sent rx_drop_psn dup_req"
# 10 % on shca's egress only (see loss.sh): shca's requests when it is
# the requester, its responses when rxe is
net_case "loss 10% one way" "1way loss 10%" "$MIB" "ib_read_bw shca" \
	retransmit_pkts "nak_seq_sent rx_drop_psn dup_req"
net_case "duplicate 5%" "duplicate 5%" "$MIB" "ib_write_bw rxe" dup_req
net_case "reorder 10%" "delay 1ms reorder 90%" "$MIB" "ib_send_bw shca" \
	"nak_seq_sent nak_seq_rcvd rx_drop_psn dup_req"
net_case "corrupt 1%" "corrupt 1%" "$MIB" "ib_read_bw rxe" rx_drop_bad_icrc

netem - shvr loss 5%
netem shns2 shv2 loss 5%
ctr_snap shca_i rxe_i
t0=$EPOCHREALTIME
stream shca 1 -m atomic -n "$ATOMICS" > /tmp/case.out
tap_ok $? "loss 5%: $ATOMICS atomics shca -> rxe, each result and the final word exact"
cat /tmp/case.out
stream rxe 1 -m atomic -n "$ATOMICS" > /tmp/case.out
tap_ok $? "loss 5%: $ATOMICS atomics rxe -> shca, each result and the final word exact"
cat /tmp/case.out
tap_check "loss 5%: shca retried atomics and answered duplicates from the saved result" \
	moved "nak_seq_rcvd timeouts" dup_req
ctr_diag shca_i rxe_i
diag "atomics: $(elapsed "$t0") s"

rxe_peer_del
tap_check "rmmod shca" shca_unload
modprobe -r rdma_rxe 2>/dev/null
tap_done
