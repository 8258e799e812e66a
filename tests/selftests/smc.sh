#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A kernel RDMA user: SMC-R (AF_SMC sockets, the kernel's smc module)
# over shca.  The server is in the initial namespace with shca_smcs on
# shsm1 (198.18.10.1), the client in namespace shns2 with shca_smcc on
# shsm2 (198.18.10.2).  shca has RoCE v2 GIDs only, so SMC-R runs as
# SMC-Rv2, which needs an enterprise ID both ends share: the test adds a
# user EID (as smc-tools' smc_ueid would) and removes it at the end.
# shca_smc_test carries 32 MiB each way, every byte checked, and both
# ends see their socket in SMC-R mode in SMC's socket diagnostics (no
# fallback to TCP); the devices carried the bytes.  Then the client's
# device is deleted while the client streams: both ends' connections end
# with an error, none hangs; with the device back, a new connection is
# SMC-R again.  At the end nothing is left: the smc module unloaded (its
# link groups outlive their connections by minutes), no QP on either
# device.
. "$(dirname "$0")/lib.sh"

if ! modprobe -q -a smc smc_diag 2>/dev/null; then
	echo "1..0 # SKIP smc / smc_diag not available"
	exit $KSFT_SKIP
fi

SRV=198.18.10.1
CLI_ADDR=198.18.10.2
MIB=32

tap_plan 26
tap_check "module loads" shca_load

HOSTS=(shsm1 shca_smcs "$SRV" shsm2 shca_smcc "$CLI_ADDR")
tap_check "server and client hosts, an shca device each" host_pair "${HOSTS[@]}"
tap_check "SMC user EID added" shca_smc_test -u add

# pair NAME SERVER-ARGS -- CLIENT-ARGS: a server here and a client in
# shns2, their TAP in /tmp/NAME_srv.out and /tmp/NAME_cli.out
pair() {
	local name=$1 sargs=() cargs=() pid

	shift
	while [ "$1" != -- ]; do sargs+=("$1"); shift; done
	shift
	cargs=("$@")
	timeout "$(tmo 300)" shca_smc_test -s "$SRV" "${sargs[@]}" \
		> "/tmp/${name}_srv.out" 2>&1 &
	pid=$!
	wait_for 100 grep -q '^# listening' "/tmp/${name}_srv.out"
	timeout "$(tmo 300)" ip netns exec shns2 shca_smc_test -c "$SRV" \
		"${cargs[@]}" > "/tmp/${name}_cli.out" 2>&1
	echo "# client exit $?"
	wait "$pid"
	echo "# server exit $?"
}

ctr_snap shca_smcs shca_smcc
pair smc -m "$MIB" -- -m "$MIB"
tap_relay /tmp/smc_srv.out 3 "server: "
tap_relay /tmp/smc_cli.out 3 "client: "

carried() {
	local d rx

	for d in shca_smcs shca_smcc; do
		rx=$(ctr_sum "$d" payload_rx_bytes)
		echo "# $d received $rx payload bytes"
		[ "$rx" -ge $((MIB << 20)) ] || return 1
	done
}
tap_check "each device received the other end's ${MIB} MiB" carried

# dev_loss: the client streams until its connection fails; once the
# server has 4 MiB, the client's device goes
dev_loss() {
	local pid

	rm -f /tmp/smc.mark
	pair smcl -m 4 -L /tmp/smc.mark -- -l &
	pid=$!
	if ! wait_for 600 test -e /tmp/smc.mark ||
	   ! in_ns shns2 rdma link delete shca_smcc; then
		wait "$pid"
		return 1
	fi
	wait "$pid"
}
tap_check "client device deleted while the client streams" dev_loss
tap_relay /tmp/smcl_srv.out 2 "device loss, server: "
tap_relay /tmp/smcl_cli.out 2 "device loss, client: "

readd() {
	in_ns shns2 rdma link add shca_smcc type shca netdev shsm2 &&
	wait_for 50 gid_index shca_smcc "$CLI_ADDR"
}
tap_check "client device added again" readd
pair smc2 -m 4 -- -m 4
tap_relay /tmp/smc2_srv.out 3 "again, server: "
tap_relay /tmp/smc2_cli.out 3 "again, client: "

tap_check "SMC user EID removed" shca_smc_test -u del

# no_qps: SMC's link groups (kept for reuse after their last
# connection) go with its module
no_qps() {
	modprobe -r smc_diag smc || return 1
	no_rc_qps - shca_smcs && no_rc_qps shns2 shca_smcc
}
tap_check "smc unloaded: no RC QP left on either device" wait_for 100 no_qps

teardown() {
	shca_smc_test -u del 2>/dev/null
	host_pair_del "${HOSTS[@]}"
	rm -f /tmp/smc*_srv.out /tmp/smc*_cli.out /tmp/smc.mark
}
tap_check "devices and hosts removed" teardown
tap_check "rmmod shca" shca_unload
tap_done
