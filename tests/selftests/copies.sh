#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fewer copies (issue 5).  Two shca devices in two namespaces joined by a
# veth pair (MTU 9000, path MTU 4096):
#
# - with scatter-gather on the veth, transmit attaches the source pages
#   to the packet instead of copying them, so the counters must show at
#   most ~1 CPU copy per delivered payload byte (payload_copy_bytes /
#   payload_rx_bytes <= 1.05, summed over both devices) for WRITE and
#   SEND of 64 KiB and 1 MiB messages, and tx_frag_bytes must move;
#   READ responses are copied into the packet (so that an invalidation
#   fences them: Documentation/architecture.md), ~2 copies per byte;
# - shca_stream_test (every byte and completion checked) over IPv4 and
#   IPv6, shca_rc_test's multi-SGE cases and a WRITE gathered from more
#   SGEs than an skb has fragments (the copy fallback) deliver correct
#   data, with no ICRC drop;
# - with scatter-gather off (ethtool -K sg off) everything still moves,
#   by copy: the ratio is ~2 (1.9 to 3: a retransmitted packet is copied
#   again but not delivered twice) and tx_frag_bytes stays put;
# - with netem delaying packets 200 ms, the process whose pages the queued
#   packets reference is killed (its MRs deregistered, pages unpinned and
#   unmapped) while they wait: the packets are delivered or dropped later
#   with no crash, WARN or leak, every object is freed, and the devices
#   carry verified traffic afterwards.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faults_lib.sh"

DEVS="shca_ns1 shca_ns2"

if ! command -v ethtool >/dev/null; then
	echo "1..0 # SKIP ethtool not installed"
	exit $KSFT_SKIP
fi
if ! modprobe sch_netem 2>/dev/null; then
	echo "1..0 # SKIP sch_netem not available"
	exit $KSFT_SKIP
fi
tap_plan 24
T0=$EPOCHREALTIME
exec 3>&1	# diagnostics that show even when a tap_check passes

two_hosts_tap 9000 "two hosts, MTU 9000 (path MTU 4096)"
wait_for 50 gid_index shca_ns1 2001:db8::1
wait_for 50 gid_index shca_ns2 2001:db8::2
g1v6=$(gid_index shca_ns1 2001:db8::1)
g2v6=$(gid_index shca_ns2 2001:db8::2)

# sg NS DEV on|off: set scatter-gather of DEV; sg_is NS DEV on|off: check
sg() {
	ip netns exec "$1" ethtool -K "$2" sg "$3"
}

sg_is() {
	ip netns exec "$1" ethtool -k "$2" |
		grep -q "^scatter-gather: $3"
}

sg_both() {
	sg shns1 shv1 "$1" && sg shns2 shv2 "$1" &&
		sg_is shns1 shv1 "$1" && sg_is shns2 shv2 "$1"
}

port=18900
# pt TEST SIZE ITERS: perftest TEST, server on shca_ns1, client on
# shca_ns2 (WRITE and SEND: ns2 sends the data; READ: ns1 does)
pt() {
	port=$((port + 1))
	server_client 240 "$1 -d shca_ns1 -x $g1 -F $PT_OPTS -p $port -s $2 -n $3" \
		"$1 -d shca_ns2 -x $g2 -F $PT_OPTS -p $port -s $2 -n $3 198.18.0.1" \
		"$port"
}

# ratio TEST SIZE ITERS LO HI FRAG: run pt; the payload delivered must
# cover every message, the copies per delivered byte (in hundredths)
# must lie in [LO, HI], and tx_frag_bytes must have moved (FRAG = moved)
# or not (FRAG = still).
ratio() {
	local t=$1 size=$2 n=$3 lo=$4 hi=$5 frag=$6 copy rx sent r

	# shellcheck disable=SC2086	# DEVS: a list of names, split on purpose
	ctr_snap $DEVS
	pt "$t" "$size" "$n" || return 1
	copy=$(ctr_sum "$DEVS" payload_copy_bytes)
	rx=$(ctr_sum "$DEVS" payload_rx_bytes)
	sent=$(ctr_sum "$DEVS" tx_frag_bytes)
	echo "copied $copy, delivered $rx, sent by reference $sent bytes"
	if [ "$rx" -lt $((size * n)) ]; then
		echo "delivered less than the $((size * n)) bytes sent"
		return 1
	fi
	r=$((copy * 100 / rx))
	echo "copies per delivered byte: $((r / 100)).$(printf %02d $((r % 100)))"
	case $frag in
	moved) [ "$sent" -gt 0 ] || { echo "tx_frag_bytes did not move"; return 1; } ;;
	still) [ "$sent" = 0 ] || { echo "tx_frag_bytes moved"; return 1; } ;;
	esac
	[ "$r" -ge "$lo" ] && [ "$r" -le "$hi" ]
}

