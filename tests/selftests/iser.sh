#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A kernel RDMA user: iSCSI over RDMA (iSER) over shca, with the kernel's
# LIO target (iscsi_target_mod with ib_isert, configured through configfs
# as targetcli would) and open-iscsi's initiator (iscsid, iscsiadm with an
# "iser" interface, ib_iser).  Both ib_isert and ib_iser open their RDMA
# CM IDs in the initial network namespace, so both ends run there, and a
# connection to an address of this host runs over the device that has
# that address: here shca_iser on shis1 (198.18.8.1) talks to itself.
# The portal is the wildcard address (as targetcli makes it), so that
# its RDMA CM listener follows devices that come and go.  The LUN is a
# file on a tmpfs.  The checks: a login through the iser interface makes
# a SCSI disk of ib_iser's; random data written with direct I/O is in
# the target's file and reads back; the device counted the bytes.  Then
# the device is deleted in the middle of synchronous writes and added
# again 2 s later: iscsid logs in again through the new device and the
# writes finish with the data whole.  At the end nothing is left: no
# session, no QP, iscsid stopped, the target's configuration removed.
. "$(dirname "$0")/lib.sh"

for c in iscsiadm iscsid; do
	command -v "$c" >/dev/null || {
		echo "1..0 # SKIP $c not installed (open-iscsi)"
		exit $KSFT_SKIP
	}
done
for m in iscsi_target_mod ib_isert ib_iser target_core_file sd_mod; do
	modprobe -q "$m" 2>/dev/null || {
		echo "1..0 # SKIP kernel module $m not available"
		exit $KSFT_SKIP
	}
done

MIB=$(sized 32 64)
ADDR=198.18.8.1
TIQN=iqn.2026-12.org.shca:iser-target
IIQN=iqn.2026-12.org.shca:iser-initiator
TPG=$LIO_CFG/iscsi/$TIQN/tpgt_1
IMG=/tmp/iser.img
NODE=(iscsiadm -m node -T "$TIQN" -p "$ADDR:3260" -I shiser)

tap_plan 15
tap_check "module loads" shca_load

iser_net_del() {
	rdma link delete shca_iser 2>/dev/null
	ip link del shis1 2>/dev/null
	return 0
}

iser_net() {
	iser_net_del
	veth_pair shis1 shis2 &&
	ip addr add "$ADDR/24" dev shis1 &&
	rdma link add shca_iser type shca netdev shis1 &&
	wait_for 50 gid_index shca_iser "$ADDR"
}
tap_check "an shca device on a veth" iser_net

# The target: a fileio LUN on a tmpfs file; an iSCSI target with one
# LUN, an ACL for the initiator's name, no authentication, and a portal
# on the wildcard address with iSER on.
iser_target() {
	truncate -s $((MIB + 16))M "$IMG" &&
	lio_fileio fileio_1 iserdisk "$IMG" &&
	mkdir -p "$TPG/lun/lun_0" "$TPG/np/0.0.0.0:3260" &&
	ln -s "$LIO_CFG/core/fileio_1/iserdisk" "$TPG/lun/lun_0/iserdisk" &&
	mkdir -p "$TPG/acls/$IIQN/lun_0" &&
	ln -s "$TPG/lun/lun_0" "$TPG/acls/$IIQN/lun_0/lun_0" &&
	echo 0 > "$TPG/attrib/authentication" &&
	echo 1 > "$TPG/np/0.0.0.0:3260/iser" &&
	echo 1 > "$TPG/enable" &&
	[ "$(cat "$TPG/np/0.0.0.0:3260/iser")" = 1 ]
}
tap_check "LIO: a $((MIB + 16)) MiB LUN behind an iSER portal" iser_target

# The initiator: the guest's root is read-only, so open-iscsi's
# configuration (the distribution's iscsid.conf) and node records go to
# a tmpfs; iscsid runs in the
# initial namespace; an interface of transport iser; the node record
# made by hand (sendtargets discovery would go over TCP).
iser_initiator() {
	cp /etc/iscsi/iscsid.conf /tmp/iscsid.conf &&
	mount -t tmpfs iscsicfg /etc/iscsi &&
	mv /tmp/iscsid.conf /etc/iscsi/ &&
	echo "InitiatorName=$IIQN" > /etc/iscsi/initiatorname.iscsi &&
	mkdir -p /run/lock/iscsi && iscsid && sleep 0.5 &&
	iscsiadm -m iface -I shiser -o new >/dev/null &&
	iscsiadm -m iface -I shiser -o update -n iface.transport_name \
		-v iser >/dev/null &&
	"${NODE[@]}" -o new >/dev/null
}
tap_check "iscsid, an iser interface and the target's node record" \
	iser_initiator

