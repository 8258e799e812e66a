#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench-middleware.sh: the middleware benchmark.  One VM boot runs UCX
# (ucx_perftest), libfabric (fi_pingpong over RDM) and NVMe over RDMA
# (fio on nvme-rdma) on shca and on rdma_rxe, alternating, several
# repetitions (scripts/bench-middleware-guest.sh), and writes the medians
# and the shca/rxe ratios to Documentation/performance-middleware.md.
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

python3 - "$out" "$report" <<'PY'
import os, statistics, sys

out, report = sys.argv[1], sys.argv[2]
rows, order, failed = {}, [], 0
for line in open(os.path.join(out, 'results.tsv')):
    f = line.rstrip('\n').split('\t')
    if len(f) != 6:
        continue
    rep, test, dev, val, unit, status = f
    if test not in order:
        order.append(test)
    r = rows.setdefault(test, {'unit': unit, 'shca': [], 'rxe': []})
    if status == '0' and val not in ('', '-'):
        r[dev].append(float(val))
    else:
        failed += 1
        r[dev].append(None)

def med(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None

def fmt(x):
    if x is None:
        return 'failed'
    return f'{x:,.0f}' if x >= 100 else f'{x:.1f}'

lines = [
    '# Middleware performance: shca and rdma_rxe side by side',
    '',
    'Written by `scripts/bench-middleware.sh` from one boot of the test VM',
    '(QEMU TCG, 2 vCPUs, 2 GiB), where every test ran on shca and on',
    'rdma_rxe back to back, alternating; medians of the repetitions.  Under',
    'TCG only the ratios mean something.  Higher is better except for',
    'latencies (us), where the ratio is rxe/shca so that above 1 is shca',
    'ahead.  Set-up, and the settings rxe needs that shca does not, are',
    'in `scripts/bench-middleware-guest.sh`.',
    '',
    '| test | unit | shca | rdma_rxe | shca vs rxe | runs (shca/rxe) |',
    '|---|---|---|---|---|---|',
]
for t in order:
    r = rows[t]
    s, x = med(r['shca']), med(r['rxe'])
    ratio = '-'
    if s and x:
        ratio = f'{(x / s if r["unit"] == "us" else s / x):.2f}x'
    ok = lambda v: sum(1 for y in v if y is not None)
    lines.append(f'| {t} | {r["unit"]} | {fmt(s)} | {fmt(x)} | {ratio} | '
                 f'{ok(r["shca"])}/{len(r["shca"])} {ok(r["rxe"])}/{len(r["rxe"])} |')
marker = '<!-- notes: kept by bench-middleware.sh -->'
notes = ''
if os.path.exists(report):
    old = open(report).read()
    if marker in old:
        notes = old[old.index(marker) + len(marker):]
text = '\n'.join(lines) + '\n\n' + marker + (notes if notes else '\n')
open(report, 'w').write(text)
print(f'bench-middleware.sh: {report} written, {failed} failed runs',
      file=sys.stderr)
sys.exit(1 if failed else 0)
PY
