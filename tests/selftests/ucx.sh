#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# UCX over shca with its default settings, between two hosts (network
# namespaces that UCX also sees as two machines, tests/middleware/
# own_host.sh): ucx_info lists shca's transports; UCP (UCX_TLS unset)
# picks shca's rc_verbs by itself; ucx_perftest's UCT tests over rc_verbs
# and ud_verbs and its UCP tests pass; UCX's client/server example carries
# 300 KB by rendezvous and the bytes arrive as sent.  (A UCT test names
# one device, which ucx_perftest hands to its server too: both processes
# then use shca_ns2, talking to itself; UCP and the example choose a
# device on each side.)
. "$(dirname "$0")/lib.sh"

command -v ucx_perftest >/dev/null || {
	echo "1..0 # SKIP ucx-utils not installed"
	exit $KSFT_SKIP
}
# (UCX's rc_verbs has no atomic swap, verbs having none; UCP emulates it)
uct_rc="am_lat am_bw:short am_bw:bcopy am_bw:zcopy put_lat put_bw:short
	put_bw:bcopy put_bw:zcopy get:bcopy get:zcopy add_lat fadd cswap"
uct_ud="am_lat am_bw:short am_bw:bcopy am_bw:zcopy"
ucp="tag_lat tag_bw tag_sync_lat tag_sync_bw ucp_put_lat ucp_put_bw ucp_get
	ucp_add ucp_fadd ucp_swap ucp_cswap stream_bw stream_lat ucp_am_lat
	ucp_am_bw"
set -- $uct_rc; n_rc=$#
set -- $uct_ud; n_ud=$#
set -- $ucp; n_ucp=$#
tap_plan $((6 + n_rc + n_ud + n_ucp))

own=$SHCA_TOP/tests/middleware/own_host.sh
tap_check "module loads" shca_load
tap_check "two hosts" two_hosts 1500

lists_shca() {
	local out

	out=$(in_ns shns1 ucx_info -d) || return 1
	echo "$out" | grep -A1 "Transport: rc_verbs" | grep -q "shca_ns1:1" &&
	echo "$out" | grep -A1 "Transport: ud_verbs" | grep -q "shca_ns1:1"
}
tap_check "ucx_info lists rc_verbs and ud_verbs on shca" lists_shca

port=13400
# perf TEST [ARGS...]: one ucx_perftest run, server in shns1
perf() {
	port=$((port + 1))
	server_client 60 "$own ucx_perftest -p $port" \
		"$own ucx_perftest -p $port -t $* 198.18.0.1" "$port"
}

# UCP with UCX_TLS unset puts its tag lane on shca's rc_verbs
ucp_picks_shca() {
	port=$((port + 1))
	server_client 60 "$own ucx_perftest -p $port" \
		"UCX_LOG_LEVEL=info $own ucx_perftest -p $port -t tag_lat \
		 -n 100 -w 10 198.18.0.1" "$port" || return 1
	grep "ep_cfg" /tmp/cli.out | sed 's/^.*ep_cfg/# ep_cfg/'
	# no shared-memory or TCP lane: the peer is another host
	grep "ep_cfg.*tag(" /tmp/cli.out | grep -q "rc_verbs/shca_ns" &&
	! grep "ep_cfg.*tag(" /tmp/cli.out | grep -qE "cma|posix|sysv|tcp"
}
tap_check "UCP with default settings picks shca (rc_verbs)" ucp_picks_shca

# TEST[:LAYOUT] [BCOPY [ZCOPY]] -> ucx_perftest arguments: 8 bytes for
# latency, atomics and short messages; BCOPY bytes (8 KiB) for bcopy and
# AM zero-copy (one bounce buffer); ZCOPY (1 MiB) for the rest
perf_args() {
	local t=${1%%:*} l=${1#*:} bcopy=${2:-8192} zcopy=${3:-1048576} a

	[ "$l" = "$1" ] && l=
	case $t:$l in
	*:short|*_lat:|fadd:|cswap:|ucp_*add:|ucp_*swap:)
		a="-s 8 -n 500 -w 50" ;;
	*:bcopy|am_bw:zcopy) a="-s $bcopy -n 100 -w 10" ;;
	*) a="-s $zcopy -n 20 -w 2" ;;
	esac
	[ -n "$l" ] && a="$a -D $l"
	echo "$t $a"
}
for t in $uct_rc; do
	tap_check "UCT rc_verbs $t" perf "$(perf_args "$t") -x rc_verbs -d shca_ns2:1"
done
for t in $uct_ud; do
	# a UD message fits one packet (MTU 1024 less UCX's headers)
	tap_check "UCT ud_verbs $t" perf "$(perf_args "$t" 1000 1000) -x ud_verbs -d shca_ns2:1"
done
for t in $ucp; do
	tap_check "UCP $t" perf "$(perf_args "$t")"
done

# The example prints the 300 KB it sent (client) or received (server);
# its server then waits for the next client and is stopped.
client_server() {
	local c spid sum_s sum_c

	for c in tag stream am; do
		port=$((port + 1))
		in_ns shns1 "$own" timeout 60 stdbuf -o0 ucp_client_server \
			-p $port -c $c \
			-s 100000 -v 3 > /tmp/srv.out 2>&1 &
		spid=$!
		wait_for 300 listening shns1 $port
		in_ns shns2 "$own" timeout 60 ucp_client_server -p $port -c $c \
			-s 100000 -v 3 -a 198.18.0.1 > /tmp/cli.out 2>&1 ||
			{ echo "# $c: client failed"; grep -v ABCDEF /tmp/cli.out |
			  tail -5 | sed 's/^/#   /'; kill $spid; return 1; }
		wait_for 100 grep -q "UCP TEST SUCCESS" /tmp/srv.out
		sleep 1
		kill $spid 2>/dev/null
		wait $spid
		sum_s=$(grep ABCDEF /tmp/srv.out | md5sum)
		sum_c=$(grep ABCDEF /tmp/cli.out | md5sum)
		if [ "$(grep -c ABCDEF /tmp/srv.out)" != 3 ] ||
		   [ "$sum_s" != "$sum_c" ]; then
			echo "# $c: the data differ"
			return 1
		fi
		echo "# $c: 3 x 100000 bytes arrived as sent"
	done
}
tap_check "UCX client/server example, tag, stream and AM, data checked" \
	client_server

tap_check "devices removed" two_hosts_del
tap_done
