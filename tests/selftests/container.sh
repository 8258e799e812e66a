#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A container's RDMA device: a function on a macvlan child of the host's
# netdev, in the RDMA core's exclusive network namespace mode (rdma
# system set netns exclusive), where each namespace sees only its own
# devices.  The host has shca_h on cta (198.18.6.1); a remote host has
# shca_r on cta's veth peer ctb in namespace rem (198.18.6.2); the
# container, namespace ctr, has the macvlan ctm of cta (198.18.6.11) and
# shca_ct on it, function 1 of cta's engine, moved into ctr with rdma dev
# set.  rdma_cm picks each namespace's own device: rping between the
# container and the remote host and between the host and the remote
# host, mckey with receivers in the container and on the host (two
# functions of one engine) and the sender remote.  Deleting the
# container's namespace takes its function with it and leaves the host's
# working.  The mode goes back to shared at the end, whatever happened.
. "$(dirname "$0")/lib.sh"

tap_plan 11

cleanup() {
	ip netns del ctr 2>/dev/null
	ip netns del rem 2>/dev/null
	rdma link delete shca_h 2>/dev/null
	ip link del cta 2>/dev/null
	wait_for 100 rdma_dev_gone shca_h
	# (possible only while no namespace but the initial one exists)
	rdma system set netns shared
}

exclusive() {
	[ -z "$(ip netns list)" ] || { echo "# namespaces exist"; return 1; }
	rdma system set netns exclusive &&
	rdma system show | grep -q "netns exclusive"
}

hosts() {
	ip netns add rem && ip netns add ctr || return 1
	ip link add cta type veth peer name ctb netns rem || return 1
	ip addr add 198.18.6.1/24 dev cta && ip link set cta up &&
	ip -n rem addr add 198.18.6.2/24 dev ctb &&
	ip -n rem link set ctb up && ip -n rem link set lo up || return 1
	ip link add ctm link cta type macvlan mode bridge &&
	ip link set ctm netns ctr &&
	ip -n ctr addr add 198.18.6.11/24 dev ctm &&
	ip -n ctr link set ctm up && ip -n ctr link set lo up || return 1
	rdma link add shca_h type shca netdev cta &&
	in_ns rem rdma link add shca_r type shca netdev ctb &&
	in_ns ctr rdma link add shca_ct type shca netdev ctm || return 1
	wait_for 50 gid_index shca_h 198.18.6.1
}

# the function numbers on cta's engine, read before the devices move
funcs_of_cta() {
	local h c

	read -r h < /sys/class/infiniband/shca_h/func &&
	read -r c < /sys/class/infiniband/shca_ct/func || return 1
	echo "# shca_h: $h, shca_ct: $c"
	[ "$h" = "0 cta" ] && [ "$c" = "1 cta" ]
}

# ns_gid NS DEV ADDR: gid_index in namespace NS (its own sysfs)
ns_gid() {
	in_ns "$1" bash -c "$(declare -f gid_of gid_index); gid_index $2 $3"
}

# devs_in NS WANT: NS's rdma dev lists exactly the devices WANT
devs_in() {
	local got

	got=$(in_ns "$1" rdma dev | cut -d' ' -f2 | tr -d : | xargs)
	[ "$got" = "$2" ] || { echo "# $1 lists '$got', expected '$2'"; return 1; }
}

# each namespace lists only its own device
moved() {
	rdma dev set shca_r netns rem && rdma dev set shca_ct netns ctr ||
		return 1
	devs_in - shca_h && devs_in rem shca_r && devs_in ctr shca_ct &&
	wait_for 50 ns_gid ctr shca_ct 198.18.6.11 &&
	wait_for 50 ns_gid rem shca_r 198.18.6.2
}

