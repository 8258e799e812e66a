#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""latency_split.py: where a ping-pong's round trip goes, stage by stage,
from the traces scripts/latency-split-guest.sh recorded.

Usage:
  latency_split.py report DIR            print the split as Markdown
  latency_split.py doc DIR DOC           ... and put it between the
                                         "latency-split" markers of DOC

DIR holds SETTING-TEST-DEV-REP.trace (the ftrace buffer of a traced
run), .cli and .srv (its perftest outputs) and .plain (an untraced run's
client output), and guest-info.

An iteration starts where the kernel first sees the client's post (shca:
the engine fetches the WQE, tracepoint shca_fetch; rxe: the post_send
system call, a kprobe on rxe_post_send) and follows one message to the
server and the server's answer back, stage by stage: each stage is the
first event of its kind after the stage before it, and the client's next
post closes the iteration (the client's own turnaround, which for shca
includes the time until the engine finds the post in the ring).
The client and the server are told apart by their task names (cli_*,
srv_*) and shca's packets by QP number (perftest prints both).  The
first iterations are left out (connection set-up, first touches).
"""
import bisect
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import shca_trace  # noqa: E402

SKIP = 50           # first iterations left out
BEGIN = '<!-- latency-split begin: scripts/latency_split.py doc writes this -->'
END = '<!-- latency-split end -->'


def not_ack(e):
    return not e.f.get('op', '').endswith('_ACK')


class Roles:
    """Who is who in a run: the client's and the server's QPN (decimal
    strings) and device."""

    def __init__(self, cqpn, sqpn, cdev, sdev):
        self.qpn = {'cli': cqpn, 'srv': sqpn}
        self.dev = {'cli': cdev, 'srv': sdev}


def shca_stages(send):
    """(label, event, predicate(event, roles)); the first is the
    iteration's anchor.  A process posts into its ring with no system
    call, so a post is first seen by the kernel when the engine fetches
    it (a uprobe on the provider would add a trap to every post, into
    the path being measured)."""
    def mine(a):
        return lambda e, r: (e.f['qpn'] == r.qpn[a] and
                             e.f['dev'] == r.dev[a])

    def towards(b):
        return lambda e, r: e.f['dqpn'] == r.qpn[b] and not_ack(e)

    def at(b):
        return lambda e, r: (e.f['qpn'] == r.qpn[b] and
                             e.f['dev'] == r.dev[b] and not_ack(e))

    def one_way(a, b):
        st = [
            ('%s: WQE fetched' % a, 'shca_fetch', mine(a)),
            ('%s: packet built' % a, 'shca_req_pkt', mine(a)),
            ('%s: packet out' % a, 'shca_wire_tx', towards(b)),
            ('%s: packet in' % b, 'shca_rx',
             lambda e, r: towards(b)(e, r) and e.f['dev'] == r.dev[b]),
            ('%s: drain took it' % b, 'shca_rx_handle', at(b)),
            ('%s: payload placed' % b, 'shca_place', at(b)),
        ]
        if send:
            st.append(('%s: completion written' % b, 'shca_cqe',
                       lambda e, r: at(b)(e, r) and e.f['op'] == 'RECV'))
        return st
    return one_way('cli', 'srv') + one_way('srv', 'cli')


def rxe_stages(send):
    """As shca_stages(): kprobes, told apart by order and task names."""
    def one_way(a, b):
        st = [
            ('%s: post (system call)' % a, 'rxe_post',
             lambda e, r: e.task.startswith(a)),
            ('%s: requester' % a, 'rxe_req', lambda e, r: True),
            ('%s: packet out' % a, 'rxe_xmit',
             lambda e, r: e.f.get('op') != '17'),
            ('%s: queued for responder' % b, 'rxe_respq',
             lambda e, r: True),
            ('%s: responder' % b, 'rxe_resp', lambda e, r: True),
        ]
        if send:
            st.append(('%s: completion written' % b, 'rxe_cq',
                       lambda e, r: e.f.get('op') == '128'))
        return st
    return one_way('cli', 'srv') + one_way('srv', 'cli')


def qpns(path):
    """(client QPN, server QPN) as decimal strings, from perftest's
    client output ("local address: ... QPN 0x0011 ...", then remote)."""
    with open(path) as f:
        found = re.findall(r'QPN (0x[0-9a-fA-F]+)', f.read())
    if len(found) < 2:
        return None, None
    return str(int(found[0], 16)), str(int(found[1], 16))


def typical(path):
    """perftest's t_typical (us) from a latency test's output, or None."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    m = re.search(r'^\s*\d+\s+\d+\s+[\d.]+\s+[\d.]+\s+([\d.]+)', text, re.M)
    return float(m.group(1)) if m else None


