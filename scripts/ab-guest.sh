#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ab-guest.sh: the in-VM half of scripts/ab.sh.  Started by vm.sh as
#
#   scripts/ab-guest.sh SNAPDIR ROUNDS SETTING MTU TEST...
#
#   SNAPDIR  a.ko and b.ko, the two builds of the module to compare
#   ROUNDS   rounds; each loads a.ko and b.ko in turn (the order flips
#            from round to round) and runs every TEST on each
#   SETTING  two: shca_ns1 <-> shca_ns2, two namespaces joined by a veth
#            pair (lib.sh's two_hosts); one: one device talking to
#            itself, shca_lo on the loopback device of namespace shlo
#   MTU      MTU of the veth pair (two)
#   TEST     perftest test:size:iterations, e.g. send_lat:64:2000 or
#            write_bw:65536:500
#
# Writes $SHCA_OUT/ab.tsv (round, build, test, size, status, the client's
# output file) and each run's outputs under $SHCA_OUT/runs/.  Server on
# CPU 0, client on CPU 1 (perftest times with the TSC, which TCG does
# not keep in step between vCPUs).

set -u
snap=$1
rounds=$2
setting=$3
mtu=$4
shift 4
tests=("$@")

# shellcheck source=../tests/selftests/lib.sh
. "$SHCA_TOP/tests/selftests/lib.sh"
res=$SHCA_OUT
port=19700
mkdir -p "$res/runs"
: > "$res/ab.tsv"

log() {
	echo "ab-guest: $*"
}

up() {
	if [ "$setting" = one ]; then
		ip netns add shlo && ip -n shlo link set lo up &&
		ip netns exec shlo rdma link add shca_lo type shca netdev lo || return 1
		sns=shlo cns=shlo sdev=shca_lo cdev=shca_lo addr=127.0.0.1
		sgid=$(wait_gid shca_lo 127.0.0.1) && cgid=$sgid
	else
		two_hosts "$mtu" || return 1
		sns=shns1 cns=shns2 sdev=shca_ns1 cdev=shca_ns2 addr=198.18.0.1
		sgid=$(wait_gid shca_ns1 198.18.0.1) &&
		cgid=$(wait_gid shca_ns2 198.18.0.2)
	fi
}

down() {
	if [ "$setting" = one ]; then
		rdma link delete shca_lo 2>/dev/null
		ip netns del shlo 2>/dev/null
	else
		two_hosts_del
	fi
	return 0
}

# run ROUND BUILD TEST SIZE ITERS: one perftest pair
run() {
	local r=$1 b=$2 t=$3 size=$4 n=$5 base args st=ok

	base=runs/$r-$b-$t-$size
	port=$((port + 1))
	args=(-F -p "$port" -n "$n")
	[ "$size" = 8 ] || args+=(-s "$size")
	in_ns "$sns" timeout 120 taskset -c 0 "ib_$t" -d "$sdev" -x "$sgid" \
		"${args[@]}" > "$res/$base.srv" 2>&1 &
	if ! wait_for 300 listening "$sns" "$port"; then
		st=nolisten
	elif ! in_ns "$cns" timeout 120 taskset -c 1 "ib_$t" -d "$cdev" \
		-x "$cgid" "${args[@]}" "$addr" > "$res/$base.cli" 2>&1; then
		st=failed
	fi
	wait
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$b" "$t" "$size" "$st" \
		"$base" >> "$res/ab.tsv"
}

modprobe -a ib_uverbs udp_tunnel ip6_udp_tunnel || exit 1
rc=0
for ((r = 1; r <= rounds; r++)); do
	order="a b"
	[ $((r % 2)) = 0 ] && order="b a"
	for b in $order; do
		insmod "$snap/$b.ko" || { log "insmod $b.ko failed"; exit 1; }
		if up; then
			for spec in "${tests[@]}"; do
				IFS=: read -r t size n <<< "$spec"
				run "$r" "$b" "$t" "$size" "$n"
			done
		else
			log "round $r, $b: set-up failed"
			rc=1
		fi
		down
		rmmod shca || { log "rmmod shca failed"; exit 1; }
		log "round $r, $b done"
	done
done
exit "$rc"
