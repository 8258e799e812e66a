#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A kernel RDMA user: NVMe over RDMA with the in-kernel target (nvmet-rdma)
# and host (nvme-rdma) over shca: connect, write a 64 MiB pattern, read it
# back, compare, disconnect.  Both run in the initial namespace (where
# nvmet listens), so the traffic takes shca's same-host path.
. "$(dirname "$0")/lib.sh"

tap_plan 8

if ! modprobe -a nvmet nvmet-rdma nvme-rdma 2>/dev/null; then
	echo "1..0 # SKIP nvmet-rdma / nvme-rdma not available"
	exit $KSFT_SKIP
fi
cfg=/sys/kernel/config/nvmet
sub=$cfg/subsystems/shcatest

tap_check "module loads" shca_load
setup_net() {
	ip link add shnv0 type veth peer name shnv1 &&
	ip link set shnv0 up && ip link set shnv1 up &&
	ip addr add 198.18.3.1/24 dev shnv0 &&
	rdma link add shca_nv type shca netdev shnv0 &&
	wait_for 50 gid_index shca_nv 198.18.3.1
}
tap_check "shca device on a veth" setup_net

setup_target() {
	truncate -s 72M /tmp/nvme.img &&
	mkdir "$sub" && echo 1 > "$sub/attr_allow_any_host" &&
	mkdir "$sub/namespaces/1" &&
	echo /tmp/nvme.img > "$sub/namespaces/1/device_path" &&
	echo 1 > "$sub/namespaces/1/buffered_io" &&
	echo 1 > "$sub/namespaces/1/enable" &&
	mkdir "$cfg/ports/1" &&
	echo rdma > "$cfg/ports/1/addr_trtype" &&
	echo ipv4 > "$cfg/ports/1/addr_adrfam" &&
	echo 198.18.3.1 > "$cfg/ports/1/addr_traddr" &&
	echo 4420 > "$cfg/ports/1/addr_trsvcid" &&
	ln -s "$sub" "$cfg/ports/1/subsystems/shcatest"
}
tap_check "nvmet target on an RDMA port over shca" setup_target

# The namespace's block device (with native multipath the controller lists
# only its path device, nvmeXcYnZ; the disk is nvmeXnZ).
nvme_dev() {
	ls /sys/block | grep -m1 '^nvme[0-9]*n[0-9]*$'
}
connect() {
	echo "transport=rdma,traddr=198.18.3.1,trsvcid=4420,nqn=shcatest" \
		> /dev/nvme-fabrics && wait_for 100 nvme_dev
}
tap_check "nvme-rdma host connects" connect
dev=/dev/$(nvme_dev)
diag "namespace $dev"

head -c 64M /dev/urandom > /tmp/pattern
tap_check "write 64 MiB (O_DIRECT)" \
	dd if=/tmp/pattern of="$dev" bs=1M count=64 oflag=direct status=none
tap_check "read back 64 MiB and compare" sh -c "
	dd if=$dev of=/tmp/readback bs=1M count=64 iflag=direct status=none &&
	cmp /tmp/pattern /tmp/readback"
rm -f /tmp/pattern /tmp/readback

teardown() {
	local c

	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/transport" 2>/dev/null)" = rdma ] &&
			echo 1 > "$c/delete_controller"
	done
	rm -f "$cfg/ports/1/subsystems/shcatest"
	rmdir "$cfg/ports/1"
	echo 0 > "$sub/namespaces/1/enable"
	rmdir "$sub/namespaces/1" "$sub"
	rdma link delete shca_nv
	ip link del shnv0
	modprobe -r nvme-rdma nvmet-rdma
}
tap_check "disconnect and tear down" teardown
tap_check "rmmod shca" shca_unload
rm -f /tmp/nvme.img
tap_done
