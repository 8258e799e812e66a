#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A QP destroyed while a lookup by number has found it and not yet taken
# its reference.  The RDMA core frees a destroyed QP at once (kfree(), no
# RCU grace period), so the lookup must keep the destroy from finishing
# until it holds the reference; the lookup takes it under the xarray's
# lock, which the destroy's erase takes too.  A fault-injection hold
# (debugfs shca/fault/, rkey_hold_at 2) stops one lookup for 3 s between
# finding the QP and taking its reference, and the QP's process is
# killed meanwhile, which destroys the QP:
# - a received packet's lookup, in softirq: an ibv_rc_pingpong client's
#   first SEND held in the server QP's lookup, the server killed;
# - an AH destroy's walk over the engine's QPs, in process context (any
#   process can make one: shca_qplife_test walk), held at the lookup of
#   an ibv_rc_pingpong server's QP, the server killed.
# Then the lookups race QPs created and destroyed without a hold: one
# process creates and destroys UD and RC QPs, another destroys AHs in a
# loop, and a UD sender on the other host aims at the newest QP number
# and its neighbours (shca_qplife_test churn, walk, spray).  The kernel
# log must stay clean (the VM run checks it): KASAN shows a read of a
# freed QP on the debug kernel, which boots with preempt=full.
#
# Two more of a QP's life: each engine numbers its QPs on its own (one
# host's creations do not move the numbers another hands out next), and
# a QP reset while the receive path is still sending the ACK it owes,
# with no lock, waits for it asleep (shca_qplife_test ackwait holds the
# ACK 30 ms: rkey_hold_at 3).  Both failed before their fixes on stock
# 6.12: one QPN cursor shared by every engine, and a spin with BHs off.
#
# Seen with the lookup of before the fix (the reference taken under
# rcu_read_lock() only), on the stock 6.12 kernel and on its KASAN
# kernel with preempt=full: the held walk's case fails (the killed
# server's exit finished while the walk's lookup was still held, with no
# reference).  KASAN reported no read of freed memory in that run.  The
# held packet's case did not fail: the destroy waited for the CPU whose
# softirq the hold spun on.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faults_lib.sh"

F=/sys/kernel/debug/shca/fault

tap_plan 19

tap_check "module loads" shca_load
tap_check "debugfs: fault injection" objs_mount
tap_check "two hosts, one shca device each" two_hosts 1500
g1=$(gid_index shca_ns1 198.18.0.1)
g2=$(gid_index shca_ns2 198.18.0.2)

# qpns HOST DEV COUNT: create COUNT QPs on DEV and destroy them; prints
# the first and last QPN
qpns() {
	ip netns exec "$1" shca_qplife_test qpns "$2" "$3"
}
# own_qpns: a QP on the first host, 20 on the second, one on the first
# again: the first host's next number follows its own last one
own_qpns() {
	local a b c

	read -r _ a _ <<< "$(qpns shns1 shca_ns1 1)"
	read -r _ _ b <<< "$(qpns shns2 shca_ns2 20)"
	read -r _ c _ <<< "$(qpns shns1 shca_ns1 1)"
	diag "first host: QP $a, then QP $c; the other's 20th: QP $b"
	[ -n "$a" ] && [ -n "$b" ] && [ "$c" = $((a + 1)) ]
}
tap_check "each engine numbers its own QPs" own_qpns

