#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A kernel RDMA user: NFS over RDMA (the kernel's svcrdma server and
# xprtrdma client) over shca, with Debian's nfs-kernel-server tools; the
# mounts set only the version, proto=rdma and its port (plus, for NFSv3,
# nolock: the guest runs no statd; and no two-minute retry).  The server
# (nfsd, rpc.mountd, rpcbind) runs in the initial namespace with device
# shca_nfss on shnf1 (198.18.6.1); the client host is namespace shns2
# with shca_nfsc on shnf2 (198.18.6.2).  The client mounts from shns2's
# network namespace (nsenter --net), in the initial mount namespace, so
# the mount outlives the command that made it.  For NFSv3 and NFSv4.2:
# mount with proto=rdma, write a random file, check it on the server,
# remount (no cached page) and read it back, the mount's own statistics
# showing the RDMA transport and shca's counters the bytes.  Then the
# client's device is deleted in the middle of a write and added again:
# xprtrdma reconnects through the new device and the file arrives whole.
# At the end nothing is left: no mount, no QP on either device, nfsd
# stopped and its export withdrawn.
. "$(dirname "$0")/lib.sh"

for c in rpc.nfsd rpc.mountd rpcbind exportfs mount.nfs nsenter; do
	command -v "$c" >/dev/null || {
		echo "1..0 # SKIP $c not installed (nfs-kernel-server)"
		exit $KSFT_SKIP
	}
done
if ! modprobe -a nfsd rpcrdma nfsv3 nfsv4 2>/dev/null; then
	echo "1..0 # SKIP nfsd / rpcrdma not available"
	exit $KSFT_SKIP
fi

MIB=$(sized 32 64)
SRV=198.18.6.1
EXP=/tmp/nfsexp
MNT=/tmp/nfsmnt
CLI=(nsenter --net=/run/netns/shns2)

tap_plan 14
tap_check "module loads" shca_load

HOSTS=(shnf1 shca_nfss "$SRV" shnf2 shca_nfsc 198.18.6.2)
tap_check "server and client hosts, an shca device each" host_pair "${HOSTS[@]}"

# The guest's root is read-only: nfs-utils' state goes to a tmpfs.  The
# export is a tmpfs too, which needs an fsid; fsid 0 makes it NFSv4's
# root as well (the pseudo file system cannot reach it through the
# guest's 9p root).
nfs_server() {
	mkdir -p "$EXP" "$MNT" &&
	mount -t tmpfs nfsstate /var/lib/nfs &&
	mkdir -p /var/lib/nfs/v4recovery /run/rpcbind &&
	touch /var/lib/nfs/etab /var/lib/nfs/rmtab &&
	{ mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd; } &&
	rpcbind -w &&
	exportfs -o rw,no_root_squash,insecure,fsid=0 "198.18.6.0/24:$EXP" &&
	rpc.mountd &&
	rpc.nfsd --rdma=20049 4 || return 1
	grep -q 'rdma 20049' /proc/fs/nfsd/portlist && return 0
	echo "# portlist: $(tr '\n' ' ' < /proc/fs/nfsd/portlist)"
	return 1
}
tap_check "nfsd listens for RDMA on port 20049" nfs_server

head -c "${MIB}M" /dev/urandom > /tmp/nfs.data
sum=$(sha256sum < /tmp/nfs.data)
# the device-loss write: what it needs is a write in flight when the
# device goes
head -c 8M /tmp/nfs.data > /tmp/nfs.loss
loss_sum=$(sha256sum < /tmp/nfs.loss)

# nfs_mount VERS: mount the export over RDMA from the client host (no
# retry for two minutes when the server is not there); NFSv4 names it
# by its place in the server's NFSv4 tree, the root
nfs_mount() {
	local path=$EXP

	[ "${1%%.*}" = 4 ] && path=/
	"${CLI[@]}" mount -t nfs \
		-o "vers=$1,proto=rdma,port=20049,nolock,retry=0" \
		"$SRV:$path" "$MNT"
}

# xprt_rdma: the mount's transport is RDMA (/proc/self/mountstats
# names it on its "xprt:" line)
xprt_rdma() {
	awk -v m="$MNT" '$1 == "device" && $5 == m { on = 1; next }
		$1 == "device" { on = 0 }
		on && $1 == "xprt:" { print; exit }' /proc/self/mountstats |
		grep -q '^[[:space:]]*xprt:[[:space:]]*rdma'
}

