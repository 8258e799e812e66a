#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Functions (virtual HCAs): a second shca device on a netdev that has one
# already is another function of the same engine.  The two talk to each
# other and to a remote host (RC and UD pingpong), count their traffic
# apiece, receive one multicast packet once for the members of both
# (shca_mcast_test --funcs), and share the queues by credit: a
# function flooding with its credit at 1 % is refused entries (counted
# against it, never against the other) while the other's traffic flows.
# Deleting a function under traffic leaves the other working; a
# macvlan child of the netdev gets a function of the same engine that a
# container namespace can use; a device follows its netdev into another
# namespace, its multicast members still attached and receiving.
. "$(dirname "$0")/lib.sh"

tap_plan 20

hw() {	# hw DEV COUNTER: print a counter (the core caches them ~10 ms)
	local v

	sleep 0.05
	read -r v < "/sys/class/infiniband/$1/ports/1/hw_counters/$2"
	echo "$v"
}

# func_of DEV WANT: DEV's sysfs "func" reads WANT ("<number> <netdev>").
func_of() {
	local v

	read -r v < "/sys/class/infiniband/$1/func" || return 1
	[ "$v" = "$2" ] || { echo "# $1 func: '$v', expected '$2'"; return 1; }
}

add_f1() {
	in_ns shns1 rdma link add shca_ns1f1 type shca netdev shv1 &&
	wait_for 50 gid_index shca_ns1f1 198.18.0.1
}

# pp_ns SNS SDEV SGID CNS CDEV CGID ADDR PROG ARGS...: pingpong PROG, the
# server on SDEV in SNS, the client on CDEV in CNS connecting to ADDR.
pp_ns() {
	local sns=$1 sdev=$2 sgid=$3 cns=$4 cdev=$5 cgid=$6 addr=$7 prog=$8

	shift 8
	ns_server_client "$sns" "$cns" 120 "$prog -d $sdev -g $sgid $*" \
		"$prog -d $cdev -g $cgid $* $addr" 18515
}

# counted DEV: DEV's own counters show its traffic (it ran 200-message
# pingpongs: at least 200 packets each way), and rdma statistic lists them
# for it.  A packet arrives for the netdev's first function; it counts on
# the function whose QP takes it.
counted() {
	local rx tx

	rx=$(hw "$1" rx_pkts)
	tx=$(hw "$1" tx_pkts)
	echo "# $1: rx_pkts $rx tx_pkts $tx"
	[ "$rx" -ge 200 ] && [ "$tx" -ge 200 ] || return 1
	rdma statistic show link "$1/1" | grep -q "rx_pkts $rx"
}

# flood_run SECS: an ib_write_bw from shca_ns1f1 with 4 QPs of 512 WRs
# each (more than its share of the transmit queue) to shca_ns2, with
# ibv_rc_pingpong on shca_ns1 beside it.  Returns 0 when all three
# succeeded, 2 when perftest could not calibrate its clock (it measures
# with the TSC: each side is pinned to one vCPU, whose TSCs TCG does not
# keep in step, and -F; a busy guest can still spoil the calibration).
flood_run() {
	local t=$1 bw cl rc=0 t0 st

	in_ns shns2 timeout "$t" taskset -c 0 ib_write_bw -d shca_ns2 -x "$g2" \
		-q 4 -t 512 -s 4096 -n 3000 -p 18600 -F "${PT_ARGS[@]}" \
		> /tmp/flood_s.out 2>&1 &
	bw=$!
	wait_for 300 listening shns2 18600
	in_ns shns1 timeout "$t" taskset -c 1 ib_write_bw -d shca_ns1f1 \
		-x "$gf1" -q 4 -t 512 -s 4096 -n 3000 -p 18600 -F \
		"${PT_ARGS[@]}" 198.18.0.2 > /tmp/flood_c.out 2>&1 &
	cl=$!
	t0=$SECONDS
	sleep $((2 * SHCA_TIME_SCALE))
	pp_ns shns2 shca_ns2 "$g2" shns1 shca_ns1 "$g1" 198.18.0.2 \
		ibv_rc_pingpong -n 200 || { echo "# pingpong beside the flood failed"; rc=1; }
	# it takes seconds: one still running after a minute stands still,
	# and its QPs' engine state says where
	if ! wait_for 600 pid_gone "$cl"; then
		echo "# the flood stands still after $((SECONDS - t0)) s"
		rdma -dd resource show qp | grep -v "lqpn 1 " | sed 's/^/#   /'
	fi
	wait "$cl"
	st=$?
	[ "$st" = 0 ] || { echo "# flood client failed: $st"; rc=1; }
	wait "$bw"
	st=$?
	[ "$st" = 0 ] || { echo "# flood server failed: $st"; rc=1; }
	echo "# the flood took $((SECONDS - t0)) s"
	if [ "$rc" != 0 ]; then
		# (perftest's errors go to stderr, unbuffered: ahead of its
		# buffered stdout in the file)
		grep -v 'address:\|GID:\|^ *-*$' /tmp/flood_c.out /tmp/flood_s.out |
			sed 's/^/#   /' | head -30
		if grep -q "Can't produce a report" /tmp/flood_c.out; then
			echo "# perftest could not calibrate its clock"
			return 2
		fi
	fi
	return "$rc"
}