# ratio_case DESC ARGS...: ratio ARGS as one TAP result, its figures shown
ratio_case() {
	local desc=$1 rc

	shift
	ratio "$@" > /tmp/ratio.out 2>&1
	rc=$?
	tap_ok "$rc" "$desc"
	if [ "$rc" = 0 ]; then
		grep -E '^(copied|copies)' /tmp/ratio.out | sed 's/^/# /'
	else
		sed 's/^/# /' /tmp/ratio.out | tail -30
	fi
}

# stream MIB G1 G2 [ARGS...]: shca_stream_test from shca_ns1 to shca_ns2
# (SEND, SEND_WITH_IMM, WRITE, WRITE_WITH_IMM, READ; 0 bytes to 64 MTUs;
# every byte and completion checked)
stream() {
	local mib=$1 a=$2 b=$3

	shift 3
	timeout "$(tmo 240)" shca_stream_test -b "$mib" -M 4096 -z 262144 -q 32 "$@" \
		shca_ns1 "$a" shca_ns2 "$b"
}

# frag_moved CMD...: CMD succeeds and tx_frag_bytes moved meanwhile
frag_moved() {
	# shellcheck disable=SC2086	# DEVS: a list of names, split on purpose
	ctr_snap $DEVS
	"$@" || return 1
	[ "$(ctr_sum "$DEVS" tx_frag_bytes)" -gt 0 ]
}

# bad_icrc: packets both devices dropped for a bad ICRC so far
bad_icrc() {
	local d v sum=0

	for d in $DEVS; do
		read -r v < "/sys/class/infiniband/$d/ports/1/hw_counters/rx_drop_bad_icrc"
		sum=$((sum + v))
	done
	echo "$sum"
}

tap_check "scatter-gather is on on both veth ends" sg_both on
icrc0=$(bad_icrc)
ratio_case "ib_write_bw 64 KiB: <= 1.05 copies per byte, sent by reference" \
	ib_write_bw 65536 100 90 105 moved
ratio_case "ib_write_bw 1 MiB: <= 1.05 copies per byte, sent by reference" \
	ib_write_bw 1048576 8 90 105 moved
ratio_case "ib_send_bw 64 KiB: <= 1.05 copies per byte, sent by reference" \
	ib_send_bw 65536 100 90 105 moved
ratio_case "ib_read_bw 64 KiB: READ responses copied, ~2 copies per byte" \
	ib_read_bw 65536 100 190 300 still
tap_check "shca_stream_test IPv4, 2 MiB: data verified, sent by reference" \
	frag_moved stream 2 "$g1" "$g2"
tap_check "shca_stream_test IPv6, 1 MiB: data verified, sent by reference" \
	frag_moved stream 1 "$g1v6" "$g2v6"
tap_check "shca_rc_test multi-SGE cases (several fragments per packet)" \
	timeout "$(tmo 120)" shca_rc_test -t sges shca_ns1 "$g1" shca_ns2 "$g2"
tap_check "shca_rc_test write_scatter (too many fragments: copied)" \
	timeout "$(tmo 120)" shca_rc_test -t write_scatter shca_ns1 "$g1" shca_ns2 "$g2"
tap_check "no packet dropped for a bad ICRC" test "$(bad_icrc)" = "$icrc0"

diag "sg on: $(elapsed "$T0") s"
tap_check "scatter-gather turned off on both veth ends" sg_both off
ratio_case "sg off: ib_write_bw 64 KiB copied: ~2 copies per byte" \
	ib_write_bw 65536 100 190 300 still
ratio_case "sg off: ib_read_bw 64 KiB copied: ~2 copies per byte" \
	ib_read_bw 65536 100 190 300 still
