#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Crafted and hostile RoCEv2 packets against shca_ns1: each must be dropped
# (or NAKed) and counted in the right device counter, and nothing else may
# move or break.  roce_inject.py writes the packets whole (IPv4 + UDP + BTH
# ... + ICRC; IPv6 for the second third-host case) through a raw socket
# in shns2, whose own shca device is removed so that the injector owns UDP
# port 4791 there and sees every reply of shca_ns1.  Live target QPs are ibv_rc_pingpong,
# ibv_uc_pingpong and ibv_ud_pingpong servers in shns1 whose "client" is
# roce_inject.py (a made-up QPN 0xabcd at 198.18.0.2).  Then a flood of
# random and semi-valid packets, after which shca_ns2 comes back and the
# pingpongs between the two devices, and rping through rdma_cm (QP1),
# must still work (the VM run checks dmesg).
#
# The flood is 40000 packets (100000 under SHCA_LONG=1): the injector
# builds 25000 distinct ones and sends them in turn, so the short flood
# sends every one of them at least once; the long one is for the volume.
. "$(dirname "$0")/lib.sh"

INJ=$(cd "$(dirname "$0")" && pwd)/roce_inject.py
PY=/usr/bin/python3
HW=/sys/class/infiniband/shca_ns1/ports/1/hw_counters
WATCH=(rx_pkts tx_pkts tx_drop rx_drop_bad_hdr rx_drop_bad_icrc
       rx_drop_no_qp rx_drop_qp_state rx_drop_bad_key rx_drop_opcode
       rx_drop_psn rx_drop_queue_full rx_drop_too_long rx_drop_not_peer
       ack_sent ack_rcvd nak_seq_sent nak_seq_rcvd nak_other_sent nak_other_rcvd rnr_nak_sent rnr_nak_rcvd
       retransmit_pkts timeouts dup_req)
DROPS=(rx_drop_bad_hdr rx_drop_bad_icrc rx_drop_no_qp rx_drop_qp_state
       rx_drop_bad_key rx_drop_opcode rx_drop_psn rx_drop_queue_full
       rx_drop_too_long rx_drop_not_peer)

# Expected counter moves of each case, "N" standing for the packets sent
# (roce_inject.py prints it); every watched counter not listed must stay.
declare -A RC_CASES=(
	[no-qp]="rx_pkts=N rx_drop_no_qp=N"
	[bad-icrc]="rx_pkts=N rx_drop_bad_icrc=N"
	[bad-tver]="rx_pkts=N rx_drop_bad_hdr=N"
	[bad-opcode]="rx_pkts=N rx_drop_bad_hdr=N"
	[wrong-transport]="rx_pkts=N rx_drop_opcode=N"
	[truncated]="rx_pkts=N rx_drop_bad_hdr=N"
	[bad-pad]="rx_pkts=N rx_drop_bad_hdr=N"
	[udp-len-long]=""
	[udp-len-short]="rx_pkts=1 rx_drop_bad_icrc=1"
	[udp-len-zero]="rx_pkts=1 rx_drop_bad_hdr=1"
	[fragmented]="rx_pkts=2 rx_drop_no_qp=1 rx_drop_bad_icrc=1"
	[cnp]="rx_pkts=1"
	[dup]="rx_pkts=1 dup_req=1 tx_pkts=1 ack_sent=*"
	[psn-ahead]="rx_pkts=2 rx_drop_psn=2 nak_seq_sent=1 tx_pkts=1"
	[bad-pkey]="rx_pkts=N rx_drop_bad_key=N"
	[unsolicited-resp]="rx_pkts=N rx_drop_psn=N"
	[good-send]="rx_pkts=2 ack_sent=1 ack_rcvd=1 tx_pkts=* retransmit_pkts=* timeouts=*"
	[bad-rkey]="rx_pkts=1 nak_other_sent=1 tx_pkts=1"
	[qp-error]="rx_pkts=1 rx_drop_qp_state=1"
)
RC_ORDER=(no-qp bad-icrc bad-tver bad-opcode wrong-transport truncated
	  bad-pad udp-len-long udp-len-short udp-len-zero fragmented cnp dup
	  psn-ahead bad-pkey unsolicited-resp good-send bad-rkey qp-error)
