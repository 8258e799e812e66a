#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# latency-split-guest.sh: the in-VM half of scripts/latency-split.sh.
# Started by vm.sh as
#
#   scripts/latency-split-guest.sh ITERS REPS
#
# Two settings, shca and rdma_rxe in each, run alternately:
#   one:  one device talking to itself: shca_lo on the loopback device of
#         namespace shlo, rxe_lo on the initial namespace's (rxe binds UDP
#         4791 there, shca in shlo);
#   two:  two devices of one host joined by a veth pair of MTU 1500: lib.sh's
#         two_hosts (shca_ns1 <-> shca_ns2) and rxe_pair (rxe_a <-> rxe_b).
# In each, ib_send_lat and ib_write_lat with 64-byte messages, ITERS
# iterations, REPS times over: first untraced (perftest's own figures),
# then traced, with only the events the split needs:
#   shca: its tracepoints shca_fetch, shca_req_pkt, shca_wire_tx, shca_rx,
#         shca_rx_handle, shca_place and shca_cqe;
#   rxe:  kprobes on rxe_post_send (each post is a system call),
#         rxe_requester, rxe_xmit_packet, rxe_resp_queue_pkt,
#         rxe_responder and rxe_cq_post.
# The server runs as "srv_<test>" and the client as "cli_<test>" (symlinks
# to perftest: a task's name is the name it was started by), so the trace
# tells their system calls apart.
#
# Writes into $SHCA_OUT/split/: for each run SETTING-TEST-DEV-REP.plain
# (the untraced client's output), .trace (the ftrace buffer), .cli and
# .srv (the traced run's outputs), .devs (the client's and the server's
# device), and guest-info.

set -u
iters=$1
reps=$2

# shellcheck source=../tests/selftests/lib.sh
. "$SHCA_TOP/tests/selftests/lib.sh"
T=/sys/kernel/tracing
out=$SHCA_OUT/split
bin=/tmp/split-bin
port=19500
mkdir -p "$out" "$bin"

log() {
	echo "latency-split-guest: $*"
}

# kprobes at rdma_rxe's stages
probes() {
	{
		echo 'p:shca_split/rxe_post rxe_post_send'
		echo 'p:shca_split/rxe_req rxe_requester'
		# struct rxe_pkt_info: hdr (the BTH) after three pointers
		echo 'p:shca_split/rxe_xmit rxe_xmit_packet op=+0(+24(%si)):u8'
		echo 'p:shca_split/rxe_respq rxe_resp_queue_pkt'
		echo 'p:shca_split/rxe_resp rxe_responder'
		# struct ib_uverbs_wc: opcode at byte 12
		echo 'p:shca_split/rxe_cq rxe_cq_post op=+12(%si):u32'
	} > "$T/kprobe_events"
}

# trace_on DEV: an empty buffer and the events of DEV (shca or rxe)
trace_on() {
	local e

	echo 0 > "$T/tracing_on"
	echo 0 > "$T/events/enable"
	echo 16384 > "$T/buffer_size_kb"
	: > "$T/trace"
	if [ "$1" = shca ]; then
		for e in shca_fetch shca_req_pkt shca_wire_tx shca_rx \
			 shca_rx_handle shca_place shca_cqe; do
			echo 1 > "$T/events/shca/$e/enable"
		done
	else
		for e in rxe_post rxe_req rxe_xmit rxe_respq rxe_resp rxe_cq; do
			echo 1 > "$T/events/shca_split/$e/enable"
		done
	fi
	echo 1 > "$T/tracing_on"
}

trace_off() {
	echo 0 > "$T/tracing_on"
	echo 0 > "$T/events/enable"
}

