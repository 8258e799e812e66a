#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Device limits (shca_limits_test, two RC QPs of one device talking
# through the same-host path): the queue limits shca reports hold at the
# limit and are refused one past it; then, with the module loaded with
# small resource counts (max_qp, max_cq, max_mr, max_ah), exactly what
# the device reports, less what the kernel itself holds (its CQs, DMA MRs
# and AHs, as the module counts them), can be created, and the next one
# fails with ENOMEM; a count out of range fails the module load.  And
# memory: in a cgroup v2 memory cgroup, shca_memcg_test sees its rings
# and WQE copies charged to it, and the cgroup's limit refuse a CQ; and
# shca_sweep_test sees an invalidation sweep only its own PD's QPs, with
# 1024 RC QPs in another PD.
. "$(dirname "$0")/lib.sh"

# dev_up: shca0 on veth8a (198.18.8.1)
dev_up() {
	veth_pair veth8a veth8b &&
	ip addr add 198.18.8.1/24 dev veth8a &&
	rdma link add shca0 type shca netdev veth8a &&
	wait_for 50 gid_index shca0 198.18.8.1
}

dev_down() {
	rdma link delete shca0
	ip link del veth8a
}

# attr NAME: the device attribute NAME as ibv_devinfo -v prints it
attr() {
	ibv_devinfo -v -d shca0 | awk -v n="$1:" '$1 == n { print $2 }'
}

# held TYPE: objects of TYPE the kernel holds on shca0 (its MAD CQ, the
# DMA MR of its PD): the module's object counts (debugfs), read while no
# process has a device open and shca0 is the only device
held() {
	mountpoint -q /sys/kernel/debug ||
		mount -t debugfs debugfs /sys/kernel/debug || return 1
	awk -v t="$1" '$1 == t { print $2 }' /sys/kernel/debug/shca/objects
}

# memcg DONE: shca_memcg_test's 5 results, numbered from DONE + 1, in
# a memory cgroup of its own (cgroup v2 mounted here if it is not)
memcg() {
	local root=/sys/fs/cgroup cg=/sys/fs/cgroup/shca_limits i ret=0

	if ! { mountpoint -q $root || mount -t cgroup2 none $root; } ||
	   ! grep -qw memory $root/cgroup.controllers ||
	   ! echo +memory > $root/cgroup.subtree_control; then
		for i in 1 2 3 4 5; do
			echo "ok $(($1 + i)) # SKIP no cgroup v2 memory controller"
		done
		return 0
	fi
	mkdir -p $cg || return 1
	shca_memcg_test -n "$1" shca0 $cg || ret=1
	# the test's process has exited: the cgroup is empty
	wait_for 50 rmdir $cg 2>/dev/null
	return $ret
}

echo "TAP version 13"
echo "1..41"
rc=0
shca_load || exit $KSFT_FAIL
dev_up || exit $KSFT_FAIL
shca_limits_test -n 0 shca0 || rc=$KSFT_FAIL
memcg 11 || rc=$KSFT_FAIL
shca_sweep_test -n 16 shca0 1024 || rc=$KSFT_FAIL
ibv_devinfo -v -d shca0 |
	grep -E "max_(cqe|qp_wr|sge|srq_wr|mr_size|qp|cq|mr|mw|srq):" |
	sed 's/^[[:space:]]*/# /'
dev_down
shca_unload || rc=$KSFT_FAIL

echo "# with max_qp=64 max_cq=64 max_mr=64 max_ah=64:"
shca_load max_qp=64 max_cq=64 max_mr=64 max_ah=64 || exit $KSFT_FAIL
dev_up || exit $KSFT_FAIL
qps=$(attr max_qp) cqs=$(attr max_cq) mrs=$(attr max_mr) ahs=$(attr max_ah)
kcq=$(held cq) kmr=$(held mr) kah=$(held ah)
echo "# reported max_qp $qps max_cq $cqs max_mr $mrs max_ah $ahs; the kernel holds $kcq CQs, $kmr MRs, $kah AHs"
if [ "$qps" != 48 ] || [ "$cqs" != 64 ] || [ "$mrs" != 64 ] ||
   [ "$ahs" != 64 ]; then
	echo "# the device does not report the module's counts"
	rc=$KSFT_FAIL
fi
shca_limits_test -n 19 shca0 "$qps" $((cqs - kcq)) $((mrs - kmr)) \
	$((ahs - kah)) || rc=$KSFT_FAIL
dev_down
shca_unload || rc=$KSFT_FAIL

# out-of-range counts are refused at load
n=38
for p in max_ah=63 max_ah=16777217 max_mr=63; do
	n=$((n + 1))
	if insmod "$SHCA_KO" "$p" 2>/dev/null; then
		echo "not ok $n - load with $p: refused"
		rmmod shca
		rc=$KSFT_FAIL
	else
		echo "ok $n - load with $p: refused"
	fi
done
exit $rc
