#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Device memory (ibv_alloc_dm, ibv_reg_dm_mr, ibv_memcpy_to/from_dm) on
# shca: shca_dm_test with a shca peer and with an rdma_rxe peer (the peer
# WRITEs, READs and runs atomics on a shca DM MR; the DM side sends from
# and reads into it; every bad input), DRDMA WRITE and READ through the
# direct verbs (shca_drdma_test) and by a kernel producer (the test module
# shca_dm_producer), ibv_rc_pingpong --dm, rdma-core's
# Python device-memory tests (all must pass, none skip), a process killed
# while it holds ranges, a range given back while its packets are still
# on the wire, and dm_size=0 (no device memory).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faults_lib.sh"

PYSUITE=/usr/share/doc/rdma-core/tests
PYCLASSES="tests.test_device.DMTest tests.test_mr.DeviceMemoryAPITest
	   tests.test_mr.DeviceMemoryTest"

tap_plan 19

if ! modprobe rdma_rxe 2>/dev/null; then
	echo "1..0 # SKIP rdma_rxe not available"
	exit $KSFT_SKIP
fi
tap_check "module loads" shca_load
tap_check "object counts readable (debugfs shca/objects)" objs_mount
tap_check "two shca hosts" two_hosts
g1=$(gid_index shca_ns1 198.18.0.1)
g2=$(gid_index shca_ns2 198.18.0.2)

# ranges_in_use DEV: the dm_ranges counter is 0
no_ranges() {
	local v

	read -r v < "/sys/class/infiniband/$1/ports/1/hw_counters/dm_ranges"
	[ "$v" = 0 ]
}

tap_check "shca_dm_test: shca DM, shca peer" \
	timeout "$(tmo 120)" shca_dm_test shca_ns1 shca_ns2
tap_check "dm_ranges back to 0" no_ranges shca_ns1
tap_check "shca_drdma_test: DRDMA WRITE and READ, shca peer" \
	timeout "$(tmo 120)" shca_drdma_test shca_ns1 shca_ns2

# a kernel producer (tests/kmod/shca_dm_producer.ko): its module init runs
# DRDMA WRITE and READ on ranges taken through shca's exported functions
# and fails unless every case passed
producer() {
	local ko=$SHCA_TOP/build/kmod/$SHCA_KVER/tests/kmod/shca_dm_producer.ko
	local rc frag

	wait_for 50 objs_base 2 || return 1
	ctr_snap shca_ns1
	timeout "$(tmo 120)" insmod "$ko" dev=shca_ns1 gid="$g1"
	rc=$?
	dmesg | grep 'shca_dm_producer: ' | tail -n 8 | sed 's/^.*shca_dm_producer: /# /'
	rmmod shca_dm_producer 2>/dev/null
	# its DRDMA WRITE (64 KiB) left from the range's pages, uncopied (a
	# retransmission would count again)
	sleep 0.05
	frag=$(ctr_sum shca_ns1 dm_tx_frag_bytes)
	diag "dm_tx_frag_bytes +$frag"
	[ "$rc" = 0 ] && [ "$frag" -ge 65536 ] &&
		wait_for 50 no_ranges shca_ns1 && wait_objs_idle 2
}
tap_check "kernel producer module: DRDMA WRITE and READ, nothing left" producer
tap_check "ibv_rc_pingpong --dm -c, both sides on device memory" \
	pp ibv_rc_pingpong --dm -c -n 200 -s 4096

# rdma-core's Python device-memory tests on one device: unittest's
# verdict line is "OK" only with no failure, error or skip
pyverbs_dm() {
	local out=/tmp/pyverbs_dm.out ran

	rm -rf /tmp/rdma-tests
	cp -r "$PYSUITE" /tmp/rdma-tests && gunzip -f /tmp/rdma-tests/*.gz
	# shellcheck disable=SC2086	# PYCLASSES: one name a word
	(cd /tmp/rdma-tests &&
	 PYTHONWARNINGS=ignore::DeprecationWarning \
	 timeout "$(tmo 240)" ip netns exec shns1 /usr/bin/python3 run_tests.py \
		--dev shca_ns1 --gid "$g1" -v $PYCLASSES) > "$out" 2>&1
	grep -E ' \.\.\. |^(Ran|OK|FAILED)' "$out" | sed 's/^/# /'
	ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} .*/\1/p' "$out")
	grep -qx 'OK' "$out" && [ "${ran:-0}" -ge 13 ]
}
if [ -f "$PYSUITE/run_tests.py" ] &&
   /usr/bin/python3 -c 'import pyverbs' 2>/dev/null; then
	tap_check "Python DMTest, DeviceMemoryAPITest, DeviceMemoryTest: all pass, none skip" \
		pyverbs_dm
else
	tap_skip "python3-pyverbs (rdma-core's tests) not installed"
fi

