# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers of the fault-survival selftests (faults_*.sh), sourced after
# lib.sh: the module's object counts, the shca_fault_test load in the
# background, memory figures.  Not a test itself (not executable).
#
# SHCA_SOAK=1 turns the short make-check variants into long soaks (more
# kills, more repeated runs).

SHCA_OBJS=/sys/kernel/debug/shca/objects
FT_OUT=/tmp/ft.out
FT_PID=
FT_RC=

# objs_mount: make the module's object counts (debugfs) readable.
objs_mount() {
	[ -r "$SHCA_OBJS" ] && return 0
	mountpoint -q /sys/kernel/debug ||
		mount -t debugfs debugfs /sys/kernel/debug || return 1
	[ -r "$SHCA_OBJS" ]
}

# objs_show: the counts on one line (diagnostics).
objs_show() {
	tr '\n' ' ' < "$SHCA_OBJS"
}

# objs_base NDEV: remember the counts of NDEV idle devices (the RDMA
# core's own objects: its MAD QP, CQ, PD and MR) as a per-device figure.
objs_base() {
	awk -v n="$1" '$2 % n { bad = 1 } { print $1, $2 / n }
		END { exit bad }' "$SHCA_OBJS" > /tmp/objs.base
}

# objs_idle NDEV: the counts are exactly NDEV idle devices' worth: no
# object of any process is left.
objs_idle() {
	awk -v n="$1" 'NR == FNR { base[$1] = $2; next }
		$2 != base[$1] * n { bad = 1 } END { exit bad }' \
		/tmp/objs.base "$SHCA_OBJS"
}

# wait_objs_idle NDEV: objs_idle within 10 s (freeing after an exit or a
# device removal is asynchronous); shows the counts when not.
wait_objs_idle() {
	wait_for 100 objs_idle "$1" && return 0
	echo "objects: $(objs_show)(expected $1 idle device(s): $(tr '\n' ' ' < /tmp/objs.base)per device)"
	return 1
}

# ft_start ARGS...: run shca_fault_test ARGS in the background (FT_PID),
# output in $FT_OUT.
ft_start() {
	shca_fault_test "$@" > "$FT_OUT" 2>&1 &
	FT_PID=$!
}

ft_ready() {
	grep -q '^# ready' "$FT_OUT"
}

# The background program has exited (a zombie until ft_wait reaps it).
ft_exited() {
	[ ! -e "/proc/$FT_PID" ] ||
		[ "$(sed 's/^.*) \(.\).*/\1/' "/proc/$FT_PID/stat")" = Z ]
}

# ft_wait DS: reap the program within DS deciseconds; its exit status in
# FT_RC (137 = killed by SIGKILL; 124 = still running: killed here).
ft_wait() {
	if wait_for "$1" ft_exited; then
		wait "$FT_PID"
		FT_RC=$?
	else
		kill -9 "$FT_PID"
		wait "$FT_PID"
		FT_RC=124
	fi
	return 0
}

ft_ready_or_exited() {
	ft_ready || ft_exited
}

# ft_wait_ready: wait (60 s) until the traffic runs; shows the output
# when it does not (the program gave up, or is still setting up).
ft_wait_ready() {
	wait_for 600 ft_ready_or_exited && ft_ready && return 0
	ft_exited && echo "# shca_fault_test exited before its traffic ran"
	sed 's/^/# /' "$FT_OUT" | tail -20
	return 1
}

# ft_show: the program's output as diagnostics.
ft_show() {
	sed 's/^/# /' "$FT_OUT" | tail -"${1:-20}"
}

# ft_expect RC: the program's exit status was RC; shows its output if not.
ft_expect() {
	[ "$FT_RC" = "$1" ] && return 0
	echo "exit status $FT_RC, expected $1"
	ft_show 30
	return 1
}

# ft_saw DEV EVENT: the program reported async EVENT on DEV.
ft_saw() {
	grep -q "^# $1: async event $2\$" "$FT_OUT"
}

# port_active DEV: the port of DEV is ACTIVE.
port_active() {
	grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state"
}

# kmem: KiB of unreclaimable slab + vmalloc, where a kernel object leak
# shows (page cache and reclaimable slab vary too much between runs),
# less the vmap_area slab: the kernel keeps freed vmalloc areas there
# until a lazy purge, hundreds of KiB after runs that vmalloc thousands
# of rings.
kmem() {
	awk 'FILENAME == "/proc/slabinfo" {
			if ($1 == "vmap_area")
				v = $3 * $4 / 1024
			next
		}
		/^(SUnreclaim|VmallocUsed):/ { k += $2 }
		END { printf "%d\n", k - v }' /proc/slabinfo /proc/meminfo
}

# pins: user pages pinned (FOLL_PIN, as MR registration does) and not yet
# unpinned, system wide.
pins() {
	awk '$1 == "nr_foll_pin_acquired" { a = $2 }
		$1 == "nr_foll_pin_released" { r = $2 }
		END { print a - r }' /proc/vmstat
}

# two_hosts_tap MTU DESCRIPTION: the start of a two-host test counting
# objects, three TAP results: the module loads, two_hosts MTU
# (DESCRIPTION), the object counts readable with both devices counted as
# the base; sets g1 and g2 (their IPv4 GID indexes).  The test ends
# (tap_done) when the module or the hosts cannot be had.
two_hosts_tap() {
	tap_check "module loads" shca_load || tap_done
	tap_check "$2" two_hosts "$1" || {
		two_hosts_del
		shca_unload
		tap_done
	}
	tap_check "object counts readable (debugfs shca/objects)" objs_mount
	objs_base 2
	# shellcheck disable=SC2034	# for the tests that source this
	g1=$(gid_index shca_ns1 198.18.0.1)
	# shellcheck disable=SC2034
	g2=$(gid_index shca_ns2 198.18.0.2)
}
