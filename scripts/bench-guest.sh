#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench-guest.sh: the in-VM half of scripts/bench.sh.  Started by vm.sh as
#
#   scripts/bench-guest.sh SNAPDIR REPS QUICK MTU BUDGET PROFILE
#
#   SNAPDIR  shca.ko, libshca-rdmav34.so, memcpy_bw, icrc_bw and
#            shca_mcast_test, copied by bench.sh
#   REPS     repetitions of the whole matrix
#   QUICK    1: the smoke-test matrix (fewer sizes, short runs), 0: full
#   MTU      MTU of both veth pairs
#   BUDGET   seconds; once spent, runs not yet started are recorded "notrun"
#   PROFILE  1: afterwards, perf record two shca runs (profile-*.txt)
#
# Two rdma_rxe devices and two shca devices, each pair joined by its own
# veth pair with the same MTU:
#   shca: shca_ns1 (198.18.0.1, namespace shns1) <-> shca_ns2 (198.18.0.2,
#         shns2): lib.sh's two_hosts, shca's two-host setup.  (In one
#         namespace shca would deliver to its own local address without
#         the veth: same-host delivery, shca_tx_local().)
#   rxe:  rxe_a (198.18.3.1) <-> rxe_b (198.18.3.2), both in the initial
#         namespace (rxe works only there), made to cross the veth by
#         policy routing: the local table after per-interface rules.
# Both stay set up for the whole run, and the two devices run alternately:
# each test runs on shca and rxe back to back, the order flipping from
# test to test and from repetition to repetition.  The one-device rows
# (matrix1, "devices" shca1 and rxe1) run client and server on one
# device, shca_ns1 or rxe_a, to its own address.
#
# Writes into $SHCA_OUT (the results share):
#   runs.tsv   one line per perftest run: rep, test, size, device,
#              attempt, status, client rc, server rc, seconds, log base
#   memcpy.tsv rep, then memcpy_bw's output line
#   icrc.tsv   rep, then icrc_bw's output line
#   mcast.tsv  rep, device, members, seconds, then shca_mcast_test --rate's
#              "# rate:" line (or why there is none)
#   runs/      each run's client (.cli) and server (.srv) output, perf
#              stat output for the system call runs (.cli.perf, .srv.perf)
#   setup.log, counters-*.txt, profile-*.txt
# The host side (bench.sh) parses these.  A run is retried once when it
# fails; a device failing 5 runs in a row is not run again.

set -u

snap=$1
reps=$2
quick=$3
mtu=$4
budget=$5
profile=$6

# shellcheck source=../tests/selftests/lib.sh
. "$SHCA_TOP/tests/selftests/lib.sh"
export RDMAV_DRIVERS=$snap/libshca
# shca_drdma_test links libshca.so.1: the snapshot's, the one loaded above
export LD_LIBRARY_PATH=$snap
# shellcheck disable=SC2034	# shca_load (lib.sh) uses it
SHCA_KO=$snap/shca.ko
res=$SHCA_OUT
deadline=$((SECONDS + budget))
run_timeout=90		# seconds one perftest process may take
listen_timeout=300	# deciseconds for the server to listen
port=19000

# The matrix: "test size iterations" (size 8: the atomic tests, no -s).
# Iterations are chosen so that each run moves data for about a second or
# more under TCG on the slower of the two devices; process start and
# connection set-up (1-3 s) come on top.
if [[ $quick == 1 ]]; then
	matrix=(
		"send_bw 64 2000" "write_bw 64 2000" "read_bw 64 1000"
		"send_bw 65536 200" "write_bw 65536 200" "read_bw 65536 200"
		"send_lat 64 1000" "write_lat 64 1000" "read_lat 64 1000"
		"write_bw 1048576 20" "atomic_lat 8 1000"
	)
	matrix1=("send_lat 64 1000" "write_bw 65536 200")
	sys_iters=(500 1500)
	mc_msgs=1000 mc_msgs_1k=100
