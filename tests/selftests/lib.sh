# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the in-VM selftests (sourced, bash).  Each selftest is an
# executable that prints kselftest-style TAP and exits 0 (pass), 1 (fail)
# or 4 (skip).  They run as root inside the test VM (scripts/vm.sh), with
# SHCA_TOP and SHCA_KVER set.

: "${SHCA_TOP:?run inside the test VM (scripts/vm.sh)}"
SHCA_KVER=${SHCA_KVER:-$(uname -r)}
SHCA_KO=${SHCA_KO:-$SHCA_TOP/build/kmod/$SHCA_KVER/kernel/shca.ko}
export RDMAV_DRIVERS=$SHCA_TOP/build/lib/libshca
export PATH=$SHCA_TOP/build/tests:$PATH

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

_tap_n=0
_tap_fail=0

# tap_plan N: print the TAP header and plan.
tap_plan() {
	echo "TAP version 13"
	echo "1..$1"
}

# tap_ok COND-STATUS DESCRIPTION: record one result; COND-STATUS is the
# exit status of the check (0 = pass).
tap_ok() {
	_tap_n=$((_tap_n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $_tap_n - $2"
	else
		echo "not ok $_tap_n - $2"
		_tap_fail=$((_tap_fail + 1))
	fi
}

# tap_check DESCRIPTION CMD...: run CMD, record pass when it succeeds.
tap_check() {
	local desc=$1

	shift
	"$@" >/tmp/tap_check.out 2>&1
	local rc=$?
	tap_ok "$rc" "$desc"
	[ "$rc" = 0 ] || sed 's/^/# /' /tmp/tap_check.out | head -20
	return "$rc"
}

# tap_check_fails DESCRIPTION CMD...: record pass when CMD fails.
tap_check_fails() {
	local desc=$1

	shift
	if "$@" >/tmp/tap_check.out 2>&1; then
		tap_ok 1 "$desc"
		echo "# unexpectedly succeeded: $*"
		return 1
	fi
	tap_ok 0 "$desc"
	sed 's/^/# /' /tmp/tap_check.out | head -3
}

tap_skip() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $1 # SKIP ${2:-}"
}

# tap_done: exit with the kselftest status of the recorded results.
tap_done() {
	[ "$_tap_fail" = 0 ] && exit $KSFT_PASS
	exit $KSFT_FAIL
}

diag() {
	echo "# $*"
}

# Load ib_uverbs and the UDP tunnel helpers, then shca with PARAMS.
shca_load() {
	modprobe -a ib_uverbs udp_tunnel ip6_udp_tunnel || return 1
	lsmod | grep -q '^shca ' && return 0
	insmod "$SHCA_KO" "$@"
}

shca_unload() {
	lsmod | grep -q '^shca ' || return 0
	rmmod shca
}

# wait_for TIMEOUT_DECISECONDS CMD...: poll CMD until it succeeds.
wait_for() {
	local n=$1

	shift
	while [ "$n" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

rdma_dev_exists() {
	[ -e "/sys/class/infiniband/$1" ]
}

rdma_dev_gone() {
	[ ! -e "/sys/class/infiniband/$1" ]
}

# Create a veth pair $1 <-> $2, both up, optional MTU $3.
veth_pair() {
	ip link add "$1" type veth peer name "$2" || return 1
	[ -n "${3:-}" ] && { ip link set "$1" mtu "$3"; ip link set "$2" mtu "$3"; }
	ip link set "$1" up && ip link set "$2" up
}
