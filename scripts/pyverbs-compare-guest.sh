#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pyverbs-compare-guest.sh: the in-VM half of scripts/pyverbs-compare.sh.
# Started by vm.sh as
#
#   scripts/pyverbs-compare-guest.sh SNAPDIR DEV_LIMIT STALL DEVICES MODULES
#
#   SNAPDIR    shca.ko and libshca-rdmav34.so, copied by pyverbs-compare.sh
#   DEV_LIMIT  wall-clock limit of the suite on one device, seconds
#   STALL      a test printing nothing for this long is aborted, seconds
#   DEVICES    which devices to test, in order ("rxe shca")
#   MODULES    only these test modules ("": every module of the suite)
#
# Each test module runs in its own `run_tests.py -v` process, under a
# watchdog: when neither its stdout nor its stderr grows for STALL
# seconds, the process gets SIGABRT (python3 -X faulthandler prints every
# thread's Python stack), then SIGKILL, and the tests of the module that
# had not started run in a new process.  A test that was running when its
# process was aborted or died is reported as a hang or crash with that
# stack (by scripts/pyverbs_report.py, on the host).
#
# Writes into $SHCA_OUT (the results share): list.txt (every test id),
# list.err, boot.dmesg, and per device a directory with
# <module>.<part>.log (unittest's stderr), .out (its stdout), .status (the
# watchdog's verdict), <module>.dmesg (the kernel log lines the module
# caused), <module>.notrun, modules, seconds, device, devinfo.txt,
# rdma-link.txt, aborted, teardown.txt, setup.dmesg and teardown.dmesg;
# shca/udp_port.  Exits 1 when a test process could not be killed (the
# run was cut short), else 0.

set -uo pipefail

suite=/usr/share/doc/rdma-core/tests

# log_size FILE...: print the sum of the sizes of FILEs.  (The guest has
# no /dev/fd: no process substitution here.)
log_size() {
	local s sum=0

	for s in $(stat -c %s "$@" 2>/dev/null); do
		sum=$((sum + s))
	done
	echo "$sum"
}

