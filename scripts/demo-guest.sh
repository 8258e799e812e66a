#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the test VM for `make demo`.
set -u
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
wait_for 50 sh -c 'ibv_devinfo -v -d shca0 | grep -q "::ffff:198.18.77.1"'
run rdma link show
run ibv_devices
run ibv_devinfo -v -d shca0
run rdma link delete shca0
run rmmod shca
