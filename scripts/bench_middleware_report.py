#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""bench_middleware_report.py: the report of scripts/bench-middleware.sh.

Usage: bench_middleware_report.py RESULTS_DIR REPORT

Reads RESULTS_DIR/results.tsv (scripts/bench-middleware-guest.sh wrote
it), writes the medians and shca/rxe ratios to REPORT (keeping the notes
after its marker) and exits 1 when some run failed, 0 otherwise.
"""
import os, statistics, sys

import bench_plot

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
# fio's results as bars, shca and rxe side by side: IOPS, then bandwidth
def fio_groups(unit):
    groups = []
    for t in order:
        r = rows[t]
        if not t.startswith('fio ') or r['unit'] != unit:
            continue
        v = {}
        for dev in ('shca', 'rxe'):
            got = [x for x in r[dev] if x is not None]
            if got:
                v[dev] = (statistics.median(got), min(got), max(got))
        groups.append((t[4:].replace(' QD', '\nQD'), v))
    return groups

fig = bench_plot.bars(
    os.path.join(os.path.dirname(os.path.abspath(report)), 'perf-fio.svg'),
    [('fio, 4 KiB random', 'IOPS', fio_groups('IOPS')),
     ('fio, 128 KiB sequential', 'KiB/s', fio_groups('KiB/s'))],
    note='NVMe over RDMA (nvme-rdma to nvmet-rdma on null_blk), two '
         'devices of one guest under QEMU TCG; median, bars min-max')
lines += ['', f'![fio over NVMe/RDMA, shca and rxe]({os.path.basename(fig)})'
          if fig else '(No figure: python3-matplotlib is not installed.)']
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
