#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RC data path and verbs error cases between two shca devices in two
# network namespaces (two "hosts" on a veth pair): shca_rc_test drives
# both devices from one process.  SHCA_RC_FILTER limits the cases run
# (shca_rc_test -t).
. "$(dirname "$0")/lib.sh"

tap_plan 4

tap_check "module loads" shca_load || tap_done
tap_check "two hosts, one shca device each" two_hosts 1500 || {
	two_hosts_del
	shca_unload
	tap_done
}
g1=$(gid_index shca_ns1 198.18.0.1)
g2=$(gid_index shca_ns2 198.18.0.2)
diag "gid indexes: $g1 $g2"

args=()
[ -n "${SHCA_RC_FILTER:-}" ] && args=(-t "$SHCA_RC_FILTER")
timeout "$(tmo 240)" shca_rc_test "${args[@]}" shca_ns1 "$g1" shca_ns2 "$g2" \
	> /tmp/rc_test.out 2>&1
rc=$?
sed 's/^/# /' /tmp/rc_test.out
if [ "$rc" = 124 ]; then
	diag "shca_rc_test timed out (hang)"
	shca_counters_diag
fi
[ "$rc" != 0 ] && [ "$rc" != 124 ] && shca_counters_diag
tap_ok "$rc" "shca_rc_test (RC data path and error cases)"

two_hosts_del
tap_check "rmmod shca" shca_unload
tap_done
