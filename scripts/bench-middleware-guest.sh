#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench-middleware-guest.sh: the in-VM half of scripts/bench-middleware.sh.
#
#   scripts/bench-middleware-guest.sh REPS
#
# The middleware on shca and on rdma_rxe, in one boot, each test on the
# two devices back to back (the order flipping from test to test and rep
# to rep):
#   UCX (ucx_perftest): UCP tag_lat, tag_bw, ucp_put_bw and ucp_get, at
#       8 B and 1 MiB, which UCP carries over rc_verbs.  shca: two_hosts
#       (shns1/shns2); rxe: rxe_pair (both in the initial namespace).
#       Every process is a host of its own (own_host.sh) and
#       UCX_NET_DEVICES names its own device, so that UCP can use nothing
#       else.  (ucx_perftest's UCT tests name one device for both ends, so
#       they would run on one device talking to itself.)
#   libfabric: fi_pingpong over RDM (rxm on verbs), 64 B and 1 MiB.  rxe's
#       client and server both use rxe_a (FI_VERBS_IFACE=bxa; rxe's own
#       loopback): with shca's devices present the server picks another
#       domain unless told (fi_domain fails), and a client told to use
#       rxe_b (-d, or FI_VERBS_IFACE=bxb) finds nothing for the server's
#       address, which is local.
#   NVMe over RDMA: nvmet-rdma on null_blk (no backing store: the figures
#       are the transport's), nvme-rdma host on a second
#       device of the same kind (shca: shca_nvt/shca_nvh on a veth pair,
#       198.18.5.1/2; rxe: rxe_a/rxe_b), fio randread/randwrite 4 KiB at
#       queue depth 1 and 32, read/write 128 KiB at depth 8.
# rxe holds UDP port 4791 in the initial namespace, so shca runs on 4792
# (it talks only to itself here).  rxe needs two settings shca does not:
# UCX_UD_VERBS_ETH_DGID_CHECK=n (rxe's UD completions do not say the
# network header type, and UCX drops every UD packet) and FI_UNIVERSE_SIZE
# =16 (rxm's default CQ is larger than rxe allows); and FI_VERBS_IFACE
# (below).
# Writes $SHCA_OUT/results.tsv: rep, test, device, value, unit, status;
# and each run's output under $SHCA_OUT/runs/.
set -u
reps=${1:-2}

# shellcheck source=../tests/selftests/lib.sh
. "$SHCA_TOP/tests/selftests/lib.sh"
own=$SHCA_TOP/tests/middleware/own_host.sh
res=$SHCA_OUT
mkdir -p "$res/runs"
port=19400
fio_secs=${SHCA_BENCH_FIO_SECS:-8}
mtu=${SHCA_BENCH_MTU:-9000}	# as scripts/bench.sh: RoCE MTU 4096

record() {	# REP TEST DEV VALUE UNIT STATUS
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$res/results.tsv"
}

# where DEV: namespaces, devices, server address and host names of DEV
where() {
	if [[ $1 == shca ]]; then
		sns=shns1 cns=shns2 sdev=shca_ns1 cdev=shca_ns2 addr=198.18.0.1
		shost='' chost=''
		menv=()
	else
		sns=- cns=- sdev=rxe_a cdev=rxe_b addr=198.18.3.1
		shost=rxe_a chost=rxe_b
		menv=(UCX_UD_VERBS_ETH_DGID_CHECK=n FI_UNIVERSE_SIZE=16
		      FI_VERBS_IFACE=bxa)
	fi
}

