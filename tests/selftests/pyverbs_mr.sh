#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdma-core's own Python tests of memory regions and windows (tests.test_mr
# from python3-pyverbs) on one shca device: every re-registration test
# (access, access taken away under traffic, PD, translation) and every
# memory window test (type 1 and 2 bind, local and remote invalidation,
# deallocation, wrong type) must pass, not skip.  The whole suite against
# rdma_rxe is scripts/pyverbs-compare.sh (Documentation/pyverbs.md).
. "$(dirname "$0")/lib.sh"

suite=/usr/share/doc/rdma-core/tests
MUST="test_mr_rereg_access test_mr_rereg_access_bad_flow test_mr_rereg_addr
      test_mr_rereg_pd test_mw_type1 test_invalidate_mw_type1 test_mw_type2
      test_mw_type2_invalidate_local test_mw_type2_invalidate_remote
      test_mw_type2_invalidate_dealloc test_reg_mw_wrong_type"

if [ ! -f "$suite/run_tests.py" ] ||
   ! /usr/bin/python3 -c 'import pyverbs' 2>/dev/null; then
	echo "1..0 # SKIP python3-pyverbs (rdma-core's tests) not installed"
	exit $KSFT_SKIP
fi

# shellcheck disable=SC2086	# MUST: a list of names, counted by word
tap_plan $((4 + $(echo $MUST | wc -w)))

tap_check "module loads" shca_load || tap_done
setup() {
	veth_pair shpv0 shpv1 &&
	ip addr add 198.18.5.1/24 dev shpv0 &&
	rdma link add shca_pv type shca netdev shpv0 &&
	wait_for 50 gid_index shca_pv 198.18.5.1
}
tap_check "shca device on a veth" setup
gid=$(gid_index shca_pv 198.18.5.1)

rm -rf /tmp/rdma-tests
cp -r "$suite" /tmp/rdma-tests && gunzip -f /tmp/rdma-tests/*.gz
(cd /tmp/rdma-tests &&
 timeout "$(tmo 240)" /usr/bin/python3 run_tests.py --dev shca_pv --gid "$gid" -v \
	tests.test_mr) > /tmp/pyverbs_mr.out 2>&1
rc=$?
sed 's/^/# /' /tmp/pyverbs_mr.out | grep -E ' \.\.\. |^# (Ran|OK|FAILED)'
tap_ok "$([ "$rc" = 0 ] && echo 0 || echo 1)" "tests.test_mr: no failure or error (rc $rc)"

# the test's verdict: unittest prints "name (module.Class.name) ... ok",
# a docstring line in between for some
for t in $MUST; do
	awk -v t="$t" '
		index($0, t " (") == 1 { found = 1 }
		found && / \.\.\. / { print; exit }' /tmp/pyverbs_mr.out |
		grep -q ' \.\.\. ok$'
	tap_ok $? "$t passes"
done

rdma link delete shca_pv
ip link del shpv0
tap_check "rmmod shca" shca_unload
tap_done