# flood_isolated: with shca_ns1f1's credit at 1 %, its flood (flood_run)
# is refused entries and still completes, while ibv_rc_pingpong on
# shca_ns1 runs beside it; only shca_ns1f1's refusals move.
flood_isolated() {
	local t=$((300 * SHCA_TIME_SCALE)) rc try r0 r1

	echo 1 > /sys/class/infiniband/shca_ns1f1/func_credit || return 1
	r0=$(hw shca_ns1 llq_credit_refused)
	for try in 1 2 3; do
		flood_run "$t"
		rc=$?
		[ "$rc" = 2 ] || break
		echo "# flood try $try of 3 spoilt by the calibration"
	done
	[ "$rc" = 0 ] || rc=1
	r1=$(hw shca_ns1f1 llq_credit_refused)
	echo "# shca_ns1f1 credit refusals: $r1;" \
		"shca_ns1: $(($(hw shca_ns1 llq_credit_refused) - r0))"
	[ "$r1" -gt 0 ] || { echo "# the flood was never refused"; rc=1; }
	[ "$(hw shca_ns1 llq_credit_refused)" = "$r0" ] ||
		{ echo "# refusals charged to the other function"; rc=1; }
	echo 50 > /sys/class/infiniband/shca_ns1f1/func_credit
	[ "$rc" = 0 ] || shca_counters_diag
	return "$rc"
}

pid_gone() {
	! kill -0 "$1" 2>/dev/null
}

# bad_credit: out-of-range credits are refused, the value stays.
bad_credit() {
	local f=/sys/class/infiniband/shca_ns1f1/func_credit v

	! echo 0 > "$f" 2>/dev/null && ! echo 101 > "$f" 2>/dev/null &&
	! echo x > "$f" 2>/dev/null || return 1
	read -r v < "$f"
	[ "$v" = 50 ]
}

# sent_more DEV FROM: DEV has sent 1000 packets more than FROM
sent_more() {
	[ "$(hw "$1" tx_pkts)" -ge $(($2 + 1000)) ]
}

# delete_under_traffic: delete shca_ns1f1 while an ib_write_bw from it
# runs (once 1000 of its packets went: perftest's run lasts D seconds
# from there, D being ten times the time scale); the writer ends (any
# way: perftest polls on until its duration is up), shca_ns1 still talks
# to shca_ns2.
delete_under_traffic() {
	local t=$((120 * SHCA_TIME_SCALE)) d=$((10 * SHCA_TIME_SCALE)) srv cli tx0

	in_ns shns2 timeout "$t" ib_write_bw -d shca_ns2 -x "$g2" -D "$d" \
		-p 18601 "${PT_ARGS[@]}" > /tmp/del_s.out 2>&1 &
	srv=$!
	wait_for 300 listening shns2 18601
	tx0=$(hw shca_ns1f1 tx_pkts)
	in_ns shns1 timeout "$t" ib_write_bw -d shca_ns1f1 -x "$gf1" -D "$d" \
		-p 18601 "${PT_ARGS[@]}" 198.18.0.2 > /tmp/del_c.out 2>&1 &
	cli=$!
	wait_for 300 sent_more shca_ns1f1 "$tx0" ||
		{ echo "# the writer sent nothing"; cat /tmp/del_c.out; return 1; }
	kill -0 "$cli" 2>/dev/null ||
		{ echo "# the writer ended before the deletion"; return 1; }
	in_ns shns1 rdma link delete shca_ns1f1 || return 1
	wait_for 300 rdma_dev_gone shca_ns1f1 || return 1
	wait "$cli"
	kill "$srv" 2>/dev/null
	wait "$srv"
	pp_ns shns2 shca_ns2 "$g2" shns1 shca_ns1 "$g1" 198.18.0.2 \
		ibv_rc_pingpong -n 100
}

# macvlan_func: a macvlan child of shv1 in namespace shns3 (a container,
# 198.18.0.11) gets a function of shv1's engine; RC pingpong from it to
# shca_ns2.
macvlan_func() {
	local gm

	ip netns add shns3 || return 1
	ip -n shns1 link add shmv1 link shv1 type macvlan mode bridge &&
	ip -n shns1 link set shmv1 netns shns3 &&
	ip -n shns3 link set lo up &&
	ip -n shns3 addr add 198.18.0.11/24 dev shmv1 &&
	ip -n shns3 link set shmv1 up || return 1
	in_ns shns3 rdma link add shca_c3 type shca netdev shmv1 || return 1
	wait_for 50 gid_index shca_c3 198.18.0.11 || return 1
	func_of shca_c3 "2 shv1" || return 1
	gm=$(gid_index shca_c3 198.18.0.11)
	pp_ns shns2 shca_ns2 "$g2" shns3 shca_c3 "$gm" 198.18.0.2 \
		ibv_rc_pingpong -n 200 &&
	counted shca_c3
}

