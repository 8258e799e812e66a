#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A kernel RDMA user: the SCSI RDMA Protocol over shca, with the kernel's
# LIO target (ib_srpt, configured through configfs as targetcli would)
# and its initiator (ib_srp, logging in through the RDMA CM).  The target
# runs in the initial namespace, where ib_srpt listens (its RDMA CM port
# is in init_net), with device shca_srpt on shsr1 (198.18.7.1); the
# initiator host is namespace shns2 with shca_srpi on shsr2 (198.18.7.2),
# and logs in from there (ib_srp connects from the namespace of the
# process that writes add_target).  The LUN is a file on a tmpfs.  The
# checks: a login through the RDMA CM makes a SCSI disk of ib_srp's;
# random data written to it with direct I/O is in the target's file;
# read back; the target's device counted the bytes.  Then the initiator's
# device is deleted in the middle of a write: the SCSI host goes, the
# write ends with an error instead of hanging, and the target drops the
# session; with the device added again a new login reads the first data
# back.  At the end nothing is left: no SCSI host of ib_srp's, no QP on
# either device, the target's configuration removed.
. "$(dirname "$0")/lib.sh"

for m in ib_srpt ib_srp target_core_mod target_core_file sd_mod; do
	modprobe -q "$m" 2>/dev/null || {
		echo "1..0 # SKIP kernel module $m not available"
		exit $KSFT_SKIP
	}
done
modprobe -r ib_srp ib_srpt 2>/dev/null

MIB=$(sized 32 64)
TGT=198.18.7.1
INI=198.18.7.2
ACL=$TGT
PORT=5555
IMG=/tmp/srp.img

tap_plan 16
tap_check "module loads" shca_load

HOSTS=(shsr1 shca_srpt "$TGT" shsr2 shca_srpi "$INI")
tap_check "target and initiator hosts, an shca device each" host_pair "${HOSTS[@]}"

# tgt_port: the name ib_srpt gives shca_srpt's port 1, from its GID 0
# (the link-local GID: the interface ID, in four groups)
tgt_port() {
	local g

	read -r g < /sys/class/infiniband/shca_srpt/ports/1/gids/0 || return 1
	[ "${g#fe80:0000:0000:0000:}" != "$g" ] || return 1
	echo "${g#fe80:0000:0000:0000:}"
}

# The target: a fileio backstore on a tmpfs file, ib_srpt on
# shca_srpt's port with one LUN and one ACL.  ib_srpt names a session
# that came through the RDMA CM after its connection's source address,
# which for the accepting side is the address the initiator connected
# to (the target's own), so that is the ACL's name.
srp_target() {
	local p t

	p=$(tgt_port) || { echo "# no link-local GID 0"; return 1; }
	t="$LIO_CFG/srpt/$p/$p"
	truncate -s $((MIB + 16))M "$IMG" &&
	lio_fileio fileio_0 srpdisk "$IMG" && modprobe ib_srpt &&
	mkdir -p "$LIO_CFG/srpt" &&
	echo "$PORT" > "$LIO_CFG/srpt/discovery_auth/rdma_cm_port" &&
	mkdir "$LIO_CFG/srpt/$p" "$t" "$t/lun/lun_0" &&
	ln -s "$LIO_CFG/core/fileio_0/srpdisk" "$t/lun/lun_0/srpdisk" &&
	mkdir -p "$t/acls/$ACL/lun_0" &&
	ln -s "$t/lun/lun_0" "$t/acls/$ACL/lun_0/lun_0" &&
	echo 1 > "$t/enable"
}
tap_check "ib_srpt: a $((MIB + 16)) MiB LUN on shca_srpt, RDMA CM port $PORT" srp_target

# srp_host: the SCSI host number of ib_srp's login (one), empty if none
srp_host() {
	local p

	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p" ] || continue
		p=${p##*/port-}
		echo "${p%%:*}"
		return 0
	done
	return 1
}

# srp_disk: the block device of the LUN behind ib_srp's SCSI host
srp_disk() {
	local h b

	h=$(srp_host) || return 1
	for b in /sys/class/scsi_device/"$h":*/device/block/*; do
		[ -e "$b" ] || continue
		echo "/dev/${b##*/}"
		return 0
	done
	return 1
}

# session_up: the target has a session for the initiator's ACL (the
# LUN's initiator port statistics exist only while it has one)
session_up() {
	local p

	p=$(tgt_port) || return 1
	cat "$LIO_CFG/srpt/$p/$p/acls/$ACL/lun_0/statistics/scsi_att_intr_port/port_ident" \
		>/dev/null 2>&1
}

