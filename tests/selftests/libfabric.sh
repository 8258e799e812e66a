#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libfabric's verbs provider over shca with its default settings, between
# two hosts: fi_info finds shca's domains; fi_pingpong over MSG (RC),
# DGRAM (UD) and RDM (the rxm utility provider on MSG endpoints, which
# asks for a CQ of 262144 entries) endpoints, every message's data
# checked (-c), from 64 bytes to the largest size each endpoint carries,
# 20 iterations of each size (50 under SHCA_LONG=1).
. "$(dirname "$0")/lib.sh"

command -v fi_pingpong >/dev/null || {
	echo "1..0 # SKIP libfabric-bin not installed"
	exit $KSFT_SKIP
}
tap_plan 8

tap_check "module loads" shca_load
tap_check "two hosts" two_hosts 1500

finds_shca() {
	in_ns shns1 fi_info -p verbs -t FI_EP_MSG | grep -q "domain: shca_ns1" &&
	in_ns shns1 fi_info -p verbs -t FI_EP_DGRAM | grep -q "domain: shca_ns1" &&
	in_ns shns1 fi_info -p "verbs;ofi_rxm" -t FI_EP_RDM | grep -q "domain: shca_ns1"
}
tap_check "fi_info lists shca for MSG, DGRAM and RDM" finds_shca

port=9300
iters=$(sized 20 50)
# pingpong EP ARGS...: fi_pingpong with data checks, server in shns1
pingpong() {
	local ep=$1

	shift
	port=$((port + 1))
	server_client 120 "fi_pingpong -p verbs -e $ep -B $port -c $*" \
		"fi_pingpong -p verbs -e $ep -P $port -c $* 198.18.0.1" "$port" ||
		return 1
	grep -E '^[0-9]+[kmg]? ' /tmp/cli.out | awk '{ print "# " $1 " " $2 " " $6 " MB/s" }'
	grep -qE '^1m ' /tmp/cli.out || [ "$ep" = dgram ]
}
tap_check "MSG endpoints, 64 B to 1 MiB" pingpong msg -I "$iters"
tap_check "DGRAM endpoints" pingpong dgram -I "$iters"
tap_check "RDM endpoints (rxm), 64 B to 1 MiB" pingpong rdm -I "$iters"
tap_check "RDM endpoints, tagged messages" pingpong rdm -I "$iters" -m tagged

tap_check "devices removed" two_hosts_del
tap_done
