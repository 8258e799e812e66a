#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdma-core's own Python tests (python3-pyverbs) of what shca offers beyond
# the basic verbs, on one shca device talking to itself: each module runs
# without a failure or an error, and the tests that exercise shca's
# features must pass, not skip:
# - tests.test_mr: every re-registration test (access, access taken away
#   under traffic, PD, translation) and memory window test (type 1 and 2
#   bind, local and remote invalidation, deallocation, wrong type);
# - tests.test_parent_domain: parent domains without, with default and with
#   the application's allocators (aligned memory, a 2 MiB huge page), with
#   an SRQ and an extended CQ on the parent domain;
# - tests.test_mlx5_timestamp: the real-time completion timestamps of RC
#   traffic (its other tests need mlx5's clock conversion or raw packet
#   QPs and skip).
# The whole suite against rdma_rxe is scripts/pyverbs-compare.sh
# (Documentation/pyverbs.md).
. "$(dirname "$0")/lib.sh"

suite=/usr/share/doc/rdma-core/tests
MODULES="test_mr test_parent_domain test_mlx5_timestamp"
MUST="test_mr_rereg_access test_mr_rereg_access_bad_flow test_mr_rereg_addr
      test_mr_rereg_pd test_mw_type1 test_invalidate_mw_type1 test_mw_type2
      test_mw_type2_invalidate_local test_mw_type2_invalidate_remote
      test_mw_type2_invalidate_dealloc test_reg_mw_wrong_type
      test_without_allocators_rc_traffic test_default_allocators_rc_traffic
      test_mem_align_rc_traffic test_mem_align_ud_traffic
      test_mem_align_srq_excq_rc_traffic test_huge_page_traffic
      test_timestamp_real_time_rc_traffic"
HUGE=/proc/sys/vm/nr_hugepages

if [ ! -f "$suite/run_tests.py" ] ||
   ! /usr/bin/python3 -c 'import pyverbs' 2>/dev/null; then
	echo "1..0 # SKIP python3-pyverbs (rdma-core's tests) not installed"
	exit $KSFT_SKIP
fi

# shellcheck disable=SC2086	# MODULES, MUST: lists of names, counted by word
tap_plan $((4 + $(echo $MODULES | wc -w) + $(echo $MUST | wc -w)))

tap_check "module loads" shca_load || tap_done
setup() {
	veth_pair shpv0 shpv1 &&
	ip addr add 198.18.5.1/24 dev shpv0 &&
	rdma link add shca_pv type shca netdev shpv0 &&
	wait_for 50 gid_index shca_pv 198.18.5.1
}
tap_check "shca device on a veth" setup
gid=$(gid_index shca_pv 198.18.5.1)
huge0=$(cat "$HUGE")
# the huge page tests take one 2 MiB page per resource set
tap_check "four 2 MiB huge pages" \
	sh -c "echo 4 > $HUGE && [ \"\$(cat $HUGE)\" -ge 4 ]"

rm -rf /tmp/rdma-tests /tmp/pyverbs.out
cp -r "$suite" /tmp/rdma-tests && gunzip -f /tmp/rdma-tests/*.gz
for m in $MODULES; do
	(cd /tmp/rdma-tests &&
	 timeout "$(tmo 240)" /usr/bin/python3 run_tests.py --dev shca_pv \
		--gid "$gid" -v "tests.$m") > "/tmp/pyverbs.$m" 2>&1
	rc=$?
	sed 's/^/# /' "/tmp/pyverbs.$m" | grep -E ' \.\.\. |^# (Ran|OK|FAILED)'
	tap_ok "$([ "$rc" = 0 ] && echo 0 || echo 1)" \
		"tests.$m: no failure or error (rc $rc)"
	cat "/tmp/pyverbs.$m" >> /tmp/pyverbs.out
done

# the test's verdict: unittest prints "name (module.Class.name) ... ok",
# a docstring line in between for some
for t in $MUST; do
	awk -v t="$t" '
		index($0, t " (") == 1 { found = 1 }
		found && / \.\.\. / { print; exit }' /tmp/pyverbs.out |
		grep -q ' \.\.\. ok$'
	tap_ok $? "$t passes"
done

echo "$huge0" > "$HUGE"
rdma link delete shca_pv
ip link del shpv0
tap_check "rmmod shca" shca_unload
tap_done
