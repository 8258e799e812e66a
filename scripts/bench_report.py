#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""bench_report.py: the report of scripts/bench.sh.

Usage: bench_report.py RESULTS_DIR REPORT

Reads the results dir scripts/bench-guest.sh filled (params, guest-info,
runs.tsv, runs/, memcpy.tsv, icrc.tsv, vm.rc), writes the Markdown report
to REPORT (keeping the hand-written notes below its marker line) and
prints the tables.  Exits 0 when every run of the matrix succeeded on
both devices, 3 when some did not.
"""
import math
import os
import re
import sys

import bench_plot

out, report = sys.argv[1:3]


def read(path):
    try:
        with open(path, errors='replace') as f:
            return f.read()
    except OSError:
        return None


params = {}
for line in (read(os.path.join(out, 'params')) or '').splitlines():
    k, _, v = line.partition('=')
    params[k] = v
ginfo = {}
for line in (read(os.path.join(out, 'guest-info')) or '').splitlines():
    k, _, v = line.partition('=')
    ginfo[k] = v
reps = int(params.get('reps', '1'))
vm_rc = (read(os.path.join(out, 'vm.rc')) or '?').strip()

BW_FIELDS = ['bytes', 'iters', 'bw_peak', 'bw_avg', 'mpps']
LAT_FIELDS = ['bytes', 'iters', 't_min', 't_max', 't_typical', 't_avg',
              't_stdev', 'p99', 'p999']
DEVS = ['shca', 'rxe']
ONE_DEVS = ['shca1', 'rxe1']    # one device talking to itself


def result_line(path, size):
    """The numbers of perftest's result line for size, or None."""
    text = read(path)
    if text is None:
        return None
    seen_hdr = False
    for line in text.splitlines():
        s = line.strip()
        if s.startswith('#bytes'):
            seen_hdr = True
            continue
        w = s.split()
        if not seen_hdr or not w or w[0] != str(size):
            continue
        try:
            return [float(x) for x in w]
        except ValueError:
            return None
    return None


def median(v):
    v = sorted(v)
    n = len(v)
    if not n:
        return None
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


# --- measured runs ---
runs = {}       # (test, size, dev) -> {rep: fields}
attempts = []   # every attempt that did not succeed
order = []      # (test, size) in matrix order
order1 = []     # the same, of the one-device matrix
sysruns = {}    # (test, dev, iters) -> base
for line in (read(os.path.join(out, 'runs.tsv')) or '').splitlines():
    f = line.split('\t')
    if len(f) != 10:
        continue
    if f[0] == 'sys':
        _, test, size, dev, n, status, crc, src, secs, base = f
        sysruns[(test, dev, int(n))] = (status, base)
        continue
    rep, test, size, dev, att, status, crc, src, secs, base = f
    size = int(size)
    o = order1 if dev in ONE_DEVS else order
    if (test, size) not in o:
        o.append((test, size))
    key = (test, size, dev)
    runs.setdefault(key, {})
    if status == 'ok':
        # ib_send_bw: the receiver's figure (the sender's reads 0 when
        # the run has fewer messages than perftest's completion moderation)
        side = '.srv' if test == 'send_bw' else '.cli'
        v = result_line(os.path.join(out, base + side), size)
        names = LAT_FIELDS if test.endswith('_lat') else BW_FIELDS
        r = dict(zip(names, v or []))
        used = r.get('t_typical' if test.endswith('_lat') else 'bw_avg')
        if used is None or not math.isfinite(used) or used <= 0:
            status = 'badresult'
        else:
            runs[key][int(rep)] = r
            continue
    attempts.append((int(rep), test, size, dev, att, status, crc, src, base))

memcpy = []
for line in (read(os.path.join(out, 'memcpy.tsv')) or '').splitlines():
    m = re.search(r'median_mibps=([0-9.]+)', line)
    if m:
        memcpy.append(float(m.group(1)))
mc = median(memcpy)

