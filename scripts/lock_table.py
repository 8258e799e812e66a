#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""lock_table.py: how the module takes each of its locks, from the code.

Usage:
  lock_table.py doc [DOC]
      rewrite the table between the "lock-usage" markers of DOC
      (default Documentation/datapath.md) from kernel/
  lock_table.py check [DOC]
      exit 1, saying why, when that table is not what "doc" would write,
      when a lock declared in kernel/ is not in LOCKS below (or LOCKS
      names one that is not declared), or when a lock has no row in
      DOC's hand-written "Locks" table

Every spinlock_t, struct mutex, DEFINE_MUTEX and DEFINE_SPINLOCK of
kernel/ is in LOCKS: its declaration (struct and field, or the static
name), the name the documentation uses, and the expressions the code
takes it through.  The generated table lists, per lock, each locking
call the code makes on it, how many times and in which functions:
what lockdep then checks on the debug kernel (make check-debug).
"""
import collections
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = '<!-- lock-usage begin: scripts/lock_table.py doc writes this -->'
END = '<!-- lock-usage end -->'

# declaration -> (documented name, expressions the code uses)
LOCKS = {
    'shca_qp.lock': ('qp->lock', ['qp->lock']),
    'shca_qp.sq_lock': ('qp->sq_lock', ['qp->sq_lock']),
    'shca_qp.rq_lock': ('qp->rq_lock', ['qp->rq_lock']),
    'shca_cq.lock': ('cq->lock', ['cq->lock']),
    'shca_srq.lock': ('srq->lock', ['srq->lock']),
    'shca_engine.rx_lock': ('eng->rx_lock', ['eng->rx_lock']),
    'shca_engine.tx_lock': ('eng->tx_lock',
                            ['eng->tx_lock', 'sdev->eng->tx_lock']),
    'shca_engine.sched_lock': ('eng->sched_lock', ['eng->sched_lock']),
    'shca_engine.poll_lock': ('eng->poll_lock', ['eng->poll_lock']),
    'shca_txc.lock': ('eng->txc.lock', ['txc->lock']),
    'shca_mcg_table.lock': ('eng->mcg.lock', ['eng->mcg.lock']),
    'shca_pd.rkey_lock': ('shca_pd.rkey_lock', ['pd->rkey_lock']),
    'shca_rkey_set.lock': ('shca_rkey_set.lock',
                           ['set->lock', 'qp->rkeys.lock']),
    'shca_dmw.lock': ('shca_dmw.lock', ['w->lock']),
    'shca_mr_table.lock': ('shca_mr_table.lock', ['t->lock']),
    'shca_dev_mutex': ('shca_dev_mutex', ['shca_dev_mutex']),
    'shca_net_mutex': ('shca_net_mutex', ['shca_net_mutex']),
    'shca_fault_mutex': ('shca_fault_mutex', ['shca_fault_mutex']),
    'shca_func_mutex': ('shca_func_mutex', ['shca_func_mutex']),
}

DECL_FIELD = re.compile(r'^\s*(?:spinlock_t|struct mutex)\s+(\w+);')
DECL_STATIC = re.compile(r'^static (?:DEFINE_MUTEX|DEFINE_SPINLOCK)\((\w+)\)')
STRUCT = re.compile(r'^struct (\w+) \{')
CALL = re.compile(r'\b((?:spin_(?:try)?lock|mutex_(?:try)?lock)\w*)'
                  r'\(&([\w>.\-]+)[,)]')
FUNC = re.compile(r'^[a-z][\w \*]*?\b(\w+)\([^;]*$')


def sources():
    """Every .c and .h file of kernel/, but the pure mechanisms."""
    for d, _, files in sorted(os.walk(os.path.join(TOP, 'kernel'))):
        if os.path.basename(d) == 'mech':
            continue
        for f in sorted(files):
            if f.endswith(('.c', '.h')) and not f.endswith('.mod.c'):
                yield os.path.join(d, f)


def declared():
    """The locks declared in kernel/, as LOCKS keys."""
    found = set()
    for path in sources():
        struct = None
        with open(path) as f:
            for line in f:
                m = STRUCT.match(line)
                if m:
                    struct = m.group(1)
                elif line.startswith('};'):
                    struct = None
                m = DECL_FIELD.match(line)
                if m and struct:
                    found.add('%s.%s' % (struct, m.group(1)))
                m = DECL_STATIC.match(line)
                if m:
                    found.add(m.group(1))
    return found


def usage():
    """{documented name: {call: [functions]}} from every locking call."""
    by_expr = {}
    for name, exprs in LOCKS.values():
        for e in exprs:
            by_expr[e] = name
    use = collections.defaultdict(lambda: collections.defaultdict(list))
    unknown = []
    for path in sources():
        if not path.endswith('.c'):
            continue
        func = None
        with open(path) as f:
            for line in f:
                m = FUNC.match(line)
                if m and not line.rstrip().endswith(';'):
                    func = m.group(1)
                for call, expr in CALL.findall(line):
                    if call.endswith('_init'):
                        continue
                    if expr not in by_expr:
                        unknown.append('%s: %s(&%s' % (
                            os.path.relpath(path, TOP), call, expr))
                        continue
                    use[by_expr[expr]][call].append(func or '?')
    return use, unknown


def table():
    """The generated table, one row per lock in LOCKS order."""
    use, unknown = usage()
    rows = ['| lock | taken with (calls in the code, and where) |',
            '|---|---|']
    for decl, (name, _) in LOCKS.items():
        calls = []
        for call in sorted(use.get(name, {})):
            funcs = sorted(set(use[name][call]))
            where = ', '.join('`%s()`' % f for f in funcs[:4])
            if len(funcs) > 4:
                where += ' and %d more' % (len(funcs) - 4)
            calls.append('`%s` x%d: %s' % (call, len(use[name][call]),
                                           where))
        where = '`struct %s`' % decl if '.' in decl else 'static'
        rows.append('| `%s` (%s) | %s |' % (
            name, where, '; '.join(calls) or 'not taken'))
    return '\n'.join(rows) + '\n', unknown


def doc_parts(doc):
    with open(doc) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        sys.exit('%s: no %s ... %s markers' % (doc, BEGIN, END))
    head, rest = text.split(BEGIN, 1)
    body, tail = rest.split(END, 1)
    return head, body, tail


def check(doc):
    errors = []
    decl = declared()
    for d in sorted(decl - set(LOCKS)):
        errors.append('lock %s is declared but not in LOCKS' % d)
    for d in sorted(set(LOCKS) - decl):
        errors.append('LOCKS names %s, which is not declared' % d)
    text, unknown = table()
    errors += ['a locking call on an expression LOCKS does not know: ' + u
               for u in unknown]
    head, body, _ = doc_parts(doc)
    if body.strip() != text.strip():
        errors.append('%s: the lock-usage table is stale (run %s doc)' %
                      (doc, sys.argv[0]))
    hand = head.split('## Locks', 1)[-1]
    for name, _ in LOCKS.values():
        if '| `%s`' % name not in hand:
            errors.append('%s: the Locks table has no row for `%s`' %
                          (doc, name))
    for e in errors:
        print(e, file=sys.stderr)
    return 1 if errors else 0


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ('doc', 'check'):
        sys.exit(__doc__)
    doc = sys.argv[2] if len(sys.argv) > 2 else \
        os.path.join(TOP, 'Documentation', 'datapath.md')
    if sys.argv[1] == 'check':
        return check(doc)
    head, _, tail = doc_parts(doc)
    text, unknown = table()
    for u in unknown:
        print('unknown lock expression: ' + u, file=sys.stderr)
    with open(doc, 'w') as f:
        f.write(head + BEGIN + '\n' + text + END + tail)
    return 1 if unknown else 0


if __name__ == '__main__':
    sys.exit(main())