else
	matrix=(
		"send_bw 64 3000" "send_bw 4096 2000" "send_bw 65536 500"
		"send_bw 1048576 40"
		"write_bw 64 3000" "write_bw 4096 2000" "write_bw 65536 500"
		"write_bw 1048576 40"
		"read_bw 64 3000" "read_bw 4096 2000" "read_bw 65536 500"
		"read_bw 1048576 40"
		"send_lat 64 1000" "send_lat 4096 500" "send_lat 65536 200"
		"send_lat 1048576 20"
		"write_lat 64 1000" "write_lat 4096 500" "write_lat 65536 200"
		"write_lat 1048576 20"
		"read_lat 64 1000" "read_lat 4096 500" "read_lat 65536 200"
		"read_lat 1048576 20"
		"atomic_lat 8 1000" "atomic_bw 8 2000"
	)
	matrix1=(
		"send_lat 64 1000" "write_lat 64 1000" "read_lat 64 1000"
		"send_bw 64 3000" "write_bw 65536 500" "write_bw 1048576 40"
	)
	sys_iters=(1000 4000)
	mc_msgs=5000 mc_msgs_1k=300
fi

# shca1 and rxe1: one device talking to itself (matrix1): shca_ns1 to its
# own address (shca's same-host delivery), rxe_a to its own (rdma_rxe's
# loopback)
declare -A dev_fails=([shca]=0 [rxe]=0 [shca1]=0 [rxe1]=0)
gid_shca1=
gid_shca2=
gid_rxe1=
gid_rxe2=

log() {
	echo "bench-guest: $*"
}

setup_shca() {
	# shellcheck disable=SC2119	# no module parameters
	shca_load || return 1
	# the CRC-32 the module chose at load (wire/shca_crcsel.c)
	{
		echo "shca_crc=$(< /sys/module/shca/parameters/crc)"
		echo "shca_crc_copy=$(< /sys/module/shca/parameters/crc_copy)"
		echo "shca_crc_line=$(dmesg | grep 'shca: CRC-32, MiB/s' | tail -1 | sed 's/^\[[^]]*\] //')"
	} >> "$res/guest-info"
	two_hosts "$mtu" || return 1
	gid_shca1=$(wait_gid shca_ns1 198.18.0.1) &&
	gid_shca2=$(wait_gid shca_ns2 198.18.0.2)
}

setup_rxe() {
	rxe_pair "$mtu" || return 1
	gid_rxe1=$(wait_gid rxe_a 198.18.3.1) &&
	gid_rxe2=$(wait_gid rxe_b 198.18.3.2)
}

teardown() {
	two_hosts_del
	rxe_pair_del
	timeout 60 rmmod shca && echo "rmmod shca: ok"
	timeout 60 modprobe -r rdma_rxe && echo "rmmod rdma_rxe: ok"
}

# Device counters, appended to counters-DEV.txt with a title.
dump_counters() {
	local dev=$1 title=$2 d f v

	{
		echo "== $title"
		for d in /sys/class/infiniband/*; do
			case ${d##*/} in
			shca_ns*) [[ $dev == shca ]] || continue ;;
			rxe_*) [[ $dev == rxe ]] || continue ;;
			*) continue ;;
			esac
			for f in "$d"/ports/1/hw_counters/*; do
				read -r v < "$f" 2>/dev/null || continue
				[[ $v == 0 ]] || echo "${d##*/} ${f##*/} $v"
			done
		done
	} >> "$res/counters-$dev.txt"
}

