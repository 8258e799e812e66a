#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RC on a hostile network between two shca devices in two namespaces:
# tc netem on both ends of the veth pair loses (1 %, 5 %; 10 % in one
# direction, see below), duplicates, reorders or corrupts RoCE packets in
# both directions (only RoCE: perftest's TCP side channel is spared, see
# netem in lib.sh).  Each case
# moves data with shca_stream_test (SEND, SEND_WITH_IMM, WRITE,
# WRITE_WITH_IMM and READ, 0 bytes to 64 MTUs, every byte and every
# completion checked) and with a perftest program, then checks that the
# counters of the recovery moved and that no fatal NAK was sent.  Last,
# atomics under 5 % loss both ways must end at the exact sum.
#
# Sizes: SHCA_LOSS_MIB MiB per case and tool (default 4), SHCA_LOSS_ATOMICS
# atomics (default 1000).  The
# soak is SHCA_LOSS_MIB=64 SHCA_LOSS_ATOMICS=10000, which needs a larger
# SHCA_TEST_TIMEOUT (see Documentation/testing.md).
. "$(dirname "$0")/lib.sh"

MIB=${SHCA_LOSS_MIB:-4}
ATOMICS=${SHCA_LOSS_ATOMICS:-1000}
DEVS="shca_ns1 shca_ns2"

if ! modprobe sch_netem 2>/dev/null; then
	echo "1..0 # SKIP sch_netem not available"
	exit $KSFT_SKIP
fi
tap_plan 24

tap_check "module loads" shca_load
tap_check "two hosts, MTU 9000 (path MTU 4096)" two_hosts 9000 || {
	two_hosts_del
	shca_unload
	tap_done
}
g1=$(gid_index shca_ns1 198.18.0.1)
g2=$(gid_index shca_ns2 198.18.0.2)

# netem (lib.sh) drops, duplicates, reorders and corrupts RoCE packets
# only: perftest's TCP side channel and ARP pass untouched.  Check it
# with every RoCE packet lost: a TCP exchange (after ARP) still works.
ECHO=$(cd "$(dirname "$0")" && pwd)/tcp_echo.py
roce_only() {
	local pid rc

	netem shns1 shv1 loss 100% && netem shns2 shv2 loss 100% &&
	ip -n shns1 neigh flush dev shv1 && ip -n shns2 neigh flush dev shv2 ||
		return 1
	ip netns exec shns1 timeout "$(tmo 30)" "$ECHO" server 198.18.0.1 18699 &
	pid=$!
	wait_for 300 listening_or_gone shns1 18699 "$pid"
	ip netns exec shns2 timeout "$(tmo 20)" "$ECHO" client 198.18.0.1 18699
	rc=$?
	wait "$pid" || rc=1
	return "$rc"
}
tap_check "netem hits RoCE only: TCP passes under 100 % loss" roce_only

# stream MIB ARGS...: shca_stream_test from shca_ns1 (requester) to
# shca_ns2; its diagnostics are shown, all of its output when it fails.
stream() {
	local mib=$1 rc

	shift
	timeout "$(tmo 280)" shca_stream_test -b "$mib" -M 4096 -z 262144 -q 32 "$@" \
		shca_ns1 "$g1" shca_ns2 "$g2" > /tmp/stream.out 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then
		grep '^# ' /tmp/stream.out | grep -v '^# seed'
	else
		sed 's/^/# /' /tmp/stream.out | tail -40
	fi
	return "$rc"
}

port=18700
# perf TEST MIB: perftest TEST with 128 KiB messages, client (requester)
# in shns2; a failure shows the client's output first
perf() {
	local rc

	port=$((port + 1))
	server_client 280 \
		"$1 -d shca_ns1 -x $g1 -F $PT_OPTS -p $port -s 131072 -n $(($2 * 8))" \
		"$1 -d shca_ns2 -x $g2 -F $PT_OPTS -p $port -s 131072 -n $(($2 * 8)) 198.18.0.1" \
		"$port" > /tmp/perf.out
	rc=$?
	[ "$rc" = 0 ] || sed -n '/^# client rc/,$p' /tmp/perf.out | grep -v '^#  *-*$'
	return "$rc"
}

# moved "COUNTER..." ...: each argument is a group of counters whose sum
# over both devices must have moved since ctr_snap; and no fatal NAK.
moved() {
	ctr_moved "$DEVS" "$@"
}