# The client on CPU 0, the server on CPU 1: a held lookup spins in the
# softirq of the CPU that sent the packet, which runs no task meanwhile,
# and the killed server must be able to exit during the hold.
# The server enters the namespace with nsenter, which execs it ($! is its
# pid): ip netns exec gives it a mount namespace of its own, and that
# namespace's teardown at exit waits for an RCU grace period before the
# process's files are released, which hides a lookup without a reference.
# serve: start an ibv_rc_pingpong server (pid in srv), wait for it to
# listen, and note the hold counters (h0, d0)
serve() {
	taskset -c 1 nsenter --net=/run/netns/shns1 \
		ibv_rc_pingpong -d shca_ns1 -g "$g1" -n 5 > /tmp/qpl_srv.out 2>&1 &
	srv=$!
	wait_for 300 listening shns1 18515
	read -r h0 < "$F/rkey_holds"
	read -r d0 < "$F/rkey_holds_done"
}
serve
arm() {
	echo 2 > "$F/rkey_hold_at" && echo 0 > "$F/rkey_hold_after" &&
	echo 3000 > "$F/rkey_hold_ms" && echo 1 > "$F/rkey_hold_arm"
}
tap_check "hold armed at the QP lookup (3000 ms)" arm
# pause20: 20 ms asleep without a fork (sleep(1)'s fork and exec may wait
# on the CPU the held lookup spins on): a read with a timeout from a FIFO
# nobody writes
rm -f /tmp/qpl_tick && mkfifo /tmp/qpl_tick
exec {tick}<> /tmp/qpl_tick
pause20() {
	read -rt 0.02 -u "$tick" _ || :
}
# watch_kill CPU: on CPU, wait for the hold to begin, note how many holds
# had ended just before the kill, kill the server (pid $srv); then wait
# for the server's exit to finish (a zombie or reaped: its files are
# released, its QP destroyed, by then) and note how many had ended at
# that point.  The held lookup spins on one CPU (in softirq for a packet,
# in process context for a walk), which runs no task meanwhile: a
# watcher on each CPU, so that one of them acts in time.  The count is
# read before the kill: the killed server, on the other CPU, starts its
# exit at once and its QP's destroy spins there until the hold ends, so
# a read after the kill could only run once the hold was over.
watch_kill() {
	local h d i st

	taskset -pc "$1" "$BASHPID" > /dev/null
	for ((i = 0; i < 500; i++)); do
		read -r h < "$F/rkey_holds"
		if [ "$h" -gt "$h0" ]; then
			read -r d < "$F/rkey_holds_done"
			kill -9 "$srv" 2>/dev/null
			echo "$d" > "/tmp/qpl_kill.$1"
			break
		fi
		pause20
	done
	for ((i = 0; i < 500; i++)); do
		st=Z
		{ read -r _ _ st _ < "/proc/$srv/stat"; } 2>/dev/null
		[ "$st" = Z ] && break
		pause20
	done
	read -r d < "$F/rkey_holds_done"
	echo "$d" > "/tmp/qpl_exit.$1"
}
# watchers: one watch_kill on each CPU (pids in w0, w1)
watchers() {
	rm -f /tmp/qpl_kill.* /tmp/qpl_exit.*
	watch_kill 0 &
	w0=$!
	watch_kill 1 &
	w1=$!
}
watchers
taskset -c 0 ip netns exec shns2 ibv_rc_pingpong -d shca_ns2 -g "$g2" -n 5 \
	198.18.0.1 > /tmp/qpl_cli.out 2>&1 &
cli=$!
wait "$w0" "$w1"
held() {
	local h

	read -r h < "$F/rkey_holds"
	[ "$h" -gt "$h0" ]
}
tap_check "the client's first packet is held in the server QP's lookup" held
# killed_during_hold: a watcher killed the server (its QP destroyed)
# while the lookup was held, and its exit completed
killed_during_hold() {
	local f d t0 rc=1

	for f in /tmp/qpl_kill.*; do
		[ -r "$f" ] || continue
		read -r d < "$f"
		diag "${f##*.}: holds done just before the kill: $((d - d0))"
		[ "$d" = "$d0" ] && rc=0
	done
	t0=$EPOCHREALTIME
	wait "$srv" 2>/dev/null
	diag "the server was reaped $(elapsed "$t0") s after the kill"
	return "$rc"
}
# exit_after_hold: the killed server's exit (its QP's destroy) finished
# only after the held lookup had taken its reference and let go, as each
# watcher saw it (one of them may have seen it late: its CPU was held)
exit_after_hold() {
	local f d rc=1

	for f in /tmp/qpl_exit.*; do
		[ -r "$f" ] || continue
		read -r d < "$f"
		diag "${f##*.}: holds done when the server's exit had finished: $((d - d0))"
		[ "$d" -gt "$d0" ] || return 1
		rc=0
	done
	return "$rc"
}
tap_check "the server is killed while its QP's lookup is held" \
	killed_during_hold
tap_check "its QP's destroy ends after the held lookup" exit_after_hold
kill "$cli" 2>/dev/null
wait "$cli" 2>/dev/null
echo 0 > "$F/rkey_hold_arm"
tap_check "the server's QP is gone" wait_for 100 no_rc_qps shns1 shca_ns1