# icrc_bw: per-byte costs; the kernel copy is 6.1's memcpy() (rep movsb
# when the guest CPU has ERMS, rep movsq when not)
icrc = {'icrc': [], 'movsb': [], 'movsq': [], 'copycrc': []}
for line in (read(os.path.join(out, 'icrc.tsv')) or '').splitlines():
    for k in icrc:
        m = re.search(k + r'_mibps=([0-9.]+)', line)
        if m:
            icrc[k].append(float(m.group(1)))
icrc = {k: median(v) for k, v in icrc.items()}
kcopy_name = 'movsb' if ginfo.get('erms') == 'yes' else 'movsq'
kcopy = icrc[kcopy_name]
# one ICRC pass on the sender; one ICRC pass and one copy on the receiver,
# the two ends on two vCPUs in parallel: the receiver bounds the rate
byte_bound = (1 / (1 / icrc['icrc'] + 1 / kcopy)
              if icrc['icrc'] and kcopy else None)


def fmt(x):
    if x is None:
        return '–'
    if x >= 100:
        return f'{x:.0f}'
    if x >= 10:
        return f'{x:.1f}'
    if x >= 1:
        return f'{x:.2f}'
    return f'{x:.3g}'


def size_str(s):
    if s >= 1 << 20 and s % (1 << 20) == 0:
        return f'{s >> 20} MiB'
    if s >= 1024 and s % 1024 == 0:
        return f'{s >> 10} KiB'
    return f'{s} B'


def stat(test, size, dev, field):
    vals = [r[field] for r in runs.get((test, size, dev), {}).values()]
    return median(vals), vals


def cell(med, vals):
    if med is None:
        return 'failed'
    c = fmt(med)
    if len(vals) > 1:
        c += f' ({fmt(min(vals))}–{fmt(max(vals))})'
    if len(vals) < reps:
        c += f' [{len(vals)} of {reps}]'
    return c


def ratio(test, size, field, devs=DEVS):
    """median(shca)/median(rxe) and the per-repetition paired ratios."""
    s, _ = stat(test, size, devs[0], field)
    r, _ = stat(test, size, devs[1], field)
    if s is None or r is None or r == 0:
        return None, []
    a = runs.get((test, size, devs[0]), {})
    b = runs.get((test, size, devs[1]), {})
    paired = [a[k][field] / b[k][field] for k in a if k in b and b[k][field]]
    return s / r, paired


def ratio_cell(rv, paired):
    if rv is None:
        return '–'
    if len(paired) > 1:
        return f'{rv:.2f} ({min(paired):.2f}–{max(paired):.2f})'
    return f'{rv:.2f}'


rows = ['| test | size | metric | shca | rxe | shca/rxe | shca/memcpy |',
        '|---|---:|---|---:|---:|---:|---:|']
for test, size in order:
    lat = test.endswith('_lat')
    metrics = [('t_typical', 'typical latency, µs')] if lat else \
        ([('mpps', 'msg rate, Mpps')] if test == 'atomic_bw' else
         [('bw_avg', 'bandwidth, MiB/s')])
    if not lat and size == 64:
        metrics.append(('mpps', 'msg rate, Mpps'))
    for field, label in metrics:
        cs = cell(*stat(test, size, 'shca', field))
        cr = cell(*stat(test, size, 'rxe', field))
        rc = ratio_cell(*ratio(test, size, field))
        frac = '–'
        s, _ = stat(test, size, 'shca', field)
        if field == 'bw_avg' and s is not None and mc:
            frac = f'{100 * s / mc:.1f} %'
        rows.append(f'| ib_{test} | {size_str(size)} | {label} | {cs} | '
                    f'{cr} | {rc} | {frac} |')

rows1 = ['| test | size | metric | shca | rxe | shca/rxe | shca/memcpy |',
         '|---|---:|---|---:|---:|---:|---:|']
for test, size in order1:
    lat = test.endswith('_lat')
    field, label = (('t_typical', 'typical latency, µs') if lat else
                    ('mpps', 'msg rate, Mpps') if size == 64 else
                    ('bw_avg', 'bandwidth, MiB/s'))
    cs = cell(*stat(test, size, 'shca1', field))
    cr = cell(*stat(test, size, 'rxe1', field))
    rc = ratio_cell(*ratio(test, size, field, ONE_DEVS))
    s, _ = stat(test, size, 'shca1', field)
    frac = (f'{100 * s / mc:.1f} %' if field == 'bw_avg' and s is not None
            and mc else '–')
    rows1.append(f'| ib_{test} | {size_str(size)} | {label} | {cs} | {cr} | '
                 f'{rc} | {frac} |')


