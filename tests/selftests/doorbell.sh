#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Direct doorbells between two shca hosts.  Under ib_send_bw and
# ib_write_bw the processes must make well under one system call per 100
# messages in steady state: measured as the difference between a short
# and a long run (strace -f of server and client, so set-up costs cancel
# out), and by the device's db_rings counter.  With polling off
# (poll_max_us=0) every post must ring, and data must still flow.
# Completion-channel events with the CQ armed through the ring:
# ibv_rc_pingpong -e -c (events, validated data).  An idle device costs
# no CPU: once a busy QP went quiet, the poller stops (db_polls stays put).
# A ping-pong with both CPUs busy makes its QPs direct: each lone post
# rings and is sent in the doorbell call, after the call dropped its QP's
# lock (tx_held); the receive path sends its ACKs after dropping the lock
# too (rx_held), building them after it (ack_deferred), every packet goes
# by its QP's cached route
# (tx_route_cached), and the poller stays out of the way; a direct QP
# that goes from a ping-pong to a stream is watched again.  A doorbell is one
# write(2) on the device's command fd, never an ioctl.
. "$(dirname "$0")/lib.sh"

tap_plan 18

# The steady state is the long run minus the short one: 10000 messages
# (20000 under SHCA_LONG=1) hold the limits below to 50 system calls and
# 120 doorbells (100 and 220) over a stretch where set-up costs cancel.
SHORT=2000
LONG=$(sized 12000 22000)
# system calls per 100 messages, long run minus short run, both processes
MAX_PER_100=0.5

tap_check "module loads" shca_load
tap_check "two hosts" two_hosts 1500
g1=$(gid_index shca_ns1 198.18.0.1)
g2=$(gid_index shca_ns2 198.18.0.2)
port=18600

ctr() {	# DEV NAME
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"
}

# tap_show DESCRIPTION CMD...: tap_check that always shows CMD's output
# (the measurements are worth seeing when they pass, too).
tap_show() {
	local desc=$1 rc

	shift
	"$@" > /tmp/tap_show.out 2>&1
	rc=$?
	tap_ok "$rc" "$desc"
	sed 's/^/# /' /tmp/tap_show.out | head -40
	return "$rc"
}

# Every system call of a traced run except the clock reads perftest makes
# itself (real system calls in this VM: its TCG clocksource has no vDSO).
NOCLOCK='trace=!gettimeofday,clock_gettime,time'

calls() {	# strace output file -> system calls in it
	grep -Ec '^[0-9]+ +[a-z_0-9]+\(' "$1"
}

dev_calls() {	# strace output file -> calls on an RDMA device fd
	grep -E '^[0-9]+ +[a-z_0-9]+\(' "$1" | grep -c '/dev/infiniband/'
}

# traced TEST ITERS: run server and client under strace; print the calls
# of both, all and on the RDMA device
traced() {
	local t=$1 n=$2 args st

	args="-F $PT_OPTS -s 64 -n $n"
	st="strace -f -y -e $NOCLOCK"
	port=$((port + 1))
	server_client 300 \
		"$st -o /tmp/st.srv $t -d shca_ns1 -x $g1 -p $port $args" \
		"$st -o /tmp/st.cli $t -d shca_ns2 -x $g2 -p $port $args 198.18.0.1" \
		"$port" || return 1
	echo "$(($(calls /tmp/st.srv) + $(calls /tmp/st.cli)))" \
	     "$(($(dev_calls /tmp/st.srv) + $(dev_calls /tmp/st.cli)))"
}

per100() {	# CALLS_LONG CALLS_SHORT -> marginal calls per 100 messages
	awk -v l="$1" -v s="$2" -v n=$((LONG - SHORT)) \
		'BEGIN { printf "%.3f", (l - s) * 100 / n }'
}

steady_calls() {	# TEST: marginal system calls per 100 messages
	local t=$1 s l r0 r1 all dev out

	out=$(traced "$t" "$SHORT") || return 1
	read -r -a s <<< "$out"
	r0=$(ctr shca_ns2 db_rings)
	out=$(traced "$t" "$LONG") || return 1
	read -r -a l <<< "$out"
	r1=$(ctr shca_ns2 db_rings)
	all=$(per100 "${l[0]}" "${s[0]}")
	dev=$(per100 "${l[1]}" "${s[1]}")
	echo "# $t, server + client: ${s[0]} system calls (${s[1]} on the" \
	     "RDMA device) for $SHORT messages, ${l[0]} (${l[1]}) for $LONG:" \
	     "$all ($dev) per 100 messages in steady state"
	echo "# client doorbells in the long run: $((r1 - r0));" \
	     "poll_hits $(ctr shca_ns2 db_poll_hits) idle $(ctr shca_ns2 db_idle)" \
	     "direct $(ctr shca_ns2 db_direct)"
	awk -v a="$all" -v d="$dev" -v m="$MAX_PER_100" \
		'BEGIN { exit !(a < m && d < m) }' || return 1
	# the kernel's own count: fewer doorbells than 1 per 100 messages
	[ $((r1 - r0)) -lt $((LONG / 100)) ]
}