# a process killed while it holds ranges it wrote to: they all come back
killed_holder() {
	local pid ret=0

	wait_for 50 objs_base 2 || return 1
	ip netns exec shns1 shca_dm_test --hold shca_ns1 8 > /tmp/dm_hold.out 2>&1 &
	pid=$!
	wait_for 100 grep -q '^holding 8' /tmp/dm_hold.out || ret=1
	diag "while held: $(objs_show)"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	wait_for 100 no_ranges shca_ns1 || { diag "dm_ranges not back to 0"; ret=1; }
	wait_objs_idle 2 || ret=1
	return "$ret"
}
tap_check "a process killed holding 8 ranges: all come back" killed_holder

# killed with 4 ranges armed for a WRITE and a WRITE waiting for them
killed_armed() {
	local pid ret=0 v

	wait_for 50 objs_base 2 || return 1
	shca_drdma_test --hold shca_ns1 shca_ns2 4 > /tmp/dm_armed.out 2>&1 &
	pid=$!
	wait_for 100 grep -q '^holding 4' /tmp/dm_armed.out || ret=1
	read -r v < /sys/class/infiniband/shca_ns1/ports/1/hw_counters/dm_wqes_waiting
	diag "while held: dm_wqes_waiting $v; $(objs_show)"
	[ "$v" = 1 ] || ret=1
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	wait_for 100 no_ranges shca_ns1 || { diag "dm_ranges not back to 0"; ret=1; }
	read -r v < /sys/class/infiniband/shca_ns1/ports/1/hw_counters/dm_wqes_waiting
	[ "$v" = 0 ] || { diag "dm_wqes_waiting $v after the kill"; ret=1; }
	wait_objs_idle 2 || ret=1
	return "$ret"
}
tap_check "a process killed with armed ranges and a WRITE waiting: nothing left" \
	killed_armed
# a range given back while its packets (holding its pages) are delayed
# on the wire: its pages are not handed out again until they are gone
in_flight() {
	local ret=0

	netem shns1 shv1 delay "$((500 * SHCA_TIME_SCALE))ms" || return 1
	timeout "$(tmo 60)" shca_drdma_test --flight shca_ns1 shca_ns2 || ret=1
	netem shns1 shv1
	wait_for 100 no_ranges shca_ns1 || { diag "dm_ranges not back to 0"; ret=1; }
	return "$ret"
}
tap_check "a range given back with its packets in flight: its pages wait for them" \
	in_flight
tap_check "shca_dm_test: the window is whole again" \
	timeout "$(tmo 120)" shca_dm_test shca_ns1 shca_ns2
two_hosts_del

tap_check "rdma_rxe peer: rxe in the initial namespace, shca in another" rxe_peer
tap_check "shca_dm_test: shca DM, rdma_rxe peer" \
	timeout "$(tmo 120)" shca_dm_test shca_i rxe_i
tap_check "shca_drdma_test: DRDMA WRITE and READ, rdma_rxe peer" \
	timeout "$(tmo 120)" shca_drdma_test shca_i rxe_i
tap_check "ibv_rc_pingpong --dm -c: shca on device memory, rxe client" \
	ns_server_client shns2 - 120 \
	"ibv_rc_pingpong -d shca_i -g $gs --dm -c -n 100 -s 4096 -p 18811" \
	"ibv_rc_pingpong -d rxe_i -g $gr -c -n 100 -s 4096 -p 18811 198.18.1.2" 18811
rxe_peer_del

# dm_size=0: no device memory at all (in a namespace: rdma_rxe holds the
# RoCEv2 port of the initial one)
no_dm() {
	local rc

	shca_unload && shca_load dm_size=0 || return 1
	ip netns add shdm && ip link add shdm0 netns shdm type veth peer \
		name shdm1 netns shdm &&
	ip -n shdm link set shdm0 up && ip -n shdm link set shdm1 up &&
	ip -n shdm addr add 198.18.6.1/24 dev shdm0 &&
	ip netns exec shdm rdma link add shca_dm0 type shca netdev shdm0 ||
		return 1
	PYTHONWARNINGS=ignore /usr/bin/python3 - <<'EOF'
import sys
from pyverbs.device import Context, DM, AllocDmAttr
from pyverbs.pyverbs_error import PyverbsError
ctx = Context(name='shca_dm0')
if ctx.query_device_ex().max_dm_size != 0:
    sys.exit('max_dm_size is not 0')
try:
    DM(ctx, AllocDmAttr(length=4096))
except PyverbsError:
    sys.exit(0)
sys.exit('a DM was allocated with dm_size=0')
EOF
	rc=$?
	rdma link delete shca_dm0
	ip netns del shdm
	return "$rc"
}
tap_check "dm_size=0: max_dm_size 0, allocations refused" no_dm
tap_check "rmmod shca" shca_unload
tap_done