tap_check "sg off: shca_stream_test, 1 MiB, data verified" \
	stream 1 "$g1" "$g2"
tap_check "scatter-gather back on" sg_both on
diag "sg off: $(elapsed "$T0") s"

# backlog NS DEV MIN: the qdisc of DEV holds at least MIN packets of
# 1 KiB or more on average (data packets, not ACKs)
backlog() {
	tc -n "$1" -s qdisc show dev "$2" | awk -v min="$3" '
		$1 == "backlog" {
			b = $2 + 0
			if ($2 ~ /Kb$/) b *= 1024
			if ($2 ~ /Mb$/) b *= 1048576
			p = $3 + 0
			exit !(p >= min && b >= p * 1024)
		}
		END { if (p == "") exit 1 }'
}

# kill_queued TEST VICTIM: TEST (ib_write_bw or ib_read_bw) with 1 MiB
# messages under 200 ms of netem delay each way; once the data sender's
# queue holds packets built from the victim's pages, SIGKILL VICTIM
# (client or server): its QPs and MRs are destroyed, its pages unpinned
# and unmapped.  The other side's QP lives on and receives those packets
# (copying from the pages; READ responses carry copies) until the queue
# has drained; then it is killed too, and every object must be freed.
kill_queued() {
	local t=$1 victim=$2 spid cpid vpid opid qns qdev rc

	port=$((port + 1))
	if [ "$t" = ib_read_bw ]; then
		qns=shns1 qdev=shv1
	else
		qns=shns2 qdev=shv2
	fi
	netem shns1 shv1 delay 200ms limit 100000 &&
		netem shns2 shv2 delay 200ms limit 100000 || return 1
	ip netns exec shns1 "$t" -d shca_ns1 -x "$g1" -F "${PT_ARGS[@]}" \
		-p "$port" -s 1048576 -D 60 > /tmp/kq_srv.out 2>&1 &
	spid=$!
	if ! wait_for 300 listening_or_gone shns1 "$port" "$spid"; then
		kill -9 "$spid"
		wait "$spid"
		return 1
	fi
	ip netns exec shns2 "$t" -d shca_ns2 -x "$g2" -F "${PT_ARGS[@]}" \
		-p "$port" -s 1048576 -D 60 198.18.0.1 > /tmp/kq_cli.out 2>&1 &
	cpid=$!
	if [ "$victim" = server ]; then
		vpid=$spid opid=$cpid
	else
		vpid=$cpid opid=$spid
	fi
	t0=$EPOCHREALTIME
	wait_for 600 backlog "$qns" "$qdev" 32
	rc=$?
	echo "# $t $victim: $(tc -n "$qns" -s qdisc show dev "$qdev" |
		grep -o 'backlog [^ ]* [^ ]*') queued after $(elapsed "$t0") s; killed" >&3
	kill -9 "$vpid"
	wait "$vpid"
	# the queued packets drain (delivered or dropped) within the delay
	wait_for 100 sh -c "! tc -n $qns -s qdisc show dev $qdev | grep -q 'backlog [1-9]'" ||
		{ echo "the queue did not drain"; rc=1; }
	echo "# $t $victim: victim gone, queue drained after $(elapsed "$t0") s" >&3
	kill -9 "$opid"
	wait "$opid"
	sed 's/^/#   server: /' /tmp/kq_srv.out | tail -3
	sed 's/^/#   client: /' /tmp/kq_cli.out | tail -3
	netem shns1 shv1
	netem shns2 shv2
	[ "$rc" = 0 ] || return 1
	wait_objs_idle 2 || return 1
	echo "# $t $victim: all freed after $(elapsed "$t0") s" >&3
}

tap_check "WRITE source killed with its packets in the netem queue" \
	kill_queued ib_write_bw client
tap_check "READ responder killed with its responses in the netem queue" \
	kill_queued ib_read_bw server
diag "kills: $(elapsed "$T0") s"
tap_check "devices carry verified traffic afterwards" stream 1 "$g1" "$g2"
tap_check "every object freed" wait_objs_idle 2

leaks0=$(dmesg | grep -c 'shca: leak')
two_hosts_del
tap_check "rmmod shca" shca_unload
tap_check "no leak report at unload" \
	sh -c "[ \$(dmesg | grep -c 'shca: leak') = $leaks0 ]"
tap_done
