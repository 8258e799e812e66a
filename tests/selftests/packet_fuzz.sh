#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A structure-aware packet fuzzer against live connections.  In shns1,
# shca_live_test keeps QP pairs of shca_ns1 moving checked data through
# the device's same-host path: an RC "victim" (SEND, WRITE + READ back,
# FETCH_ADD, CMP_SWAP), an RC "bystander" in its own PD, a UC and a UD
# pair; it writes the victims' QPNs, PSNs, published R_Key, VA and
# length to a state file every 50 ms.  From shns2, whose shca device is
# removed so that UDP 4791 there is ours, roce_fuzz.py reads that file
# and sends SHCA_PKTFUZZ_COUNT packets with valid ICRC built from
# SHCA_PKTFUZZ_SEED: every RC, UC and UD opcode and CNP with every
# extension header, aimed at the live QPNs (and +-1, QP1, random), PSNs
# near the live ones, real and off-by-one R_Keys, boundary lengths and
# addresses, bad pad counts, mutated and truncated headers; also ACKs,
# NAKs, READ responses and atomic ACKs aimed at the requester.
#
# Checks: then STALE (SHCA_PKTFUZZ_STALE, default 20000) packets that
# the victim must survive (--stale: RC requests and responses with PSNs
# before its oldest unacknowledged one) to a fresh victim pair, which
# must keep going; the live program ends every stream within bounded
# time (no hang); the bystander completes its stream with every byte checked;
# the victim either completes or fails cleanly (error completion, the
# rest flushed, QP in error; it is then reconnected), and no fuzzer byte
# lands in memory whose key the fuzzer does not have; the UC and UD
# receivers get only whole messages of their sender or the fuzzer's; the
# drop counters moved; afterwards the two devices still talk (RC and UD
# pingpong, rping through rdma_cm), and the module unloads without a leak
# (the VM run checks dmesg).  A correct-PSN packet of the fuzzer may
# legitimately place data in the victim or end its connection: see
# shca_live_rc.c for how the victim's checks account for that.
#
# SHCA_PKTFUZZ_COUNT packets (default 30000; 200000 under SHCA_LONG=1),
# SHCA_PKTFUZZ_SEED (default 1), SHCA_PKTFUZZ_REUSE (default 5: packets
# sent per packet built), SHCA_PKTFUZZ_STALE (default 4000; 20000 under
# SHCA_LONG=1), SHCA_PKTFUZZ_MAX_SECONDS (default (30 + COUNT / 1000)
# times the time scale) bounds the fuzz.  The short size still builds
# every class and every opcode of the generator more than 60 times
# (6 000 packets built; the rarest opcode has about 1 in 90 of them) and
# sees the victim recycled (the stale phase waits for a new generation);
# its 4000 stale packets are 800 built, RC requests and responses with
# PSNs behind the window;
# the long one is for the volume, as is the debug-kernel lane's
# SHCA_PKTFUZZ_COUNT=500000 (Documentation/testing.md).
. "$(dirname "$0")/lib.sh"

DIR=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
COUNT=${SHCA_PKTFUZZ_COUNT:-$(sized 30000 200000)}
SEED=${SHCA_PKTFUZZ_SEED:-1}
REUSE=${SHCA_PKTFUZZ_REUSE:-5}
STALE=${SHCA_PKTFUZZ_STALE:-$(sized 4000 20000)}
# the fuzz must end within this (about 3500 packets/s in the VM on the
# stock kernels: Documentation/testing.md)
MAXS=${SHCA_PKTFUZZ_MAX_SECONDS:-$(((30 + COUNT / 1000) * SHCA_TIME_SCALE))}
STATE=/tmp/pf_state.json
LIVE_OUT=/tmp/pf_live.out
RESULTS=(rc_victim rc_bystander uc ud)
DROPS=(rx_drop_bad_hdr rx_drop_bad_icrc rx_drop_no_qp rx_drop_qp_state
       rx_drop_bad_key rx_drop_opcode rx_drop_psn rx_drop_queue_full
       rx_drop_too_long)

