#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A hostile process: shca_ring_test writes garbage into the send, receive
# and completion rings it shares with the kernel (bad opcodes, lengths,
# SGE counts, lkeys and addresses, wild producer and consumer indices,
# random bytes) and rings the doorbell itself.  Each case must end in
# error completions or a QP in error, with a bystander QP pair unharmed;
# the harness's dmesg check catches any kernel fault.
. "$(dirname "$0")/lib.sh"

tap_plan 4

tap_check "module loads" shca_load || tap_done
tap_check "two hosts, one shca device each" two_hosts 1500 || {
	two_hosts_del
	shca_unload
	tap_done
}
timeout "$(tmo 240)" shca_ring_test shca_ns1 shca_ns2 > /tmp/ring_test.out 2>&1
rc=$?
sed 's/^/# /' /tmp/ring_test.out
[ "$rc" != 0 ] && shca_counters_diag
tap_ok "$rc" "shca_ring_test (garbage in every ring)"

two_hosts_del
tap_check "rmmod shca" shca_unload
tap_done
