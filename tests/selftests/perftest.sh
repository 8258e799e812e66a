#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perftest between two shca devices in two network namespaces: every
# transfer type, bandwidth and latency, short iteration counts.
. "$(dirname "$0")/lib.sh"

tap_plan 17

tap_check "module loads" shca_load
tap_check "two hosts" two_hosts 1500
g1=$(gid_index shca_ns1 198.18.0.1)
g2=$(gid_index shca_ns2 198.18.0.2)
port=18515

pt() {	# TEST ARGS...
	local t=$1

	shift
	port=$((port + 1))
	server_client 120 "$t -d shca_ns1 -x $g1 -F $PT_OPTS -p $port $*" \
		"$t -d shca_ns2 -x $g2 -F $PT_OPTS -p $port $* 198.18.0.1" "$port"
}

# A stream of one-packet messages: the requester asks for an ACK only
# where nothing follows at once (and on every 32nd PSN), so the responder
# sends far fewer ACKs than messages, and no message waits for a timeout.
small_stream() {
	local n=2000 acks tmo

	ctr_snap shca_ns1 shca_ns2
	pt ib_write_bw -s 64 -n "$n" || return 1
	acks=$(ctr_sum shca_ns1 ack_sent)
	tmo=$(ctr_sum shca_ns2 timeouts)
	echo "# $n WRITEs of 64 B: $acks ACKs, $tmo timeouts"
	[ "$acks" -lt $((n / 2)) ] && [ "$tmo" = 0 ]
}

# READ responses of 64 KiB arrive in the softirq of the CPU the server's
# transmit stage runs on: the client's device places them on its receive
# CPU instead (rx_handoffs), so two CPUs share the work.
read_handoff() {
	local h

	ctr_snap shca_ns2
	pt ib_read_bw -n 200 || return 1
	h=$(ctr_sum shca_ns2 rx_handoffs)
	echo "# ib_read_bw 64 KiB: the client's receive stage moved $h time(s)"
	[ "$(nproc)" -lt 2 ] || [ "$h" -gt 0 ]
}

# A WRITE stream of 64 KiB messages: the server's device places the data
# on its receive CPU, and the client's device takes the ACKs on its
# transmit CPU, where the stage they unblock runs (both rx_handoffs).
write_handoff() {
	local s c

	ctr_snap shca_ns1 shca_ns2
	pt ib_write_bw -n 200 || return 1
	s=$(ctr_sum shca_ns1 rx_handoffs)
	c=$(ctr_sum shca_ns2 rx_handoffs)
	echo "# ib_write_bw 64 KiB: receive hand-offs: server $s, client $c"
	[ "$(nproc)" -lt 2 ] || { [ "$s" -gt 0 ] && [ "$c" -gt 0 ]; }
}

# One-packet messages (and their ACKs) are handled where they arrive: a
# hand-off would add a wake-up to every round trip of a ping-pong.  An
# ACK that happens to arrive while the transmit stage polls the send
# rings goes to the stage's CPU, as it should; that is rare, so 200
# round trips (400 messages, their ACKs) allow 10 hand-offs, not one a
# round trip.
lat_no_handoff() {
	local n=200 h

	ctr_snap shca_ns1 shca_ns2
	pt ib_write_lat -n "$n" || return 1
	h=$(ctr_sum "shca_ns1 shca_ns2" rx_handoffs)
	echo "# ib_write_lat 64 B, $n round trips: $h receive hand-offs"
	[ "$h" -le $((n / 20)) ]
}

# A stream of one-packet SENDs leaves from the client's transmit stage,
# and the server's device would receive it in that stage's softirqs, on
# the CPU the stage needs: it places the messages on its receive CPU
# instead (rx_handoffs).
send_stream_handoff() {
	local h

	ctr_snap shca_ns1
	pt ib_send_bw -s 64 -n 2000 || return 1
	h=$(ctr_sum shca_ns1 rx_handoffs)
	echo "# ib_send_bw 64 B: the server's receive stage moved $h time(s)"
	[ "$(nproc)" -lt 2 ] || [ "$h" -gt 0 ]
}

# Each device's transmit stage is a kernel thread at the tx_nice
# parameter's nice value, so a process spinning on the same CPU does not
# take half of it.
stage_nice() {
	local want d ni

	want=$(cat /sys/module/shca/parameters/tx_nice)
	for d in shv1 shv2; do
		ni=$(ps -o ni= -C "shca_tx/$d" | tr -d ' ')
		echo "# shca_tx/$d: nice '$ni', tx_nice $want"
		[ "$ni" = "$want" ] || return 1
	done
}

tap_check "transmit stage threads at tx_nice" stage_nice
tap_check "ib_send_bw RC 64 KiB" pt ib_send_bw -n 200
tap_check "ib_send_bw RC 64 B: placed on the receive CPU" send_stream_handoff
tap_check "ib_write_bw RC 64 B: ACKs coalesced" small_stream
tap_check "ib_send_bw UD 1 KiB" pt ib_send_bw -c UD -s 1024 -n 200
tap_check "ib_send_bw UC 4 KiB" pt ib_send_bw -c UC -s 4096 -n 200
tap_check "ib_write_bw RC 64 KiB: data and ACKs handed off" write_handoff
tap_check "ib_write_bw RC 1 MiB" pt ib_write_bw -s 1048576 -n 20
tap_check "ib_read_bw RC 64 KiB: placed on the receive CPU" read_handoff
tap_check "ib_atomic_bw fetch-and-add" pt ib_atomic_bw -n 200
tap_check "ib_send_lat RC" pt ib_send_lat -n 200
tap_check "ib_write_lat RC: next to no receive hand-offs" lat_no_handoff
tap_check "ib_read_lat RC" pt ib_read_lat -n 200
tap_check "ib_atomic_lat compare-and-swap" pt ib_atomic_lat -A CMP_AND_SWAP -n 200
two_hosts_del
tap_check "rmmod shca" shca_unload
tap_done