# iser_disk: the block device of the session's LUN
iser_disk() {
	local b

	for b in /sys/class/iscsi_session/session*/device/target*/*/block/*; do
		[ -e "$b" ] || continue
		echo "/dev/${b##*/}"
		return 0
	done
	return 1
}

# iser_host_proc: the SCSI host driver of the session (ib_iser's
# "iscsi_iser", iscsi_tcp's "iscsi_tcp")
iser_host_proc() {
	local h

	for h in /sys/class/iscsi_session/session*/device/../scsi_host/host*; do
		[ -e "$h/proc_name" ] && cat "$h/proc_name" && return 0
	done
	return 1
}

iser_login() {
	"${NODE[@]}" --login >/dev/null &&
	wait_for 100 iser_disk >/dev/null &&
	wait_for 50 sh -c "blockdev --getsize64 $(iser_disk) >/dev/null" &&
	echo "# logged in: disk $(iser_disk), host $(iser_host_proc)" &&
	[ "$(iser_host_proc)" = iscsi_iser ]
}
tap_check "login through the iser interface: a SCSI disk of ib_iser's" \
	iser_login

head -c "${MIB}M" /dev/urandom > /tmp/iser.data

iser_write() {
	lun_write "$(iser_disk)" /tmp/iser.data "$IMG" shca_iser
}
tap_check "${MIB} MiB written with direct I/O: in the target's file, over shca" \
	iser_write

iser_read() {
	lun_read "$(iser_disk)" /tmp/iser.data
}
tap_check "read back with direct I/O (and buffered at the long size)" \
	iser_read

# dev_loss: the device goes away in the middle of synchronous writes and
# comes back 2 s later; the session's commands wait (the replacement
# timeout is 120 s), iscsid logs in again through the new device, and
# the writes finish with the data whole.
dev_loss() {
	local d pid t0 ok=1

	d=$(iser_disk) || return 1
	dd if=/tmp/iser.data of="$d" bs=64k count=256 oflag=direct,sync \
		seek=$((MIB * 16)) status=none &
	pid=$!
	t0=$SECONDS
	wait_for 100 written_at "$IMG" "$MIB" || ok=0
	kill -0 "$pid" 2>/dev/null || { echo "# the write was over"; ok=0; }
	rdma link delete shca_iser || ok=0
	sleep 2
	rdma link add shca_iser type shca netdev shis1 || ok=0
	wait_for 50 gid_index shca_iser "$ADDR" || ok=0
	writer_done "$pid" "$ok" || { echo "# the write failed"; return 1; }
	echo "# write done $((SECONDS - t0)) s after it started"
	[ "$(dd if="$IMG" bs=64k skip=$((MIB * 16)) count=256 status=none |
		sha256sum)" = "$(head -c 16M /tmp/iser.data | sha256sum)" ]
}
tap_check "device deleted mid-write and added again: the session comes back, the data arrives whole" \
	dev_loss
tap_check "the first write reads back after the new login" iser_read

iser_logout() {
	"${NODE[@]}" --logout >/dev/null &&
	wait_for 100 sh -c '! ls /sys/class/iscsi_session/ | grep -q .'
}
tap_check "logged out" iser_logout
tap_check "no RC QP left on the device" wait_for 100 no_rc_qps - shca_iser

iser_target_del() {
	[ -d "$LIO_CFG/iscsi" ] || return 0
	echo 0 > "$TPG/enable" 2>/dev/null
	rm -f "$TPG/acls/$IIQN/lun_0/lun_0" "$TPG/lun/lun_0/iserdisk"
	rmdir "$TPG/acls/$IIQN/lun_0" "$TPG/acls/$IIQN" \
		"$TPG/np/0.0.0.0:3260" "$TPG/lun/lun_0" "$TPG" \
		"$LIO_CFG/iscsi/$TIQN" "$LIO_CFG/iscsi" 2>/dev/null
	lio_fileio_del fileio_1 iserdisk
	[ ! -d "$LIO_CFG/iscsi" ]
}
tap_check "target configuration removed" iser_target_del

iser_stop() {
	pkill -x iscsid
	wait_for 50 sh -c '! pgrep -x iscsid >/dev/null' &&
	umount /etc/iscsi
}
tap_check "iscsid stopped" iser_stop

teardown() {
	"${NODE[@]}" --logout >/dev/null 2>&1
	iser_target_del
	pgrep -x iscsid >/dev/null && iser_stop
	modprobe -r ib_iser ib_isert iscsi_target_mod target_core_file &&
	iser_net_del &&
	rm -f "$IMG" /tmp/iser.data
}
tap_check "iSER modules unloaded, device removed" teardown
tap_check "rmmod shca" shca_unload
tap_done
