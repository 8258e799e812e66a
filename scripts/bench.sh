#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh: the performance benchmark.  One VM boot runs the same perftest
# matrix on shca and on rdma_rxe (same veth set-up, alternating, several
# repetitions), measures the VM's single-thread memcpy bandwidth, the
# per-byte costs of the ICRC and of the kernel's copy instructions, and the
# system calls per message, and writes the table to
# Documentation/performance.md.
#
# Usage: scripts/bench.sh [--quick] [--reps N] [--kver KVER] [--mtu MTU]
#            [--budget SECS] [--timeout SECS] [--profile] [--no-build]
#            [--parse-only] [--out DIR] [--report FILE]
#
#   --quick         smoke run: 1 repetition of a smaller matrix (about 5
#                   minutes); the report goes to build/bench/report.md
#   --reps N        repetitions (default 3 full, 1 quick)
#   --kver KVER     guest kernel (default: vm.sh's, the newest 6.1)
#   --mtu MTU       MTU of both veth pairs (default 9000: RoCE MTU 4096)
#   --budget SECS   guest time for the runs; runs not started by then are
#                   recorded "notrun" (default 1800, quick 900)
#   --timeout SECS  wall-clock limit of the VM (default budget + 600)
#   --profile       also perf record two shca runs (profile-*.txt in the
#                   results dir; not in the report)
#   --no-build      do not run setup.sh and make first
#   --parse-only    do not boot: rebuild the report from the results dir
#   --out DIR       results dir (default build/bench/vm, or build/bench/quick)
#   --report FILE   where to write the report
#
# Builds what is missing (scripts/setup.sh --if-needed, make -s
# modules-all provider bench-tools, the last being tests/bench/memcpy_bw.c
# and icrc_bw.c, and the multicast rate tool, shca_mcast_test --rate),
# copies the module, provider and the three tools to
# <results dir>/snap/ so a rebuild during the run does not mix versions,
# boots the VM once (scripts/bench-guest.sh runs inside) and parses the
# results (scripts/bench_report.py).  Hand-written notes below the marker
# line at the end of the report are kept.  Exits 0 when the VM run
# completed and every run succeeded, 1 when some runs failed, 2 for usage
# errors, 125 when the VM failed.

set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
me=$top/scripts/bench.sh

usage() {
	sed -n '4,/^$/s/^# \{0,1\}//p' "$me" >&2
	exit 2
}

msg() { echo "bench.sh: $*" >&2; }

quick=0
reps=
kver=
mtu=9000
budget=
timeout=
profile=0
build=1
parse_only=
out=
report=

while [[ $# -gt 0 ]]; do
	case $1 in
	--reps|--kver|--mtu|--budget|--timeout|--out|--report)
		[[ $# -ge 2 ]] || usage
		printf -v "${1#--}" '%s' "$2"
		shift 2 ;;
	--quick)
		quick=1
		shift ;;
	--profile)
		profile=1
		shift ;;
	--no-build)
		build=
		shift ;;
	--parse-only)
		parse_only=1
		shift ;;
	-h|--help)
		usage ;;
	*)
		msg "unknown argument $1"
		usage ;;
	esac
done

if ((quick)); then
	reps=${reps:-1}
	budget=${budget:-900}
	out=${out:-$top/build/bench/quick}
	report=${report:-$top/build/bench/report.md}
else
	reps=${reps:-3}
	budget=${budget:-1800}
	out=${out:-$top/build/bench/vm}
	report=${report:-$top/Documentation/performance.md}
fi
timeout=${timeout:-$((budget + 600))}
for v in reps mtu budget timeout; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || { msg "bad --$v: ${!v}"; exit 2; }
done
((mtu >= 1280 && mtu <= 65535)) || { msg "--mtu must be 1280..65535"; exit 2; }
if [[ -z $kver ]]; then
	kver=${SHCA_KVER:-$("$top/scripts/newest-kernel.sh" 6.1)}
