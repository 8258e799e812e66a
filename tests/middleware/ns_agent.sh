#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ns_agent.sh HOST CMD...: the remote-shell agent mpirun starts its daemons
# with (plm_rsh_agent), for "hosts" that are network namespaces of this
# machine: run CMD, a shell command line, in the namespace that owns the
# address HOST, as a host of its own (own_host.sh).
dir=$(cd "$(dirname "$0")" && pwd)
host=$1
shift
for ns in $(ip netns list | cut -d' ' -f1); do
	if ip -n "$ns" -o addr show | grep -q "inet6\? $host/"; then
		exec ip netns exec "$ns" "$dir/own_host.sh" sh -c "$*"
	fi
done
echo "ns_agent.sh: no namespace has address $host" >&2
exit 255
