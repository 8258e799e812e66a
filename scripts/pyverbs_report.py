#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""pyverbs_report.py: the report of scripts/pyverbs-compare.sh.

Usage: pyverbs_report.py RESULTS_DIR REPORT

Parses the raw logs scripts/pyverbs-compare-guest.sh left in RESULTS_DIR
(params, list.txt, vm.rc and one directory per device), writes the side
by side report to REPORT (keeping the notes below its marker line),
RESULTS_DIR/results.tsv (every test's result on each device) and prints
the summary table.
"""
import ast
import os
import re
import sys

out, report = sys.argv[1:3]
params = {}
with open(os.path.join(out, 'params')) as f:
    for line in f:
        k, _, v = line.rstrip('\n').partition('=')
        params[k] = v
kver, stall, dev_limit = params['kver'], params['stall'], params['dev_limit']
devices, mods = params['devices'].split(), params['mods']
# the NIC the guest put shca on: eth0 (a virtio-net NIC) or the veth pyv0
shca_nic = ''
try:
    with open(os.path.join(out, 'shca', 'nic')) as f:
        shca_nic = f.read().strip()
except OSError:
    pass
shca_on = ('a virtio-net NIC' if shca_nic == 'eth0' else 'a veth')
names = {'rxe': 'rdma_rxe (rxe0 on lo)', 'shca': f'shca (shca0 on {shca_on})'}

HDR = re.compile(r'^([A-Za-z_]\w*) \(([\w.]+)\)(.*)$')
RES = re.compile(r'(?:^| )(ok|FAIL|ERROR|expected failure|unexpected success|'
                 r'skipped (\'.*\'|".*"))$')
DETAIL = re.compile(r'^(ERROR|FAIL|UNEXPECTED SUCCESS): (\w+) \(([\w.]+)\)')
FRAME = re.compile(r'^\s+File "([^"]+)", line (\d+),? in (\S+)')
SEP1 = '=' * 70
SEP2 = '-' * 70
STATUS = {'ok': 'PASS', 'FAIL': 'FAIL', 'ERROR': 'ERROR',
          'expected failure': 'PASS', 'unexpected success': 'FAIL'}
SIGNALS = {4: 'SIGILL', 6: 'SIGABRT', 7: 'SIGBUS', 8: 'SIGFPE', 9: 'SIGKILL',
           11: 'SIGSEGV', 15: 'SIGTERM'}


def read(path):
    try:
        with open(path, errors='replace') as f:
            return f.read()
    except OSError:
        return None


def short(s, n=220):
    s = ' '.join(s.split())
    return s if len(s) <= n else s[:n - 3] + '...'


def frame_str(frames, n=3):
    """'file:line func < caller ...': the innermost frame when it is in
    pyverbs (a .pyx file), then the innermost test-suite frames; frames
    are given innermost first."""
    own = [f for f in frames if '/rdma-tests/' in f[0]]
    sel = own[:n] if own else frames[:n]
    if own and frames[0][0].endswith('.pyx'):
        sel = [frames[0]] + sel[:n - 1]
    return ' < '.join(f'{os.path.basename(p)}:{l} {fn}' for p, l, fn in sel)


def exc_reason(block):
    """The exception line and innermost frames of a traceback text."""
    lines = [l for l in block.split('\n')]
    frames = []
    last_indented = -1
    for i, l in enumerate(lines):
        m = FRAME.match(l)
        if m:
            frames.append((m.group(1), m.group(2), m.group(3)))
        if l.startswith(' ') or l.startswith('Traceback') or \
                l.startswith('During handling') or \
                l.startswith('The above exception') or not l.strip():
            if l.strip():
                last_indented = i
    exc = ''
    for l in lines[last_indented + 1:]:
        if l.strip():
            exc = l.strip()
            break
    exc = re.sub(r'^pyverbs\.pyverbs_error\.', '', exc)
    frames.reverse()         # innermost first
    return exc, frames


def fatal_reason(text):
    """Where faulthandler's dump (SIGABRT on stall, or a crash) says the
    main thread was, innermost frames first; None without a dump."""
    m = re.search(r'Fatal Python error: ([^\n]*)\n(?:.*\n)*?'
                  r'Current thread [^\n]*\n((?:\s+File [^\n]*\n)+)', text)
    if not m:
        return None
    frames = [(f.group(1), f.group(2), f.group(3))
              for f in map(FRAME.match, m.group(2).split('\n')) if f]
    return m.group(1), frames


def parse_log(text):
    """unittest -v stderr -> ({id: (status, reason)}, running id or None,
    {class id: (status, reason)} for setUpClass/setUpModule results)."""
    res, cls = {}, {}
    cur = None          # [id, seen ' ... ', status, reason, side lines]
    order = []
    body = text
    cut = re.search(r'^(' + SEP1 + '|' + SEP2 + r')$', text, re.M)
    if cut:
        body = text[:cut.start()]
    lines = body.split('\n')

    def close():
        if cur and cur[2]:
            side = '\n'.join(cur[4])
            if cur[2] != 'PASS' and 'Traceback' in side and not cur[3]:
                exc, fr = exc_reason(side[side.rfind('Traceback'):])
                cur[3] = f'child process: {exc} [{frame_str(fr)}]'
            target = cls if cur[5] in ('setUpClass', 'setUpModule',
                                       'tearDownClass', 'tearDownModule') \
                else res
            target.setdefault(cur[0], (cur[2], cur[3]))

    for line in lines:
        m = HDR.match(line)
        if m and (m.group(2).startswith('tests.') or
                  m.group(2).startswith('unittest.')):
            close()
            cur = [m.group(2), False, None, '', [], m.group(1)]
            order.append(cur)
            rest = m.group(3)
            if ' ... ' in line:
                cur[1] = True
                rest = line.split(' ... ', 1)[1]
                r = RES.search(rest)
                if r:
                    set_result(cur, r)
            continue
        if cur is None or cur[2]:
            continue
        if not cur[1]:
            if ' ... ' in line:
                cur[1] = True
                line = line.split(' ... ', 1)[1]
            else:
                continue
        r = RES.search(line)
        if r:
            set_result(cur, r)
        else:
            cur[4].append(line)
    close()
    running = order[-1][0] if order and not order[-1][2] else None

    # Tracebacks of failures and errors.
    blocks = re.split(r'^' + SEP1 + r'\n', text, flags=re.M)[1:]
    for b in blocks:
        m = DETAIL.match(b)
        if not m:
            continue
        tb = b.split(SEP2 + '\n', 1)
        tb = tb[1] if len(tb) > 1 else b
        tb = re.split(r'^' + SEP2 + r'\nRan ', tb, flags=re.M)[0]
        exc, fr = exc_reason(tb)
        reason = exc + (f' [{frame_str(fr)}]' if fr else '')
        tid = m.group(3)
        for table in (res, cls):
            if tid in table and not table[tid][1]:
                table[tid] = (table[tid][0], reason)
    return res, running, cls


def set_result(cur, r):
    word = r.group(1)
    if word.startswith('skipped'):
        cur[2] = 'SKIP'
        try:
            cur[3] = str(ast.literal_eval(r.group(2)))
        except (ValueError, SyntaxError):
            cur[3] = r.group(2)
    else:
        cur[2] = STATUS[word]


def parse_status(path):
    st = {}
    for kv in (read(path) or '').split():
        k, _, v = kv.partition('=')
        st[k] = v
    return st


def parse_device(d, ids):
    """{test id: (status, reason)} for device d, plus run facts."""
    ddir = os.path.join(out, d)
    facts = {'seconds': (read(os.path.join(ddir, 'seconds')) or '').strip(),
             'device': (read(os.path.join(ddir, 'device')) or '').split(),
             'aborted': (read(os.path.join(ddir, 'aborted')) or '').strip(),
             'kernel': []}
    result = {}
    if not os.path.isdir(ddir):
        facts['aborted'] = facts['aborted'] or 'not run'
    mods = (read(os.path.join(ddir, 'modules')) or '').split()
    for mod in mods:
        part = 0
        while True:
            base = os.path.join(ddir, f'{mod}.{part}')
            text = read(base + '.log')
            if text is None:
                break
            st = parse_status(base + '.status')
            res, running, cls = parse_log(text)
            for tid, v in res.items():
                result.setdefault(tid, v)
            for cid, v in cls.items():
                for tid in ids:
                    if tid.startswith(cid + '.'):
                        result.setdefault(tid, v)
            if running and running not in result:
                fat = fatal_reason(text)
                where = f' in {frame_str(fat[1])}' if fat else ''
                rc = st.get('rc', '')
                if not st:
                    result[running] = ('HANG', 'the VM run ended while it ran')
                elif st.get('stalled') == '2':
                    result[running] = ('HANG', f'device time limit ({dev_limit} s)'
                                       f' reached while it ran{where}')
                elif st.get('stalled') == '1':
                    result[running] = ('HANG', f'no progress for {stall} s;'
                                       f' stack{where}')
                else:
                    sig = int(rc) - 128 if rc.isdigit() and int(rc) > 128 else 0
                    why = SIGNALS.get(sig, f'signal {sig}') if sig else f'exit {rc}'
                    fr = f' ({fat[0]}){where}' if fat else ''
                    result[running] = ('CRASH', f'process died: {why}{fr}')
            part += 1
        notrun = read(os.path.join(ddir, f'{mod}.notrun'))
        kc = read(os.path.join(ddir, f'{mod}.kcheck'))
        if kc and kc.strip():
            facts['kernel'].append((mod, kc.strip().split('\n')))
        for tid in ids:
            if tid.startswith(f'tests.{mod}.') and tid not in result:
                result[tid] = ('NOTRUN', 'device time limit reached' if notrun
                               else 'no result reported')
    for tid in ids:
        if tid not in result:
            result[tid] = ('NOTRUN', facts['aborted'] or 'VM run ended first')
        elif result[tid][0] in ('FAIL', 'ERROR') and not result[tid][1]:
            result[tid] = (result[tid][0], 'no traceback: its process was '
                           'killed before printing it')
    for step in ('setup', 'teardown'):
        kc = read(os.path.join(ddir, f'{step}.kcheck'))
        if kc and kc.strip():
            facts['kernel'].append((step, kc.strip().split('\n')))
    facts['teardown'] = read(os.path.join(ddir, 'teardown.txt'))
    return result, facts


ids = [l.strip() for l in (read(os.path.join(out, 'list.txt')) or '').split('\n')
       if l.strip()]
if mods:
    ids = [t for t in ids if t.split('.')[1] in mods.split()]
results, facts = {}, {}
for d in devices:
    results[d], facts[d] = parse_device(d, ids)

COLS = ['PASS', 'SKIP', 'FAIL', 'ERROR', 'HANG', 'NOTRUN']


def counts(r):
    c = {k: 0 for k in COLS}
    for s, _ in r.values():
        c['ERROR' if s == 'CRASH' else s] += 1
    return c


summary = ['| device | tests | pass | skip | fail | error | hang | not run |',
           '|---|---:|---:|---:|---:|---:|---:|---:|']
for d in devices:
    c = counts(results[d])
    summary.append(f'| {names.get(d, d)} | {len(ids)} | ' +
                   ' | '.join(str(c[k]) for k in COLS) + ' |')


def cell(s):
    return s.replace('|', '\\|').replace('\n', ' ')


def cat(s):
    return 'ERROR' if s == 'CRASH' else s


groups = [('Pass on rxe, not on shca', []), ('Skipped on shca, not on rxe', []),
          ('Other differences', []), ('Failing on both', [])]
bad = ('FAIL', 'ERROR', 'CRASH', 'HANG', 'NOTRUN')
if 'rxe' in results and 'shca' in results:
    for tid in ids:
        (rs, rr), (ss, sr) = results['rxe'][tid], results['shca'][tid]
        if cat(rs) == cat(ss) and rs not in bad:
            continue
        if rs == 'PASS' and ss in bad:
            g = 0
        elif ss == 'SKIP' and rs != 'SKIP':
            g = 1
        elif cat(rs) != cat(ss):
            g = 2
        else:
            g = 3
        if g in (0, 1):
            reason = sr
        elif rs in bad and ss in bad:
            reason = f'rxe: {rr}; shca: {sr}' if rr != sr else sr
        else:
            reason = sr if ss in bad or ss == 'SKIP' else rr
        groups[g][1].append(f'| {cell(tid[len("tests."):])} | {rs} | {ss} | '
                            f'{cell(short(reason, 400))} |')

vm_rc = (read(os.path.join(out, 'vm.rc')) or '?').strip()
vm_state = {'0': 'completed, guest kernel log clean',
            '1': 'was cut short: a test process could not be killed',
            '3': 'completed, but scripts/check-dmesg.sh flagged the guest '
                 'kernel log (see below)',
            '125': 'did NOT complete (VM timeout or crash; results are '
                   'partial)'}.get(vm_rc, f'exit status {vm_rc}')
shca_dev = facts.get('shca', {}).get('device', [])
rxe_dev = facts.get('rxe', {}).get('device', [])
doc = [
    '# rdma-core Python tests (pyverbs): shca and rdma_rxe side by side',
    '',
    'Generated by `scripts/pyverbs-compare.sh`, which rewrites everything '
    'above the notes marker at the end; edit only below it.',
    '',
    f'- date: {params["date"]}; shca git {params["commit"]}',
    f'- guest: Debian kernel {kver}, QEMU TCG, 2 vCPUs, 1 GiB '
    '(`scripts/vm.sh`); the VM run ' + vm_state,
    '- suite: rdma-core\'s `tests/` from python3-pyverbs '
    f'{params["pyverbs"] or "?"} '
    '(`/usr/share/doc/rdma-core/tests`, gunzipped into a scratch copy), '
    'run as `/usr/bin/python3 run_tests.py --dev DEV --gid N -v tests.MODULE`, '
    'one process per test module',
    '- rxe: `rdma link add rxe0 type rxe netdev lo`, GID index '
    f'{rxe_dev[1] if len(rxe_dev) > 1 else "?"} (::ffff:127.0.0.1)',
    f'- shca: `rdma link add shca0 type shca netdev {shca_nic or "pyv0"}` '
    f'on {shca_on} with 198.18.4.1/24'
    + (' (vm.sh --nic: QEMU user networking with restrict=on; its PCI '
       'device is shca0\'s parent, so /sys/class/infiniband/shca0/device/'
       'net/ names eth0, where the rdma_cm tests find the address)'
       if shca_nic == 'eth0' else '')
    + f', GID index {shca_dev[1] if len(shca_dev) > 1 else "?"} '
    '(RoCE v2, ::ffff:198.18.4.1), module parameter '
    f'`{(read(os.path.join(out, "shca", "udp_port")) or "?").strip()}` '
    '(rxe0 is deleted and rdma_rxe unloaded before shca loads)',
    '- the tests are single-host: each connects QPs of one device to each '
    'other (loopback through the device)',
    f'- hang protection: a test printing nothing for {stall} s is aborted '
    '(SIGABRT: faulthandler prints its Python stack, shown as the reason) and '
    'counted under "hang"; the rest of its module continues in a new process. '
    f'Per-device limit {dev_limit} s. "error" includes crashed processes.',
    '- wall time of the suite: ' + ', '.join(
        f'{d} {facts[d]["seconds"] or "?"} s' for d in devices),
    '',
    'Regenerate: `make -s modules-all provider && scripts/pyverbs-compare.sh` '
    '(one VM boot, about 15 minutes under TCG on 2 cores). '
    '`--modules "test_qp ..."` reruns a few modules into '
    '`build/pyverbs/report.md`. Raw logs: `build/pyverbs/vm/<device>/` (not '
    'committed); `build/pyverbs/vm/results.tsv` lists every result.',
    '',
    '## Summary',
    '',
] + summary + ['']
if 'rxe' in results and 'shca' in results:
    doc += ['## Differences and failures', '',
            'Every test whose result differs between the two devices or that '
            'fails on either. The reason is the first line of the skip '
            'message or the exception, then `[file:line function]` of the '
            'innermost test-suite frames (innermost first).', '']
    for title, rows in groups:
        doc += [f'### {title} ({len(rows)})', '']
        if rows:
            doc += ['| test | rxe | shca | reason |', '|---|---|---|---|'] + \
                   rows + ['']
        else:
            doc += ['None.', '']
# Why tests are skipped, device names made alike.
skips = {}
for d in devices:
    dn = (facts[d]['device'] or [d])[0]
    for st, why in results[d].values():
        if st == 'SKIP':
            why = short(why.replace(dn, 'DEV'), 120)
            skips.setdefault(why, {}).setdefault(d, 0)
            skips[why][d] += 1
if skips:
    doc += ['## Skip reasons', '',
            'How many tests each skip message covers (`DEV` is the device '
            'name).', '',
            '| reason | ' + ' | '.join(devices) + ' |',
            '|---|' + '---:|' * len(devices)]
    for why in sorted(skips, key=lambda w: (-sum(skips[w].values()), w)):
        doc.append(f'| {cell(why)} | ' +
                   ' | '.join(str(skips[why].get(d, 0)) for d in devices) +
                   ' |')
    doc.append('')
klines = []
for d in devices:
    for mod, lines in facts[d]['kernel']:
        klines.append(f'- {d}, during {mod}:')
        klines += [f'  `{cell(short(l, 160))}`' for l in lines[:6]]
doc += ['## Guest kernel log', '']
doc += (['Lines `scripts/check-dmesg.sh` flagged, by test module:', ''] +
        klines if klines else ['Nothing flagged during the test modules.'])
doc.append('')
if 'shca' in facts and facts['shca']['teardown'] is not None and \
        'rmmod shca: ok' not in facts['shca']['teardown']:
    doc += ['Note: removing shca0 or `rmmod shca` after the run failed:', '',
            '    ' + '\n    '.join(facts['shca']['teardown'].strip().split('\n')),
            '']
for d in devices:
    if facts[d]['aborted']:
        doc.append(f'Note: the {d} run was aborted: {facts[d]["aborted"]}.')
        doc.append('')

# Hand-written notes below the marker survive regeneration.
MARK = '<!-- Notes below this line are kept by pyverbs-compare.sh. -->'
notes = ''
old = read(report) or ''
if MARK in old:
    notes = old[old.index(MARK):]
text = '\n'.join(doc).rstrip('\n') + '\n'
if notes:
    text += '\n' + notes.rstrip('\n') + '\n'
with open(report, 'w') as f:
    f.write(text)

print('\n'.join(summary))
for title, rows in groups:
    if rows:
        print(f'{title}: {len(rows)}')
print(f'report: {report}')
with open(os.path.join(out, 'results.tsv'), 'w') as f:
    for tid in ids:
        f.write(tid + ''.join(f'\t{results[d][tid][0]}\t{results[d][tid][1]}'
                              for d in devices) + '\n')