# rping_ns SNS CNS ADDR: verified rping, server in SNS at ADDR, client in
# CNS; the server's listener was bound to DEV ($4)
rping_ns() {
	local t=$((60 * SHCA_TIME_SCALE)) srv rc=0

	in_ns "$1" timeout "$t" rping -s -a "$3" -C 10 -v -V > /tmp/rs.out 2>&1 &
	srv=$!
	wait_for 100 eval "in_ns $1 rdma resource show cm_id | grep -q 'link $4/1 .*LISTEN'" ||
		{ echo "# no listener on $4"; in_ns "$1" rdma resource show cm_id; rc=1; }
	in_ns "$2" timeout "$t" bash -c "$(declare -f retry); retry 5 rping -c -a $3 -C 10 -v -V" \
		> /tmp/rc.out 2>&1 || rc=1
	wait "$srv" || rc=1
	if [ "$rc" != 0 ]; then
		echo "# server:"; tail -n 5 /tmp/rs.out | sed 's/^/#   /'
		echo "# client:"; tail -n 5 /tmp/rc.out | sed 's/^/#   /'
	fi
	return "$rc"
}

copies() {	# copies NS DEV: DEV's mcast_copies, read in NS
	in_ns "$1" cat "/sys/class/infiniband/$2/ports/1/hw_counters/mcast_copies"
}

# two mckey receivers in the container, one on the host, the sender on
# the remote host: every receiver gets all 10 messages, and each function
# counts the copies of its own members
mckey_both() {
	local t=$((60 * SHCA_TIME_SCALE)) p pids=() rc=0 c0 h0 c1 h1 i

	c0=$(copies ctr shca_ct)
	h0=$(copies - shca_h)
	for i in 1 2; do
		in_ns ctr timeout "$t" mckey -m 239.1.7.1 -b 198.18.6.11 -C 10 \
			> "/tmp/mk$i.out" 2>&1 &
		pids+=($!)
	done
	timeout "$t" mckey -m 239.1.7.1 -b 198.18.6.1 -C 10 > /tmp/mk3.out 2>&1 &
	pids+=($!)
	sleep $((4 * SHCA_TIME_SCALE))
	in_ns rem timeout "$t" mckey -m 239.1.7.1 -b 198.18.6.2 -s -C 10 \
		> /tmp/mks.out 2>&1 || rc=1
	for p in "${pids[@]}"; do
		wait "$p" || rc=1
	done
	c1=$(copies ctr shca_ct)
	h1=$(copies - shca_h)
	echo "# mcast_copies: shca_ct +$((c1 - c0)), shca_h +$((h1 - h0))"
	[ $((c1 - c0)) = 20 ] && [ $((h1 - h0)) = 10 ] || rc=1
	if [ "$rc" != 0 ]; then
		for i in 1 2 3 s; do
			echo "# mckey $i:"
			tail -n 3 "/tmp/mk$i.out" | sed 's/^/#   /'
		done
	fi
	return "$rc"
}

# the container goes, and its function with its netdev; the host's
# function still talks to the remote host
ctr_gone() {
	ip netns del ctr || return 1
	wait_for 100 eval '! rdma dev | grep -q shca_ct' || return 1
	[ "$(cat /sys/class/infiniband/shca_h/func)" = "0 cta" ]
}

modprobe -a rdma_cm rdma_ucm ib_cm 2>/dev/null
if ! modprobe macvlan 2>/dev/null; then
	echo "# no macvlan in this kernel"
	exit "$KSFT_SKIP"
fi
trap cleanup EXIT
tap_check "module loads" shca_load
tap_check "rdma system set netns exclusive" exclusive
tap_check "host, remote host and container, each with its device" hosts
tap_check "the container's device is function 1 of the host netdev's engine" \
	funcs_of_cta
tap_check "rdma dev set ... netns: each namespace lists only its own device" \
	moved
tap_check "rping (rdma_cm) between the container and the remote host, on shca_ct" \
	rping_ns ctr rem 198.18.6.11 shca_ct
tap_check "rping between the host and the remote host, on shca_h" \
	rping_ns - rem 198.18.6.1 shca_h
tap_check "mckey: receivers in the container and on the host, the sender remote" \
	mckey_both
tap_check "deleting the container's namespace takes its function" ctr_gone
tap_check "the host's function still answers rping" \
	rping_ns - rem 198.18.6.1 shca_h
cleanup
trap - EXIT
tap_check "rmmod shca" shca_unload
tap_done
