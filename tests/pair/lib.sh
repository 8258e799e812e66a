# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers of the two-guest lane (scripts/pair.sh), sourced by run.sh and
# peer.sh after tests/selftests/lib.sh.  Guest 1 (this side, run.sh)
# runs the tests; guest 2 (the peer, peer.sh) serves commands through
# agent.py.  The link between them is each guest's eth0: 10.77.0.N/24 and
# fd77::N/64.

PAIR_PORT=7301
# shellcheck disable=SC2034	# run.sh's address
PAIR_ADDR1=10.77.0.1
PAIR_ADDR2=10.77.0.2
AGENT=(/usr/bin/python3 "$SHCA_TOP/tests/pair/agent.py")
# what a command sent to the peer starts with: the selftests' helpers
P=". \$SHCA_TOP/tests/selftests/lib.sh;"

# link_up N: load the NIC's driver, give eth0 guest N's addresses
link_up() {
	modprobe virtio_net || return 1
	wait_for 100 ip link show eth0 || return 1
	ip -force -b - <<-EOF2
		link set eth0 up
		addr add 10.77.0.$1/24 dev eth0
		addr add fd77::$1/64 dev eth0 nodad
	EOF2
}

# peer SECS CMD: run CMD on the peer, at most SECS seconds (stretched by
# the time scale); its output, its status
peer() {
	"${AGENT[@]}" call "$PAIR_ADDR2" "$PAIR_PORT" run \
		"$(($1 * SHCA_TIME_SCALE))" "$2"
}

# peer_start NAME CMD / peer_wait NAME SECS: CMD in the peer's background
# (peer_start prints its process id there)
peer_start() {
	"${AGENT[@]}" call "$PAIR_ADDR2" "$PAIR_PORT" start "$1" "$2"
}

peer_wait() {
	"${AGENT[@]}" call "$PAIR_ADDR2" "$PAIR_PORT" wait "$1" \
		"$(($2 * SHCA_TIME_SCALE))"
}

# peer_server_client SECS "PEER CMD" "LOCAL CMD" [PORT|cm]: a server on the
# peer, its client here; both must succeed.  PORT: wait until the peer
# listens on that TCP port; cm: until an rdma_cm ID listens there.
peer_server_client() {
	local t=$1 srv=$2 cli=$3 port=${4:-} rc1 rc2 pid

	pid=$(peer_start srv "timeout $((t * SHCA_TIME_SCALE)) $srv")
	# (polled on the peer: a server that exited early never listens)
	if [ "$port" = cm ]; then
		peer 60 "$P wait_for 300 cm_listening_or_gone - $pid"
	elif [ -n "$port" ]; then
		peer 60 "$P wait_for 300 listening_or_gone - $port $pid"
	fi
	timeout "$((t * SHCA_TIME_SCALE))" sh -c "$cli" > /tmp/cli.out 2>&1
	rc2=$?
	peer_wait srv "$t" > /tmp/srv.out 2>&1
	rc1=$?
	pair_report "peer (server)" "$rc1" "local (client)" "$rc2"
}

# pair_report WHO1 RC1 WHO2 RC2: 0 when both succeeded, else the outputs
# of both sides (/tmp/srv.out, /tmp/cli.out) and pair_diag, and 1
pair_report() {
	[ "$2" = 0 ] && [ "$4" = 0 ] && return 0
	echo "# $1 rc=$2:"; sed 's/^/#   /' /tmp/srv.out | tail -30
	echo "# $3 rc=$4:"; sed 's/^/#   /' /tmp/cli.out | tail -30
	pair_diag
	return 1
}

# both guests' view after a failure: shca's nonzero counters, the NIC's
# and UDP's drops
pair_diag() {
	local cmd='shca_counters_diag; ip -s link show eth0;
		nstat -az Udp* Ip*Discards Ip*Errors 2>/dev/null | grep -v " 0 "'

	echo "# this guest:"
	eval "$cmd" 2>&1 | sed 's/^/#   /' | head -60
	echo "# the peer:"
	peer 30 "$P $cmd" 2>&1 |
		sed 's/^/#   /' | head -60
}