# move_ns2: move shv2, shca_ns2's netdev, from shns2 to a new namespace
# shns4 and give it its addresses back there: the device follows.
move_ns2() {
	local p

	ip netns add shns4 || return 1
	ip -n shns2 link set shv2 netns shns4 || return 1
	ip -n shns4 link set lo up
	ip -n shns4 addr add 198.18.0.2/24 dev shv2 &&
	ip -n shns4 addr add 2001:db8::2/64 dev shv2 nodad &&
	ip -n shns4 link set shv2 up || return 1
	wait_for 50 gid_index shca_ns2 198.18.0.2 || return 1
	read -r p < /sys/class/infiniband/shca_ns2/parent
	[ "$p" = shv2 ] || return 1
	# the RoCEv2 socket is open in shns4 now, in shns2 no longer
	wait_for 50 listening_udp shns4 4791 && ! listening_udp shns2 4791
}

# mc_moved PID: shca_mcast_test --move (PID) passed; its output.
mc_moved() {
	local st

	wait "$1"
	st=$?
	grep -v '^TAP\|^1\.\.' /tmp/mc_move.out | sed 's/^\([^#]\)/# \1/'
	[ "$st" = 0 ]
}

listening_udp() {	# listening_udp NS PORT
	in_ns "$1" ss -Hlun "sport = :$2" | grep -q .
}

macvlan_del() {
	rdma link delete shca_c3 2>/dev/null
	ip netns del shns3 2>/dev/null
	wait_for 100 rdma_dev_gone shca_c3
}

modprobe -a rdma_cm rdma_ucm ib_cm 2>/dev/null
tap_check "module loads" shca_load
tap_check "two hosts" two_hosts 1500
g1=$(gid_index shca_ns1 198.18.0.1)
g2=$(gid_index shca_ns2 198.18.0.2)
tap_check "a second device on shv1 is function 1 of its engine" add_f1
gf1=$(gid_index shca_ns1f1 198.18.0.1)
tap_check "sysfs func: 0 and 1 on shv1" \
	eval 'func_of shca_ns1 "0 shv1" && func_of shca_ns1f1 "1 shv1"'
tap_check "ibv_rc_pingpong between the two functions" \
	pp_ns shns1 shca_ns1 "$g1" shns1 shca_ns1f1 "$gf1" 198.18.0.1 \
	ibv_rc_pingpong -n 200
tap_check "ibv_ud_pingpong between the two functions" \
	pp_ns shns1 shca_ns1f1 "$gf1" shns1 shca_ns1 "$g1" 198.18.0.1 \
	ibv_ud_pingpong -n 200 -s 1024
tap_check "ibv_rc_pingpong from function 1 to a remote host" \
	pp_ns shns2 shca_ns2 "$g2" shns1 shca_ns1f1 "$gf1" 198.18.0.2 \
	ibv_rc_pingpong -n 200
tap_check "multicast: 1024 members of one group across both functions, every message checked" \
	shca_mcast_test --funcs shca_ns1 shca_ns1f1 shca_ns2 1024 4
tap_check "each function counts its own traffic (rdma statistic)" \
	eval 'counted shca_ns1f1 && counted shca_ns1'
tap_check "credit isolation: a flooding function is refused, the other flows" \
	flood_isolated
tap_check "func_credit refuses 0, 101 and junk" bad_credit
tap_check "deleting function 1 under traffic leaves function 0 working" \
	delete_under_traffic
tap_check "a function comes back on the same number" \
	eval 'add_f1 && func_of shca_ns1f1 "1 shv1"'
gf1=$(gid_index shca_ns1f1 198.18.0.1)
if modprobe macvlan 2>/dev/null; then
	tap_check "a macvlan child in another namespace shares shv1's engine" \
		macvlan_func
	macvlan_del
else
	tap_skip "a macvlan child in another namespace shares shv1's engine" \
		"no macvlan in this kernel"
fi
tap_check "ibv_rc_pingpong between the functions again" \
	pp_ns shns1 shca_ns1 "$g1" shns1 shca_ns1f1 "$gf1" 198.18.0.1 \
	ibv_rc_pingpong -n 100
# members of shca_ns2 attached before the move receive after it
rm -f /tmp/mc_go
shca_mcast_test --move shca_ns2 shca_ns1 /tmp/mc_go 8 4 > /tmp/mc_move.out 2>&1 &
mc_move=$!
wait_for 300 grep -q '^# ready' /tmp/mc_move.out
tap_check "shca_ns2 follows its netdev into another namespace" move_ns2
touch /tmp/mc_go
tap_check "multicast members of shca_ns2 keep receiving across the move" \
	mc_moved "$mc_move"
g2=$(gid_index shca_ns2 198.18.0.2)
tap_check "ibv_rc_pingpong to shca_ns2 in its new namespace" \
	pp_ns shns4 shca_ns2 "$g2" shns1 shca_ns1f1 "$gf1" 198.18.0.2 \
	ibv_rc_pingpong -n 100
two_hosts_del
ip netns del shns4 2>/dev/null
in_ns - rdma link delete shca_ns1f1 2>/dev/null
tap_check "all devices gone" eval 'wait_for 100 rdma_dev_gone shca_ns1f1'
tap_check "rmmod shca" shca_unload
tap_done