# --- figures: bandwidth and latency against message size ---
def series(test, field, devs=DEVS):
    """{device: [(size, median, min, max)]} of test's field."""
    got = {}
    for t, size in order:
        if t != test:
            continue
        for d in devs:
            med, vals = stat(test, size, d, field)
            if med is not None:
                got.setdefault(d, []).append((size, med, min(vals),
                                              max(vals)))
    return got


def panels(tests, field):
    return [(f'ib_{t}', series(t, field),
             {s: size_str(s) for tt, s in order if tt == t}) for t in tests]


figdir = os.path.dirname(os.path.abspath(report))
fig_note = (f'shca git {params.get("commit", "?")}, Linux '
            f'{params.get("kver", "?")} guest under QEMU TCG, '
            f'{params.get("date", "?")}; median of {reps}, bars min-max')
figs = [
    bench_plot.plot(os.path.join(figdir, 'perf-bandwidth.svg'),
                    panels(('send_bw', 'write_bw', 'read_bw'), 'bw_avg'),
                    'bandwidth, MiB/s', note=fig_note),
    bench_plot.plot(os.path.join(figdir, 'perf-latency.svg'),
                    panels(('send_lat', 'write_lat', 'read_lat'),
                           't_typical'),
                    'typical latency, µs', note=fig_note),
]
fig_lines = ([f'![bandwidth against message size, shca and rxe]'
              f'({os.path.basename(figs[0])})', '',
              f'![latency against message size, shca and rxe]'
              f'({os.path.basename(figs[1])})', '']
             if all(figs) else
             ['(No figures: python3-matplotlib is not installed.)', ''])


# --- system calls per message ---
def perf_counts(path):
    """{event: count} from a perf stat -x, file, or None."""
    text = read(path)
    if text is None:
        return None
    c = {}
    for line in text.splitlines():
        if not line or line.startswith('#'):
            continue
        w = line.split(',')
        if len(w) < 3:
            continue
        try:
            c[w[2]] = int(w[0])
        except ValueError:
            return None     # <not counted> / <not supported>
    return c if 'raw_syscalls:sys_enter' in c else None


CLOCK = ('syscalls:sys_enter_gettimeofday', 'syscalls:sys_enter_clock_gettime')
sysrows = ['| device | test | side | system calls per message | '
           'excluding clock reads, at N1 / N2 messages |',
           '|---|---|---|---:|---|']
sys_per_msg = {}
iters_seen = sorted({k[2] for k in sysruns})
for dev in DEVS:
    for test in ('send_bw', 'write_bw'):
        for side, label in (('cli', 'client (sender)'),
                            ('srv', 'server (receiver)')):
            counts = []
            for n in iters_seen:
                st, base = sysruns.get((test, dev, n), ('missing', ''))
                c = perf_counts(os.path.join(out, f'{base}.{side}.perf')) \
                    if st == 'ok' else None
                if c is None:
                    counts.append(None)
                    continue
                counts.append((n, c['raw_syscalls:sys_enter'] -
                               sum(c.get(e, 0) for e in CLOCK)))
            if len(counts) == 2 and None not in counts:
                (n1, s1), (n2, s2) = counts
                per = (s2 - s1) / (n2 - n1)
                sys_per_msg[(dev, test, side)] = per
                sysrows.append(f'| {dev} | ib_{test} 64 B | {label} | '
                               f'{per:.3f} | {s1} / {s2} |')
            else:
                sysrows.append(f'| {dev} | ib_{test} 64 B | {label} | '
                               'failed | – |')

# --- targets ---
tg = ['| target | measured | met |', '|---|---|---|']


def target(desc, test, size, field, want, cmp, devs=DEVS):
    rv, _ = ratio(test, size, field, devs)
    if rv is None:
        tg.append(f'| {desc} | no result | – |')
        return
    ok = rv >= want if cmp == 'ge' else rv <= want
    tg.append(f'| {desc} | {rv:.2f}× rxe | {"yes" if ok else "no"} |')