tap_show "ib_send_bw: < $MAX_PER_100 system calls per 100 messages" \
	steady_calls ib_send_bw
tap_show "ib_write_bw: < $MAX_PER_100 system calls per 100 messages" \
	steady_calls ib_write_bw

# pinned_lat N TIMEOUT: ib_send_lat of N 64-byte messages between the two
# hosts, server on CPU 0 and client on CPU 1: both busy-poll their CQs,
# so neither CPU is ever free for the poller.
pinned_lat() {
	port=$((port + 1))
	server_client "$2" \
		"taskset -c 0 ib_send_lat -d shca_ns1 -x $g1 -F $PT_OPTS -s 64 -n $1 -p $port" \
		"taskset -c 1 ib_send_lat -d shca_ns2 -x $g2 -F $PT_OPTS -s 64 -n $1 -p $port 198.18.0.1" \
		"$port"
}

# Ping-pong with both CPUs busy: the poller could only look from its
# timer and would find each lone post late, so the QPs must go direct
# (db_direct): every post rings and is sent in the system call, and the
# poller does not run for each message.  Before direct mode the client's
# device made more poller passes than messages.  Each SEND is acknowledged
# on its own, from the receive path, built and sent after it dropped the
# QP's lock.  The SENDs and ACKs take the route their QP cached, not a
# route lookup each.
ping_pong_direct() {
	local n=2000 d r p h a b t c

	ctr_snap shca_ns2
	pinned_lat "$n" 300 || return 1
	d=$(ctr_sum shca_ns2 db_direct)
	r=$(ctr_sum shca_ns2 db_rings)
	p=$(ctr_sum shca_ns2 db_polls)
	h=$(ctr_sum shca_ns2 tx_held)
	a=$(ctr_sum shca_ns2 rx_held)
	b=$(ctr_sum shca_ns2 ack_deferred)
	t=$(ctr_sum shca_ns2 tx_pkts)
	c=$(ctr_sum shca_ns2 tx_route_cached)
	echo "# ib_send_lat, $n messages: the client's QP went direct $d" \
	     "time(s); $r doorbells, $h packets held, $a ACKs held" \
	     "($b built after the lock too)," \
	     "$p poller passes; $c of $t packets by a cached route"
	grep -A1 '#bytes' /tmp/cli.out | sed 's/^/# /'
	[ "$d" -ge 1 ] && [ "$r" -ge $((n * 9 / 10)) ] &&
		[ "$h" -ge $((n * 9 / 10)) ] && [ "$a" -ge $((n * 9 / 10)) ] &&
		[ "$b" -ge $((n * 9 / 10)) ] &&
		[ "$p" -lt $((n / 10)) ] && [ "$t" -ge "$n" ] &&
		[ "$c" -ge $((t * 9 / 10)) ]
}
tap_show "ping-pong on busy CPUs: lone posts ring (direct QPs)" \
	ping_pong_direct

# The same with RoCE packets delayed and reordered both ways: a peer's
# SEND can overtake the ACK of our last one, so a direct QP's doorbell
# call finds a packet still in flight and cannot send the new post from
# the call.  The post must still leave (the QP is watched again, or the
# engine fetches it when the ACK comes), or the ping-pong stops.
ping_pong_reordered() {
	local n=1000 d rc

	ctr_snap shca_ns2
	netem shns1 shv1 delay 300us reorder 50% &&
	netem shns2 shv2 delay 300us reorder 50% || return 1
	pinned_lat "$n" 120
	rc=$?
	netem shns1 shv1
	netem shns2 shv2
	d=$(ctr_sum shca_ns2 db_direct)
	echo "# ib_send_lat under reordering, $n messages: rc $rc, the" \
	     "client's QP went direct $d time(s)"
	[ "$rc" = 0 ] && [ "$d" -ge 1 ]
}
tap_show "ping-pong with reordering completes (direct QPs)" \
	ping_pong_reordered