tap_plan $((12 + ${#RESULTS[@]}))

LIVE_PID=
cleanup() {
	if [ -n "$LIVE_PID" ]; then
		kill "$LIVE_PID" 2>/dev/null
		wait "$LIVE_PID" 2>/dev/null
		LIVE_PID=
	fi
	rm -f "$STATE" "$STATE.tmp"
}
trap cleanup EXIT

start_live() {
	rm -f "$STATE"
	ip netns exec shns1 shca_live_test shca_ns1 "$g1" "$STATE" \
		$((MAXS + 60)) "$SEED" > "$LIVE_OUT" 2>&1 &
	LIVE_PID=$!
	wait_for 100 test -s "$STATE" || { cat "$LIVE_OUT"; return 1; }
	cat "$STATE"
}

fuzz() {
	ip netns exec shns2 "$PY" "$DIR/roce_fuzz.py" --reuse "$REUSE" \
		fuzz "$STATE" "$COUNT" "$SEED" "$MAXS"
}

# state_field NAME: the first member NAME of the state file (the RC
# victim's: "rc" comes first)
state_field() {
	grep -o "\"$1\": [0-9]*" "$STATE" | head -1 | cut -d' ' -f2
}

# gen_not G: the victim's generation is no longer G
gen_not() {
	[ "$(state_field gen)" != "$1" ]
}

# A fresh victim generation must survive STALE packets that the IBA has
# it discard or answer without effect, and keep completing WRs.
stale_phase() {
	local g a0 a1 g1

	g=$(state_field gen)
	kill -USR2 "$LIVE_PID"
	wait_for 300 gen_not "$g" ||
		{ echo "# the victim was not recycled"; return 1; }
	sleep 0.5
	g=$(state_field gen)
	a0=$(state_field acked)
	ip netns exec shns2 "$PY" "$DIR/roce_fuzz.py" --stale \
		--reuse "$REUSE" fuzz "$STATE" "$STALE" "$SEED" "$MAXS" ||
		return 1
	sleep 1
	a1=$(state_field acked)
	g1=$(state_field gen)
	echo "# victim generation $g: $a0 WRs acknowledged before, $a1" \
		"after; generation now $g1"
	[ "$g1" = "$g" ] && [ "$a1" -gt "$a0" ]
}

# the live program ends within DRAIN_MS (30 s) of the signal, plus slack
live_ends() {
	local n

	kill -USR1 "$LIVE_PID" 2>/dev/null
	for n in $(seq 450); do
		kill -0 "$LIVE_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$LIVE_PID" 2>/dev/null; then
		echo "# shca_live_test still running 45 s after the stop"
		kill -9 "$LIVE_PID"
		wait "$LIVE_PID"
		LIVE_PID=
		return 1
	fi
	wait "$LIVE_PID"
	echo "# shca_live_test exit status $?"
	LIVE_PID=
	return 0
}

counters_sane() {
	local rx sum=0 c d line="# drops by reason:"

	ctr_diag shca_ns1
	rx=$(ctr_sum shca_ns1 rx_pkts)
	for c in "${DROPS[@]}"; do
		d=$(ctr_sum shca_ns1 "$c")
		sum=$((sum + d))
		line="$line ${c#rx_drop_} $d"
	done
	echo "$line"
	echo "# rx_pkts +$rx, drops +$sum, fuzz packets $COUNT"
	[ "$sum" -ge $((COUNT / 4)) ] && [ "$sum" -le "$rx" ]
}

modprobe -a rdma_cm rdma_ucm ib_cm 2>/dev/null
tap_check "module loads" shca_load
tap_check "two hosts; shca_ns2 removed (shns2's UDP 4791 is the fuzzer's)" \
	two_hosts_no_ns2
g1=$(gid_index shca_ns1 198.18.0.1)
tap_check "live RC, UC and UD pairs on shca_ns1 publish their state" \
	start_live
sed 's/^/#   /' /tmp/tap_check.out
ctr_snap shca_ns1
t0=$EPOCHREALTIME
tap_check "fuzz: $COUNT packets, seed $SEED, within $MAXS s" fuzz
grep '^#' /tmp/tap_check.out
diag "fuzz took $(elapsed "$t0") s"
tap_check "$STALE stale and duplicate packets: a fresh victim survives" \
	stale_phase
grep '^#' /tmp/tap_check.out
tap_check "the live program finishes its streams after the fuzz (no hang)" \
	live_ends
cat /tmp/tap_check.out
grep '^#' "$LIVE_OUT"
for r in "${RESULTS[@]}"; do
	line=$(grep "^RESULT $r " "$LIVE_OUT")
	if [ -z "$line" ]; then
		tap_ok 1 "$r: no result"
		continue
	fi
	read -r _ _ st text <<< "$line"
	tap_ok "$st" "$text"
done
tap_check "counters: the fuzz was counted, drops <= rx_pkts" counters_sane
cat /tmp/tap_check.out
cleanup
trap - EXIT

survives "the fuzz"
diag "$SECONDS s"
shca_counters_diag
two_hosts_del
tap_check "rmmod shca (no leaked object)" shca_unload
modprobe -r rdma_ucm rdma_cm 2>/dev/null
tap_done