for t in ('send_bw', 'write_bw', 'read_bw'):
    target(f'ib_{t} 64 KiB bandwidth ≥ 2× rxe', t, 65536, 'bw_avg', 2, 'ge')
for t in ('send_bw', 'write_bw'):
    target(f'ib_{t} 64 B message rate ≥ 2× rxe', t, 64, 'mpps', 2, 'ge')
for t in ('send_lat', 'write_lat', 'read_lat'):
    target(f'ib_{t} 64 B typical latency ≤ 0.5× rxe', t, 64, 't_typical',
           0.5, 'le')


def memcpy_target(desc, dev, with_bound=False):
    """DEV's 1 MiB WRITE bandwidth at least half the guest's memcpy;
    WITH_BOUND: the memcpy figure and the per-byte bound go with it."""
    s, _ = stat('write_bw', 1 << 20, dev, 'bw_avg')
    if s is None or not mc:
        tg.append(f'| {desc} | no result | – |')
        return
    note = bound = ''
    if with_bound:
        note = f' ({fmt(mc)} MiB/s)'
        if byte_bound:
            bound = f' (per-byte bound {byte_bound / mc:.2f}×)'
    tg.append(f'| {desc}{note} | {s / mc:.3f}× memcpy{bound} | '
              f'{"yes" if s / mc >= 0.5 else "no"} |')


memcpy_target('ib_write_bw 1 MiB ≥ 0.5× memcpy', 'shca', True)
# one device talking to itself
for t in ('send_lat', 'write_lat'):
    target(f'one device: ib_{t} 64 B typical latency ≤ rxe\'s', t, 64,
           't_typical', 1, 'le', ONE_DEVS)
memcpy_target('one device: ib_write_bw 1 MiB ≥ 0.5× memcpy', 'shca1')
for t in ('send_bw', 'write_bw'):
    for side in ('cli', 'srv'):
        per = sys_per_msg.get(('shca', t, side))
        who = 'sender' if side == 'cli' else 'receiver'
        if per is None:
            tg.append(f'| ib_{t} {who}: < 0.01 system calls per message | '
                      'no result | – |')
        else:
            tg.append(f'| ib_{t} {who}: < 0.01 system calls per message | '
                      f'{per:.3f} | {"yes" if per < 0.01 else "no"} |')

# --- multicast: delivered copies per second (shca_mcast_test --rate) ---
mcast = {}      # (dev, members) -> [copies/s]
mcast_fail = []
for line in (read(os.path.join(out, 'mcast.tsv')) or '').splitlines():
    w = line.split('\t')
    if len(w) < 5:
        continue
    m = re.search(r'([0-9]+) of ([0-9]+) copies delivered in ([0-9.]+) s: '
                  r'([0-9]+) copies/s.*\(([0-9]+) errors\)', w[4])
    if not m or w[4].startswith('failed'):
        mcast_fail.append(f'rep {w[0]} {w[1]} {w[2]} members: {w[4]}')
        continue
    mcast.setdefault((w[1], int(w[2])), []).append(
        (float(m.group(4)), int(m.group(1)), int(m.group(2))))

mcrows = []
if mcast:
    mcrows = ['| members | shca copies/s | rxe copies/s | shca/rxe | '
              'copies delivered (shca / rxe) |', '|---|---|---|---|---|']
    for n in sorted({k[1] for k in mcast}):
        med = {}
        got = {}
        for d in DEVS:
            v = mcast.get((d, n), [])
            med[d] = median([x[0] for x in v])
            got[d] = (f'{sum(x[1] for x in v)} of {sum(x[2] for x in v)}'
                      if v else '–')
        r = (f'{med["shca"] / med["rxe"]:.2f}'
             if med['shca'] and med['rxe'] else '–')
        mcrows.append(f'| {n} | {fmt(med["shca"])} | {fmt(med["rxe"])} | '
                      f'{r} | {got["shca"]} / {got["rxe"]} |')
mcrows += [f'- failed: {f}' for f in mcast_fail]