# net_case NAME "NETEM ARGS" MIB PERFTEST "COUNTERS"...: one condition,
# on both directions ("NETEM ARGS" starting with "1way": only on shv1,
# i.e. on shca_stream_test's requests and on perftest's responses)
net_case() {
	local name=$1 args=$2 mib=$3 pt=$4 t0=$EPOCHREALTIME

	shift 4
	# shellcheck disable=SC2086
	case $args in
	1way*)	netem shns1 shv1 ${args#1way} && netem shns2 shv2 ;;
	*)	netem shns1 shv1 $args && netem shns2 shv2 $args ;;
	esac || diag "netem $args failed"
	# shellcheck disable=SC2086	# DEVS: a list of names, split on purpose
	ctr_snap $DEVS
	stream "$mib" > /tmp/case.out
	tap_ok $? "$name: shca_stream_test, $mib MiB, every byte and completion checked"
	cat /tmp/case.out
	tap_check "$name: $pt, $mib MiB" perf "$pt" "$mib"
	tap_check "$name: recovery counters moved, no fatal NAK" moved "$@"
	# shellcheck disable=SC2086	# DEVS: a list of names, split on purpose
	ctr_diag $DEVS
	diag "$name: $(elapsed "$t0") s"
}

net_case "loss 1%" "loss 1%" "$MIB" ib_write_bw \
	retransmit_pkts "nak_seq_rcvd timeouts" "nak_seq_sent rx_drop_psn"
net_case "loss 5%" "loss 5%" "$MIB" ib_send_bw \
	retransmit_pkts "nak_seq_rcvd timeouts" "nak_seq_sent rx_drop_psn"
# Heavy loss in one direction.  A loss episode ends the connection with
# RETRY_EXC_ERR, by design, when the replay after the first sign of loss
# and the 6 after it (retry_cnt 7, the most RC allows, is spent then)
# each lose their first packet: p^7 per episode, and a run has about
# p x (its packets) episodes.  At 20 % that is 1.3e-5 per episode and
# about 1 % of 4 MiB runs of 1 KiB packets (16 % of the soak's 64 MiB);
# at 10 %, 1e-7 and 4e-5.
net_case "loss 10% one way" "1way loss 10%" "$MIB" ib_read_bw \
	retransmit_pkts "nak_seq_rcvd timeouts" "nak_seq_sent rx_drop_psn"
net_case "duplicate 5%" "duplicate 5%" "$MIB" ib_write_bw dup_req
net_case "reorder 10%" "delay 1ms reorder 90%" "$MIB" ib_send_bw \
	"nak_seq_sent rx_drop_psn dup_req"
# netem flips a bit in the linear part of a packet only; with
# scatter-gather on, shca sends RC payload as page fragments, so only
# headers would be hit: turn it off so payload bytes are corrupted too
sg_off() {
	ip netns exec shns1 ethtool -K shv1 sg off &&
	ip netns exec shns2 ethtool -K shv2 sg off
}
if ! command -v ethtool > /dev/null || ! sg_off; then
	diag "scatter-gather stays on: corruption hits headers only"
fi
net_case "corrupt 1%" "corrupt 1%" "$MIB" ib_read_bw \
	rx_drop_bad_icrc retransmit_pkts

# atomics under 5 % loss both ways: every fetch-add once, the word at the
# exact sum.  Not 10 %: by the rule above, with p = 0.19 (request or
# response lost), about 0.2 % of runs of 1000 atomics would fail (2 % of
# the soak's 10000); at 5 %, p = 0.0975 and p^7 = 8e-8
# (Documentation/testing.md, "Failures explained")
netem shns1 shv1 loss 5%
netem shns2 shv2 loss 5%
# shellcheck disable=SC2086	# DEVS: a list of names, split on purpose
ctr_snap $DEVS
t0=$EPOCHREALTIME
stream 1 -m atomic -n "$ATOMICS" > /tmp/case.out
tap_ok $? "loss 5%: $ATOMICS fetch-adds/compare-swaps, each result and the final word exact"
cat /tmp/case.out
tap_check "loss 5%: atomics retried and answered from the saved result" \
	moved "nak_seq_rcvd timeouts" dup_req
diag "atomics: $(elapsed "$t0") s"

two_hosts_del
tap_check "rmmod shca" shca_unload
tap_done
