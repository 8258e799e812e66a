#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The ABI fuzzer: shca_abifuzz_test makes random verbs calls with random
# and boundary arguments against both devices (single-threaded, then
# threads destroying objects under each other's feet, fork children that
# use and destroy their parent's objects, garbage in the shared rings with
# a bystander pair verified, children killed with SIGKILL).  The kernel
# log is the harness's to check (WARN, BUG, KASAN, lockdep, hung task);
# here: the program's own sanity checks, every object freed afterwards,
# a fresh ibv_rc_pingpong, and an unload without a leak report.
#
# SHCA_ABIFUZZ_CALLS (default 40000, 100000 under SHCA_LONG=1) and
# SHCA_ABIFUZZ_SEED (default fixed) choose the run; a longer one needs
# SHCA_TEST_TIMEOUT raised too (run.sh bounds each test, 300 s default).
# The phases share the calls in fixed parts (single-threaded a half,
# threads a fifth, fork, rings and kill a tenth each), so the short run
# still has several thousand calls in each phase; the long one is for
# the volume.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faults_lib.sh"

calls=${SHCA_ABIFUZZ_CALLS:-$(sized 40000 100000)}
seed=${SHCA_ABIFUZZ_SEED:-20240611}

tap_plan 7

two_hosts_tap 1500 "two hosts, one shca device each"
diag "seed $seed, $calls calls (SHCA_ABIFUZZ_SEED, SHCA_ABIFUZZ_CALLS)"

start=$EPOCHREALTIME
timeout -k 10 $(((120 + calls / 20) * SHCA_TIME_SCALE)) shca_abifuzz_test --seed "$seed" \
	--calls "$calls" shca_ns1 shca_ns2 > /tmp/abifuzz.out 2>&1
rc=$?
sed 's/^/# /' /tmp/abifuzz.out | tail -80
diag "shca_abifuzz_test: exit $rc after $(elapsed "$start") s"
[ "$rc" != 0 ] && shca_counters_diag
tap_ok "$rc" "shca_abifuzz_test --seed $seed --calls $calls"

tap_check "every object freed afterwards" wait_objs_idle 2
tap_check "ibv_rc_pingpong -c between the devices afterwards" \
	server_client 120 "ibv_rc_pingpong -d shca_ns1 -g $g1 -c -n 100" \
	"ibv_rc_pingpong -d shca_ns2 -g $g2 -c -n 100 198.18.0.1" 18515

two_hosts_del
tap_check "rmmod shca" shca_unload
tap_done
