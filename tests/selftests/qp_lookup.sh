#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A QP destroyed while a received packet's lookup has found it and not
# yet taken its reference.  The RDMA core frees a destroyed QP at once
# (kfree(), no RCU grace period), so the lookup must keep the destroy
# from finishing until it holds the reference.  A fault-injection hold
# (debugfs shca/fault/, rkey_hold_at 2) stops the lookup of an
# ibv_rc_pingpong client's first SEND for 3 s between finding the
# server's QP and taking its reference; the server is killed meanwhile,
# which destroys the QP.  With the lookup under the xarray's lock the
# destroy waits for the lookup and the kernel log stays clean (the VM
# run checks it).  The RCU lookup this replaced was not caught by this
# test on the stock kernels (the killed server's destroy did not finish
# within the hold): a read of the freed QP is for the debug kernel's
# KASAN to show.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faults_lib.sh"

F=/sys/kernel/debug/shca/fault

tap_plan 9

tap_check "module loads" shca_load
tap_check "debugfs: fault injection" objs_mount
tap_check "two hosts, one shca device each" two_hosts 1500
g1=$(gid_index shca_ns1 198.18.0.1)
g2=$(gid_index shca_ns2 198.18.0.2)

# The client on CPU 0, the server on CPU 1: a held lookup spins in the
# softirq of the CPU that sent the packet, which runs no task meanwhile,
# and the killed server must be able to exit during the hold.
# (ip netns exec execs the program: $! is its pid)
taskset -c 1 ip netns exec shns1 ibv_rc_pingpong -d shca_ns1 -g "$g1" -n 5 \
	> /tmp/qpl_srv.out 2>&1 &
srv=$!
wait_for 300 listening shns1 18515
read -r h0 < "$F/rkey_holds"
read -r d0 < "$F/rkey_holds_done"
arm() {
	echo 2 > "$F/rkey_hold_at" && echo 0 > "$F/rkey_hold_after" &&
	echo 3000 > "$F/rkey_hold_ms" && echo 1 > "$F/rkey_hold_arm"
}
tap_check "hold armed at the QP lookup (3000 ms)" arm
# watch_kill CPU: on CPU, wait for the hold to begin, kill the server and
# note how many holds had ended by then.  The held lookup spins in the
# softirq of one CPU (whichever received the packet), which runs no task
# meanwhile: a watcher on each CPU, so that one of them acts in time.
watch_kill() {
	local h d i

	taskset -pc "$1" "$BASHPID" > /dev/null
	for ((i = 0; i < 500; i++)); do
		read -r h < "$F/rkey_holds"
		if [ "$h" -gt "$h0" ]; then
			kill -9 "$srv" 2>/dev/null
			read -r d < "$F/rkey_holds_done"
			echo "$d" > "/tmp/qpl_kill.$1"
			return
		fi
		sleep 0.02
	done
}
rm -f /tmp/qpl_kill.*
watch_kill 0 &
w0=$!
watch_kill 1 &
w1=$!
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
	local f d t0 ok=1

	for f in /tmp/qpl_kill.*; do
		[ -r "$f" ] || continue
		read -r d < "$f"
		diag "${f##*.}: holds done when the kill was sent: $((d - d0))"
		[ "$d" = "$d0" ] && ok=0
	done
	t0=$EPOCHREALTIME
	wait "$srv" 2>/dev/null
	diag "the server was reaped $(elapsed "$t0") s after the kill"
	return "$ok"
}
tap_check "the server is killed while its QP's lookup is held" \
	killed_during_hold
kill "$cli" 2>/dev/null
wait "$cli" 2>/dev/null
echo 0 > "$F/rkey_hold_arm"
tap_check "the server's QP is gone" wait_for 100 no_rc_qps shns1 shca_ns1
tap_check "ibv_rc_pingpong afterwards" pp ibv_rc_pingpong -c -n 20
two_hosts_del
tap_check "rmmod shca" shca_unload
tap_done
