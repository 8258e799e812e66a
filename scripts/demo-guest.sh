#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the test VM for `make demo`: shca0 as verbs tools see it,
# then ibv_rc_pingpong between two shca "hosts" (two network namespaces
# joined by a veth pair, one shca device each).
set -u
# shellcheck source=../tests/selftests/lib.sh
. "$SHCA_TOP/tests/selftests/lib.sh"

run() {
	echo "+ $*"
	"$@"
}

run shca_load || exit 1
run ip link add demo0 type veth peer name demo1
run ip link set demo0 up
run ip link set demo1 up
run ip addr add 198.18.77.1/24 dev demo0
run rdma link add shca0 type shca netdev demo0 || exit 1
wait_for 50 gid_index shca0 198.18.77.1
run rdma link show
run ibv_devices
run ibv_devinfo -v -d shca0
run rdma link delete shca0
run ip link del demo0

echo
echo "+ two hosts: shca_ns1 (198.18.0.1, namespace shns1) <-> shca_ns2 (198.18.0.2, namespace shns2)"
two_hosts 1500 || exit 1
g1=$(gid_index shca_ns1 198.18.0.1)
g2=$(gid_index shca_ns2 198.18.0.2)
ip netns exec shns1 ibv_rc_pingpong -d shca_ns1 -g "$g1" -n 1000 -s 4096 -c \
	> /tmp/demo-server.out 2>&1 &
sleep 1
echo "+ ibv_rc_pingpong -d shca_ns2 -g $g2 -n 1000 -s 4096 -c 198.18.0.1"
ip netns exec shns2 ibv_rc_pingpong -d shca_ns2 -g "$g2" -n 1000 -s 4096 -c \
	198.18.0.1
rc=$?
wait
echo "+ server side:"
cat /tmp/demo-server.out
two_hosts_del
run rmmod shca
exit $rc