# ucx REP DEV NAME ARGS...: one ucx_perftest pair; the figure is the
# typical latency (us) of a latency test, else the average bandwidth
# (MB/s), or the message rate (msg/s) for 8 B, over the whole run
ucx() {
	local rep=$1 dev=$2 name=$3 base spid rc line v unit

	shift 3
	where "$dev"
	base=$res/runs/$rep-$name-$dev
	port=$((port + 1))
	SHCA_HOST=$shost UCX_NET_DEVICES=$sdev:1 in_ns "$sns" env "${menv[@]}" \
		"$own" timeout 120 taskset -c 0 ucx_perftest -p "$port" > "$base.srv" 2>&1 &
	spid=$!
	wait_for 300 listening_or_gone "$sns" "$port" "$spid"
	SHCA_HOST=$chost UCX_NET_DEVICES=$cdev:1 in_ns "$cns" env "${menv[@]}" \
		"$own" timeout 120 taskset -c 1 ucx_perftest -p "$port" "$@" "$addr" \
		> "$base.cli" 2>&1
	rc=$?
	wait "$spid" || rc=1
	line=$(grep '^Final:' "$base.cli")
	read -r -a w <<< "$line"
	# Final: iterations, typical, average and overall latency, average and
	# overall bandwidth, average and overall message rate (the averages
	# read "nan" when the run fit in one report interval)
	case $name in
	*lat*) v=${w[2]:-} unit=us ;;
	*-8) v=${w[8]:-} unit=msg/s ;;
	*) v=${w[6]:-} unit=MB/s ;;
	esac
	[[ $v =~ ^[0-9.]+$ ]] || v=
	[[ $rc == 0 && -n $v ]] || { v=- ; rc=${rc/#0/1}; }
	record "$rep" "ucx $name" "$dev" "$v" "$unit" "$rc"
}

# fabric REP DEV SIZE ITERS: fi_pingpong over RDM endpoints; the figure
# is the client's MB/s (1 MiB) or usec/xfer (64 B)
fabric() {
	local rep=$1 dev=$2 size=$3 iters=$4 base spid rc line v unit

	where "$dev"
	base=$res/runs/$rep-rdm-$size-$dev
	port=$((port + 1))
	in_ns "$sns" env "${menv[@]}" timeout 120 taskset -c 0 fi_pingpong \
		-p verbs -e rdm -B "$port" -S "$size" -I "$iters" \
		> "$base.srv" 2>&1 &
	spid=$!
	wait_for 300 listening_or_gone "$sns" "$port" "$spid"
	in_ns "$cns" env "${menv[@]}" timeout 120 taskset -c 1 fi_pingpong \
		-p verbs -e rdm -P "$port" -S "$size" -I "$iters" "$addr" \
		> "$base.cli" 2>&1
	rc=$?
	wait "$spid" || rc=1
	line=$(grep -E '^[0-9]+[kmg]? ' "$base.cli" | tail -1)
	read -r -a w <<< "$line"
	if [[ $size == 64 ]]; then v=${w[6]:-} unit=us; else v=${w[5]:-} unit=MB/s; fi
	[[ $rc == 0 && -n $v ]] || { v=- ; rc=${rc/#0/1}; }
	record "$rep" "libfabric rdm pingpong $size" "$dev" "$v" "$unit" "$rc"
}

nvme_target() {
	modprobe -a nvmet nvmet-rdma nvme-rdma || return 1
	modprobe null_blk nr_devices=1 gb=1 bs=4096 irqmode=0 || return 1
	# port 1 on shca_nvt, port 2 on rxe_a
	nvmet_subsys shcabench /dev/nullb0 &&
	nvmet_port 1 198.18.5.1 shcabench &&
	nvmet_port 2 198.18.3.1 shcabench
}

nvme_target_del() {
	nvmet_del shcabench 1 2
	modprobe -r null_blk
}

# nvme REP DEV: connect DEV's host device to its target port, run the fio
# jobs, disconnect
nvme() {
	local rep=$1 dev=$2 t h job rw bs qd base v unit rc disk

	if [[ $dev == shca ]]; then t=198.18.5.1 h=198.18.5.2; else t=198.18.3.1 h=198.18.3.2; fi
	if ! nvme_connect "$t" "$h" shcabench; then
		record "$rep" "nvme connect" "$dev" - - 1
		return
	fi
	disk=/dev/$(nvme_disk)
	for job in randread:4k:1 randread:4k:32 randwrite:4k:1 randwrite:4k:32 \
		   read:128k:8 write:128k:8; do
		IFS=: read -r rw bs qd <<< "$job"
		base=$res/runs/$rep-fio-$rw-$bs-$qd-$dev
		taskset -c 1 fio --name=b --filename="$disk" --direct=1 \
			--ioengine=libaio --rw="$rw" --bs="$bs" --iodepth="$qd" \
			--size=200M --time_based --runtime="$fio_secs" \
			--ramp_time=2 --output-format=terse --terse-version=3 \
			> "$base" 2>&1
		rc=$?
		# terse v3: read IOPS field 8, bw KiB/s 7; write IOPS 49, bw 48
		case $rw:$bs in
		*read:4k) v=$(grep '^3;' "$base" | cut -d';' -f8) unit=IOPS ;;
		*write:4k) v=$(grep '^3;' "$base" | cut -d';' -f49) unit=IOPS ;;
		read:*) v=$(grep '^3;' "$base" | cut -d';' -f7) unit=KiB/s ;;
		*) v=$(grep '^3;' "$base" | cut -d';' -f48) unit=KiB/s ;;
		esac
		[[ $rc == 0 && -n $v ]] || { v=- ; rc=${rc/#0/1}; }
		record "$rep" "fio $rw $bs QD$qd" "$dev" "$v" "$unit" "$rc"
	done
	nvme_disconnect
}

setup() {
	# shca's devices in the initial namespace share it with rxe, which
	# holds UDP port 4791 there: shca talks only to shca, on 4792
	shca_load udp_port=4792 && two_hosts "$mtu" && rxe_pair "$mtu" || return 1
	ip link add shnv0 type veth peer name shnv1 &&
	sysctl -qw net.ipv4.conf.shnv0.accept_local=1 \
		net.ipv4.conf.shnv1.accept_local=1 \
		net.ipv4.conf.shnv0.rp_filter=0 net.ipv4.conf.shnv1.rp_filter=0 &&
	ip link set shnv0 mtu "$mtu" up && ip link set shnv1 mtu "$mtu" up &&
	ip addr add 198.18.5.1/24 dev shnv0 &&
	ip addr add 198.18.5.2/24 dev shnv1 &&
	rdma link add shca_nvt type shca netdev shnv0 &&
	rdma link add shca_nvh type shca netdev shnv1 &&
	wait_for 100 gid_index shca_nvt 198.18.5.1 &&
	wait_for 100 gid_index shca_nvh 198.18.5.2 &&
	nvme_target
}

: > "$res/results.tsv"
if ! setup > "$res/setup.log" 2>&1; then
	echo "bench-middleware-guest: set-up failed, see setup.log"
	exit 1
fi
for ((rep = 1; rep <= reps; rep++)); do
	n=0
	for t in "tag_lat-8 -t tag_lat -s 8 -n 2000 -w 200" \
		 "tag_lat-1m -t tag_lat -s 1048576 -n 40 -w 4" \
		 "tag_bw-8 -t tag_bw -s 8 -n 20000 -w 2000" \
		 "tag_bw-1m -t tag_bw -s 1048576 -n 100 -w 10" \
		 "ucp_put_bw-8 -t ucp_put_bw -s 8 -n 20000 -w 2000" \
		 "ucp_put_bw-1m -t ucp_put_bw -s 1048576 -n 100 -w 10" \
		 "ucp_get_lat-8 -t ucp_get -s 8 -n 2000 -w 200" \
		 "ucp_get_bw-1m -t ucp_get -s 1048576 -n 100 -w 10"; do
		read -r name args <<< "$t"
		n=$((n + 1))
		if (((n + rep) % 2)); then order="shca rxe"; else order="rxe shca"; fi
		for dev in $order; do
			# shellcheck disable=SC2086
			ucx "$rep" "$dev" "$name" $args
		done
	done
	for s in "64 2000" "1048576 100"; do
		n=$((n + 1))
		if (((n + rep) % 2)); then order="shca rxe"; else order="rxe shca"; fi
		for dev in $order; do
			# shellcheck disable=SC2086
			fabric "$rep" "$dev" $s
		done
	done
	if ((rep % 2)); then order="shca rxe"; else order="rxe shca"; fi
	for dev in $order; do
		nvme "$rep" "$dev"
	done
done
nvme_target_del
two_hosts_del
rxe_pair_del
echo "bench-middleware-guest: done"