# --- DRDMA (shca_drdma_test --bench) ---
drdma = {}      # (what, size) -> [values]
drdma_fail = []
drdma_rep = {}  # (what, size, rep) -> value
units = {}
for line in (read(os.path.join(out, 'drdma.tsv')) or '').splitlines():
    w = line.split('\t')
    if len(w) < 2:
        continue
    f = w[1].split()
    if len(f) != 4 or w[1].startswith('failed'):
        drdma_fail.append(f'rep {w[0]}: {w[1]}')
        continue
    drdma.setdefault((f[0], int(f[1])), []).append(float(f[2]))
    drdma_rep[(f[0], int(f[1]), w[0])] = float(f[2])
    units[f[0]] = f[3]

drrows = []
if drdma:
    drrows = ['| measure | size | DRDMA / from device memory | ordinary / '
              'from host memory | ratio |', '|---|---|---|---|---|']
    for kind, a, b in (('latency', 'latency-drdma', 'latency-host'),
                       ('bandwidth', 'bandwidth-dm', 'bandwidth-host')):
        for size in sorted({k[1] for k in drdma if k[0] == a}):
            va = median(drdma.get((a, size), []))
            vb = median(drdma.get((b, size), []))
            u = units.get(a, '')
            r = '–'
            if va and vb:
                r = f'{vb / va:.2f}x' if kind == 'latency' else \
                    f'{va / vb:.2f}x'
                dr_ids = sorted({k[2] for k in drdma_rep
                                 if k[0] == a and k[1] == size})
                rr = sorted(drdma_rep[(b, size, q)] / drdma_rep[(a, size, q)]
                            if kind == 'latency' else
                            drdma_rep[(a, size, q)] / drdma_rep[(b, size, q)]
                            for q in dr_ids if (b, size, q) in drdma_rep and
                            drdma_rep[(a, size, q)] and
                            drdma_rep[(b, size, q)])
                if len(rr) > 1:
                    r += f' ({rr[0]:.2f}–{rr[-1]:.2f})'
            drrows.append(f'| {kind} | {size} | {fmt(va)} {u} | '
                          f'{fmt(vb)} {u} | {r} |')
drrows += [f'- failed: {f}' for f in drdma_fail]

# --- failures ---
fails = []
notrun = sum(1 for a in attempts if a[5] in ('notrun', 'skipped'))
for rep, test, size, dev, att, status, crc, src, base in sorted(attempts):
    if status in ('notrun', 'skipped'):
        continue
    fails.append(f'| {rep} | ib_{test} {size_str(size)} | {dev} | {att} | '
                 f'{status} | {crc} / {src} | `{base}` |')
for (test, dev, n), (st, base) in sorted(sysruns.items()):
    if st != 'ok':
        fails.append(f'| sys | ib_{test} 64 B × {n} | {dev} | 1 | {st} | '
                     f'– | `{base}` |')
n_ok = {d: sum(len(v) for k, v in runs.items() if k[2] == d)
        for d in DEVS + ONE_DEVS}
n_slots = len(order) * reps
n_slots1 = len(order1) * reps

vm_state = {'0': 'completed, guest kernel log clean',
            '3': 'completed, but scripts/check-dmesg.sh flagged the guest '
                 'kernel log (see vm.log)',
            '125': 'did NOT complete (VM timeout or crash): results are '
                   'partial'}.get(vm_rc, f'exit status {vm_rc}')
mtu = int(params.get('mtu', '0') or 0)
roce_mtu = max([m for m in (256, 512, 1024, 2048, 4096)
                if m + 78 <= mtu] or [0])
