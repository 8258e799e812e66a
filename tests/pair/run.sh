#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest 1 of the two-guest lane (scripts/pair.sh): shca between two
# kernels joined by a virtual Ethernet link, a real NIC driver's receive
# path in between (virtio-net: non-linear skbs from mergeable buffers),
# ARP across kernels.  The peer (guest 2, often
# another kernel release) runs the server side through agent.py.
#
# - the link: the peer's agent answers, ping crosses it;
# - a shca device on each eth0, no other path between them;
# - RC pingpong with data checks (-c) at 4 KiB and 64 KiB, UD pingpong,
#   an IPv6 GID, rping with verification through rdma_cm, perftest WRITE,
#   READ and SEND bandwidth;
# - jumbo frames: both links at MTU 9000, RC pingpong at path MTU 4096;
# - loss: netem drops 3 % of the frames each way; RC pingpong with data
#   checks and rping must still finish, and shca must have retransmitted;
# - rdma_rxe on the peer instead of shca: RC pingpong both ways, rping,
#   and the 64 KiB pingpong.

# shellcheck source=../selftests/lib.sh
. "$SHCA_TOP/tests/selftests/lib.sh"
# shellcheck source=lib.sh
. "$SHCA_TOP/tests/pair/lib.sh"

# pp_pair PROGRAM ARGS...: PROGRAM's server on the peer's $pdev, client
# on the local $ldev, GIDs $pg and $lg
pp_pair() {
	local prog=$1

	shift
	peer_server_client 120 "$prog -d $pdev -g $pg $*" \
		"$prog -d $ldev -g $lg $* $PAIR_ADDR2" 18515
}

# pp_rev PROGRAM ARGS...: the other way round (server here)
pp_rev() {
	local prog=$1 pid rc1 rc2

	shift
	timeout "$(tmo 120)" "$prog" -d "$ldev" -g "$lg" "$@" > /tmp/srv.out 2>&1 &
	pid=$!
	wait_for 300 listening_or_gone - 18515 "$pid"
	peer 120 "$prog -d $pdev -g $pg $* $PAIR_ADDR1" > /tmp/cli.out 2>&1
	rc2=$?
	wait "$pid"
	rc1=$?
	pair_report "local (server)" "$rc1" "peer (client)" "$rc2"
}

rping_pair() {
	peer_server_client 120 "rping -s -a $PAIR_ADDR2 -C $1 -S $2 -V" \
		"$(declare -f retry); retry 5 rping -c -a $PAIR_ADDR2 -C $1 -S $2 -V" cm
}

# perftest BW SIZE ITERS: perftest's bandwidth test between the devices
perf_pair() {
	peer_server_client 120 "$1 -d $pdev -x $pg -s $2 -n $3 -F" \
		"$1 -d $ldev -x $lg -s $2 -n $3 -F $PAIR_ADDR2" 18515
}

# shellcheck disable=SC2119	# (shca_load's arguments are insmod's)
both_shca() {
	shca_load &&
	peer 60 "$P shca_load && rdma link add shca0 type shca netdev eth0" &&
	rdma link add shca0 type shca netdev eth0 &&
	lg=$(wait_gid shca0 "$PAIR_ADDR1") &&
	pg=$(peer 30 "$P wait_gid shca0 $PAIR_ADDR2")
}

active_mtu_is() {
	ibv_devinfo -d shca0 | grep -q "active_mtu:[[:space:]]*$1 "
}

# mtu_both MTU ACTIVE: both links at MTU, shca0's active MTU ACTIVE here
mtu_both() {
	ip link set eth0 mtu "$1" && peer 10 "ip link set eth0 mtu $1" &&
	wait_for 50 active_mtu_is "$2"
}

netem_both() {
	tc qdisc "$1" dev eth0 root netem ${2:+loss "$2"} &&
	peer 10 "tc qdisc $1 dev eth0 root netem ${2:+loss $2}"
}

retransmitted() {
	local n

	read -r n < /sys/class/infiniband/shca0/ports/1/hw_counters/retransmit_pkts
	echo "# retransmit_pkts: $n"
	[ "${n:-0}" -gt 0 ]
}

# RC pingpong with data checks and rping under 3 % loss each way
lossy() {
	netem_both add 3% &&
	pp_pair ibv_rc_pingpong -c -s 8192 -n 300 &&
	rping_pair 20 4096
}

peer_rxe() {
	peer 60 "rdma link delete shca0 && rmmod shca && modprobe rdma_rxe &&
		rdma link add rxe0 type rxe netdev eth0" &&
	pdev=rxe0 &&
	pg=$(peer 30 "$P wait_gid rxe0 $PAIR_ADDR2")
}

tap_plan 20

link_up 1
tap_check "the peer's agent answers over the link" wait_for 600 peer 5 true
tap_check "ping across the link (ARP between the two kernels)" \
	/bin/busybox ping -c 3 -W 5 "$PAIR_ADDR2"
diag "local $(uname -r), peer $(peer 5 'uname -r')"
tap_check "a shca device on each guest's eth0" both_shca
ldev=shca0
pdev=shca0
tap_check "ibv_rc_pingpong -c 4 KiB" pp_pair ibv_rc_pingpong -c -s 4096 -n 500
tap_check "ibv_rc_pingpong -c 64 KiB" pp_pair ibv_rc_pingpong -c -s 65536 -n 100
tap_check "ibv_ud_pingpong -c 1 KiB" pp_pair ibv_ud_pingpong -c -s 1024 -n 500
lg6=$(wait_gid shca0 fd77::1)
pg6=$(peer 30 "$P wait_gid shca0 fd77::2")
tap_check "ibv_rc_pingpong -c on IPv6 GIDs" \
	peer_server_client 120 "ibv_rc_pingpong -d shca0 -g $pg6 -c -n 200" \
		"ibv_rc_pingpong -d shca0 -g $lg6 -c -n 200 $PAIR_ADDR2" 18515
tap_check "rping -V 60 000 B through rdma_cm" rping_pair 50 60000
tap_check "ib_write_bw 1 MiB" perf_pair ib_write_bw 1048576 50
tap_check "ib_read_bw 1 MiB" perf_pair ib_read_bw 1048576 50
tap_check "ib_send_bw 64 KiB" perf_pair ib_send_bw 65536 200
tap_check "both links at MTU 9000: active MTU 4096" mtu_both 9000 4096
tap_check "ibv_rc_pingpong -c -m 4096 64 KiB" \
	pp_pair ibv_rc_pingpong -c -m 4096 -s 65536 -n 100
mtu_both 1500 1024
tap_check "3 % loss each way (netem): ibv_rc_pingpong -c and rping" lossy
netem_both del
tap_check "shca retransmitted what was lost" retransmitted
tap_check "rdma_rxe on the peer instead of shca" peer_rxe
tap_check "shca <-> rxe: ibv_rc_pingpong -c, rxe serving" \
	pp_pair ibv_rc_pingpong -c -s 4096 -n 300
tap_check "shca <-> rxe: ibv_rc_pingpong -c, shca serving" \
	pp_rev ibv_rc_pingpong -c -s 4096 -n 300
tap_check "shca <-> rxe: rping -V through rdma_cm" rping_pair 20 4096
tap_check "shca <-> rxe: ibv_rc_pingpong -c 64 KiB, rxe serving" \
	pp_pair ibv_rc_pingpong -c -s 65536 -n 100
rdma link delete shca0
peer 30 "rdma link delete rxe0; modprobe -r rdma_rxe" > /dev/null
"${AGENT[@]}" call "$PAIR_ADDR2" "$PAIR_PORT" quit
shca_unload
tap_done
