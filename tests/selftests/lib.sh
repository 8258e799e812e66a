# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for the in-VM selftests (sourced, bash).  Each selftest is an
# executable that prints kselftest-style TAP and exits 0 (pass), 1 (fail)
# or 4 (skip).  They run as root inside the test VM (scripts/vm.sh), with
# SHCA_TOP and SHCA_KVER set.

: "${SHCA_TOP:?run inside the test VM (scripts/vm.sh)}"
SHCA_KVER=${SHCA_KVER:-$(uname -r)}
SHCA_KO=${SHCA_KO:-$SHCA_TOP/build/kmod/$SHCA_KVER/kernel/shca.ko}
export RDMAV_DRIVERS=$SHCA_TOP/build/lib/libshca
# rc56 CMD...: a program built against rdma-core 56.1 (Makefile's
# RC56_BUILD, on its libibverbs, which has no configuration directory
# here and says so) finds rdma_rxe's provider of that release too
rc56() {
	RDMAV_DRIVERS=$RDMAV_DRIVERS:$SHCA_TOP/build/rdma-core-56.1/build/lib/librxe \
		"$@"
}

# "must" from Linux 6.2 on (IBA 1.5's FLUSH in the RDMA core), else empty
flush_must() {
	local v=${SHCA_KVER%%-*}

	v=${v%.*}
	[ "${v%%.*}" -gt 6 ] || { [ "${v%%.*}" = 6 ] && [ "${v#*.}" -ge 2 ]; } &&
		echo must
}
export PATH=$SHCA_TOP/build/tests:$PATH

# SHCA_TIME_SCALE stretches every time bound of the tests: wait_for, tmo,
# perftest's ACK timeout (PT_OPTS), the selftest binaries' deadlines
# (shca_test_lib.c) and run.sh's limit per test.  A debug kernel (KASAN,
# lockdep, kmemleak: release *-shca-debug; KCSAN: *-shca-kcsan) runs the
# suite several times slower, so there it defaults to 8; elsewhere to 1.
if [ -z "${SHCA_TIME_SCALE:-}" ]; then
	case $SHCA_KVER in
	*-shca-debug | *-shca-kcsan) SHCA_TIME_SCALE=8 ;;
	*) SHCA_TIME_SCALE=1 ;;
	esac
fi
if ! [[ $SHCA_TIME_SCALE =~ ^[1-9][0-9]?$ ]]; then
	echo "SHCA_TIME_SCALE must be 1 to 99, not '$SHCA_TIME_SCALE'" >&2
	exit 1
fi
export SHCA_TIME_SCALE
# SHCA_LONG=1 (make check-full, make check-debug): the long sizes of the
# tests, more rounds and more data for the same checks; make check runs
# the short ones, each the smallest that still exercises its case (each
# test says which case a size is for).
case ${SHCA_LONG:-} in
""|0) SHCA_LONG= ;;
1) ;;
*) echo "SHCA_LONG must be 0 or 1, not '$SHCA_LONG'" >&2; exit 1 ;;
esac
export SHCA_LONG

# sized SHORT LONG: SHORT, or LONG under SHCA_LONG=1
sized() {
	if [ -n "$SHCA_LONG" ]; then echo "$2"; else echo "$1"; fi
}

# perftest's QP timeout: its default (4.096 us << 14, about 67 ms) with 8
# retries is too short for a slow kernel; 4.096 us << 18 is about 1 s
# (PT_ARGS for a command line, PT_OPTS for a command string)
PT_ARGS=()
[ "$SHCA_TIME_SCALE" -gt 1 ] && PT_ARGS=(-u 18)
# shellcheck disable=SC2034	# for the tests that source this
PT_OPTS=${PT_ARGS[*]}

KSFT_PASS=0
KSFT_FAIL=1
# shellcheck disable=SC2034	# for the tests that source this
KSFT_SKIP=4

_tap_n=0
_tap_fail=0
# when the previous result was recorded (microseconds, EPOCHREALTIME)
_tap_t=${EPOCHREALTIME/[.,]/}

# tap_plan N: print the TAP header and plan.
tap_plan() {
	echo "TAP version 13"
	echo "1..$1"
}