# alive PID: the process exists and is not a zombie.
alive() {
	local st

	[[ -r /proc/$1/stat ]] || return 1
	read -r st < "/proc/$1/stat" 2>/dev/null || return 1
	st=${st##*) }
	[[ ${st%% *} != Z ]]
}

# run_watched BASE DEV GID NAMES...: one run_tests.py process over NAMES,
# stdout to BASE.out, stderr to BASE.log, verdict to BASE.status.  Uses
# the globals deadline and stall.  Returns 2 if the process could not be
# killed (the device is wedged), else 0.
run_watched() {
	local base=$1 dev=$2 gid=$3 pid rc sz last=-1 idle t0=$SECONDS
	local stalled=0 unkillable=0 n

	shift 3
	setsid /usr/bin/python3 -X faulthandler run_tests.py \
		--dev "$dev" --gid "$gid" -v "$@" \
		> "$base.out" 2> "$base.log" < /dev/null &
	pid=$!
	idle=$SECONDS
	while alive "$pid"; do
		sleep 2
		sz=$(log_size "$base.log" "$base.out")
		if [[ $sz != "$last" ]]; then
			last=$sz
			idle=$SECONDS
		elif ((SECONDS - idle >= stall)); then
			stalled=1
		fi
		((SECONDS >= deadline)) && stalled=2
		((stalled)) && break
	done
	if ((stalled)); then
		# faulthandler dumps the stacks on SIGABRT: the main process
		# first, then the rest of the group (rdma_cm tests fork).
		kill -ABRT "$pid" 2>/dev/null
		sleep 2
		kill -ABRT -- "-$pid" 2>/dev/null
		for ((n = 0; n < 10; n++)); do
			kill -0 -- "-$pid" 2>/dev/null || break
			sleep 1
		done
		kill -KILL -- "-$pid" 2>/dev/null
		for ((n = 0; n < 30; n++)); do
			alive "$pid" || break
			sleep 1
		done
		alive "$pid" && unkillable=1
	fi
	if ((unkillable)); then
		rc=-1
	else
		wait "$pid" 2>/dev/null
		rc=$?
	fi
	echo "rc=$rc stalled=$stalled secs=$((SECONDS - t0)) stall=$stall unkillable=$unkillable" \
		> "$base.status"
	((unkillable)) && return 2
	return 0
}

# started_ids LOG: print the test ids the unittest -v log LOG names
# (started tests, and the class ids of setUpClass/setUpModule lines).
started_ids() {
	local line re='^([A-Za-z_][A-Za-z0-9_]*) \(([A-Za-z0-9_.]+)\)'

	while IFS= read -r line; do
		[[ $line =~ $re ]] && echo "${BASH_REMATCH[2]}"
	done < "$1"
}

kmsg_seen=0

# dmesg_since FILE: write the kernel log lines that appeared since the
# last call to FILE.
dmesg_since() {
	local -a kl=()

	dmesg > /tmp/pyverbs-kmsg.txt 2>&1
	mapfile -t kl < /tmp/pyverbs-kmsg.txt
	printf '%s\n' "${kl[@]:kmsg_seen}" > "$1"
	kmsg_seen=${#kl[@]}
}

# run_suite DEV GID DIR: every selected module on DEV, logs into DIR.
run_suite() {
	local dev=$1 gid=$2 dir=$3 mod part id rc t0=$SECONDS progress
	local -a names remaining args
	local -A seen

	deadline=$((SECONDS + dev_limit))
	: > "$dir/modules"
	for mod in "${modules[@]}"; do
		echo "$mod" >> "$dir/modules"
		names=()
		for id in "${all_ids[@]}"; do
			[[ $id == "tests.$mod."* ]] && names+=("$id")
		done
		args=("tests.$mod")
		part=0
		while :; do
			if ((SECONDS >= deadline)); then
				printf '%s\n' "${args[@]}" > "$dir/$mod.notrun"
				echo "$dev $mod: device time limit reached"
				break
			fi
			run_watched "$dir/$mod.$part" "$dev" "$gid" "${args[@]}"
			rc=$?
			echo "$dev $mod.$part: $(< "$dir/$mod.$part.status")"
			if ((rc == 2)); then
				echo "$dev: a test process cannot be killed: giving up on $dev"
				dmesg_since "$dir/$mod.dmesg"
				echo "unkillable process in $mod" > "$dir/aborted"
				return 1
			fi
			seen=()
			cat "$dir/$mod".*.log > /tmp/pyverbs-log.txt
			started_ids /tmp/pyverbs-log.txt > /tmp/pyverbs-ids.txt
			while read -r id; do
				seen[$id]=1
			done < /tmp/pyverbs-ids.txt
			remaining=()
			progress=0
			for id in "${names[@]}"; do
				if [[ -n ${seen[$id]:-} || -n ${seen[${id%.*}]:-} ]]; then
					continue
				fi
				remaining+=("$id")
			done
			for id in "${args[@]}"; do
				[[ -n ${seen[$id]:-} ]] && progress=1
			done
			[[ ${#args[@]} == 1 && ${args[0]} == "tests.$mod" ]] && progress=1
			((${#remaining[@]})) || break
			grep -q 'stalled=0 .*unkillable=0' "$dir/$mod.$part.status" &&
				grep -q '^rc=[01] ' "$dir/$mod.$part.status" && break
			((progress)) || break
			[[ "${remaining[*]}" == "${args[*]}" ]] && break
			args=("${remaining[@]}")
			part=$((part + 1))
		done
		dmesg_since "$dir/$mod.dmesg"
	done
	echo "$((SECONDS - t0))" > "$dir/seconds"
	return 0
}

# setup_rxe: rxe0 on lo; prints the GID index.
setup_rxe() {
	modprobe rdma_rxe || return 1
	rdma link add rxe0 type rxe netdev lo || return 1
	wait_gid rxe0 127.0.0.1
}

teardown_rxe() {
	timeout 60 rdma link delete rxe0
	timeout 60 modprobe -r rdma_rxe
}

# The NIC shca runs on: the VM's virtio-net NIC (vm.sh --nic) when it has
# one, whose PCI device becomes shca0's parent, so that the suite finds
# the address through /sys/class/infiniband/shca0/device/net/ (its
# rdma_cm tests); else a veth, on which those tests skip.
shca_nic() {
	modprobe virtio_net 2>/dev/null
	wait_for_nic eth0 && echo eth0 || echo pyv0
}

wait_for_nic() {
	local i

	for i in $(seq 50); do
		[ -e "/sys/class/net/$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# setup_shca: shca0 with 198.18.4.1 on shca_nic's NIC; prints the GID index.
setup_shca() {
	local port=() nic

	# shca binds UDP 4791 in the initial namespace, as rxe does.
	lsmod | grep -q '^rdma_rxe ' && port=(udp_port=4792)
	echo "${port[*]:-udp_port=4791}" > "$res/shca/udp_port"
	shca_load "${port[@]}" || return 1
	nic=$(shca_nic)
	echo "$nic" > "$res/shca/nic"
	if [ "$nic" = pyv0 ]; then
		ip link add pyv0 type veth peer name pyv1 || return 1
		ip link set pyv1 up || return 1
	fi
	ip link set "$nic" up || return 1
	ip addr add 198.18.4.1/24 dev "$nic" || return 1
	rdma link add shca0 type shca netdev "$nic" || return 1
	wait_gid shca0 198.18.4.1
}

teardown_shca() {
	local nic

	nic=$(cat "$res/shca/nic")
	timeout 60 rdma link delete shca0
	if [ "$nic" = pyv0 ]; then
		ip link del pyv0
	else
		ip addr del 198.18.4.1/24 dev "$nic"
	fi
	timeout 60 rmmod shca && echo "rmmod shca: ok"
}

# main SNAPDIR DEV_LIMIT STALL DEVICES MODULES
main() {
	local snap=$1 d dev gid mod
	local -a devs

	dev_limit=$2
	stall=$3
	read -r -a devs <<< "$4"
	read -r -a modules <<< "$5"
	# shellcheck source=../tests/selftests/lib.sh
	. "$SHCA_TOP/tests/selftests/lib.sh"
	export RDMAV_DRIVERS=$snap/libshca
	# shellcheck disable=SC2034	# shca_load (lib.sh) uses it
	SHCA_KO=$snap/shca.ko
	ulimit -c 0
	res=$SHCA_OUT

	rm -rf /tmp/rdma-tests
	if ! cp -r "$suite" /tmp/rdma-tests || ! gunzip /tmp/rdma-tests/*.gz ||
	   ! cd /tmp/rdma-tests; then
		echo "cannot copy $suite"
		return 1
	fi
	/usr/bin/python3 run_tests.py --list-tests > "$res/list.txt" 2> "$res/list.err"
	mapfile -t all_ids < "$res/list.txt"
	if ((${#modules[@]} == 0)); then
		sed 's/^tests\.\([^.]*\)\..*/\1/' "$res/list.txt" | uniq > /tmp/pyverbs-mods.txt
		mapfile -t modules < /tmp/pyverbs-mods.txt
	fi
	echo "${#all_ids[@]} tests in ${#modules[@]} modules"
	dmesg_since "$res/boot.dmesg"
	# the huge page tests (test_parent_domain, test_mr) take 2 MiB pages
	echo 8 > /proc/sys/vm/nr_hugepages
	echo "2 MiB huge pages: $(cat /proc/sys/vm/nr_hugepages)"

	for d in "${devs[@]}"; do
		mkdir -p "$res/$d"
		case $d in
		rxe) dev=rxe0 ;;
		shca) dev=shca0 ;;
		*) echo "unknown device $d"; continue ;;
		esac
		if ! gid=$("setup_$d"); then
			echo "$d: setup failed"
			echo "setup failed" > "$res/$d/aborted"
			dmesg_since "$res/$d/setup.dmesg"
			"teardown_$d"
			continue
		fi
		echo "$dev: GID index $gid"
		echo "$dev $gid" > "$res/$d/device"
		ibv_devinfo -v -d "$dev" > "$res/$d/devinfo.txt" 2>&1
		rdma link show > "$res/$d/rdma-link.txt" 2>&1
		run_suite "$dev" "$gid" "$res/$d" || return 1
		"teardown_$d" > "$res/$d/teardown.txt" 2>&1
		dmesg_since "$res/$d/teardown.dmesg"
	done
	return 0
}

main "$@"