fi
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd -P)
snap=$out/snap

# --- Build and run ---------------------------------------------------------

if [[ -z $parse_only ]]; then
	if [[ -n $build ]]; then
		"$top/scripts/setup.sh" --if-needed || exit 1
		make -s -C "$top" modules-all provider || { msg "build failed"; exit 1; }
	fi
	ko=$top/build/kmod/$kver/kernel/shca.ko
	so=$top/build/lib/libshca-rdmav34.so
	mkdir -p "$top/build/bench" || exit 1
	make -s -C "$top" bench-tools build/tests/shca_mcast_test \
		build/tests/shca_drdma_test ||
		{ msg "bench-tools build failed"; exit 1; }
	for f in "$ko" "$so"; do
		[[ -f $f ]] || { msg "$f missing: run make -s modules-all provider"; exit 2; }
	done
	rm -rf "$out"/{runs,snap,runs.tsv,memcpy.tsv,icrc.tsv,mcast.tsv,drdma.tsv} \
		"$out"/{params,vm.rc,vm.log} \
		"$out"/{setup,teardown}.log "$out"/counters-*.txt "$out"/profile-*
	mkdir -p "$snap" || exit 1
	cp "$ko" "$snap/shca.ko" && cp "$so" "$snap/libshca-rdmav34.so" &&
		cp "$top/build/bench/memcpy_bw" "$snap/memcpy_bw" &&
		cp "$top/build/bench/icrc_bw" "$snap/icrc_bw" &&
		cp "$top/build/tests/shca_mcast_test" "$snap/shca_mcast_test" &&
		cp "$top/build/tests/shca_drdma_test" "$snap/shca_drdma_test" &&
		ln -sfn libshca-rdmav34.so "$snap/libshca.so.1" ||
		exit 1
	commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null)
	git -C "$top" status --porcelain -- kernel provider include |
		grep -q . && commit+=" with uncommitted changes"
	{
		echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "commit=${commit:-?}"
		echo "kver=$kver"
		echo "reps=$reps"
		echo "quick=$quick"
		echo "mtu=$mtu"
		echo "budget=$budget"
		echo "host_load=$(cut -d' ' -f1-3 /proc/loadavg)"
	} > "$out/params"
	read -r load _ < /proc/loadavg
	if [[ ${load%%.*} -ge $(nproc) ]]; then
		msg "warning: host load average $load on $(nproc) CPUs: the VM's vCPUs will be"
		msg "starved and latencies will read in milliseconds (see the report's notes)"
	fi
	msg "booting $kver for $reps repetition(s); progress: tail -f $out/output.log"
	t0=$SECONDS
	"$top/scripts/vm.sh" --kver "$kver" --timeout "$timeout" --out "$out" -- \
		"$top/scripts/bench-guest.sh" "$snap" "$reps" "$quick" "$mtu" \
		"$budget" "$profile" > "$out/vm.log" 2>&1
	echo "$?" > "$out/vm.rc"
	{
		echo "wall=$((SECONDS - t0))"
		echo "cpu=$(cat "$out/cpu" 2>/dev/null)"
		echo "host_load_end=$(cut -d' ' -f1-3 /proc/loadavg)"
	} >> "$out/params"
fi
[[ -f $out/params && -f $out/runs.tsv ]] || {
	msg "no results in $out (see $out/vm.log)"
	exit 125
}

# --- Report ----------------------------------------------------------------

/usr/bin/python3 "$top/scripts/bench_report.py" "$out" "$report"
prc=$?
vm_rc=$(cat "$out/vm.rc" 2>/dev/null)
case $vm_rc in
0|3) ;;
*) msg "the VM run did not complete (vm.sh rc ${vm_rc:-?}; see $out/vm.log)"
   exit 125 ;;
esac
case $prc in
0) exit 0 ;;
3) msg "some runs failed"; exit 1 ;;
*) msg "report generation failed"; exit 1 ;;
esac
