#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A kernel RDMA user: NVMe over RDMA with the in-kernel target
# (nvmet-rdma) and host (nvme-rdma) over shca: connect, write a 64 MiB
# pattern, read it back, compare; fio writes with verification (random 4
# KiB at queue depth 32, sequential 128 KiB), reading every block back
# against its crc32c; where the host's posts were sent from in 4000 random
# reads: mostly by the transmit stage while fio keeps 32 requests in
# flight, from nvme-rdma's own call at queue depth 1 (the kernel QP's
# choice, kernel/mech/shca_kpost.h); disconnect.  The target and the host
# each have their own shca device, on the two ends of a veth pair; both
# run in the initial namespace, where nvmet listens, so the traffic
# between the two devices takes shca's same-host path.  The host's queues
# are bound to its device by the host_traddr of the connect; rdma_cm on
# the target checks that the host's address routes in through the target's
# netdev, which a local source address does only with accept_local (and no
# reverse-path filter).
. "$(dirname "$0")/lib.sh"

tap_plan 13

if ! modprobe -a nvmet nvmet-rdma nvme-rdma 2>/dev/null; then
	echo "1..0 # SKIP nvmet-rdma / nvme-rdma not available"
	exit $KSFT_SKIP
fi
tap_check "module loads" shca_load
rpf=$(sysctl -n net.ipv4.conf.all.rp_filter)
acl=$(sysctl -n net.ipv4.conf.all.accept_local)
setup_net() {
	ip link add shnv0 type veth peer name shnv1 &&
	ip link set shnv0 up && ip link set shnv1 up &&
	for d in all shnv0 shnv1; do
		sysctl -qw "net.ipv4.conf.$d.rp_filter=0" \
			"net.ipv4.conf.$d.accept_local=1" || return 1
	done &&
	ip addr add 198.18.3.1/24 dev shnv0 &&
	ip addr add 198.18.3.2/24 dev shnv1 &&
	rdma link add shca_nvt type shca netdev shnv0 &&
	rdma link add shca_nvh type shca netdev shnv1 &&
	wait_for 50 gid_index shca_nvt 198.18.3.1 &&
	wait_for 50 gid_index shca_nvh 198.18.3.2
}
tap_check "target and host shca devices on a veth pair" setup_net

setup_target() {
	truncate -s 72M /tmp/nvme.img &&
	nvmet_subsys shcatest /tmp/nvme.img 1 &&
	nvmet_port 1 198.18.3.1 shcatest
}
tap_check "nvmet target on an RDMA port over shca" setup_target

tap_check "nvme-rdma host connects" \
	nvme_connect 198.18.3.1 198.18.3.2 shcatest
dev=/dev/$(nvme_disk)
diag "namespace $dev"

# qps DEV: the RC QPs on DEV, as rdma-core's resource tracking lists them
qps() {
	rdma res show qp link "$1/1" 2>/dev/null | grep -c "type RC"
}
two_devices() {
	local t h

	t=$(qps shca_nvt)
	h=$(qps shca_nvh)
	echo "# RC QPs: target device $t, host device $h"
	[ "$t" -gt 0 ] && [ "$t" = "$h" ]
}
tap_check "the target's and the host's queues are on their own devices" \
	two_devices

head -c 64M /dev/urandom > /tmp/pattern
tap_check "write 64 MiB (O_DIRECT)" \
	dd if=/tmp/pattern of="$dev" bs=1M count=64 oflag=direct status=none
tap_check "read back 64 MiB and compare" sh -c "
	dd if=$dev of=/tmp/readback bs=1M count=64 iflag=direct status=none &&
	cmp /tmp/pattern /tmp/readback"
rm -f /tmp/pattern /tmp/readback

# fio JOB ARGS...: a verifying fio job on the namespace
fio_verify() {
	local name=$1

	shift
	command -v fio >/dev/null || { echo "# fio not installed"; return 1; }
	fio --name="$name" --filename="$dev" --direct=1 --ioengine=libaio \
		--size=32M --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--output-format=terse --terse-version=3 "$@" > /tmp/fio.out 2>&1 ||
		{ sed 's/^/#   /' /tmp/fio.out | tail -20; return 1; }
	# terse v3: field 5 is the error number
	[ "$(grep '^3;' /tmp/fio.out | cut -d';' -f5)" = 0 ] ||
		{ cut -c1-200 /tmp/fio.out | sed 's/^/#   /'; return 1; }
}
# kpost_share DEV NAME MIN: counter NAME of DEV counted at least MIN
# percent of its kernel QPs' posts since ctr_snap
kpost_share() {
	local n t

	n=$(ctr_sum "$1" "$2")
	t=$(ctr_sum "$1" kpost_inline kpost_staged)
	echo "# $1: $t kernel posts, $n of them $2"
	[ "$t" -gt 100 ] && [ $((n * 100)) -ge $(($3 * t)) ]
}

tap_check "fio randwrite 4 KiB QD32, crc32c verified" \
	fio_verify rw4k --rw=randwrite --bs=4k --iodepth=32

# fio_reads QD: 4000 random 4 KiB reads at queue depth QD
fio_reads() {
	fio --name="rr$1" --filename="$dev" --direct=1 --ioengine=libaio \
		--rw=randread --bs=4k --iodepth="$1" --size=32M \
		--number_ios=4000 --output-format=terse --terse-version=3 \
		--output=/tmp/fio.out
}
ctr_snap shca_nvh
fio_reads 32 || echo "# fio failed"
tap_check "random reads at QD32: most host posts went to the transmit stage" \
	kpost_share shca_nvh kpost_staged 50
ctr_snap shca_nvh
fio_reads 1 || echo "# fio failed"
tap_check "random reads at QD1: the host's posts left from nvme-rdma's call" \
	kpost_share shca_nvh kpost_inline 85
tap_check "fio write 128 KiB QD8, crc32c verified" \
	fio_verify w128k --rw=write --bs=128k --iodepth=8

teardown() {
	nvme_disconnect
	nvmet_del shcatest 1
	rdma link delete shca_nvt
	rdma link delete shca_nvh
	ip link del shnv0
	sysctl -qw "net.ipv4.conf.all.rp_filter=$rpf" \
		"net.ipv4.conf.all.accept_local=$acl"
	modprobe -r nvme-rdma nvmet-rdma
}
tap_check "disconnect and tear down" teardown
tap_check "rmmod shca" shca_unload
rm -f /tmp/nvme.img
tap_done
