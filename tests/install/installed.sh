#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# shca as a user has it after installing the packages: run in the test VM
# booted on the scratch root scripts/install-check.sh installed them into
# (vm.sh --root).  Nothing of the build tree is used: no insmod, no
# RDMAV_DRIVERS, the system's modprobe, libibverbs and tools.
#
# - the driver is the one DKMS built for this kernel, and not loaded;
# - `rdma link add shca0 type shca netdev eth0` loads it (its rdma-link
#   alias); rdma-core's module loading for a new RDMA device, which udev
#   starts on a system that runs it (rdma-hw.target), loads ib_uverbs
#   and rdma_ucm;
# - plain ibv_devinfo sees shca0, and a verbs program maps the installed
#   libshca;
# - ibv_rc_pingpong on shca0 talking to itself, and between two devices in
#   two network namespaces: RC pingpong with data checks (-c) and rping
#   through rdma_cm;
# - the ExecStart and ExecStop lines of the installed shca@.service
#   template, run for eth0, create and delete shca_eth0;
# - everything deleted, the module unloads.

# shellcheck source=../selftests/lib.sh
. "$SHCA_TOP/tests/selftests/lib.sh"
unset RDMAV_DRIVERS

UNIT=/lib/systemd/system/shca@.service

# unit_cmd KEY NETDEV: the unit's KEY= command line for instance NETDEV
unit_cmd() {
	local line

	line=$(grep "^$1=" "$UNIT") || return 1
	line=${line#*=}
	echo "${line//%I/$2}"
}

not_loaded() {
	! grep -q '^shca ' /proc/modules
}

dkms_module() {
	local f

	f=$(modinfo -n shca) || return 1
	echo "# $f"
	[[ $f == /lib/modules/$SHCA_KVER/updates/dkms/shca.ko* ]]
}

# what rdma-core's udev rules start for any new RDMA device
# (rdma-load-modules@rdma.service; this VM has no udev)
rdma_core_modules() {
	local m

	/lib/systemd/systemd-modules-load /etc/rdma/modules/rdma.conf ||
		return 1
	for m in shca ib_uverbs rdma_ucm; do
		grep -q "^$m " /proc/modules || { echo "# $m not loaded"; return 1; }
	done
}

devinfo() {
	ibv_devinfo -d shca0 > /tmp/devinfo.out 2>&1 || { cat /tmp/devinfo.out; return 1; }
	grep -q 'hca_id:[[:space:]]*shca0' /tmp/devinfo.out &&
	grep -q 'PORT_ACTIVE' /tmp/devinfo.out
}

# the provider a running verbs program mapped is the installed one
maps_installed_provider() {
	local pid maps rc=1

	ibv_rc_pingpong -d shca0 -g "$g0" -p 18600 > /dev/null 2>&1 &
	pid=$!
	wait_for 100 grep -q libshca "/proc/$pid/maps"
	maps=$(grep -o '/[^ ]*libshca[^ ]*' "/proc/$pid/maps" | sort -u)
	echo "# $maps"
	[[ -n $maps && $maps != *"$SHCA_TOP"* && $maps == /usr/lib/* ]] && rc=0
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return "$rc"
}

self_pingpong() {
	ns_server_client - - 120 "ibv_rc_pingpong -d shca0 -g $g0 -c -n 100" \
		"ibv_rc_pingpong -d shca0 -g $g0 -c -n 100 127.0.0.1" 18515
}

rping_two_hosts() {
	server_client 120 "rping -s -a 198.18.0.1 -C 20 -S 1024 -V" \
		"$(declare -f retry); retry 5 rping -c -a 198.18.0.1 -C 20 -S 1024 -V" cm
}

unit_start_stop() {
	local start stop

	start=$(unit_cmd ExecStart eth0) && stop=$(unit_cmd ExecStop eth0) ||
		return 1
	echo "# $start"
	$start || return 1
	wait_for 50 rdma_dev_exists shca_eth0 || return 1
	echo "# $stop"
	$stop || return 1
	wait_for 50 rdma_dev_gone shca_eth0
}

tap_plan 12

tap_check "driver not loaded at boot" not_loaded
tap_check "modinfo finds the DKMS-built driver" dkms_module
modprobe virtio_net && wait_for 100 ip link show eth0 &&
	ip link set eth0 up && ip addr add 192.0.2.1/24 dev eth0
tap_check "rdma link add shca0 netdev eth0, no insmod" \
	rdma link add shca0 type shca netdev eth0
tap_check "rdma-core's modules for a new device load" rdma_core_modules
g0=$(wait_gid shca0 192.0.2.1)
tap_check "ibv_devinfo -d shca0 with no RDMAV_DRIVERS" devinfo
tap_check "a verbs program maps the installed libshca" maps_installed_provider
tap_check "ibv_rc_pingpong -c on shca0 with itself" self_pingpong
tap_check "two devices in two namespaces" two_hosts
g1=$(gid_index shca_ns1 198.18.0.1)
g2=$(gid_index shca_ns2 198.18.0.2)
tap_check "ibv_rc_pingpong -c between them" pp ibv_rc_pingpong -c -n 100
tap_check "rping between them (rdma_cm)" rping_two_hosts
rdma link delete shca0
two_hosts_del
tap_check "shca@eth0.service's commands create and delete shca_eth0" \
	unit_start_stop
tap_check "the module unloads" modprobe -r shca
tap_done