# tap_ok COND-STATUS DESCRIPTION: record one result; COND-STATUS is the
# exit status of the check (0 = pass).  The result line ends with the
# seconds since the previous result (or since the test began), which
# scripts/check_times.py collects: "ok 3 - desc (1.2s)".
tap_ok() {
	local now=${EPOCHREALTIME/[.,]/} t

	t=$(((now - _tap_t) / 100000))
	t="($((t / 10)).$((t % 10))s)"
	_tap_t=$now
	_tap_n=$((_tap_n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $_tap_n - $2 $t"
	else
		echo "not ok $_tap_n - $2 $t"
		_tap_fail=$((_tap_fail + 1))
	fi
}

# tap_check DESCRIPTION CMD...: run CMD, record pass when it succeeds.
# CMD's output is shown when it fails, or always with SHCA_TAP_VERBOSE=1.
tap_check() {
	local desc=$1

	shift
	"$@" >/tmp/tap_check.out 2>&1
	local rc=$?
	tap_ok "$rc" "$desc"
	if [ "$rc" != 0 ]; then
		sed 's/^/# /' /tmp/tap_check.out | head -60
	elif [ -n "${SHCA_TAP_VERBOSE:-}" ]; then
		grep '^#' /tmp/tap_check.out | sed 's/^/# /' | head -20
	fi
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

# tap_relay FILE N PREFIX: the N results of a TAP program's output in
# FILE as results of this test, each after its diagnostics, its
# description after PREFIX.  A result missing fails; one beyond N fails
# the test.
tap_relay() {
	local file=$1 want=$2 prefix=$3 got=0 line st

	[ -f "$file" ] || : > "$file"
	while IFS= read -r line; do
		case $line in
		"ok "* | "not ok "*)
			got=$((got + 1))
			if [ "$got" -gt "$want" ]; then
				echo "# result beyond the $want expected: $line"
				_tap_fail=$((_tap_fail + 1))
				continue
			fi
			st=0
			[ "${line#not }" = "$line" ] || st=1
			tap_ok "$st" "$prefix${line#* - }"
			;;
		"#"*)
			echo "$line"
			;;
		esac
	done < "$file"
	while [ "$got" -lt "$want" ]; do
		got=$((got + 1))
		tap_ok 1 "${prefix}case $got: no result"
	done
}

tap_skip() {
	_tap_t=${EPOCHREALTIME/[.,]/}
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

# tmo SECONDS: SECONDS stretched by the time scale (for timeout(1)).
tmo() {
	echo $(($1 * SHCA_TIME_SCALE))
}

# wait_for TIMEOUT_DECISECONDS CMD...: poll CMD until it succeeds (the
# timeout is stretched by the time scale).
wait_for() {
	local n=$(($1 * SHCA_TIME_SCALE))

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

# two_hosts_if N MTU: host N's namespace shnsN up, its veth end shvN with
# MTU and addresses 198.18.0.N/24 and 2001:db8::N/64.  One ip process (a
# process costs some 0.1 s under TCG); -force goes on past a failed
# command, as separate calls would.
two_hosts_if() {
	ip -n "shns$1" -force -b - <<-EOF
		link set lo up
		link set shv$1 mtu $2 up
		addr add 198.18.0.$1/24 dev shv$1
		addr add 2001:db8::$1/64 dev shv$1 nodad
	EOF
}

# two_hosts_link: namespaces shns1 and shns2 (new ones) joined by the
# veth pair shv1 / shv2, nothing configured on it
two_hosts_link() {
	two_hosts_del
	ip netns add shns1 && ip netns add shns2 &&
	ip link add shv1 netns shns1 type veth peer name shv2 netns shns2
}

# Two "hosts": network namespaces shns1 and shns2 joined by a veth pair
# (shv1 198.18.0.1 / shv2 198.18.0.2, and 2001:db8::1 / ::2), with an
# shca device on each end: shca_ns1 and shca_ns2.  MTU $1 (default 1500).
two_hosts() {
	local mtu=${1:-1500}

	two_hosts_link || return 1
	two_hosts_if 1 "$mtu"
	two_hosts_if 2 "$mtu"
	ip netns exec shns1 rdma link add shca_ns1 type shca netdev shv1 &&
	ip netns exec shns2 rdma link add shca_ns2 type shca netdev shv2 ||
		return 1
	wait_for 50 gid_index shca_ns1 198.18.0.1 &&
	wait_for 50 gid_index shca_ns2 198.18.0.2
}

# two_hosts_del: delete what two_hosts made (each command only for what
# exists: a process costs some 0.1 s under TCG); fails when a deletion
# failed.
two_hosts_del() {
	local d ns rc=0

	for d in shca_ns1 shca_ns2; do
		rdma_dev_exists "$d" || continue
		rdma link delete "$d" 2>/dev/null || rc=1
	done
	for ns in shns1 shns2; do
		[ -e "/run/netns/$ns" ] || continue
		ip netns del "$ns" 2>/dev/null || rc=1
	done
	return "$rc"
}

# no_rc_qps NS DEV: DEV (port 1), seen from namespace NS, has no RC QP
no_rc_qps() {
	! in_ns "$1" rdma resource show qp link "$2/1" | grep -q 'type RC'
}

# two_hosts_no_ns2: two_hosts 1500 without shca_ns2, so that shns2's UDP
# port 4791 is free for a packet injector; readd_ns2 puts it back.
two_hosts_no_ns2() {
	two_hosts 1500 && rdma link delete shca_ns2
}

readd_ns2() {
	in_ns shns2 rdma link add shca_ns2 type shca netdev shv2 &&
	wait_for 50 gid_index shca_ns2 198.18.0.2
}

# pp PROGRAM ARGS...: an ibv_*_pingpong between shca_ns1 (server) and
# shca_ns2 of two_hosts, GID indexes $g1 and $g2 (the test's).
# shellcheck disable=SC2154
pp() {
	local prog=$1

	shift
	server_client 120 "$prog -d shca_ns1 -g $g1 $*" \
		"$prog -d shca_ns2 -g $g2 $* 198.18.0.1" 18515
}

# survives WHAT: five TAP results, that shca_ns2 (deleted for an injector)
# comes back and the two devices still talk after WHAT: RC and UD
# pingpong, and rping through rdma_cm (the GSI QP kept its receives).
# Sets g2.
survives() {
	tap_check "shca_ns2 back" readd_ns2
	g2=$(gid_index shca_ns2 198.18.0.2)
	tap_check "ibv_rc_pingpong -c after $1" pp ibv_rc_pingpong -c -n 200
	tap_check "ibv_ud_pingpong -c after $1" \
		pp ibv_ud_pingpong -c -n 200 -s 1024
	tap_check "rping through rdma_cm (QP1) after $1" server_client 120 \
		"rping -s -a 198.18.0.1 -C 5 -v -V" \
		"$(declare -f retry); retry 5 rping -c -a 198.18.0.1 -C 5 -v -V" cm
}

# rxe_peer [MTU]: the kernel's rdma_rxe as shca's peer.  rxe works only
# in the initial namespace: rxe_i sits there on shvr (198.18.1.1), shca_i
# in namespace shns2 on the other end of the veth pair, shv2
# (198.18.1.2); MTU $1 (default 1500).  Loads rdma_rxe; sets gr and gs to
# the two devices' RoCEv2 IPv4 GID indices.  rxe_peer_del undoes it.
# shellcheck disable=SC2034	# gr and gs are for the caller
rxe_peer() {
	local mtu=${1:-1500}

	rxe_peer_del
	modprobe rdma_rxe &&
	ip netns add shns2 &&
	ip link add shvr type veth peer name shv2 netns shns2 &&
	ip link set shvr mtu "$mtu" up &&
	ip -n shns2 link set shv2 mtu "$mtu" up &&
	ip -n shns2 link set lo up &&
	ip addr add 198.18.1.1/24 dev shvr &&
	ip -n shns2 addr add 198.18.1.2/24 dev shv2 &&
	rdma link add rxe_i type rxe netdev shvr &&
	in_ns shns2 rdma link add shca_i type shca netdev shv2 &&
	wait_for 50 gid_index rxe_i 198.18.1.1 &&
	wait_for 50 gid_index shca_i 198.18.1.2 || return 1
	gr=$(gid_index rxe_i 198.18.1.1)
	gs=$(gid_index shca_i 198.18.1.2)
}

# rc_cases DEV1 GID1 DEV2 GID2 CASES...: each case of shca_rc_test (-t,
# a substring of the case names) between the two devices, DEV1 the
# requester; the first failing case's output shown.
rc_cases() {
	local d1=$1 g1=$2 d2=$3 g2=$4 t

	shift 4
	for t in "$@"; do
		shca_rc_test -t "$t" "$d1" "$g1" "$d2" "$g2" > /tmp/rc.out 2>&1 ||
			{ grep -v '^ok' /tmp/rc.out | head -20; return 1; }
	done
}

rxe_peer_del() {
	rdma link delete rxe_i 2>/dev/null
	rdma link delete shca_i 2>/dev/null
	ip netns del shns2 2>/dev/null
	ip link del shvr 2>/dev/null
	return 0
}

# rxe_pair [MTU]: two rdma_rxe devices in the initial namespace whose
# traffic crosses a veth pair (the benchmarks' rxe side): rxe_a on bxa
# (198.18.3.1) and rxe_b on bxb (198.18.3.2).  Local addresses are
# normally delivered through lo, so the local table is consulted only for
# packets that arrived on the veth ends, and each source address routes
# out of its own end; rdma_cm accepts a peer whose address is local only
# with accept_local and no reverse-path filter.  rxe_pair_del undoes it.
rxe_pair() {
	local mtu=${1:-1500} d

	modprobe rdma_rxe || return 1
	ip link add bxa type veth peer name bxb || return 1
	for d in all default bxa bxb; do
		sysctl -qw "net.ipv4.conf.$d.rp_filter=0" \
			"net.ipv4.conf.$d.accept_local=1" || return 1
	done
	ip link set bxa mtu "$mtu" up && ip link set bxb mtu "$mtu" up &&
	ip addr add 198.18.3.1/24 dev bxa &&
	ip addr add 198.18.3.2/24 dev bxb || return 1
	ip rule add pref 100 lookup local &&
	ip rule del pref 0 lookup local &&
	ip rule add pref 10 iif bxa lookup local &&
	ip rule add pref 11 iif bxb lookup local &&
	ip rule add pref 20 from 198.18.3.1 lookup 201 &&
	ip rule add pref 21 from 198.18.3.2 lookup 202 &&
	ip route add 198.18.3.2 dev bxa table 201 &&
	ip route add 198.18.3.1 dev bxb table 202 || return 1
	rdma link add rxe_a type rxe netdev bxa &&
	rdma link add rxe_b type rxe netdev bxb &&
	wait_for 100 gid_index rxe_a 198.18.3.1 &&
	wait_for 100 gid_index rxe_b 198.18.3.2
}

rxe_pair_del() {
	local p

	rdma link delete rxe_a 2>/dev/null
	rdma link delete rxe_b 2>/dev/null
	ip link del bxa 2>/dev/null
	if ! ip rule show pref 0 | grep -q .; then
		ip rule add pref 0 lookup local
		ip rule del pref 100 lookup local
	fi
	for p in 10 11 20 21; do
		ip rule del pref "$p" 2>/dev/null
	done
	return 0
}

# gid_of ADDR VAR: set VAR to ADDR, an IPv4 or IPv6 address, as a GID in
# the spelling of sysfs (eight groups of four lower-case hex digits; IPv4
# as ::ffff:a.b.c.d); fail when ADDR is not an address.  Builtins only.
gid_of() {
	local addr=${1,,} v4 a b c d head tail g n gid=
	local -a hg=() tg=() groups=()

	if [[ $addr != *:* ]]; then
		[[ $addr == *.* ]] || return 1
		addr=::ffff:$addr
	fi
	if [[ $addr == *.* ]]; then
		# a dotted IPv4 address in the last 32 bits
		v4=${addr##*:}
		n='(0|[1-9][0-9]{0,2})'
		[[ $v4 =~ ^$n\.$n\.$n\.$n$ ]] || return 1
		a=${BASH_REMATCH[1]} b=${BASH_REMATCH[2]}
		c=${BASH_REMATCH[3]} d=${BASH_REMATCH[4]}
		((a <= 255 && b <= 255 && c <= 255 && d <= 255)) || return 1
		printf -v v4 '%x:%x' $((a << 8 | b)) $((c << 8 | d))
		addr=${addr%:*}:$v4
	fi
	if [[ $addr == *::* ]]; then
		head=${addr%%::*}
		tail=${addr#*::}
		[[ $tail != *::* ]] || return 1
	else
		head=$addr
		tail=
	fi
	[[ $head != *: && $tail != *: ]] || return 1
	[[ -z $head ]] || IFS=: read -r -a hg <<< "$head"
	[[ -z $tail ]] || IFS=: read -r -a tg <<< "$tail"
	n=$((8 - ${#hg[@]} - ${#tg[@]}))
	if [[ $addr == *::* ]]; then
		((n >= 1)) || return 1
	else
		((n == 0)) || return 1
	fi
	groups=("${hg[@]}")
	for ((; n > 0; n--)); do
		groups+=(0)
	done
	groups+=("${tg[@]}")
	for g in "${groups[@]}"; do
		[[ $g =~ ^[0-9a-f]{1,4}$ ]] || return 1
		printf -v g '%04x' "0x$g"
		gid+=${gid:+:}$g
	done
	printf -v "$2" '%s' "$gid"
}

# gid_index DEV ADDR: print the index of the RoCE v2 GID of ADDR (IPv4 or
# IPv6) on port 1 of DEV.  Builtins only: a process spawn costs ~25 ms
# under TCG, and rdma_rxe has 1024 GID entries.
gid_index() {
	local p=/sys/class/infiniband/$1/ports/1 want g t i

	gid_of "$2" want || return 1
	for ((i = 0; ; i++)); do
		[[ -e $p/gids/$i ]] || return 1
		read -r g 2>/dev/null < "$p/gids/$i" || continue
		[[ $g == "$want" ]] || continue
		read -r t 2>/dev/null < "$p/gid_attrs/types/$i" || continue
		[[ $t == 'RoCE v2' ]] || continue
		echo "$i"
		return 0
	done
}

# wait_gid DEV ADDR: gid_index, retried for up to 10 s.
wait_gid() {
	local n

	for ((n = 0; n < 100; n++)); do
		gid_index "$1" "$2" && return 0
		sleep 0.1
	done
	return 1
}

# in_ns NS CMD...: run CMD in namespace NS ("-": the initial namespace).
in_ns() {
	local ns=$1

	shift
	if [ "$ns" = - ]; then
		"$@"
	else
		ip netns exec "$ns" "$@"
	fi
}

declare -gA _ns_pid

# ns_net NS: set _ns_net to the /proc/PID/net directory of a process in
# network namespace NS ("-": the initial one, this shell's); fail when no
# process is in NS.  Builtins only (the waits for a server poll it): the
# process found is remembered and checked again on the next call.
ns_net() {
	local p=${_ns_pid[$1]:-}

	if [ "$1" = - ]; then
		_ns_net=/proc/self/net
		return 0
	fi
	if [ -n "$p" ] && [ "/proc/$p/ns/net" -ef "/run/netns/$1" ]; then
		_ns_net=/proc/$p/net
		return 0
	fi
	for p in /proc/[0-9]*; do
		[ "$p/ns/net" -ef "/run/netns/$1" ] || continue
		_ns_pid[$1]=${p#/proc/}
		_ns_net=$p/net
		return 0
	done
	return 1
}

# port_open NETDIR PORT: in the namespace of /proc/PID/net directory
# NETDIR, a TCP socket listens on local PORT or an unconnected UDP socket
# is bound to it (what `ss -ltun` lists).  Builtins only.
port_open() {
	local want f loc st rest

	printf -v want '%04X' "$2"
	for f in tcp tcp6 udp udp6; do
		while read -r _ loc _ st rest; do
			[ "${loc##*:}" = "$want" ] || continue
			case $f:$st in
			tcp*:0A|udp*:07) return 0 ;;
			esac
		done < "$1/$f"
	done 2>/dev/null
	return 1
}

# listening NS PORT: a TCP or UDP socket listens on PORT in NS ("-": the
# initial namespace).  Without a process in NS nothing listens there.
listening() {
	ns_net "$1" && port_open "$_ns_net" "$2"
}

# listening_or_gone NS PORT PID: listening, or process PID has exited.
listening_or_gone() {
	! kill -0 "$3" 2>/dev/null || listening "$1" "$2"
}

# cm_listening_or_gone NS PID: an RDMA CM ID listens in NS (rping,
# ucmatose: their servers listen through rdma_cm, not a socket), or
# process PID has exited.
cm_listening_or_gone() {
	! kill -0 "$2" 2>/dev/null ||
	in_ns "$1" rdma resource show cm_id 2>/dev/null | grep -q ' LISTEN '
}

# ns_server_client SNS CNS TIMEOUT "SERVER CMD" "CLIENT CMD" [PORT]: run a
# server in namespace SNS and its client in CNS ("-": the initial one),
# the client once the server listens on PORT when given (PORT "cm": once
# an RDMA CM ID listens), else a second after the server started; succeed
# when both do, else show both outputs and the device counters.
ns_server_client() {
	local sns=$1 cns=$2 t=$(($3 * SHCA_TIME_SCALE)) srv=$4 cli=$5 port=${6:-} spid rc1 rc2

	in_ns "$sns" timeout "$t" sh -c "$srv" > /tmp/srv.out 2>&1 &
	spid=$!
	# (a server that exited early never listens)
	if [ "$port" = cm ]; then
		wait_for 300 cm_listening_or_gone "$sns" "$spid"
	elif [ -n "$port" ]; then
		wait_for 300 listening_or_gone "$sns" "$port" "$spid"
	else
		sleep 1
	fi
	in_ns "$cns" timeout "$t" sh -c "$cli" > /tmp/cli.out 2>&1
	rc2=$?
	wait "$spid"
	rc1=$?
	if [ "$rc1" != 0 ] || [ "$rc2" != 0 ]; then
		echo "# server rc=$rc1:"; sed 's/^/#   /' /tmp/srv.out | tail -40
		echo "# client rc=$rc2:"; sed 's/^/#   /' /tmp/cli.out | tail -40
		shca_counters_diag
		return 1
	fi
	return 0
}

# server_client TIMEOUT "SERVER CMD" "CLIENT CMD" [PORT]: server in shns1,
# client in shns2 (the two_hosts pair).
server_client() {
	ns_server_client shns1 shns2 "$@"
}

# Print the nonzero hw counters of every shca device (test diagnostics).
# Builtins only: a device has over 70 counters, and a process costs some
# 60 ms under TCG.
shca_counters_diag() {
	local d f t v

	for d in /sys/class/infiniband/*; do
		t=
		read -r t 2>/dev/null < "$d/hca_type"
		[ "$t" = shca ] || continue
		echo "# counters of ${d##*/}:"
		for f in "$d"/ports/1/hw_counters/*; do
			v=0
			read -r v 2>/dev/null < "$f"
			[ "$v" = 0 ] || echo "#   ${f##*/} $v"
		done
	done
}

# retry N CMD...: run CMD up to N times, a second apart, until it succeeds
# (for clients whose server listens through rdma_cm: nothing to wait on).
retry() {
	local n=$1 i

	shift
	for i in $(seq "$n"); do
		"$@" && return 0
		sleep 1
	done
	return 1
}

# ---- counters and netem (the loss, RNR and peer-loss tests) ----------

declare -gA _ctr0

# ctr_snap DEV...: remember every hw counter of each DEV; ctr_sum and
# ctr_diag report what moved since.
ctr_snap() {
	local d f v

	for d in "$@"; do
		for f in "/sys/class/infiniband/$d/ports/1/hw_counters"/*; do
			[ -r "$f" ] || continue
			v=0
			read -r v < "$f"
			_ctr0[$d/${f##*/}]=$v
		done
	done
}

# ctr_sum "DEV..." NAME...: print the sum of what counters NAME of the
# DEVs moved since ctr_snap (a counter a device lacks counts 0).
ctr_sum() {
	local devs=$1 d n v sum=0

	shift
	for d in $devs; do
		for n in "$@"; do
			v=${_ctr0[$d/$n]:-}
			[ -n "$v" ] || continue
			read -r v < "/sys/class/infiniband/$d/ports/1/hw_counters/$n"
			sum=$((sum + v - ${_ctr0[$d/$n]}))
		done
	done
	echo "$sum"
}

# ctr_moved "DEV..." "COUNTER..." ...: each group of counters moved
# (summed over the DEVs) since ctr_snap, and no fatal NAK was sent or
# received (the loss tests: recovery happened, and only by retry).
ctr_moved() {
	local devs=$1 grp bad=0

	shift
	for grp in "$@"; do
		# shellcheck disable=SC2086
		if [ "$(ctr_sum "$devs" $grp)" -le 0 ]; then
			echo "# no movement in: $grp"
			bad=1
		fi
	done
	if [ "$(ctr_sum "$devs" nak_other_sent nak_other_rcvd)" != 0 ]; then
		echo "# a fatal NAK (invalid request, access, operational) was sent"
		bad=1
	fi
	return "$bad"
}

# ctr_diag DEV...: print (as TAP diagnostics) the counters of each DEV
# that moved since ctr_snap.
ctr_diag() {
	local d f n v line

	for d in "$@"; do
		line="# counters $d:"
		for f in "/sys/class/infiniband/$d/ports/1/hw_counters"/*; do
			n=${f##*/}
			case $n in *hwm*|lifespan) continue ;; esac
			v=0
			read -r v < "$f"
			[ "$v" = "${_ctr0[$d/$n]:-0}" ] ||
				line="$line $n+$((v - ${_ctr0[$d/$n]:-0}))"
		done
		echo "$line"
	done
}

# elapsed T0: seconds since T0 (an $EPOCHREALTIME value), 0.1 s resolution
elapsed() {
	local now=${EPOCHREALTIME/[.,]/} then=${1/[.,]/}

	echo "$(( (now - then) / 1000000 )).$(( (now - then) / 100000 % 10 ))"
}

# netem NS DEV [ARGS...]: tc netem ARGS (e.g. "loss 5%") on the RoCEv2
# packets (UDP destination port 4791) DEV in namespace NS ("-": the
# initial one) sends, replacing what was there; without ARGS, remove it.
# Everything else DEV sends (ARP, neighbour discovery, perftest's and
# rdma_cm's TCP side channels) passes untouched: a root prio qdisc sends
# it to band 1, a u32 filter (IPv4 and IPv6) sends RoCE to band 2, where
# netem sits.  The tree is built anew each time, so no netem setting
# (corrupt, reorder) carries over.  With NETEM_SPARE_ACKS set, RC
# ACKNOWLEDGE packets (BTH opcode 0x11: ACKs and NAKs) are spared too.
netem() {
	local ns=$1 dev=$2 tc=(tc) roce4 roce6

	shift 2
	[ "$ns" = - ] || tc=(tc -n "$ns")
	"${tc[@]}" qdisc del dev "$dev" root 2>/dev/null
	[ $# = 0 ] && return 0
	roce4=(match ip protocol 17 0xff match ip dport 4791 0xffff)
	roce6=(match ip6 protocol 17 0xff match ip6 dport 4791 0xffff)
	"${tc[@]}" qdisc add dev "$dev" root handle 1: prio bands 2 \
		priomap 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 &&
	"${tc[@]}" qdisc add dev "$dev" parent 1:2 handle 2: netem "$@" ||
		return 1
	# (the BTH opcode is the first byte after the UDP header)
	if [ -n "${NETEM_SPARE_ACKS:-}" ]; then
		"${tc[@]}" filter add dev "$dev" parent 1: protocol ip prio 1 \
			u32 "${roce4[@]}" match u8 0x11 0xff at 28 flowid 1:1 &&
		"${tc[@]}" filter add dev "$dev" parent 1: protocol ipv6 prio 2 \
			u32 "${roce6[@]}" match u8 0x11 0xff at 48 flowid 1:1 ||
			return 1
	fi
	"${tc[@]}" filter add dev "$dev" parent 1: protocol ip prio 3 \
		u32 "${roce4[@]}" flowid 1:2 &&
	"${tc[@]}" filter add dev "$dev" parent 1: protocol ipv6 prio 4 \
		u32 "${roce6[@]}" flowid 1:2
}

# ---- NVMe over RDMA (the in-kernel target nvmet-rdma and host nvme-rdma)

NVMET_CFG=/sys/kernel/config/nvmet

# nvmet_subsys NQN DEVICE [BUFFERED]: a subsystem NQN open to any host,
# with one enabled namespace on DEVICE (a block device or a file; with
# BUFFERED=1, through the page cache)
nvmet_subsys() {
	local sub=$NVMET_CFG/subsystems/$1

	mkdir "$sub" && echo 1 > "$sub/attr_allow_any_host" &&
	mkdir "$sub/namespaces/1" &&
	echo "$2" > "$sub/namespaces/1/device_path" &&
	{ [ "${3:-0}" = 0 ] || echo 1 > "$sub/namespaces/1/buffered_io"; } &&
	echo 1 > "$sub/namespaces/1/enable"
}

# nvmet_port PORT ADDR NQN: RDMA port PORT listening on IPv4 ADDR:4420
# and serving subsystem NQN
nvmet_port() {
	local p=$NVMET_CFG/ports/$1

	mkdir "$p" && echo rdma > "$p/addr_trtype" &&
	echo ipv4 > "$p/addr_adrfam" && echo "$2" > "$p/addr_traddr" &&
	echo 4420 > "$p/addr_trsvcid" &&
	ln -s "$NVMET_CFG/subsystems/$3" "$p/subsystems/$3"
}

# nvmet_del NQN PORT...: remove the ports and then the subsystem
nvmet_del() {
	local sub=$NVMET_CFG/subsystems/$1 p

	shift
	for p in "$@"; do
		rm -f "$NVMET_CFG/ports/$p/subsystems/${sub##*/}"
		rmdir "$NVMET_CFG/ports/$p"
	done
	echo 0 > "$sub/namespaces/1/enable"
	rmdir "$sub/namespaces/1" "$sub"
}

# nvme_connect TARGET HOST NQN: connect to NQN at TARGET:4420 over RDMA
# from local address HOST, and wait for its disk
nvme_connect() {
	echo "transport=rdma,traddr=$1,trsvcid=4420,nqn=$3,host_traddr=$2" \
		> /dev/nvme-fabrics && wait_for 100 nvme_disk
}

# nvme_disk: the name of the first NVMe namespace's block device (with
# native multipath the controller lists only its path device, nvmeXcYnZ;
# the disk is nvmeXnZ)
nvme_disk() {
	local d

	for d in /sys/block/nvme*; do
		d=${d##*/}
		if [[ $d =~ ^nvme[0-9]*n[0-9]*$ ]]; then
			echo "$d"
			return 0
		fi
	done
	return 1
}

# nvme_disconnect: delete every RDMA controller, wait for the disks to go
nvme_disconnect() {
	local c

	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/transport" 2>/dev/null)" = rdma ] &&
			echo 1 > "$c/delete_controller"
	done
	wait_for 100 sh -c '! ls /sys/block | grep -q "^nvme"'
}

# LIO, the kernel's SCSI target, configured through configfs as targetcli
# does it (srp.sh, iser.sh)
LIO_CFG=/sys/kernel/config/target

# lio_fileio HBA NAME FILE: a fileio backstore NAME under HBA on the whole
# of FILE, its unit serial NAME, enabled
lio_fileio() {
	local d=$LIO_CFG/core/$1/$2

	{ mountpoint -q /sys/kernel/config ||
	  mount -t configfs none /sys/kernel/config; } &&
	modprobe target_core_file && mkdir -p "$d" &&
	echo "fd_dev_name=$3,fd_dev_size=$(stat -c %s "$3")" > "$d/control" &&
	echo "$2" > "$d/wwn/vpd_unit_serial" &&
	echo 1 > "$d/enable"
}

# lio_fileio_del HBA NAME: the backstore (no LUN may link it any more) and
# its HBA removed
lio_fileio_del() {
	rmdir "$LIO_CFG/core/$1/$2" "$LIO_CFG/core/$1" 2>/dev/null
	[ ! -d "$LIO_CFG/core/$1" ]
}

# written_at FILE MIB: the 64 KiB at MIB MiB into FILE are no longer a
# hole (a write that started there has reached the file)
written_at() {
	[ "$(dd if="$1" bs=64k skip=$(($2 * 16)) count=1 status=none |
		tr -d '\0' | head -c 1 | wc -c)" = 1 ]
}

# lun_write DISK DATA FILE DEV: the file DATA written to the block device
# DISK with direct I/O is at the start of the target's FILE, and the
# target's device DEV received at least its bytes as payload
lun_write() {
	local n rx

	n=$(stat -c %s "$2")
	ctr_snap "$4"
	dd if="$2" of="$1" bs=1M oflag=direct status=none || return 1
	cmp -s -n "$n" "$2" "$3" ||
		{ echo "# the target's file differs"; return 1; }
	rx=$(ctr_sum "$4" payload_rx_bytes)
	echo "# $4 received $rx payload bytes"
	[ "$rx" -ge "$n" ]
}

# lun_read DISK DATA: DISK starts with the file DATA, read with direct
# I/O (and through the page cache too at the long size)
lun_read() {
	local n

	n=$(stat -c %s "$2")
	dd if="$1" bs=1M count=$((n >> 20)) iflag=direct status=none |
		cmp -s -n "$n" "$2" - || return 1
	[ -z "$SHCA_LONG" ] || cmp -s -n "$n" "$2" "$1"
}

# writer_done PID OK: the background writer PID ended within 120 s (not
# waited for when OK is 0: a step before it failed), else it is killed;
# its exit status
writer_done() {
	if [ "$2" = 0 ] || ! wait_for 1200 sh -c "! kill -0 $1"; then
		echo "# a step failed or the write did not end in 120 s: killed"
		kill -9 "$1"
		wait "$1"
		return 1
	fi
	wait "$1"
}

# host_pair IF1 DEV1 ADDR1 IF2 DEV2 ADDR2: two hosts for a kernel ULP
# whose server lives in the initial namespace: the veth end IF1 here
# with ADDR1/24 and shca device DEV1, its peer IF2 in namespace shns2
# with ADDR2/24 and DEV2
host_pair() {
	host_pair_del "$@"
	ip netns add shns2 &&
	ip link add "$1" type veth peer name "$4" netns shns2 &&
	ip link set "$1" up && ip addr add "$3/24" dev "$1" &&
	ip -n shns2 link set lo up && ip -n shns2 link set "$4" up &&
	ip -n shns2 addr add "$6/24" dev "$4" &&
	rdma link add "$2" type shca netdev "$1" &&
	in_ns shns2 rdma link add "$5" type shca netdev "$4" &&
	wait_for 50 gid_index "$2" "$3" &&
	wait_for 50 gid_index "$5" "$6"
}

# host_pair_del IF1 DEV1 ADDR1 IF2 DEV2 ADDR2: what host_pair made, gone
host_pair_del() {
	rdma link delete "$2" 2>/dev/null
	ip netns exec shns2 rdma link delete "$5" 2>/dev/null
	ip link del "$1" 2>/dev/null
	ip netns del shns2 2>/dev/null
	return 0
}
