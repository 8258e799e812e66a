#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# UCX over shca with its default settings, between two hosts (network
# namespaces that UCX also sees as two machines, tests/middleware/
# own_host.sh): ucx_info lists shca's transports; UCP (UCX_TLS unset)
# picks shca's rc_verbs by itself; ucx_perftest's UCT tests over rc_verbs
# and ud_verbs and its UCP tests pass; UCX's client/server example carries
# 300 KB by rendezvous (tag and stream) and the bytes arrive as sent.  (A UCT test names
# one device, which ucx_perftest hands to its server too: both processes
# then use shca_ns2, talking to itself; UCP and the example choose a
# device on each side.)
. "$(dirname "$0")/lib.sh"

command -v ucx_perftest >/dev/null || {
	echo "1..0 # SKIP ucx-utils not installed"
	exit $KSFT_SKIP
}
# (UCX's rc_verbs has no atomic swap, verbs having none; UCP emulates it)
# (the latency twins of the short bandwidth tests, which post the same
# operations, only at the long size)
uct_rc="am_bw:short am_bw:bcopy am_bw:zcopy put_bw:short put_bw:bcopy
	put_bw:zcopy get:bcopy get:zcopy add_lat fadd cswap $(sized "" "am_lat
	put_lat")"
uct_ud="am_lat am_bw:short am_bw:bcopy am_bw:zcopy"
# UCP's tests: every protocol once; the latency twins of bandwidth tests
# and the atomics UCP builds from the same verbs only at the long size
# (tag_lat runs in every size: ucp_picks_shca below)
ucp="tag_bw tag_sync_bw ucp_put_bw ucp_get ucp_fadd ucp_cswap stream_bw
	ucp_am_bw $(sized "" "tag_lat tag_sync_lat ucp_put_lat ucp_add ucp_swap
	stream_lat ucp_am_lat")"
# (the lists split into words on purpose, to count them)
# shellcheck disable=SC2086
set -- $uct_rc; n_rc=$#
# shellcheck disable=SC2086
set -- $uct_ud; n_ud=$#
# shellcheck disable=SC2086
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

# data_lines FILE: the example's data lines (the 100000-byte strings)
data_lines() {
	grep -ac ABCDEF "$1"
}

# compare_data SRV CLI: the server's data lines (standard output SRV) are
# the client's (CLI); else say how they differ (counts, lengths, first
# differing byte) without printing the data
compare_data() {
	local srv=$1 cli=$2

	[ "$(data_lines "$srv")" = 3 ] &&
	[ "$(grep -a ABCDEF "$srv" | md5sum)" = \
	  "$(grep -a ABCDEF "$cli" | md5sum)" ] && return 0
	echo "# data lines: server $(data_lines "$srv"), client $(data_lines "$cli")"
	echo "# line lengths: server $(grep -a ABCDEF "$srv" |
		awk '{ printf "%d ", length }')client $(grep -a ABCDEF "$cli" |
		awk '{ printf "%d ", length }')"
	grep -a ABCDEF "$srv" > "$srv.data"
	grep -a ABCDEF "$cli" > "$cli.data"
	cmp "$srv.data" "$cli.data" 2>&1 | sed 's/^/# /'
	return 1
}

# The example prints the 300 KB it sent (client) or received (server);
# its server then waits for the next client and is stopped once it has
# printed all three strings.  Not its AM mode: there the client closes
# its endpoint by force as soon as its send completed locally, and the
# server, told of the reset before it took the message, sometimes never
# prints it (1 round of 8 in a loop; UCP's AM tests above cover AM).  The
# same race, rarer, hits the stream mode (the server's last stream
# receive, still taking the fragments in when the reset arrives, fails
# with "Connection reset by remote peer"): a run that fails that way,
# with the client's data complete, is run once more.  It is the
# example's own race, with any device (Documentation/testing.md,
# "Failures explained"): UCX's later examples have the server answer
# the last message before the client closes.  Each run has its own
# files, and standard error apart: what a process prints as it ends (an endpoint
# closed by its peer) must not land in the middle of the data.
client_server_run() {
	local c=$1 o=$2 spid

	port=$((port + 1))
	in_ns shns1 "$own" timeout "$(tmo 60)" stdbuf -o0 ucp_client_server \
		-p "$port" -c "$c" -s 100000 -v 3 > "$o.srv" 2> "$o.srv.err" &
	spid=$!
	wait_for 300 listening shns1 "$port"
	in_ns shns2 "$own" timeout "$(tmo 60)" ucp_client_server -p "$port" -c "$c" \
		-s 100000 -v 3 -a 198.18.0.1 > "$o.cli" 2> "$o.cli.err" ||
		{ echo "# $c: client failed"; tail -5 "$o.cli.err" |
		  sed 's/^/#   /'
		  pkill -f "ucp_client_server -p $port -c"
		  wait "$spid"; return 2; }
	wait_for 100 sh -c "[ \$(grep -ac ABCDEF $o.srv) -ge 3 ]"
	# (the job is a subshell running in_ns: stop the server itself)
	pkill -f "ucp_client_server -p $port -c"
	wait "$spid"
	compare_data "$o.srv" "$o.cli" && return 0
	echo "# $c: the data differ"
	grep -av ABCDEF "$o.srv" "$o.srv.err" | tail -8 | sed 's/^/#   /'
	return 1
}

client_server() {
	local c o ret

	for c in tag stream; do
		o=/tmp/ucs.$c
		client_server_run "$c" "$o"
		ret=$?
		if [ "$ret" = 1 ] && [ "$(data_lines "$o.cli")" = 3 ] &&
		   grep -q 'Connection reset by remote peer' "$o.srv.err"; then
			echo "# $c: the client's forced close beat the server; once more"
			client_server_run "$c" "$o"
			ret=$?
		fi
		[ "$ret" = 0 ] || return 1
		echo "# $c: 3 x 100000 bytes arrived as sent"
	done
}

tap_check "UCX client/server example, tag and stream, data checked" \
	client_server

tap_check "devices removed" two_hosts_del
tap_done