# The same in process context: an AH destroy's walk held at the lookup of
# a waiting server's QP (the only QP of that engine before the GSI QP).
# walk_held: start a server and a walk with the hold armed and wait for
# the watchers; fail (after cleaning up) when neither of them saw the
# hold before it ended, which leaves nothing to check: a watcher polls
# every few tens of milliseconds, and in one try in 48 on 6.12
# neither ran in the 3 s of the hold
walk_held() {
	local f d

	serve
	arm || return 1
	watchers
	taskset -c 0 ip netns exec shns1 shca_qplife_test walk shca_ns1 1 \
		> /tmp/qpl_walk.out 2>&1 &
	walker=$!
	wait "$w0" "$w1"
	for f in /tmp/qpl_kill.*; do
		[ -r "$f" ] || continue
		read -r d < "$f"
		[ "$d" = "$d0" ] && return 0
	done
	diag "no watcher saw the walk's hold before it ended: another try"
	wait "$walker" "$srv" 2>/dev/null
	echo 0 > "$F/rkey_hold_arm"
	wait_for 100 no_rc_qps shns1 shca_ns1
	return 1
}
tap_check "an AH destroy's walk is held in the server QP's lookup (at most 3 tries)" \
	retry 3 walk_held
tap_check "the server is killed while the walk's lookup is held" \
	killed_during_hold
tap_check "its QP's destroy ends after the walk's held lookup" exit_after_hold
walk_done() {
	wait "$walker"
	local rc=$?

	diag "$(cat /tmp/qpl_walk.out)"
	return "$rc"
}
tap_check "the walk ends" walk_done
echo 0 > "$F/rkey_hold_arm"
tap_check "the second server's QP is gone" wait_for 100 no_rc_qps shns1 shca_ns1

ack_wait() {
	local rc

	timeout "$(tmo 300)" shca_qplife_test ackwait shca_ns2 shca_ns1 30 \
		> /tmp/qpl_ack.out 2>&1
	rc=$?
	sed 's/^/# /' /tmp/qpl_ack.out
	return "$rc"
}
tap_check "a QP reset while its ACK is held (30 ms) waits for it, asleep" \
	ack_wait

# No hold: QPs created and destroyed while AH destroys walk them and
# packets arrive for their numbers.
SECS=$(sized 8 30)
race() {
	local churn churn2 walk spray rc=0

	rm -f /tmp/qpl.qpn
	ip netns exec shns1 shca_qplife_test churn shca_ns1 "$SECS" \
		/tmp/qpl.qpn > /tmp/qpl_churn.out 2>&1 &
	churn=$!
	# the other host's engine allocates QP numbers at the same time: each
	# engine's cursor is its own (a race there shows on the KCSAN kernel)
	ip netns exec shns2 shca_qplife_test churn shca_ns2 "$SECS" \
		/tmp/qpl2.qpn > /tmp/qpl_churn2.out 2>&1 &
	churn2=$!
	ip netns exec shns1 timeout "$SECS" shca_qplife_test walk shca_ns1 \
		100000000 > /tmp/qpl_walk.out 2>&1 &
	walk=$!
	ip netns exec shns2 shca_qplife_test spray shca_ns2 198.18.0.1 "$SECS" \
		/tmp/qpl.qpn > /tmp/qpl_spray.out 2>&1 &
	spray=$!
	wait "$churn" || rc=1
	wait "$churn2" || rc=1
	wait "$spray" || rc=1
	# the walker runs until timeout stops it (124)
	wait "$walk"
	[ $? = 124 ] || rc=1
	diag "churn: $(tr '\n' ' ' < /tmp/qpl_churn.out)"
	diag "churn on the other host: $(tr '\n' ' ' < /tmp/qpl_churn2.out)"
	diag "spray: $(tr '\n' ' ' < /tmp/qpl_spray.out)"
	diag "walk: $(tr '\n' ' ' < /tmp/qpl_walk.out)"
	grep -q '^qps [1-9]' /tmp/qpl_churn.out &&
		grep -q '^qps [1-9]' /tmp/qpl_churn2.out &&
		grep -q '^sends [1-9]' /tmp/qpl_spray.out || rc=1
	return "$rc"
}
tap_check "${SECS} s: QPs created and destroyed, AH destroys walking them, UD packets at their numbers" race
tap_check "no QP left" wait_for 100 no_rc_qps shns1 shca_ns1
tap_check "ibv_rc_pingpong afterwards" pp ibv_rc_pingpong -c -n 20
two_hosts_del
tap_check "rmmod shca" shca_unload
tap_done
