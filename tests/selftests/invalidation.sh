#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An invalidation fences the RDMA in flight (remote key validation, seed
# 003): shca_inv_test races a large RDMA WRITE and RDMA READ by the peer
# against the owner taking its memory back (LOCAL_INV on the same and on
# another QP, SEND_WITH_INV, window deallocation and rebind, MR
# deregistration and re-registration), with random timing and with the
# driver's fault-injection holds (debugfs shca/fault/) that put the
# invalidation exactly between a packet's key check and its copy, or
# between a READ response's build and its transmission.  Not one byte may
# land, or be read, after the invalidation completed.  Then the refusals
# (stale key generation, remote invalidation of a type 1 window), the
# same race with rdma_rxe as the reader and the writer, and no object
# left behind.
#
# SHCA_INV_TRIES (default 6) sets the timed tries per case.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faults_lib.sh"

TRIES=${SHCA_INV_TRIES:-6}

tap_plan 9

tap_check "module loads" shca_load || tap_done
tap_check "two hosts, one shca device each" two_hosts 1500 || {
	two_hosts_del
	shca_unload
	tap_done
}
tap_check "debugfs: object counts and fault injection" objs_mount
objs_base 2
g1=$(gid_index shca_ns1 198.18.0.1)
g2=$(gid_index shca_ns2 198.18.0.2)

# inv_test NAME ARGS...: one shca_inv_test run, its TAP as diagnostics
inv_test() {
	local what=$1 rc

	shift
	timeout "$(tmo 600)" shca_inv_test "$@" > /tmp/inv_test.out 2>&1
	rc=$?
	sed 's/^/# /' /tmp/inv_test.out
	[ "$rc" = 124 ] && diag "shca_inv_test timed out (hang)"
	[ "$rc" != 0 ] && shca_counters_diag
	tap_ok "$rc" "$what"
}

inv_test "race: shca owner, shca peer (timing and holds)" \
	-n "$TRIES" -m all shca_ns2 "$g2" shca_ns1 "$g1"
tap_check "no object left after the race" wait_objs_idle 2

two_hosts_del
tap_check "rxe in the initial namespace, shca in another" rxe_peer
if [ -n "${gs:-}" ] && [ -n "${gr:-}" ]; then
	# rxe's completer cannot take a NAK after a READ's first
	# response (shca_inv_test.c): the WRITEs and the queued READs
	inv_test "race: shca owner, rdma_rxe peer (timing and holds)" \
		-t write_,read_queued -n 3 -m all shca_i "$gs" rxe_i "$gr"
else
	tap_skip "race: shca owner, rdma_rxe peer" "no rxe peer"
fi
rxe_peer_del
modprobe -r rdma_rxe 2>/dev/null
tap_check "no object left after the rxe race" wait_objs_idle 0

tap_check "rmmod shca" shca_unload
tap_done
