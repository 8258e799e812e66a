#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""check_times.py: where the time of the in-VM selftests goes.

Usage:
  check_times.py collect TSV KVER=OUTPUT_LOG...
      parse the output.log of each kernel's tests/selftests/run.sh and
      write TSV (one row per selftest: kernel, test, status, seconds,
      checks planned, checks seen) and TSV's ".checks" companion (one
      row per check of a selftest: kernel, test, number, seconds,
      status, description)
  check_times.py top TSV [N]
      print the N (default 10) slowest selftests and the N slowest
      checks, and each kernel's total
  check_times.py doc DOC LABEL=TSV...
      rewrite the table between the "check-times" markers of DOC
      (Documentation/testing.md) from the runs given: every selftest's
      time in each run on each kernel, its number of checks and its
      slowest check in the first run

run.sh ends each selftest with "ok N selftests: shca: NAME (SECSs)"; the
checks of a script built on lib.sh end with the seconds since the check
before ("# ok 3 - description (1.2s)").
"""
import os
import re
import sys

TEST_START = re.compile(r'^# selftests: shca: (\S+)$')
TEST_END = re.compile(r'^(ok|not ok) \d+ selftests: shca: (\S+)(.*)$')
SECS = re.compile(r'\((\d+)s\)|TIMEOUT (\d+)s')
PLAN = re.compile(r'^# 1\.\.(\d+)')
CHECK = re.compile(r'^# (ok|not ok) (\d+) - (.*?)(?: \((\d+\.\d)s\))?$')
BEGIN = '<!-- check-times begin: scripts/check_times.py doc writes this -->'
END = '<!-- check-times end -->'


def parse(kver, path):
    """Yield (test row, [check rows]) for each selftest in one log."""
    test = None
    checks = []
    plan = ''
    with open(path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            m = TEST_START.match(line)
            if m:
                test, checks, plan = m.group(1), [], ''
                continue
            m = TEST_END.match(line)
            if m and m.group(2) == test:
                rest = m.group(3)
                status = 'pass' if m.group(1) == 'ok' else 'fail'
                if '# SKIP' in rest:
                    status = 'skip'
                s = SECS.search(rest)
                secs = (s.group(1) or s.group(2)) if s else ''
                yield ([kver, test, status, secs, plan, str(len(checks))],
                       checks)
                test = None
                continue
            if test is None:
                continue
            m = PLAN.match(line)
            if m and not plan:
                plan = m.group(1)
                continue
            m = CHECK.match(line)
            if m:
                st = 'pass' if m.group(1) == 'ok' else 'fail'
                desc = m.group(3).replace('\t', ' ')
                if '# SKIP' in desc:
                    st = 'skip'
                checks.append([kver, test, m.group(2), m.group(4) or '',
                               st, desc])


def read_tsv(path):
    with open(path) as f:
        return [line.rstrip('\n').split('\t') for line in f if line.strip()]


def collect(tsv, pairs):
    rows, crows = [], []
    for p in pairs:
        kver, _, log = p.partition('=')
        if not os.path.exists(log):
            continue
        for row, checks in parse(kver, log):
            rows.append(row)
            crows.extend(checks)
    os.makedirs(os.path.dirname(os.path.abspath(tsv)), exist_ok=True)
    with open(tsv, 'w') as f:
        for r in rows:
            f.write('\t'.join(r) + '\n')
    with open(tsv + '.checks', 'w') as f:
        for r in crows:
            f.write('\t'.join(r) + '\n')


def num(s):
    try:
        return float(s)
    except ValueError:
        return 0.0


def top(tsv, n):
    rows = read_tsv(tsv)
    crows = read_tsv(tsv + '.checks') if os.path.exists(tsv + '.checks') \
        else []
    totals = {}
    for r in rows:
        totals[r[0]] = totals.get(r[0], 0) + num(r[3])
    print('check: selftest time per kernel: ' +
          ', '.join('%s %d s (%.1f min)' % (k, v, v / 60)
                    for k, v in totals.items()))
    print('check: the %d slowest selftests:' % n)
    for r in sorted(rows, key=lambda r: -num(r[3]))[:n]:
        print('check:   %6s s  %-18s %s' % (r[3], r[1], r[0]))
    print('check: the %d slowest checks:' % n)
    timed = [r for r in crows if r[3]]
    for r in sorted(timed, key=lambda r: -num(r[3]))[:n]:
        print('check:   %6s s  %s #%s %s (%s)' %
              (r[3], r[1], r[2], r[5][:70], r[0]))
    print('check: every time: %s and %s.checks' % (tsv, tsv))


def short(kver):
    """6.1.0-57-amd64 -> 6.1; 6.12.117+deb12-amd64 -> 6.12"""
    m = re.match(r'(\d+\.\d+)', kver)
    return m.group(1) if m else kver


def doc(path, runs):
    """The table of DOC from one or more runs: RUNS are LABEL=TSV, each
    kernel of each run a column; the slowest check is the first run's."""
    cols, secs, plan, slow, tests = [], {}, {}, {}, set()
    for n, spec in enumerate(runs):
        label, _, tsv = spec.partition('=')
        for r in read_tsv(tsv):
            col = '%s, %s' % (label, short(r[0]))
            if col not in cols:
                cols.append(col)
            secs[(col, r[1])] = r[3]
            plan.setdefault(r[1], r[4] or r[5])
            tests.add(r[1])
        if n == 0 and os.path.exists(tsv + '.checks'):
            for r in read_tsv(tsv + '.checks'):
                if r[1] not in slow or num(r[3]) > num(slow[r[1]][3]):
                    slow[r[1]] = r
    out = [BEGIN, '',
           '| selftest | ' + ' | '.join('%s (s)' % c for c in cols) +
           ' | checks | slowest check in %s (s, kernel) |' %
           runs[0].partition('=')[0],
           '|---|' + '---:|' * len(cols) + '---:|---|']
    for t in sorted(tests):
        cells = [secs.get((c, t), '') or '-' for c in cols]
        s = slow.get(t)
        sc = '%s: %s (%s, %s)' % (s[2], s[5], s[3], short(s[0])) \
            if s and s[3] else ''
        sc = sc.replace('|', '\\|')
        out.append('| `%s` | %s | %s | %s |' %
                   (t, ' | '.join(cells), plan.get(t, ''), sc))
    tot = ['%d' % sum(num(secs.get((c, t), '0')) for t in tests)
           for c in cols]
    out.append('| all | %s | %d | |' %
               (' | '.join(tot), sum(num(plan.get(t, '0')) for t in tests)))
    out += ['', END]
    with open(path) as f:
        text = f.read()
    a, b = text.find(BEGIN), text.find(END)
    if a < 0 or b < a:
        sys.exit('%s: no check-times markers' % path)
    text = text[:a] + '\n'.join(out) + text[b + len(END):]
    with open(path, 'w') as f:
        f.write(text)


def main(argv):
    if len(argv) >= 3 and argv[1] == 'collect':
        collect(argv[2], argv[3:])
    elif len(argv) in (3, 4) and argv[1] == 'top':
        top(argv[2], int(argv[3]) if len(argv) == 4 else 10)
    elif len(argv) >= 4 and argv[1] == 'doc':
        doc(argv[2], argv[3:])
    else:
        sys.exit(__doc__)


main(sys.argv)
