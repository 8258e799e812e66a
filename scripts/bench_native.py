#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""bench_native.py: the pure code's per-byte and per-packet costs on this
machine's own CPU, outside the test VM (make bench-native).

Usage: bench_native.py [--no-doc] [--rounds N] BENCH_DIR [DOC]

Runs BENCH_DIR/icrc_bw (every CRC-32 implementation this CPU can run,
their copies with CRC-32, and copies by rep movsb and rep movsq) over
buffers of 4 KiB, 64 KiB, 1 MiB and 64 MiB in 4 KiB pieces, and
BENCH_DIR/pkt_ops (header build and parse, linked-list queue, transmit
history, key table: ns per operation), prints one table and, unless
--no-doc, writes it into DOC (default Documentation/performance.md)
between its bench-native markers, with the CPU model and the targets of
the per-byte work.  Exits 0, or 1 when a tool failed.
"""
import os
import re
import subprocess
import sys
import time

BEGIN = '<!-- bench-native begin: scripts/bench_native.py writes this -->'
END = '<!-- bench-native end -->'
SIZES = [(4, '4 KiB'), (64, '64 KiB'), (1024, '1 MiB'), (65536, '64 MiB')]
# sizes the targets are judged at
TARGET_KIB = [4, 64, 1024]
IMPLS = ['table', 'clmul', 'vclmul']
PKT = [('hdr_build_ns', 'header build (BTH, or BTH + RETH)'),
       ('hdr_parse_ns', 'header parse'),
       ('llq_ns', 'linked-list queue push + pop'),
       ('txhist_ns', 'transmit history push + retire'),
       ('keytab_ns', 'key table lookup'),
       ('per_packet_ns', 'per packet: build + parse + queue + history')]


def die(msg):
    print('bench_native.py: ' + msg, file=sys.stderr)
    sys.exit(1)


def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode:
        die(' '.join(argv) + ' failed: ' + p.stderr.strip())
    return dict(re.findall(r'(\w+)=([0-9.]+)', p.stdout))


def cpu_info():
    model, flags = '?', set()
    with open('/proc/cpuinfo') as f:
        for line in f:
            k, _, v = line.partition(':')
            k = k.strip()
            if k == 'model name' and model == '?':
                model = ' '.join(v.split())
            elif k == 'flags' and not flags:
                flags = set(v.split())
    has = [x for x in ('pclmulqdq', 'vpclmulqdq', 'avx2', 'avx512f', 'erms',
                       'fsrm') if x in flags]
    return model, has


def fmt(x):
    if x is None:
        return '–'
    return f'{x:,.0f}'.replace(',', '\u202f') if x >= 100 else f'{x:.1f}'


def best_copy(r, crc):
    """fastest copy with CRC-32: a fused one, or a copy then the CRC"""
    fused = max((float(r[k]) for k in r if k.startswith('copy_')),
                default=0)
    mc = float(r['movsb_mibps'])
    sep = 1 / (1 / mc + 1 / crc) if crc else 0
    return max(fused, sep)


def main():
    args = sys.argv[1:]
    doc = True
    rounds = '7'
    while args and args[0].startswith('--'):
        a = args.pop(0)
        if a == '--no-doc':
            doc = False
        elif a == '--rounds' and args:
            rounds = args.pop(0)
        else:
            die('usage: bench_native.py [--no-doc] [--rounds N] '
                'BENCH_DIR [DOC]')
    if not args:
        die('usage: bench_native.py [--no-doc] [--rounds N] BENCH_DIR [DOC]')
    bench = args[0]
    path = args[1] if len(args) > 1 else 'Documentation/performance.md'

    load0 = os.getloadavg()
    per = {}
    for kib, _ in SIZES:
        per[kib] = run([os.path.join(bench, 'icrc_bw'), '-k', str(kib),
                        '-r', rounds])
    pkt = run([os.path.join(bench, 'pkt_ops'), '-r', rounds])
    load1 = os.getloadavg()
    model, has = cpu_info()

    rows = []
    names = {'table': 'slice-by-8 tables', 'clmul': 'PCLMULQDQ folding',
             'vclmul': 'AVX-512 VPCLMULQDQ folding'}
    for im in IMPLS:
        k = f'crc_{im}_mibps'
        if k in per[4]:
            rows.append((f'CRC-32, {names[im]} (`{im}`)',
                         [float(per[s][k]) for s, _ in SIZES]))
    for im in IMPLS:
        k = f'copy_{im}_mibps'
        if k in per[4]:
            rows.append((f'copy + CRC-32 in one pass, `{im}`',
                         [float(per[s][k]) for s, _ in SIZES]))
    rows.append(('memcpy (`rep movsb`, the kernel\'s with ERMS/FSRM)',
                 [float(per[s]['movsb_mibps']) for s, _ in SIZES]))
    rows.append(('memcpy (`rep movsq`)',
                 [float(per[s]['movsq_mibps']) for s, _ in SIZES]))

    # what the module would choose here: it times 4 KiB pieces
    crcs = {im: float(per[4][f'crc_{im}_mibps']) for im in IMPLS
            if f'crc_{im}_mibps' in per[4]}
    chosen = max(crcs, key=crcs.get)
    targets = []
    for kib, label in SIZES:
        if kib not in TARGET_KIB:
            continue
        r = per[kib]
        crc = float(r[f'crc_{chosen}_mibps'])
        mc = float(r['movsb_mibps'])
        cp = best_copy(r, crc)
        targets.append((f'{label}: the chosen CRC-32 (`{chosen}`) ≥ memcpy',
                        f'{crc / mc:.2f}× memcpy', crc >= mc))
        targets.append((f'{label}: copy + CRC-32 ≥ 0.5× memcpy',
                        f'{cp / mc:.2f}× memcpy', cp >= 0.5 * mc))
    ppk = float(pkt['per_packet_ns'])
    targets.append(('per-packet pure work (build + parse + queue + history) '
                    '< 100 ns', f'{ppk:.1f} ns', ppk < 100))

    out = []
    out.append(f'- CPU: {model}; {os.cpu_count()} CPUs; '
               f'{", ".join(has) or "none of the vector extensions"}')
    out.append(f'- measured {time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}; '
               'host load average (1 min) at start '
               f'{load0[0]:.2f}, at the end {load1[0]:.2f}; best of '
               f'{rounds} rounds of at least 50 ms each; MiB/s = 2^20 '
               'bytes per second; buffers in 4 KiB pieces')
    out.append('')
    out.append('| per-byte work, MiB/s | ' +
               ' | '.join(label for _, label in SIZES) + ' |')
    out.append('|---|' + '---:|' * len(SIZES))
    for name, v in rows:
        out.append(f'| {name} | ' + ' | '.join(fmt(x) for x in v) + ' |')
    out.append('')
    out.append('| per-packet work | ns |')
    out.append('|---|---:|')
    for k, name in PKT:
        out.append(f'| {name} | {float(pkt[k]):.1f} |')
    out.append('')
    out.append('| target | measured | met |')
    out.append('|---|---|---|')
    for t, m, ok in targets:
        out.append(f'| {t} | {m} | {"yes" if ok else "no"} |')
    table = '\n'.join(out) + '\n'
    print(table, end='')

    if not doc:
        return 0
    with open(path) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        die(f'{path} has no bench-native markers')
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(path, 'w') as f:
        f.write(head + BEGIN + '\n\n' + table + '\n' + END + tail)
    print(f'bench_native.py: wrote {path}')
    return 0


sys.exit(main())
