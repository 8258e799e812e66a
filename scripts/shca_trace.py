#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""shca_trace.py: read the text of an ftrace buffer (/sys/kernel/tracing/
trace, or `trace-cmd report`) into events.

Every shca tracepoint prints its fields as key=value pairs
(kernel/shca_trace.h); other events (kprobes, other subsystems) are kept
with whatever key=value pairs they print, so a caller may mix them.

Usage as a module: events = parse(open(path)); each event has .ts
(seconds, float), .cpu, .task, .name and .f (a dict of field strings),
and .i(key) reads an integer field.  Run alone, it prints a count of the
events of each name in a trace file.
"""
import re
import sys

# "  comm-123   [001] d..2.  1234.567890: name: rest" (the flags column is
# absent when irq-info is off; comm may hold spaces and dashes)
LINE = re.compile(r'^\s*(.+)-(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?'
                  r'(\d+\.\d+):\s+([\w:]+):\s?(.*)$')
FIELD = re.compile(r'(\w+)=(\S+)')


class Event:
    __slots__ = ('ts', 'cpu', 'task', 'pid', 'name', 'f', 'line')

    def __init__(self, ts, cpu, task, pid, name, f, line):
        self.ts = ts
        self.cpu = cpu
        self.task = task
        self.pid = pid
        self.name = name
        self.f = f
        self.line = line

    def i(self, key):
        """Field @key as an integer (decimal or 0x hex)."""
        return int(self.f[key], 0)

    def __repr__(self):
        return self.line


def parse(lines):
    """The events of @lines, in the order read (ftrace's is by time)."""
    events = []
    for raw in lines:
        if raw.startswith('#'):
            continue
        m = LINE.match(raw.rstrip('\n'))
        if not m:
            continue
        task, pid, cpu, ts, name, rest = m.groups()
        events.append(Event(float(ts), int(cpu), task.strip(), int(pid),
                            name, dict(FIELD.findall(rest)),
                            raw.rstrip('\n')))
    return events


def main(argv):
    if len(argv) != 2:
        sys.stderr.write('usage: shca_trace.py TRACE\n')
        return 2
    with open(argv[1]) as f:
        events = parse(f)
    counts = {}
    for e in events:
        counts[e.name] = counts.get(e.name, 0) + 1
    for name in sorted(counts):
        print('%8d %s' % (counts[name], name))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