doc = [
    '# Performance: shca and rdma_rxe side by side',
    '',
    'Generated by `scripts/bench.sh`, which rewrites everything above the '
    'notes marker at the end; edit only below it.',
    '',
    f'- date: {params.get("date", "?")}; shca git {params.get("commit", "?")}; '
    f'host load average (1, 5, 15 min) at start {params.get("host_load", "?")}, '
    f'at the end {params.get("host_load_end", "?")} (2 cores)',
    f'- guest: Debian kernel {params.get("kver", "?")}, QEMU TCG, '
    f'vCPUs online {ginfo.get("cpus", "?")}, clocksource '
    f'{ginfo.get("clocksource", "?")}; perftest {ginfo.get("perftest", "?")}; '
    f'the VM run {vm_state}; wall time {params.get("wall", "?")} s',
    f'- {reps} repetition(s); each cell is the median over the repetitions '
    'that succeeded, (min–max) after it and [n of N] when not all did; '
    'shca/rxe is the ratio of the '
    'medians, with the range of the per-repetition ratios (each repetition '
    'runs shca and rxe back to back) after it',
    f'- both devices over a veth pair of MTU {mtu} (RoCE active MTU '
    f'{roce_mtu}); see "Method" below',
    f'- single-thread memcpy (`tests/bench/memcpy_bw.c`, 64 MiB buffers, '
    f'glibc memcpy) in the same guest: median {fmt(mc)} MiB/s over '
    f'{len(memcpy)} measurement(s)' +
    (f' ({fmt(min(memcpy))}–{fmt(max(memcpy))})' if len(memcpy) > 1 else ''),
    (f'- per-byte costs in the same guest (`tests/bench/icrc_bw.c`, 64 MiB '
     f'in 4 KiB pieces, medians): ICRC (slice-by-8 CRC-32, as the '
     f'kernel\'s crc32_le()) {fmt(icrc["icrc"])} MiB/s, copy by `rep movsb` '
     f'{fmt(icrc["movsb"])}, by `rep movsq` {fmt(icrc["movsq"])}, copy '
     f'and CRC in one pass (`shca_crc32_copy()`, a READ response\'s '
     f'payload) {fmt(icrc["copycrc"])}; QEMU '
     f'`-cpu {params.get("cpu", "?")}`, the guest CPU '
     f'{"has" if kcopy_name == "movsb" else "has no"} ERMS, so a 6.1 kernel\'s '
     f'memcpy() copies by `rep {kcopy_name}`.  A WRITE costs each byte one '
     f'ICRC pass on the sender and an ICRC pass and a copy on the receiver: '
     f'with no per-packet cost at all and the two ends on two vCPUs at '
     f'once, at most {fmt(byte_bound)} MiB/s '
     f'({byte_bound / mc:.2f}× memcpy).  The module\'s CRC-32 in this '
     f'guest, chosen at load: `crc={ginfo.get("shca_crc", "?")}`, '
     f'`crc_copy={ginfo.get("shca_crc_copy", "?")}` '
     f'({ginfo.get("shca_crc_line", "").removeprefix("shca: ") or "no report"})'
     if byte_bound and mc else
     '- per-byte costs (`tests/bench/icrc_bw.c`): no measurement'),
    f'- successful runs: shca {n_ok["shca"]} / {n_slots}, rxe '
    f'{n_ok["rxe"]} / {n_slots}; one device: shca {n_ok["shca1"]} / '
    f'{n_slots1}, rxe {n_ok["rxe1"]} / {n_slots1}' +
    (f'; {notrun} not started (time budget spent, or the device had '
     'failed 5 runs in a row)' if notrun else ''),
    '',
    'Regenerate: `scripts/bench.sh` (one VM boot under TCG: about 8 '
    'minutes on a quiet 2-core host, 20 or more when other VMs share the '
    'cores); `scripts/bench.sh --quick` is a short smoke run '
    'into `build/bench/report.md`. Raw logs: `build/bench/vm/` (not '
    'committed). Absolute numbers depend on the host\'s load; compare the '
    'ratios, which come from runs made seconds apart.',
    '',
    '## Results',
    '',
    'Bandwidth is perftest\'s "BW average" (MiB/s, 2^20 bytes), message rate '
    'its "MsgRate" (millions of messages per second), latency its '
    '"t_typical" (the median of the iterations, µs; lower is better, so '
    'shca/rxe < 1 means shca is faster). shca/memcpy: shca\'s bandwidth '
    'as a fraction of the memcpy bandwidth.',
    '',
] + rows + [''] + fig_lines + [
    '## One device talking to itself',
    '',
    'Client and server of each test on one device, connected to its own '
    'address: shca_ns1 to 198.18.0.1 in its namespace (shca\'s same-host '
    'delivery: the packet goes straight into the engine\'s receive queue, '
    'with no IP stack and no ICRC), rxe_a to 198.18.3.1 (rdma_rxe\'s '
    'loopback). The same processes, CPUs and measures as above; the two '
    'devices alternate in the same way. For a message rate, shca/rxe > 1 '
    'means shca is faster.',
    '',
] + rows1 + [
    '',
    '## Targets',
    '',
] + tg + [
    '',
    '## System calls per message',
    '',
    'Steady state: each 64-byte bandwidth test runs twice under '
    '`strace -f -c` (client and server), with N1 '
    f'and N2 = {" and ".join(str(n) for n in iters_seen) or "?"} messages; '
    'the difference of the counts divided by the difference of the message '
    'counts leaves out start-up and connection set-up. gettimeofday and '
    'clock_gettime are not counted: when the guest\'s clocksource is hpet '
    '(the 6.1 guest under TCG finds its TSCs unsynchronised) they have no '
    'vDSO, and perftest\'s start-up CPU-frequency calibration makes tens '
    'of thousands of them (a varying number); on a real host they are '
    'vDSO calls and no system calls at all.',
    '',
] + sysrows + [''] + ([
    '## Multicast',
    '',
    'Copies delivered per second: `shca_mcast_test --rate` with N UD QPs '
    'of one device attached to one IPv4 group and one UD QP of the other '
    'device sending 256-byte messages to it, never more than 48 messages '
    'ahead of what every member has taken (each member reposts its '
    'receives); the median over the repetitions. rdma_rxe allows 56 QPs '
    'per group; shca also runs with 1024. rxe never joins the group\'s IP '
    'address itself: the run holds the membership on its netdev with a '
    'socket.',
    '',
] + mcrows + [''] if mcrows else []) + ([
    '## DRDMA',
    '',
    '`shca_drdma_test --bench` between the two shca hosts, the median over '
    'the repetitions of each run\'s median (201 transfers of 4 KiB, 21 of '
    '1 MiB). Latency: from the moment the producer has written the last '
    'byte to the remote\'s receive completion of an RDMA WRITE with '
    'immediate. DRDMA: the WRITE was posted beforehand from a DM MR over a '
    'range armed for it, the producer writes into the mapped range and the '
    'clock starts before its commit (one system call). Ordinary: the '
    'producer writes into registered host memory and the clock starts '
    'before the WRITE is posted. Ratio: ordinary / DRDMA (above 1: DRDMA '
    'is faster). Bandwidth: 64 KiB WRITEs, 16 outstanding, 64 MiB, from a '
    'DM MR and from host memory (ratio: device / host). Path MTU: the '
    'ports\' active MTU, as perftest\'s. After a ratio, the range of the '
    'per-repetition ratios.',
    '',
] + drrows + [''] if drrows else [])
if fails:
    doc += ['## Failed runs', '',
            'Every attempt that did not give a result (a failed run is '
            'retried once). Logs in the results dir.', '',
            '| rep | test | device | attempt | status | client / server rc '
            '| log |', '|---|---|---|---|---|---|---|'] + fails + ['']

MARK = '<!-- Notes below this line are kept by bench.sh. -->'
notes = ''
old = read(report) or ''
if MARK in old:
    notes = old[old.index(MARK):]
text = '\n'.join(doc).rstrip('\n') + '\n'
text += '\n' + (notes.rstrip('\n') if notes else MARK) + '\n'
with open(report, 'w') as f:
    f.write(text)

print('\n'.join(rows))
print()
print('\n'.join(rows1))
print()
print('\n'.join(tg))
print()
print('\n'.join(sysrows))
if mcrows:
    print()
    print('\n'.join(mcrows))
if drrows:
    print()
    print('\n'.join(drrows))
if fails:
    print(f'\n{len(fails)} failed attempt(s): see {report}')
if notrun:
    print(f'{notrun} run(s) not started')
print(f'report: {report}')
all_ok = all(len(runs.get((t, s, d), {})) == reps
             for o, devs in ((order, DEVS), (order1, ONE_DEVS))
             for t, s in o for d in devs) and order
sys.exit(0 if all_ok else 3)