# result_ok FILE TEST SIZE: perftest output FILE has a result line for
# SIZE (the line after the "#bytes" header that starts with SIZE) whose
# figure bench.sh uses (bandwidth average, or typical latency) is a finite
# number.  perftest prints inf when its clock calibration failed.
result_ok() {
	local file=$1 test=$2 size=$3 line hdr=0 w

	while read -r line; do
		if [[ $line == '#bytes'* ]]; then
			hdr=1
			continue
		fi
		((hdr)) || continue
		read -r -a w <<< "$line"
		[[ ${w[0]:-} == "$size" ]] || continue
		if [[ $test == *_lat ]]; then
			[[ ${w[4]:-} =~ ^[0-9]+(\.[0-9]+)?$ && ${w[4]} != 0.00 ]]
		else
			[[ ${w[3]:-} =~ ^[0-9]+(\.[0-9]+)?$ && ${w[3]} != 0.00 ]]
		fi
		return
	done < "$file"
	return 1
}

# wait_listen PID NS PORT: wait until the server PID listens on PORT in
# NS; fail when it exits first or after listen_timeout deciseconds.
wait_listen() {
	local n

	for ((n = 0; n < listen_timeout; n++)); do
		kill -0 "$1" 2>/dev/null || return 1
		listening "$2" "$3" && return 0
		sleep 0.1
	done
	return 1
}

# perftest_pair DEV TOOL SIZE ITERS BASE [WRAPPER...]: one server/client
# run of ib_TOOL between DEV's two devices, outputs to BASE.srv/BASE.cli;
# the server runs on CPU 0, the client on CPU 1: perftest times with the
# TSC, which is not synchronised between the vCPUs under TCG, so a
# process that migrated would measure garbage (inf, or 0 MiB/s).
# WRAPPER (e.g. perf stat) goes in front of both, with @ in its words
# replaced by srv or cli.  Prints "status cli_rc srv_rc".
perftest_pair() {
	local dev=$1 test=$2 tool=ib_$2 size=$3 iters=$4 base=$5 sns cns sdev cdev
	local sgid cgid addr spid crc src sargs wrap_s=() wrap_c=() w side

	shift 5
	for w in "$@"; do
		wrap_s+=("${w//@/srv}")
		wrap_c+=("${w//@/cli}")
	done
	case $dev in
	shca)
		sns=shns1 cns=shns2 sdev=shca_ns1 cdev=shca_ns2
		sgid=$gid_shca1 cgid=$gid_shca2 addr=198.18.0.1 ;;
	shca1)
		sns=shns1 cns=shns1 sdev=shca_ns1 cdev=shca_ns1
		sgid=$gid_shca1 cgid=$gid_shca1 addr=198.18.0.1 ;;
	rxe)
		sns=- cns=- sdev=rxe_a cdev=rxe_b
		sgid=$gid_rxe1 cgid=$gid_rxe2 addr=198.18.3.1 ;;
	rxe1)
		sns=- cns=- sdev=rxe_a cdev=rxe_a
		sgid=$gid_rxe1 cgid=$gid_rxe1 addr=198.18.3.1 ;;
	esac
	# ib_send_bw: the receiver's figure (the sender's reads 0 when the run
	# has fewer messages than perftest's completion moderation)
	side=cli
	[[ $test == send_bw ]] && side=srv
	port=$((port + 1))
	sargs=(-F -p "$port" -n "$iters")
	[[ $size == 8 ]] || sargs+=(-s "$size")

	in_ns "$sns" timeout -k 5 "$run_timeout" taskset -c 0 "${wrap_s[@]}" \
		"$tool" -d "$sdev" -x "$sgid" "${sargs[@]}" \
		> "$base.srv" 2>&1 < /dev/null &
	spid=$!
	if ! wait_listen "$spid" "$sns" "$port"; then
		kill "$spid" 2>/dev/null
		wait "$spid"
		echo "nolisten - $?"
		return
	fi
	in_ns "$cns" timeout -k 5 "$run_timeout" taskset -c 1 "${wrap_c[@]}" \
		"$tool" -d "$cdev" -x "$cgid" "${sargs[@]}" "$addr" \
		> "$base.cli" 2>&1 < /dev/null
	crc=$?
	wait "$spid"
	src=$?
	if ((crc == 124 || src == 124 || crc == 137 || src == 137)); then
		echo "timeout $crc $src"
	elif ((crc || src)); then
		echo "failed $crc $src"
	elif ! result_ok "$base.$side" "$test" "$size"; then
		echo "badresult $crc $src"
	else
		echo "ok $crc $src"
	fi
}