def split(events, stages, roles):
    """Per iteration: the times (us) from each stage to the next, and the
    client's turnaround (the last stage to the next post)."""
    first = stages[0]
    anchors = [e for e in events if e.name == first[1] and
               first[2](e, roles)]
    by_name, times = {}, {}
    for e in events:
        by_name.setdefault(e.name, []).append(e)
        times.setdefault(e.name, []).append(e.ts)
    out = []
    incomplete = 0
    for k in range(len(anchors) - 1):
        t0, t_end = anchors[k].ts, anchors[k + 1].ts
        ts = [t0]
        t = t0
        for label, name, pred in stages[1:]:
            hit = None
            cand = by_name.get(name, [])
            for i in range(bisect.bisect_left(times.get(name, []), t),
                           len(cand)):
                e = cand[i]
                if e.ts >= t_end:
                    break
                if pred(e, roles):
                    hit = e
                    break
            if not hit:
                break
            t = hit.ts
            ts.append(t)
        if len(ts) != len(stages):
            incomplete += 1
            continue
        ts.append(t_end)
        out.append([(ts[i + 1] - ts[i]) * 1e6 for i in range(len(ts) - 1)])
    return out[SKIP:], incomplete


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def runs(d):
    """{(setting, test, dev): [rep, ...]} of the traced runs in @d."""
    found = {}
    for name in sorted(os.listdir(d)):
        m = re.match(r'(\w+)-(\w+)-(shca|rxe)-(\d+)\.trace$', name)
        if m:
            found.setdefault(m.groups()[:3], []).append(m.group(4))
    return found


def analyse(d, setting, test, dev, reps):
    send = test.startswith('send')
    stages = shca_stages(send) if dev == 'shca' else rxe_stages(send)
    rows = []
    plain, traced, incomplete = [], [], 0
    for r in reps:
        base = os.path.join(d, '%s-%s-%s-%s' % (setting, test, dev, r))
        c, s = qpns(base + '.cli')
        with open(base + '.devs') as f:
            devs = dict(x.split('=') for x in f.read().split())
        with open(base + '.trace') as f:
            ev = shca_trace.parse(f)
        it, inc = split(ev, stages, Roles(c, s, devs['cli'], devs['srv']))
        incomplete += inc
        rows += it
        p = typical(base + '.plain')
        if p is not None:
            plain.append(p)
        t = typical(base + '.cli')
        if t is not None:
            traced.append(t)
    seen = 'completion' if send else 'data placed'
    labels = [x[0] for x in stages[1:]] + [
        'cli: %s to next WQE fetched (app: poll, post; doorbell or '
        'poller)' % seen if dev == 'shca' else
        'cli: %s to next post (app: poll, post system call)' % seen]
    return {'labels': labels, 'rows': rows, 'plain': plain,
            'traced': traced, 'incomplete': incomplete, 'stages': stages}


def fmt(x):
    return '%.1f' % x if x < 100 else '%.0f' % x


def table(a):
    lines = ['| stage (time from the stage before) | median (us) | p99 (us) |',
             '|---|---:|---:|']
    if not a['rows']:
        return lines + ['| (no complete iteration) | | |']
    for i, label in enumerate(a['labels']):
        col = [r[i] for r in a['rows']]
        lines.append('| %s | %s | %s |' % (label, fmt(statistics.median(col)),
                                          fmt(pct(col, 99))))
    tot = [sum(r) for r in a['rows']]
    lines.append('| **round trip** (sum) | **%s** | %s |' %
                 (fmt(statistics.median(tot)), fmt(pct(tot, 99))))
    return lines


def report(d):
    info = {}
    with open(os.path.join(d, 'guest-info')) as f:
        for line in f:
            k, _, v = line.strip().partition('=')
            info[k] = v
    out = ['- guest kernel %s, %s vCPUs, QEMU TCG; %s iterations per run, '
           '%s run(s) of each; the first %d iterations of each run left '
           'out' % (info.get('kernel'), info.get('cpus'), info.get('iters'),
                    info.get('reps'), SKIP)]
    found = runs(d)
    names = {'one': 'One device talking to itself (on lo)',
             'two': 'Two devices of one host (veth, MTU 1500)'}
    for setting in ('one', 'two'):
        for test in ('send_lat', 'write_lat'):
            res = {}
            for dev in ('shca', 'rxe'):
                if (setting, test, dev) in found:
                    res[dev] = analyse(d, setting, test, dev,
                                       found[(setting, test, dev)])
            if not res:
                continue
            out += ['', '### %s: ib_%s, 64 B' % (names[setting], test), '']
            for dev, a in res.items():
                tr = [sum(r) for r in a['rows']]
                out.append('- %s: untraced t_typical %s us; traced %s us '
                           '(perftest), split round trip median %s us over '
                           '%d iterations (%d incomplete left out)' % (
                               dev,
                               '/'.join(fmt(x) for x in a['plain']) or '-',
                               '/'.join(fmt(x) for x in a['traced']) or '-',
                               fmt(statistics.median(tr)) if tr else '-',
                               len(a['rows']), a['incomplete']))
            for dev, a in res.items():
                out += ['', '%s:' % dev, ''] + table(a)
    return '\n'.join(out) + '\n'


def doc(d, path):
    text = report(d)
    with open(path) as f:
        cur = f.read()
    if BEGIN not in cur or END not in cur:
        sys.stderr.write('%s: no latency-split markers\n' % path)
        return 1
    head, rest = cur.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(path, 'w') as f:
        f.write(head + BEGIN + '\n\n' + text + '\n' + END + tail)
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == 'report':
        sys.stdout.write(report(argv[2]))
        return 0
    if len(argv) == 4 and argv[1] == 'doc':
        return doc(argv[2], argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
