#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Open MPI over UCX over shca, one rank on each of two hosts: mpirun runs
# in shns1 and starts its daemon in shns2 through tests/middleware/
# ns_agent.sh (its remote-shell agent); each namespace is a host of its own
# (own_host.sh).  shca_mpi_test checks every byte of a ping-pong from 1 B
# to 4 MiB and every element of an allreduce.  Open MPI 4.1 takes its UCX
# PML only for the devices it knows (mlx5) unless asked: "--mca pml ucx".
. "$(dirname "$0")/lib.sh"

command -v mpirun >/dev/null || {
	echo "1..0 # SKIP openmpi-bin not installed"
	exit $KSFT_SKIP
}
tap_plan 5

mw=$SHCA_TOP/tests/middleware
tap_check "module loads" shca_load
tap_check "two hosts" two_hosts 1500
printf '198.18.0.1 slots=1\n198.18.0.2 slots=1\n' > /tmp/mpi_hosts

# mpirun ARGS...: two ranks, one per host
mpi_run() {
	in_ns shns1 "$mw/own_host.sh" timeout "$(tmo 180)" mpirun --allow-run-as-root \
		--hostfile /tmp/mpi_hosts --mca plm_rsh_agent "$mw/ns_agent.sh" \
		-x RDMAV_DRIVERS -np 2 "$@" > /tmp/mpi.out 2>&1
	local rc=$?

	sed 's/^/# /' /tmp/mpi.out | grep -v "^# *$" | tail -20
	return "$rc"
}

# both ranks' UCX endpoints to the other host use shca's rc_verbs
over_shca() {
	mpi_run --mca pml ucx -x UCX_LOG_LEVEL=info shca_mpi_test 3 || return 1
	[ "$(grep -c 'ep_cfg.*tag(rc_verbs/shca_ns1:1 rc_verbs/shca_ns2:1)' \
		/tmp/mpi.out)" = 2 ] &&
	grep -q "ping-pong .*: 0 bad bytes" /tmp/mpi.out &&
	grep -q "allreduce .*: 0 wrong" /tmp/mpi.out
}
tap_check "ping-pong and allreduce over UCX on shca, data checked" over_shca

# the same run's probe: a byte rank 1 flipped is counted, the check can fail
tap_check "the data check sees one flipped byte" \
	grep -q "probe: .*: 1 bad bytes" /tmp/mpi.out

tap_check "devices removed" two_hosts_del
tap_done