# A direct QP that starts a stream: the ping-pong's answers keep it
# direct, a stream without answers (each message complete within the
# call that sent it) makes it watched again (shca_direct_test says how).
DIRECT_CASES=4
shca_direct_test shca_ns2 shca_ns1 > /tmp/direct.out 2>&1
tap_relay /tmp/direct.out "$DIRECT_CASES" "direct QP: "

# Completion events with the CQ armed through the ring word.
events() {
	port=$((port + 1))
	server_client 120 \
		"ibv_rc_pingpong -d shca_ns1 -g $g1 -p $port -e -c -n 500 -s 4096" \
		"ibv_rc_pingpong -d shca_ns2 -g $g2 -p $port -e -c -n 500 -s 4096 198.18.0.1" \
		"$port"
}
tap_check "ibv_rc_pingpong -e -c: completion events" events

# A process holds a QP pair that was busy a moment ago and sleeps: after
# the idle window (at most poll_max_us) the poller must have stopped.
idle_costs_nothing() {
	local p0 p1 pid

	shca_ring_test -i 4 shca_ns1 shca_ns2 > /tmp/idle.out 2>&1 &
	pid=$!
	wait_for 300 grep -q '^idle' /tmp/idle.out || { kill "$pid"; return 1; }
	sleep 1
	p0=$(ctr shca_ns1 db_polls)
	p1=$(ctr shca_ns2 db_polls)
	sleep 2
	p0=$(($(ctr shca_ns1 db_polls) - p0))
	p1=$(($(ctr shca_ns2 db_polls) - p1))
	wait "$pid" || return 1
	echo "# poller passes during 2 s of idleness: $p0 and $p1"
	[ "$p0" = 0 ] && [ "$p1" = 0 ]
}
tap_show "an idle QP pair costs no polling" idle_costs_nothing
tap_check "the engine found posts by polling" \
	test "$(ctr shca_ns2 db_poll_hits)" -gt 0

# With polling off every post rings, and everything still works.
no_poll() {
	local r0 r1 n=3000

	echo 0 > /sys/module/shca/parameters/poll_max_us || return 1
	r0=$(ctr shca_ns2 db_rings)
	port=$((port + 1))
	server_client 300 \
		"ib_send_bw -d shca_ns1 -x $g1 -F $PT_OPTS -s 64 -n $n -p $port" \
		"ib_send_bw -d shca_ns2 -x $g2 -F $PT_OPTS -s 64 -n $n -p $port 198.18.0.1" \
		"$port" || return 1
	r1=$(ctr shca_ns2 db_rings)
	echo "# poll_max_us=0: $((r1 - r0)) doorbells for $n messages"
	[ $((r1 - r0)) -ge "$n" ]
}
tap_show "poll_max_us=0: every post rings" no_poll

# db_calls N: the sender's write(2) and ioctl(2) calls on the RDMA device
# for an ib_send_bw of N messages (every post rings: poll_max_us=0)
db_calls() {
	local st=/tmp/st.db

	port=$((port + 1))
	server_client 300 \
		"ib_send_bw -d shca_ns1 -x $g1 -F $PT_OPTS -s 64 -n $1 -p $port" \
		"strace -f -y -e trace=write,ioctl -o $st ib_send_bw -d shca_ns2 -x $g2 -F $PT_OPTS -s 64 -n $1 -p $port 198.18.0.1" \
		"$port" || return 1
	echo "$(grep -E '^[0-9]+ +write\(' "$st" | grep -c /dev/infiniband/)" \
	     "$(grep -E '^[0-9]+ +ioctl\(' "$st" | grep -c /dev/infiniband/)"
}

# The doorbell is a write(2) of a post command with no work requests,
# not the same command through the heavier ioctl dispatch: N more
# messages make about N more writes and no more ioctls.
doorbell_is_write() {
	local s l w i n=1000 out

	out=$(db_calls 200) || return 1
	read -r -a s <<< "$out"
	out=$(db_calls $((200 + n))) || return 1
	read -r -a l <<< "$out"
	w=$((l[0] - s[0]))
	i=$((l[1] - s[1]))
	echo "# $n more messages: $w more writes and $i more ioctls on" \
	     "the RDMA device"
	[ "$w" -ge $((n * 9 / 10)) ] && [ "$i" -lt $((n / 100)) ]
}
tap_show "poll_max_us=0: a doorbell is one write(2)" doorbell_is_write
tap_check "poll_max_us=0: completion events" events
tap_check "poll_max_us back to its default" \
	sh -c 'echo 10000 > /sys/module/shca/parameters/poll_max_us'

two_hosts_del
tap_check "rmmod shca" shca_unload
tap_done
