#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The tracepoints (kernel/shca_trace.h, Documentation/tracing.md): the
# module registers every event of system "shca", all disabled; disabled,
# traffic records nothing; enabled, an RC ping-pong, a UD ping-pong,
# RDMA READs, rdma_cm (kernel MADs on the GSI QP), RNR NAKs and ACK
# timeouts each leave the events of every stage they pass, with fields
# that agree across the two devices (trace_check.py follows each packet
# from the requester that built it to the QP that handled it and the
# buffer it was placed in, and counts the completions).
. "$(dirname "$0")/lib.sh"

T=/sys/kernel/tracing
EVENTS="shca_post_send shca_doorbell shca_db_state shca_fetch shca_req_pkt
	shca_xmit shca_wire_tx shca_rx shca_rx_handle shca_place shca_ack_send
	shca_ack_recv shca_retry shca_timeout shca_rnr shca_replay shca_cqe
	shca_comp_handler shca_qp_state shca_mc_copy shca_rkey_sweep
	shca_drdma_commit"
TRACE=/tmp/shca_trace.txt

if ! modprobe sch_netem 2>/dev/null; then
	echo "1..0 # SKIP sch_netem not available"
	exit $KSFT_SKIP
fi
if ! [ -d "$T/events" ] && ! mount -t tracefs nodev "$T" 2>/dev/null; then
	echo "1..0 # SKIP no tracefs"
	exit $KSFT_SKIP
fi
tap_plan 13

# every event of the system exists and is disabled
events_listed() {
	local e missing=0

	for e in $EVENTS; do
		if ! [ -d "$T/events/shca/$e" ]; then
			echo "# no event $e"
			missing=1
		elif [ "$(cat "$T/events/shca/$e/enable")" != 0 ]; then
			echo "# $e is enabled"
			missing=1
		fi
	done
	[ "$missing" = 0 ]
}

# trace_start [on]: an empty buffer, recording, the shca events enabled
# with "on" (disabled otherwise)
trace_start() {
	echo 0 > "$T/tracing_on"
	echo 0 > "$T/events/shca/enable"
	echo 4096 > "$T/buffer_size_kb"
	: > "$T/trace"
	[ "${1:-}" = on ] && echo 1 > "$T/events/shca/enable"
	echo 1 > "$T/tracing_on"
}

# traced ON|OFF "CASE ARGS" CMD...: CMD with the events enabled (ON) or
# not, then trace_check.py CASE on what the buffer holds
traced() {
	local on=$1 check=$2 rc

	shift 2
	trace_start "$on"
	"$@"
	rc=$?
	echo 0 > "$T/tracing_on"
	echo 0 > "$T/events/shca/enable"
	cat "$T/trace" > "$TRACE"
	[ "$rc" = 0 ] || return 1
	# shellcheck disable=SC2086	# CASE ARGS: a list, split on purpose
	set -- $check
	python3 "$SHCA_TOP/tests/selftests/trace_check.py" "$1" "$TRACE" "${@:2}"
}

# rnr DEV1 GIDX1 DEV2 GIDX2: DEV1 sends 4 messages to DEV2, which posts
# its receives late (RNR NAKs; rnr.sh)
rnr() {
	timeout "$(tmo 60)" shca_stream_test -m rnr -n 4 -I 15 "$@" > /tmp/rnr.out 2>&1 ||
		{ sed 's/^/# /' /tmp/rnr.out | tail -20; return 1; }
}

# delayed CMD...: CMD with every RoCE packet shca_ns1 sends held 150 ms,
# more than ibv_rc_pingpong's ACK timeout (4.096 us << 14, 67 ms)
delayed() {
	local rc

	netem shns1 shv1 delay 150ms || return 1
	"$@"
	rc=$?
	netem shns1 shv1
	return "$rc"
}

tap_check "module loads" shca_load
tap_check "two hosts, one shca device each" two_hosts 1500
g1=$(gid_index shca_ns1 198.18.0.1)
g2=$(gid_index shca_ns2 198.18.0.2)

tap_check "every event of system shca registered, all disabled" events_listed
tap_check "disabled: an RC ping-pong records nothing" \
	traced off none pp ibv_rc_pingpong -c -n 20
tap_check "RC ping-pong, 4 KiB: fetch, packets built, sent, received, handled, placed, ACKed, completed" \
	traced on "rc 20 4096 1024" pp ibv_rc_pingpong -c -n 20 -s 4096
tap_check "UD ping-pong, 1 KiB: datagrams followed to their buffers" \
	traced on "ud 10 1024" pp ibv_ud_pingpong -c -n 10 -s 1024
tap_check "RDMA READ, 8 KiB: each request's responses placed at their offsets" \
	traced on "read 10 8192 1024 shca_ns2" server_client 120 \
	"ib_read_lat -d shca_ns1 -x $g1 -F $PT_OPTS -p 18801 -m 1024 -s 8192 -n 10" \
	"ib_read_lat -d shca_ns2 -x $g2 -F $PT_OPTS -p 18801 -m 1024 -s 8192 -n 10 198.18.0.1" \
	18801
tap_check "rdma_cm: kernel posts and handler calls of the GSI QP's MADs" \
	traced on cm server_client 120 "rping -s -a 198.18.0.1 -C 3 -v" \
	"rping -c -a 198.18.0.1 -C 3 -v" cm
tap_check "RNR NAKs: the wait, the replay and the packets sent again" \
	traced on "rnr shca_ns2 shca_ns1" rnr shca_ns2 "$g2" shca_ns1 "$g1"
tap_check "ACK timeouts: the timeout, the replay and the PSN sent again" \
	traced on "timeout shca_ns2" delayed pp ibv_rc_pingpong -c -n 3
tap_check "disabled again: nothing recorded" \
	traced off none pp ibv_rc_pingpong -c -n 20
tap_check "the devices still talk" pp ibv_rc_pingpong -c -n 20
two_hosts_del
tap_check "rmmod shca" shca_unload
tap_done