# run_test REP DEV TEST SIZE ITERS: one measured run (retried once when it
# fails), recorded in runs.tsv.
run_test() {
	local rep=$1 dev=$2 test=$3 size=$4 iters=$5 attempt base st t0
	local status crc src

	for attempt in 1 2; do
		base=runs/$rep-$test-$size-$dev-$attempt
		t0=$SECONDS
		if ((SECONDS >= deadline)); then
			status=notrun crc=- src=-
		elif ((dev_fails[$dev] >= 5)); then
			status=skipped crc=- src=-
		else
			st=$(perftest_pair "$dev" "$test" "$size" "$iters" "$res/$base")
			read -r status crc src <<< "$st"
		fi
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$test" \
			"$size" "$dev" "$attempt" "$status" "$crc" "$src" \
			"$((SECONDS - t0))" "$base" >> "$res/runs.tsv"
		case $status in
		ok)
			dev_fails[$dev]=0
			return 0 ;;
		notrun|skipped)
			return 1 ;;
		esac
		dev_fails[$dev]=$((dev_fails[$dev] + 1))
		log "rep $rep $test $size on $dev: $status (attempt $attempt)"
	done
	return 1
}

# run_matrix REP SHCA RXE SPEC...: each "test size iterations" SPEC on the
# two devices back to back, the order flipping from test to test and
# from repetition to repetition.
run_matrix() {
	local rep=$1 a=$2 b=$3 i t size iters first second

	shift 3
	for ((i = 1; i <= $#; i++)); do
		read -r t size iters <<< "${!i}"
		if (((i + 1 + rep) % 2)); then
			first=$b second=$a
		else
			first=$a second=$b
		fi
		run_test "$rep" "$first" "$t" "$size" "$iters"
		run_test "$rep" "$second" "$t" "$size" "$iters"
	done
}

# Multicast: the delivered message rate (shca_mcast_test --rate, a closed
# loop: the sender stays at most 48 messages ahead of the members) with
# the members on one device and the sender on the other.  rdma_rxe allows
# 56 QPs per group, so both run at 56 members; shca also at 1024.
# rdma_rxe does not join the group's IP address itself (its attach only
# programs the Ethernet filter): a socket holds the membership on bxb
# while rxe_b's members run, and rxe_a's multicast leaves by bxa.
mc_group=239.1.4.1

mc_rxe_join() {	# mc_rxe_join SECONDS: hold bxb's membership (background)
	python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
             socket.inet_aton(sys.argv[1]) + socket.inet_aton("198.18.3.2"))
print("joined", flush=True)
time.sleep(int(sys.argv[2]))' "$mc_group" "$1"
}

# run_mcast REP DEV NQP MSGS: one rate run, its "# rate:" line (or the
# failure) in mcast.tsv.
run_mcast() {
	local rep=$1 dev=$2 nqp=$3 msgs=$4 rx tx jpid=
	local base=runs/mcast-$rep-$dev-$nqp rc t0=$SECONDS line

	if [[ $dev == shca ]]; then
		rx=shca_ns1 tx=shca_ns2
	else
		rx=rxe_b tx=rxe_a
		mc_rxe_join "$run_timeout" > "$res/$base.join" 2>&1 &
		jpid=$!
		wait_for 100 grep -q joined "$res/$base.join"
	fi
	if ((SECONDS >= deadline)) || ((dev_fails[$dev] >= 5)); then
		line="notrun"
	else
		timeout -k 5 "$run_timeout" "$snap/shca_mcast_test" --rate \
			"$rx" "$tx" "$nqp" "$msgs" > "$res/$base.out" 2>&1
		rc=$?
		line=$(grep -m1 '^# rate:' "$res/$base.out")
		((rc)) && line="failed rc=$rc ${line#\# }"
	fi
	[[ -n $jpid ]] && { kill "$jpid" 2>/dev/null; wait "$jpid"; }
	printf '%s\t%s\t%s\t%s\t%s\n' "$rep" "$dev" "$nqp" \
		"$((SECONDS - t0))" "${line:-no result}" >> "$res/mcast.tsv"
}

# run_drdma REP: shca_drdma_test --bench, its "# drdma:" lines in
# drdma.tsv (or the failure).
run_drdma() {
	local rep=$1 base rc

	base=runs/drdma-$rep

	timeout -k 5 "$run_timeout" "$snap/shca_drdma_test" --bench \
		shca_ns1 shca_ns2 > "$res/$base.out" 2>&1
	rc=$?
	if ((rc)); then
		printf '%s\tfailed rc=%s\n' "$rep" "$rc" >> "$res/drdma.tsv"
		return
	fi
	sed -n "s/^# drdma: /$rep\t/p" "$res/$base.out" >> "$res/drdma.tsv"
}

# strace_to_perf BASE: turn the strace -c tables BASE.{srv,cli}.strace
# into BASE.{srv,cli}.perf, "count,,event" lines as bench.sh's parser
# reads them: raw_syscalls:sys_enter is the total, the clock reads have
# their own lines.  (perf stat with the syscall tracepoints once left the
# 6.1 TCG guest in a soft lockup while it patched the tracepoints in.)
strace_to_perf() {
	local side

	for side in srv cli; do
		[[ -f $1.$side.strace ]] || continue
		awk '$2 == "total" { print $1 ",,raw_syscalls:sys_enter" }
		     $2 == "gettimeofday" || $2 == "clock_gettime" {
			print $1 ",,syscalls:sys_enter_" $2 }' \
			"$1.$side.strace" > "$1.$side.perf"
	done
}

# System calls per message in steady state: the same 64-byte bandwidth
# test with two iteration counts under strace -c, both sides; bench.sh
# takes the difference, which leaves out start-up and connection set-up.
run_syscalls() {
	local dev=$1 test n base st status crc src t0

	for test in send_bw write_bw; do
		for n in "${sys_iters[@]}"; do
			base=runs/sys-$test-$n-$dev
			t0=$SECONDS
			if ((SECONDS >= deadline)); then
				status=notrun crc=- src=-
			else
				st=$(perftest_pair "$dev" "$test" 64 "$n" \
					"$res/$base" strace -f -c -U calls,name \
					-o "$res/$base.@.strace" --)
				strace_to_perf "$res/$base"
				read -r status crc src <<< "$st"
				# only the calls count here: perftest's own
				# figure of a short run may read 0.00
				[[ $status == badresult ]] && status=ok
			fi
			printf 'sys\t%s\t64\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$test" \
				"$dev" "$n" "$status" "$crc" "$src" \
				"$((SECONDS - t0))" "$base" >> "$res/runs.tsv"
		done
	done
}

# profile_run TEST SIZE ITERS: perf record the whole guest during one shca
# run; the report goes to profile-TEST-SIZE.txt.
profile_run() {
	local test=$1 size=$2 iters=$3 name=profile-$1-$2 rpid

	perf record -a -g -o "/tmp/$name.data" > "$res/$name.record.log" 2>&1 &
	rpid=$!
	# perf record writes its file header once it has attached
	wait_for 300 test -s "/tmp/$name.data"
	perftest_pair shca "$test" "$size" "$iters" "$res/runs/$name" > "$res/$name.status"
	kill -INT "$rpid"
	wait "$rpid"
	{
		echo "# $test $size on shca: perf record -a -g; cpu-clock samples"
		echo "# status: $(< "$res/$name.status")"
		echo "## by command and object"
		perf report -i "/tmp/$name.data" --no-children --sort comm,dso \
			--stdio -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -30
		echo "## by symbol"
		perf report -i "/tmp/$name.data" --no-children --sort sym \
			--stdio -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -80
		echo "## symbols above 1.5 %, with their call chains"
		perf report -i "/tmp/$name.data" --no-children --sort sym \
			--stdio -G --percent-limit 1.5 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -300
	} > "$res/$name.txt"
	rm -f "/tmp/$name.data"
}

main() {
	local rep first second cpus

	mkdir -p "$res/runs" || return 1
	: > "$res/runs.tsv"
	: > "$res/memcpy.tsv"
	: > "$res/icrc.tsv"
	: > "$res/mcast.tsv"
	: > "$res/drdma.tsv"
	read -r cpus < /sys/devices/system/cpu/online
	{
		echo "cpus=$cpus"
		echo "clocksource=$(< /sys/devices/system/clocksource/clocksource0/current_clocksource)"
		echo "perftest=$(dpkg-query -W -f='${Version}' perftest 2>/dev/null)"
		echo "perf=$(perf --version 2>/dev/null)"
		grep -qw erms /proc/cpuinfo && echo "erms=yes" || echo "erms=no"
	} > "$res/guest-info"
	[[ -d /sys/kernel/tracing/events ]] ||
		mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null

	log "setting up shca (two namespaces) and rxe (policy routing), MTU $mtu"
	if ! setup_shca > "$res/setup.log" 2>&1; then
		log "shca set-up failed"
		dev_fails[shca]=99 dev_fails[shca1]=99
	fi
	if ! setup_rxe >> "$res/setup.log" 2>&1; then
		log "rxe set-up failed"
		dev_fails[rxe]=99 dev_fails[rxe1]=99
	fi
	{
		echo "gids shca $gid_shca1 $gid_shca2 rxe $gid_rxe1 $gid_rxe2"
		rdma link show
		ip -br addr
		ip rule show
	} >> "$res/setup.log" 2>&1
	dump_counters shca "after set-up"
	dump_counters rxe "after set-up"

	# first: short, and they must not fall victim to the budget
	log "system calls per message (strace -c)"
	if command -v strace > /dev/null; then
		run_syscalls shca
		run_syscalls rxe
	else
		log "strace not installed: no system call counts"
	fi

	for ((rep = 1; rep <= reps; rep++)); do
		log "repetition $rep of $reps ($((deadline - SECONDS)) s of budget left)"
		printf '%s\t%s\n' "$rep" "$("$snap/memcpy_bw" 2>&1)" >> "$res/memcpy.tsv"
		printf '%s\t%s\n' "$rep" "$("$snap/icrc_bw" 2>&1)" >> "$res/icrc.tsv"
		run_matrix "$rep" shca rxe "${matrix[@]}"
		run_matrix "$rep" shca1 rxe1 "${matrix1[@]}"
	done
	if ip route add "$mc_group" dev bxa table 201 2>> "$res/setup.log"; then
		for ((rep = 1; rep <= reps; rep++)); do
			log "multicast rate, repetition $rep of $reps"
			if ((rep % 2)); then
				first=rxe second=shca
			else
				first=shca second=rxe
			fi
			run_mcast "$rep" "$first" 56 "$mc_msgs"
			run_mcast "$rep" "$second" 56 "$mc_msgs"
			run_mcast "$rep" shca 1024 "$mc_msgs_1k"
		done
		ip route del "$mc_group" dev bxa table 201
	fi
	if ((dev_fails[shca] < 5)); then
		for ((rep = 1; rep <= reps; rep++)); do
			log "DRDMA, repetition $rep of $reps"
			run_drdma "$rep"
		done
	fi
	dump_counters shca "after the measured runs"
	dump_counters rxe "after the measured runs"

	if [[ $profile == 1 ]] && command -v perf > /dev/null; then
		log "profiling shca"
		profile_run write_bw 65536 1000
		profile_run send_bw 64 5000
	fi
	dump_counters shca "at the end"
	dump_counters rxe "at the end"
	teardown > "$res/teardown.log" 2>&1
	log "done in $SECONDS s"
	return 0
}

main
