#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# own_host.sh CMD...: run CMD as on a host of its own.  The two "hosts" of
# the selftests are network namespaces of one kernel, and middleware that
# finds its peer on the same machine talks to it through shared memory
# instead of the network: UCX compares the kernel's boot ID.  CMD runs in a
# mount namespace where /proc/sys/kernel/random/boot_id is an ID of the
# current network namespace's own, the same for every process in it; or,
# with SHCA_HOST=NAME, the ID of host NAME (two hosts in one namespace).
ns=$(ip netns identify 2>/dev/null)
id=/tmp/shca-boot-id.${SHCA_HOST:-${ns:-init}}
if [ ! -s "$id" ]; then
	tmp=$(mktemp "$id.XXXX") || exit 1
	cat /proc/sys/kernel/random/uuid > "$tmp" && mv -n "$tmp" "$id"
	rm -f "$tmp"
fi
# shellcheck disable=SC2016
exec unshare -m --propagation private sh -c \
	'mount --bind "$0" /proc/sys/kernel/random/boot_id && exec "$@"' \
	"$id" "$@"