# srp_login: ib_srp logs in from shns2 through the RDMA CM; the target's
# identifiers are its service GUID (the default: the node GUID of the
# first device ib_srpt saw)
srp_login() {
	local g

	modprobe ib_srp &&
	wait_for 50 test -e /sys/class/infiniband_srp/srp-shca_srpi-1 &&
	read -r g < /sys/module/ib_srpt/parameters/srpt_service_guid || return 1
	g=${g#0x}
	in_ns shns2 sh -c "echo id_ext=$g,ioc_guid=$g,dest=$TGT:$PORT \
		> /sys/class/infiniband_srp/srp-shca_srpi-1/add_target" &&
	wait_for 100 srp_disk >/dev/null && session_up &&
	wait_for 50 sh -c "blockdev --getsize64 $(srp_disk) >/dev/null" &&
	echo "# logged in: SCSI host $(srp_host) ($(cat \
		"/sys/class/scsi_host/host$(srp_host)/proc_name")), disk $(srp_disk)"
}
tap_check "ib_srp logs in from the initiator's namespace: a SCSI disk" srp_login

head -c "${MIB}M" /dev/urandom > /tmp/srp.data

srp_write() {
	lun_write "$(srp_disk)" /tmp/srp.data "$IMG" shca_srpt
}
tap_check "${MIB} MiB written with direct I/O: in the target's file, over shca" \
	srp_write

srp_read() {
	lun_read "$(srp_disk)" /tmp/srp.data
}
tap_check "read back with direct I/O (and buffered at the long size)" \
	srp_read

# dev_loss: the initiator's device goes away in the middle of a write
# (ib_srp removes the SCSI host of every login on it); the write ends
# with an error, and the target sees the channel go.
dev_loss() {
	local d pid

	d=$(srp_disk) || return 1
	# 16 MiB in synchronous 64 KiB writes past the first write's data;
	# the device goes once the first of them is in the target's file
	dd if=/tmp/srp.data of="$d" bs=64k count=256 oflag=direct,sync \
		seek=$((MIB * 16)) status=none 2>/dev/null &
	pid=$!
	wait_for 100 written_at "$IMG" "$MIB" || { kill -9 "$pid"; return 1; }
	kill -0 "$pid" 2>/dev/null || { echo "# the write was over"; return 1; }
	in_ns shns2 rdma link delete shca_srpi || return 1
	if ! wait_for 600 sh -c "! kill -0 $pid"; then
		echo "# the write still runs 60 s after the device went"
		kill -9 "$pid"
		return 1
	fi
	wait "$pid" && { echo "# the write succeeded"; return 1; }
	echo "# the write ended with an error"
	! srp_host >/dev/null
}
tap_check "initiator device deleted mid-write: the write fails, the SCSI host goes" \
	dev_loss
no_session() {
	! session_up
}
tap_check "the target drops the session" wait_for 300 no_session

readd() {
	in_ns shns2 rdma link add shca_srpi type shca netdev shsr2 &&
	wait_for 50 gid_index shca_srpi "$INI" &&
	wait_for 50 test -e /sys/class/infiniband_srp/srp-shca_srpi-1 &&
	srp_login
}
tap_check "device added again: a new login" readd
tap_check "the data of the first write reads back" srp_read

# srp_logout: every login ended, its SCSI host gone
srp_logout() {
	local p

	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p" ] && echo 1 > "$p/delete"
	done
	wait_for 100 sh -c "! ls /sys/class/srp_remote_ports/port-* 2>/dev/null | grep -q ."
}
tap_check "logged out" srp_logout
tap_check "no RC QP left on the initiator's device" \
	wait_for 100 no_rc_qps shns2 shca_srpi

# srp_target_del: the target's configuration removed, deepest first
srp_target_del() {
	local p t

	p=$(tgt_port) || return 1
	t="$LIO_CFG/srpt/$p/$p"
	[ -d "$LIO_CFG/srpt" ] || return 0
	echo 0 > "$t/enable" 2>/dev/null
	rm -f "$t/acls/$ACL/lun_0/lun_0"
	rmdir "$t/acls/$ACL/lun_0" "$t/acls/$ACL" 2>/dev/null
	rm -f "$t/lun/lun_0/srpdisk"
	rmdir "$t/lun/lun_0" "$t" "$LIO_CFG/srpt/$p" "$LIO_CFG/srpt" 2>/dev/null
	lio_fileio_del fileio_0 srpdisk && [ ! -d "$LIO_CFG/srpt" ]
}
tap_check "target configuration removed" srp_target_del
tap_check "no RC QP left on the target's device" \
	wait_for 100 no_rc_qps - shca_srpt

teardown() {
	srp_logout
	srp_target_del
	modprobe -r ib_srp ib_srpt target_core_file &&
	host_pair_del "${HOSTS[@]}" &&
	rm -f "$IMG" /tmp/srp.data
}
tap_check "SRP modules unloaded, devices and hosts removed" teardown
tap_check "rmmod shca" shca_unload
tap_done
