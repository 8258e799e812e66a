#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench-middleware.sh: the middleware benchmark.  One VM boot runs UCX
# (ucx_perftest), libfabric (fi_pingpong over RDM) and NVMe over RDMA
# (fio on nvme-rdma) on shca and on rdma_rxe, alternating, several
# repetitions (scripts/bench-middleware-guest.sh), and writes the medians
# and the shca/rxe ratios to Documentation/performance-middleware.md
# (scripts/bench_middleware_report.py).
#
# Usage: scripts/bench-middleware.sh [--reps N] [--kver KVER]
#            [--fio-secs S] [--no-build] [--parse-only] [--out DIR]
#            [--report FILE]
#
#   --reps N        repetitions (default 3)
#   --kver KVER     guest kernel (default: vm.sh's, the newest 6.1)
#   --fio-secs S    seconds of each fio job after a 2 s ramp (default 8)
#   --no-build      do not run setup.sh and make first
#   --parse-only    do not boot: rebuild the report from the results dir
#   --out DIR       results dir (default build/bench/middleware)
#   --report FILE   where to write the report
#
# Hand-written notes below the marker line at the end of the report are
# kept.  Exits 0 when every run succeeded, 1 when some failed, 2 for usage
# errors, 125 when the VM failed.  About 4 minutes per repetition.

set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
reps=3
kver=
fio_secs=8
build=1
parse_only=0
out=$top/build/bench/middleware
report=$top/Documentation/performance-middleware.md

usage() {
	sed -n '4,/^$/s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--reps) reps=${2:?}; shift ;;
	--kver) kver=${2:?}; shift ;;
	--fio-secs) fio_secs=${2:?}; shift ;;
	--no-build) build=0 ;;
	--parse-only) parse_only=1 ;;
	--out) out=${2:?}; shift ;;
	--report) report=${2:?}; shift ;;
	*) usage ;;
	esac
	shift
done
[[ $reps =~ ^[1-9][0-9]*$ && $fio_secs =~ ^[1-9][0-9]*$ ]] || usage

if ((!parse_only)); then
	if ((build)); then
		"$top/scripts/setup.sh" --if-needed || exit 1
		make -C "$top" -s modules-all provider selftest-bins || exit 1
	fi
	rm -rf "$out"
	mkdir -p "$out"
	"$top/scripts/vm.sh" ${kver:+--kver "$kver"} --mem 2048 \
		--timeout $((reps * 600 + 600)) --out "$out" -- \
		env SHCA_BENCH_FIO_SECS="$fio_secs" \
		scripts/bench-middleware-guest.sh "$reps" > /dev/null
	rc=$?
	if [ ! -s "$out/results.tsv" ]; then
		echo "bench-middleware.sh: the VM run failed (rc $rc), see $out" >&2
		exit 125
	fi
fi

/usr/bin/python3 "$top/scripts/bench_middleware_report.py" "$out" "$report"
