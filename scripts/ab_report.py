#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""ab_report.py: the table of a same-boot A/B (scripts/ab.sh).

Usage: ab_report.py DIR

DIR holds info and vm/ab.tsv (round, build, test, size, status, output
base) with each run's perftest outputs.  Per test and size: the median
of each build over the rounds, with min-max, and the ratio B/A of each
round's pair: its median, min-max, and in how many rounds B was better
(higher bandwidth, lower latency).
"""
import os
import re
import statistics
import sys


def value(path, test, size):
    """perftest's figure: bandwidth average (MB/s) or t_typical (us)."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    col = 4 if test.endswith('_lat') else 3
    for line in text.splitlines():
        w = line.split()
        if len(w) > col and w[0] == size and re.match(r'^[\d.]+$', w[col]):
            v = float(w[col])
            return v if v > 0 else None
    return None


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    d = argv[1]
    runs = {}
    order = []
    with open(os.path.join(d, 'vm', 'ab.tsv')) as f:
        for line in f:
            r, b, test, size, st, base = line.rstrip('\n').split('\t')
            if (test, size) not in order:
                order.append((test, size))
            if st != 'ok':
                continue
            # ib_send_bw: the receiver's figure, as scripts/bench.sh
            side = 'srv' if test == 'send_bw' else 'cli'
            v = value(os.path.join(d, 'vm', base + '.' + side), test, size)
            if v is not None:
                runs.setdefault((test, size), {}).setdefault(r, {})[b] = v
    with open(os.path.join(d, 'info')) as f:
        print(''.join('- ' + x for x in f))
    print('| test | size | A median (min-max) | B median (min-max) | '
          'B/A median (min-max) | B better |')
    print('|---|---:|---:|---:|---:|---:|')
    for test, size in order:
        per = runs.get((test, size), {})
        a = [x['a'] for x in per.values() if 'a' in x]
        b = [x['b'] for x in per.values() if 'b' in x]
        pairs = [x['b'] / x['a'] for x in per.values()
                 if 'a' in x and 'b' in x]
        lat = test.endswith('_lat')
        better = sum(1 for p in pairs if (p < 1 if lat else p > 1))

        def cell(v):
            if not v:
                return '-'
            return '%.4g (%.4g-%.4g)' % (statistics.median(v), min(v),
                                        max(v))
        print('| %s | %s | %s | %s | %s | %d of %d |' % (
            test, size, cell(a), cell(b), cell(pairs), better, len(pairs)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
