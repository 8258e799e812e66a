#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdma-core's own Python tests (python3-pyverbs) of what shca offers beyond
# the basic verbs, on one shca device talking to itself, on the VM's
# virtio-net NIC (scripts/vm.sh --nic): each module runs without a failure
# or an error, and the tests that exercise shca's features must pass, not
# skip:
# - tests.test_mr: every re-registration test (access, access taken away
#   under traffic, PD, translation) and memory window test (type 1 and 2
#   bind, local and remote invalidation, deallocation, wrong type);
# - tests.test_parent_domain: all six (parent domains without, with default
#   and with the application's allocators, aligned memory, a 2 MiB huge
#   page, an SRQ and an extended CQ on the parent domain);
# - tests.test_rdmacm: all ten (rdma_cm connections, READ, WRITE, UDP,
#   multicast joins and leaves, reject, an external QP), which find the
#   device's address through /sys/class/infiniband/DEV/device/net/: the
#   NIC's PCI device must be the RDMA device's parent;
# - tests.test_shared_pd: a context, PD and MR imported from another
#   context's command file carry RDMA WRITEs;
# - tests.test_mlx5_timestamp: the real-time completion timestamps of RC
#   traffic (its other tests need mlx5's clock conversion or raw packet
#   QPs and skip);
# - test_qp_ex_rc_atomic_write: IBA 1.5's ATOMIC WRITE through ibv_wr_*
#   (only this test of tests.test_qpex, whose others are the basic verbs).
# The whole suite against rdma_rxe is scripts/pyverbs-compare.sh
# (Documentation/pyverbs.md).
. "$(dirname "$0")/lib.sh"

suite=/usr/share/doc/rdma-core/tests
MODULES="test_mr test_parent_domain test_rdmacm test_shared_pd test_mlx5_timestamp
	 test_qpex.QpExTestCase.test_qp_ex_rc_atomic_write"
# modules of which every test must pass
ALL_PASS="test_parent_domain test_rdmacm test_shared_pd"
# and single tests
MUST="test_mr_rereg_access test_mr_rereg_access_bad_flow test_mr_rereg_addr
      test_mr_rereg_pd test_mw_type1 test_invalidate_mw_type1 test_mw_type2
      test_mw_type2_invalidate_local test_mw_type2_invalidate_remote
      test_mw_type2_invalidate_dealloc test_reg_mw_wrong_type
      test_timestamp_real_time_rc_traffic test_qp_ex_rc_atomic_write"
HUGE=/proc/sys/vm/nr_hugepages

if [ ! -f "$suite/run_tests.py" ] ||
   ! /usr/bin/python3 -c 'import pyverbs' 2>/dev/null; then
	echo "1..0 # SKIP python3-pyverbs (rdma-core's tests) not installed"
	exit $KSFT_SKIP
fi

# shellcheck disable=SC2086	# the lists of names, counted by word
tap_plan $((5 + $(echo $MODULES $ALL_PASS $MUST | wc -w)))

tap_check "module loads" shca_load || tap_done
nic() {
	modprobe virtio_net && wait_for 50 test -e /sys/class/net/eth0
}
tap_check "the VM's NIC (virtio_net, eth0)" nic
setup() {
	ip link set eth0 up &&
	ip addr add 198.18.5.1/24 dev eth0 &&
	rdma link add shca_pv type shca netdev eth0 &&
	wait_for 50 gid_index shca_pv 198.18.5.1 &&
	[ -e /sys/class/infiniband/shca_pv/device/net/eth0 ]
}
tap_check "shca device on it, its parent the NIC's (device/net/ names eth0)" \
	setup
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

# a module's verdict: "Ran N tests", then "OK" without "skipped="
for m in $ALL_PASS; do
	ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} .*/\1/p' "/tmp/pyverbs.$m")
	grep -qx 'OK' "/tmp/pyverbs.$m" && [ "${ran:-0}" -gt 0 ]
	tap_ok $? "tests.$m: all ${ran:-0} tests pass, none skipped"
done

# a test's verdict: unittest prints "name (module.Class.name) ... ok",
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
ip addr del 198.18.5.1/24 dev eth0
tap_check "rmmod shca" shca_unload
tap_done