# setting_up SETTING: the devices of SETTING; sets the globals the runs use
setting_up() {
	case $1 in
	one)
		ip netns add shlo && ip -n shlo link set lo up &&
		ip netns exec shlo rdma link add shca_lo type shca netdev lo &&
		rdma link add rxe_lo type rxe netdev lo || return 1
		ns_srv[shca]=shlo ns_cli[shca]=shlo dev_srv[shca]=shca_lo
		dev_cli[shca]=shca_lo addr[shca]=127.0.0.1
		ns_srv[rxe]=- ns_cli[rxe]=- dev_srv[rxe]=rxe_lo dev_cli[rxe]=rxe_lo
		addr[rxe]=127.0.0.1
		gid_srv[shca]=$(wait_gid shca_lo 127.0.0.1) &&
		gid_cli[shca]=${gid_srv[shca]} &&
		gid_srv[rxe]=$(wait_gid rxe_lo 127.0.0.1) &&
		gid_cli[rxe]=${gid_srv[rxe]}
		;;
	two)
		two_hosts 1500 && rxe_pair 1500 || return 1
		ns_srv[shca]=shns1 ns_cli[shca]=shns2 dev_srv[shca]=shca_ns1
		dev_cli[shca]=shca_ns2 addr[shca]=198.18.0.1
		ns_srv[rxe]=- ns_cli[rxe]=- dev_srv[rxe]=rxe_a dev_cli[rxe]=rxe_b
		addr[rxe]=198.18.3.1
		gid_srv[shca]=$(wait_gid shca_ns1 198.18.0.1) &&
		gid_cli[shca]=$(wait_gid shca_ns2 198.18.0.2) &&
		gid_srv[rxe]=$(wait_gid rxe_a 198.18.3.1) &&
		gid_cli[rxe]=$(wait_gid rxe_b 198.18.3.2)
		;;
	esac
}

setting_down() {
	case $1 in
	one)
		rdma link delete rxe_lo
		rdma link delete shca_lo
		ip netns del shlo
		;;
	two)
		two_hosts_del
		rxe_pair_del
		;;
	esac
}

# run SETTING TEST DEV REP TRACED: one perftest run; its outputs under
# $out/SETTING-TEST-DEV-REP.*
run() {
	local s=$1 t=$2 d=$3 r=$4 traced=$5 base args rc

	base=$out/$s-$t-$d-$r
	port=$((port + 1))
	args="-s 64 -n $iters -F $PT_OPTS -p $port"
	[ "$traced" = 1 ] && trace_on "$d"
	ns_server_client "${ns_srv[$d]}" "${ns_cli[$d]}" 120 \
		"$bin/srv_$t -d ${dev_srv[$d]} -x ${gid_srv[$d]} $args" \
		"$bin/cli_$t -d ${dev_cli[$d]} -x ${gid_cli[$d]} $args ${addr[$d]}" \
		"$port"
	rc=$?
	if [ "$traced" = 1 ]; then
		trace_off
		cat "$T/trace" > "$base.trace"
		cp /tmp/cli.out "$base.cli"
		cp /tmp/srv.out "$base.srv"
		echo "cli=${dev_cli[$d]} srv=${dev_srv[$d]}" > "$base.devs"
	else
		cp /tmp/cli.out "$base.plain"
	fi
	log "$s $t $d rep $r traced=$traced rc=$rc"
	return "$rc"
}

declare -A ns_srv ns_cli dev_srv dev_cli addr gid_srv gid_cli
for t in ib_send_lat ib_write_lat; do
	ln -sf "$(command -v "$t")" "$bin/srv_${t#ib_}"
	ln -sf "$(command -v "$t")" "$bin/cli_${t#ib_}"
done
{
	echo "kernel=$(uname -r)"
	echo "iters=$iters"
	echo "reps=$reps"
	echo "cpus=$(nproc)"
} > "$out/guest-info"

[ -d "$T/events" ] || mount -t tracefs nodev "$T" || exit 1
modprobe rdma_rxe || exit 1
# shellcheck disable=SC2119	# no module parameters
shca_load || exit 1
probes || { log "cannot place the probes"; exit 1; }
rc=0
for s in one two; do
	setting_up "$s" || { log "setting $s failed"; rc=1; setting_down "$s"; continue; }
	for ((r = 1; r <= reps; r++)); do
		for t in send_lat write_lat; do
			# the device that goes first alternates
			devs="shca rxe"
			[ $(((r + ${#t}) % 2)) = 1 ] && devs="rxe shca"
			for d in $devs; do
				run "$s" "$t" "$d" "$r" 0 || rc=1
				run "$s" "$t" "$d" "$r" 1 || rc=1
			done
		done
	done
	setting_down "$s"
done
echo > "$T/kprobe_events"
exit "$rc"