# unmount_all: no NFS mount left on the mount point (lazily: a hard
# mount whose server is gone would hang a walk into it)
unmount_all() {
	while mountpoint -q "$MNT"; do
		umount -f -l "$MNT" || return 1
	done
}

# nfs_io_steps VERS: write, check on the server, remount, read back
nfs_io_steps() {
	local v=$1 rx

	ctr_snap shca_nfss
	nfs_mount "$v" || return 1
	xprt_rdma || { echo "# not an RDMA transport:"
		       grep -A3 "$MNT" /proc/self/mountstats | sed 's/^/#   /'
		       return 1; }
	dd if=/tmp/nfs.data of="$MNT/f$v" bs=1M conv=fsync status=none ||
		return 1
	[ "$(sha256sum < "$EXP/f$v")" = "$sum" ] ||
		{ echo "# the server's copy differs"; return 1; }
	umount "$MNT" && nfs_mount "$v" || return 1
	[ "$(sha256sum < "$MNT/f$v")" = "$sum" ] ||
		{ echo "# read back differs"; return 1; }
	umount "$MNT" || return 1
	rx=$(ctr_sum shca_nfss payload_rx_bytes)
	echo "# NFSv$v: server device received $rx payload bytes"
	[ "$rx" -ge $((MIB << 20)) ]
}

# nfs_io VERS: nfs_io_steps, nothing left mounted when they fail
nfs_io() {
	nfs_io_steps "$1" && return 0
	unmount_all
	return 1
}
tap_check "NFSv3 over RDMA: ${MIB} MiB written, on the server, read back" \
	nfs_io 3
tap_check "NFSv4.2 over RDMA: ${MIB} MiB written, on the server, read back" \
	nfs_io 4.2

# The NFSv4.2 mount again, for the device loss below
tap_check "NFSv4.2 mounted again" nfs_mount 4.2

# dev_loss: the client's device goes away in the middle of a write and
# comes back; the hard mount's requests wait, xprtrdma connects again
# through the new device, and the write finishes with the file whole.
dev_loss() {
	local pid t0 n ok=1

	mountpoint -q "$MNT" && xprt_rdma || return 1
	dd if=/tmp/nfs.loss of="$MNT/g" bs=64k oflag=sync status=none &
	pid=$!
	t0=$SECONDS
	wait_for 100 test -s "$MNT/g" &&
		in_ns shns2 rdma link delete shca_nfsc || ok=0
	n=$(stat -c %s "$EXP/g")
	echo "# device deleted after $n bytes had reached the server"
	[ "$n" -lt $((8 << 20)) ] || { echo "# the write was over"; ok=0; }
	sleep 2
	in_ns shns2 rdma link add shca_nfsc type shca netdev shnf2 ||
		rdma_dev_exists shca_nfsc || ok=0
	wait_for 50 gid_index shca_nfsc 198.18.6.2 || ok=0
	# (a hard mount's requests wait for ever, but die by SIGKILL)
	writer_done "$pid" "$ok" || { echo "# dd failed"; return 1; }
	echo "# write done $((SECONDS - t0)) s after it started"
	[ "$(sha256sum < "$EXP/g")" = "$loss_sum" ]
}
tap_check "client device deleted mid-write and added again: the file arrives whole" \
	dev_loss
remount_read() {
	umount "$MNT" && nfs_mount 4.2 && xprt_rdma &&
	[ "$(sha256sum < "$MNT/g")" = "$loss_sum" ]
}
tap_check "the remount reads it back over RDMA" remount_read
tap_check "unmounted" umount "$MNT"
unmount_all

tap_check "no RC QP left on the client's device" \
	wait_for 100 no_rc_qps shns2 shca_nfsc

nfs_server_stop() {
	rpc.nfsd 0 && exportfs -ua && pkill -x rpc.mountd && pkill -x rpcbind
	sleep 0.5
	umount /proc/fs/nfsd && umount /var/lib/nfs
}
tap_check "nfsd stopped, export and daemons gone" nfs_server_stop
tap_check "no RC QP left on the server's device" wait_for 100 no_rc_qps - shca_nfss

teardown() {
	unmount_all
	host_pair_del "${HOSTS[@]}"
	rm -rf --one-file-system "$EXP" "$MNT" /tmp/nfs.data /tmp/nfs.loss
	modprobe -r rpcrdma
}
tap_check "devices and hosts removed" teardown
tap_check "rmmod shca" shca_unload
tap_done