# fatal to the QP: each on a new ibv_rc_pingpong server (its arguments)
declare -A FATAL_CASES=(
	[nak-seq-middle]="-s 4096"
	[nak-first-only]="-s 4096"
	[nak-short-first]="-s 4096"
	[nak-over-mtu]="-s 4096"
	[nak-last-empty]="-s 4096"
	[nak-too-long]="-s 64"
)
FATAL_ORDER=(nak-seq-middle nak-first-only nak-short-first nak-over-mtu
	     nak-last-empty nak-too-long)
declare -A UD_CASES=(
	[ud-bad-qkey]="rx_pkts=1 rx_drop_bad_key=1"
	[ud-truncated]="rx_pkts=N rx_drop_bad_hdr=N"
	[ud-wrong-transport]="rx_pkts=1 rx_drop_opcode=1"
	[gsi-bad-qkey]="rx_pkts=1 rx_drop_bad_key=1"
	[gsi-too-long]="rx_pkts=N rx_drop_too_long=N"
	[ud-good]="rx_pkts=1 tx_pkts=1"
)
UD_ORDER=(ud-bad-qkey ud-truncated ud-wrong-transport gsi-bad-qkey
	  gsi-too-long ud-good)

tap_plan $((${#RC_ORDER[@]} + 2 * ${#FATAL_ORDER[@]} + ${#UD_ORDER[@]} + 39))

declare -A c0
snap() {
	local c

	for c in "${WATCH[@]}"; do
		read -r "c0[$c]" < "$HW/$c"
	done
}

# moved COUNTER: how much it moved since snap, in MOVED (no subshell:
# the checks read some 25 counters per case)
moved() {
	local v

	read -r v < "$HW/$1"
	MOVED=$((v - c0[$1]))
}

rx_reached() {
	moved rx_pkts
	[ "$MOVED" -ge "$1" ]
}

# expect N SPEC: wait for rx_pkts to move as SPEC says, then check every
# watched counter (SPEC: "counter=VALUE ...", VALUE a number, N or *).
expect() {
	local n=$1 spec=$2 kv c d w bad=0
	local -A want=()

	for kv in $spec; do
		want[${kv%%=*}]=${kv#*=}
	done
	w=${want[rx_pkts]:-0}
	[ "$w" = N ] && w=$n
	[ "$w" = '*' ] && w=0
	wait_for 100 rx_reached "$w"
	# let what follows the last packet (replies) settle: 0.3 s after it,
	# of which the injector may have waited some (for no reply)
	[ "$INJ_QUIET" -ge 300 ] ||
		sleep "0.$(printf %03d $((300 - INJ_QUIET)))"
	for c in "${WATCH[@]}"; do
		moved "$c"
		d=$MOVED
		w=${want[$c]:-0}
		[ "$w" = N ] && w=$n
		[ "$w" = '*' ] && { [ "$d" = 0 ] || diag "  $c +$d"; continue; }
		if [ "$d" != "$w" ]; then
			diag "counter $c moved by $d, expected $w"
			bad=1
		fi
	done
	return $bad
}

# The injector runs for the whole test in shns2, reading commands (see
# roce_inject.py) from this shell.
start_injector() {
	coproc INJP { exec ip netns exec shns2 "$PY" "$INJ" serve 2>&1; }
}

# inj COMMAND...: one injector command; its report goes to stdout, its
# status is returned, the packets it sent are left in INJ_SENT and the
# milliseconds since its last packet, when it answered, in INJ_QUIET
inj() {
	local line st

	INJ_SENT=0
	INJ_QUIET=0
	[ -n "${INJP[1]:-}" ] || { echo "# no injector"; return 1; }
	echo "$*" >&"${INJP[1]}" || return 1
	while IFS= read -r -t "$(tmo 400)" line <&"${INJP[0]}"; do
		case $line in
		"done "*)
			read -r _ st INJ_SENT INJ_QUIET <<< "$line"
			return "$st" ;;
		esac
		echo "$line"
	done
	echo "# the injector did not answer"
	return 1
}

# run_case NAME SPEC [LABEL]: one roce_inject.py case, checked on the wire
# (by roce_inject.py) and in the counters (here); LABEL names it in TAP
run_case() {
	local name=$1 spec=$2 label=${3:-$1} rc

	snap
	inj case "$name" > /tmp/bp_case.out
	rc=$?
	expect "$INJ_SENT" "$spec" > /tmp/bp_expect.out || rc=1
	tap_ok $rc "$label: ${spec:-no counter moves}"
	[ $rc = 0 ] || cat /tmp/bp_case.out /tmp/bp_expect.out
}

SERVERS=()
# start_server NAME PORT PROGRAM ARGS...: a pingpong server in shns1 whose
# client is the injector (target NAME), on GID index SRV_GID (default: the
# IPv4 one); sets SRV_PID
start_server() {
	local name=$1 port=$2 prog=$3

	shift 3
	ip netns exec shns1 "$prog" -d shca_ns1 -g "${SRV_GID:-$g1}" -p "$port" "$@" \
		> "/tmp/bp_$name.srv" 2>&1 &
	SRV_PID=$!
	SERVERS+=("$SRV_PID")
	wait_for 300 listening shns1 "$port" &&
	inj connect "$name" "$name" "$port"
}

# stop PID: end a server we started (and reap it)
stop() {
	kill "$1" 2>/dev/null
	kill -CONT "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

cleanup() {
	local p

	for p in "${SERVERS[@]}"; do
		stop "$p"
	done
	SERVERS=()
	if [ -n "${INJP_PID:-}" ]; then
		echo quit >&"${INJP[1]}"
		wait "$INJP_PID"
		INJP_PID=
	fi
}
trap cleanup EXIT

# exited_with PID HOW: PID ends within 5 s; its status is 0 (HOW ok) or,
# for the rc server, not (HOW fail)
exited_with() {
	local pid=$1 how=$2 rc

	wait_for 50 eval "! kill -0 $pid"
	if kill -0 "$pid" 2>/dev/null; then
		diag "server $pid still running"
		stop "$pid"
		return 1
	fi
	wait "$pid"
	rc=$?
	[ "$how" = ok ] && [ "$rc" = 0 ] && return 0
	# failing because nobody ACKs its own SEND does not count
	[ "$how" = fail ] && [ "$rc" != 0 ] &&
		! grep -q "retry counter exceeded" /tmp/bp_rc.srv && return 0
	diag "server exit status $rc"
	return 1
}

modprobe -a rdma_cm rdma_ucm ib_cm 2>/dev/null
tap_check "module loads" shca_load
tap_check "two hosts; shca_ns2 removed (shns2's UDP 4791 is the injector's)" \
	two_hosts_no_ns2
g1=$(gid_index shca_ns1 198.18.0.1)
start_injector

# --- an RC QP in RTS -------------------------------------------------------
tap_check "ibv_rc_pingpong server connected to the injector" \
	start_server rc 18515 ibv_rc_pingpong -s 64 -n 1000 -e
rc_pid=$SRV_PID
sed -n 's/^# rc server/# rc server/p' /tmp/tap_check.out
for c in "${RC_ORDER[@]}"; do
	# its receives must not be flushed and its QP destroyed before
	# qp-error ran
	[ "$c" = bad-rkey ] && kill -STOP "$rc_pid"
	run_case "$c" "${RC_CASES[$c]}"
done
kill -CONT "$rc_pid"
tap_check "the pingpong server's receives fail after the fatal NAK" \
	exited_with "$rc_pid" fail
sed 's/^/#   /' /tmp/bp_rc.srv | grep -v address
diag "$SECONDS s"

# --- fatal NAKs, each to a new RC QP ---------------------------------------
for c in "${FATAL_ORDER[@]}"; do
	# shellcheck disable=SC2086	# the server's arguments
	start_server rc 18515 ibv_rc_pingpong ${FATAL_CASES[$c]} -n 1000 -e \
		> /tmp/bp_conn.out
	rc_pid=$SRV_PID
	spec="rx_pkts=N nak_other_sent=1 tx_pkts=1"
	run_case "$c" "$spec"
	tap_check "$c: the pingpong server's QP fails" \
		exited_with "$rc_pid" fail
	sed 's/^/#   /' /tmp/bp_rc.srv | grep -v address
done
diag "$SECONDS s"

# --- a QP on an SRQ failing mid-SEND ----------------------------------------
# the receive WQE the SEND_FIRST took from the SRQ is the QP's now: when
# the QP fails it must complete (flushed), not vanish with the message
tap_check "ibv_srq_pingpong server (one QP) connected to the injector" \
	start_server srq 18519 ibv_srq_pingpong -q 1 -s 4096 -n 1000 -e
srq_pid=$SRV_PID
run_case srq-first-only "rx_pkts=N nak_other_sent=1 tx_pkts=1"
srq_flushed() {
	wait_for 50 eval "! kill -0 $srq_pid"
	stop "$srq_pid"
	grep -q "Failed status .*(5)" /tmp/bp_srq.srv
}
tap_check "srq-first-only: the SRQ receive it took completes flushed" \
	srq_flushed
sed 's/^/#   /' /tmp/bp_srq.srv | grep -v address
diag "$SECONDS s"

# --- a peer that only repeats itself ----------------------------------------
tap_check "ibv_rc_pingpong server for stale ACKs" \
	start_server rc 18515 ibv_rc_pingpong -s 64 -n 1000 -e
rc_pid=$SRV_PID
run_case stale-acks \
	"rx_pkts=N ack_sent=1 ack_rcvd=* tx_pkts=9 retransmit_pkts=7 timeouts=8
	rx_drop_qp_state=* rx_drop_no_qp=* rx_drop_psn=*"
sed -n 's/^# retrans/#   retrans/p' /tmp/bp_case.out
failed_retry() {
	wait_for 50 eval "! kill -0 $rc_pid"
	stop "$rc_pid"
	grep -q "retry counter exceeded" /tmp/bp_rc.srv
}
tap_check "stale ACKs: the server's SEND fails with RETRY_EXC_ERR" failed_retry
diag "$SECONDS s"

# --- NAKs for requests no longer outstanding --------------------------------
tap_check "ibv_rc_pingpong server for stale NAKs" \
	start_server rc 18515 ibv_rc_pingpong -s 64 -n 1000 -e
rc_pid=$SRV_PID
run_case stale-naks \
	"rx_pkts=N ack_sent=2 ack_rcvd=2 nak_other_rcvd=9 nak_seq_rcvd=1
	rnr_nak_rcvd=1 rx_drop_psn=11 tx_pkts=* retransmit_pkts=* timeouts=*"
in_service() {
	kill -0 "$rc_pid" && ! grep -q "Failed status" /tmp/bp_rc.srv
}
tap_check "stale NAKs: the server's QP is still in service" in_service
stop "$rc_pid"
diag "$SECONDS s"

# --- a NAK inside a READ whose responses are coming -------------------------
# shca_readreq_test reads 4 KiB from the injector, which answers with two
# of the four responses and then NAKs the READ at its first PSN (the
# requester expects the third): the READ fails at once, not retried
start_reader() {
	ip netns exec shns1 shca_readreq_test shca_ns1 "$g1" 18516 4096 \
		> /tmp/bp_rd.srv 2>&1 &
	rd_pid=$!
	SERVERS+=("$rd_pid")
	wait_for 300 listening shns1 18516 && inj connect rc rd 18516
}
tap_check "shca_readreq_test connected to the injector" start_reader
run_case nak-inside-read \
	"rx_pkts=3 tx_pkts=1 nak_other_rcvd=1 ack_rcvd=*"
read_failed() {
	wait_for 100 eval "! kill -0 $rd_pid"
	stop "$rd_pid"
	cat /tmp/bp_rd.srv
	grep -q "status: remote access error" /tmp/bp_rd.srv
}
tap_check "NAK inside the READ: the READ completes with a remote access error" \
	read_failed
diag "$SECONDS s"

# --- a third host injecting into a live connection ---------------------------
# shns2 gets a second address, the third host's: its packets carry the
# right QPN and PSNs but not the peer's address
tap_check "third host: 198.18.0.3 in shns2" \
	ip -n shns2 addr add 198.18.0.3/24 dev shv2
tap_check "ibv_rc_pingpong server for a third host" \
	start_server rc 18515 ibv_rc_pingpong -s 64 -n 1000 -e
rc_pid=$SRV_PID
run_case third-host \
	"rx_pkts=N rx_drop_not_peer=7 ack_sent=2 ack_rcvd=2 tx_pkts=*
	retransmit_pkts=* timeouts=*"
tap_check "third host: the server's QP is still in service" in_service
stop "$rc_pid"
# the same over IPv6, whose source check is its own: the connection runs
# between 2001:db8::1 and ::2, the third host is 2001:db8::3
third6() {
	ip -n shns2 addr add 2001:db8::3/64 dev shv2 nodad &&
	SRV_GID=$(gid_index shca_ns1 2001:db8::1) &&
	[ -n "$SRV_GID" ] && inj addr 2001:db8::2 2001:db8::1
}
tap_check "third host over IPv6: 2001:db8::3 in shns2" third6
tap_check "ibv_rc_pingpong server over IPv6 for a third host" \
	start_server rc 18515 ibv_rc_pingpong -s 64 -n 1000 -e
rc_pid=$SRV_PID
run_case third-host \
	"rx_pkts=N rx_drop_not_peer=7 ack_sent=2 ack_rcvd=2 tx_pkts=*
	retransmit_pkts=* timeouts=*" "third-host over IPv6"
tap_check "third host over IPv6: the server's QP is still in service" in_service
stop "$rc_pid"
SRV_GID=
tap_check "the injector back on IPv4" inj addr 198.18.0.2 198.18.0.1
diag "$SECONDS s"

# --- a UC QP: a message dropped midway uses up no receive WQE -------------
tap_check "ibv_uc_pingpong server connected to the injector" \
	start_server uc 18517 ibv_uc_pingpong -s 1024 -r 8 -n 1
uc_pid=$SRV_PID
run_case uc-third-host "rx_pkts=1 rx_drop_not_peer=1"
run_case uc-dropped-messages "rx_pkts=N rx_drop_psn=1 tx_pkts=1"
tap_check "the uc pingpong server completed its exchange" \
	exited_with "$uc_pid" ok
diag "$SECONDS s"

# --- a UD QP -----------------------------------------------------------------
tap_check "ibv_ud_pingpong server connected to the injector" \
	start_server ud 18516 ibv_ud_pingpong -s 1024 -n 1 -e
ud_pid=$SRV_PID
for c in "${UD_ORDER[@]}"; do
	run_case "$c" "${UD_CASES[$c]}"
done
tap_check "the ud pingpong server completed its exchange" \
	exited_with "$ud_pid" ok
diag "$SECONDS s"

# --- flood -------------------------------------------------------------------
start_server rc 18515 ibv_rc_pingpong -s 64 -n 1000 -e > /tmp/bp_conn.out
rc1=$?
rc_pid=$SRV_PID
start_server ud 18516 ibv_ud_pingpong -s 1024 -n 1000 -e >> /tmp/bp_conn.out
rc2=$?
ud_pid=$SRV_PID
tap_ok $(( rc1 | rc2 )) "flood targets: new RC and UD pingpong servers"
grep server /tmp/bp_conn.out
snap
t0=$SECONDS
flood=$(sized 40000 100000)
tap_check "flood: $flood random/semi-valid packets within $(tmo 150) s" \
	inj flood "$flood" 1 "$(tmo 150)"
grep flood: /tmp/tap_check.out
# settle: rx_pkts stable for 1 s (at most 30 s)
prev=-1
for _ in $(seq 30); do
	moved rx_pkts
	[ "$MOVED" = "$prev" ] && break
	prev=$MOVED
	sleep 1
done
flood_sane() {
	local rx sum=0 c

	moved rx_pkts
	rx=$MOVED
	for c in "${WATCH[@]}"; do
		moved "$c"
		[ "$MOVED" = 0 ] || diag "  $c +$MOVED"
	done
	for c in "${DROPS[@]}"; do
		moved "$c"
		sum=$((sum + MOVED))
	done
	diag "flood took $((SECONDS - t0)) s; rx_pkts +$rx, drops +$sum"
	[ "$rx" -gt $((flood / 2)) ] && [ "$rx" -le "$flood" ] &&
	[ "$sum" -le "$rx" ]
}
tap_check "flood: device counted it (rx_pkts $((flood / 2))..$flood, drops <= rx_pkts)" \
	flood_sane
sed 's/^/#/' /tmp/tap_check.out
stop "$rc_pid"
stop "$ud_pid"
cleanup		# the injector leaves UDP 4791 of shns2 to shca_ns2
trap - EXIT
diag "$SECONDS s"

# --- survival ----------------------------------------------------------------
# the GSI QP kept its receive buffers through gsi-too-long and the flood
survives "the flood"
diag "$SECONDS s"
shca_counters_diag
two_hosts_del
tap_check "rmmod shca" shca_unload
modprobe -r rdma_ucm rdma_cm 2>/dev/null
tap_done
