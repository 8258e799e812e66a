#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault survival: processes killed (SIGKILL) in the middle of their work,
# and module unload while they run.
#
# - shca_fault_test with many QPs, MRs, CQs, an SRQ, memory windows, an
#   address handle and work in flight (traffic), or mass QP creation and
#   teardown (qps), or MR/MW churn (mrs), killed at a random moment:
#   afterwards every object count is back to the idle devices' own.
# - perftest (ib_write_bw) killed on one side: the other side gets errors
#   and exits by itself; nothing is left.
# - rmmod while a process uses a device is refused and the process runs
#   on unharmed; once it exited the module unloads with no leak report.
#
# SHCA_SOAK=1: 60 kills instead of 6.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/faults_lib.sh"

kills=6
[ -n "${SHCA_SOAK:-}" ] && kills=60
tap_plan $((kills + 14))

tap_check "module loads" shca_load
tap_check "two hosts" two_hosts 1500
tap_check "object counts readable (debugfs shca/objects)" objs_mount
objs_base 2
g1=$(gid_index shca_ns1 198.18.0.1)
g2=$(gid_index shca_ns2 198.18.0.2)
devs="shca_ns1 $g1 shca_ns2 $g2"
diag "idle objects: $(objs_show)"

# kill_one I: run load I (traffic, qps or mrs in turn) and SIGKILL it at
# a random moment: traffic once it runs, the others while they create,
# use and destroy objects.  Then every object must be freed.
kill_one() {
	local i=$1 mode delay

	case $((i % 3)) in
	0) mode="-n 24 -m 128 traffic" ;;
	1) mode="-n 300 -w 100 qps" ;;
	2) mode="-n 256 -r 100 mrs" ;;
	esac
	delay=$((RANDOM % 1500))
	ctr_snap shca_ns1 shca_ns2
	# shellcheck disable=SC2086	# mode and devs: arguments, split on purpose
	ft_start $mode $devs
	if [ "$((i % 3))" = 0 ]; then
		if ! ft_wait_ready; then
			ctr_diag shca_ns1 shca_ns2
			kill -9 "$FT_PID" 2>/dev/null
			wait "$FT_PID"
			return 1
		fi
		delay=$((RANDOM % 1000))
	fi
	sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
	kill -9 "$FT_PID"
	ft_wait 300
	echo "mode: $mode, killed after $delay ms, exit status $FT_RC"
	case $FT_RC in
	137) ;;
	0) diag "$mode finished before the kill ($delay ms)" ;;
	*) ft_show; return 1 ;;
	esac
	wait_objs_idle 2
}

for i in $(seq "$kills"); do
	tap_check "kill -9 #$i: every object freed" kill_one "$i"
done
# shellcheck disable=SC2086	# devs: the arguments, split on purpose
tap_check "devices still carry verified traffic" \
	timeout "$(tmo 120)" shca_fault_test -d 3 -n 4 traffic $devs

# perftest: SIGKILL one side once the transfer runs.
port=18600
tx_pkts() {
	cat /sys/class/infiniband/shca_ns2/ports/1/hw_counters/tx_pkts
}

# pt_kill SIDE: ib_write_bw for 30 s, kill SIDE (server or client) once
# packets flow; the other side must notice and exit by itself (nonzero)
# within 30 s.
pt_kill() {
	local side=$1 spid cpid t0 victim other

	port=$((port + 1))
	ip netns exec shns1 ib_write_bw -d shca_ns1 -x "$g1" -F "${PT_ARGS[@]}" -p "$port" \
		-D 30 > /tmp/pt_srv.out 2>&1 &
	spid=$!
	wait_for 300 listening shns1 "$port" || { kill -9 "$spid"; return 1; }
	t0=$(tx_pkts)
	ip netns exec shns2 ib_write_bw -d shca_ns2 -x "$g2" -F "${PT_ARGS[@]}" -p "$port" \
		-D 30 198.18.0.1 > /tmp/pt_cli.out 2>&1 &
	cpid=$!
	wait_for 300 sh -c "[ \$(cat /sys/class/infiniband/shca_ns2/ports/1/hw_counters/tx_pkts) -gt $((t0 + 1000)) ]"
	if [ "$side" = server ]; then
		victim=$spid other=$cpid
	else
		victim=$cpid other=$spid
	fi
	kill -9 "$victim"
	wait "$victim"
	FT_PID=$other
	ft_wait 300
	echo "the other side exited with $FT_RC"
	sed 's/^/#   server: /' /tmp/pt_srv.out | tail -5
	sed 's/^/#   client: /' /tmp/pt_cli.out | tail -5
	[ "$FT_RC" != 124 ] && [ "$FT_RC" != 0 ] || return 1
	wait_objs_idle 2
}
tap_check "ib_write_bw: server killed, client errors out, all freed" \
	pt_kill server
tap_check "ib_write_bw: client killed, server errors out, all freed" \
	pt_kill client
tap_check "ib_write_bw runs again afterwards" \
	server_client 120 "ib_write_bw -d shca_ns1 -x $g1 -F $PT_OPTS -p 18700 -n 200" \
		"ib_write_bw -d shca_ns2 -x $g2 -F $PT_OPTS -p 18700 -n 200 198.18.0.1" \
		18700

# rmmod while a process holds the devices: refused, the process unharmed.
leaks0=$(dmesg | grep -c 'shca: leak')
# shellcheck disable=SC2086	# devs: the arguments, split on purpose
ft_start -d 6 -n 8 traffic $devs
tap_check "traffic running" ft_wait_ready
tap_check_fails "rmmod refused while a process uses shca" rmmod shca
tap_check "module still loaded, devices still there" \
	sh -c 'lsmod | grep -q "^shca " && [ -e /sys/class/infiniband/shca_ns2 ]'
ft_wait 600
tap_check "the process ran on to a clean verified end" ft_expect 0
tap_check "its objects are all freed" wait_objs_idle 2
two_hosts_del
tap_check "rmmod once the users are gone" shca_unload
tap_check "no leak report at unload" \
	sh -c "[ \$(dmesg | grep -c 'shca: leak') = $leaks0 ]"
tap_done
