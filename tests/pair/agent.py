#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""agent.py: run commands on the other guest of a pair (scripts/pair.sh).

The peer guest serves; the guest that runs the tests calls it over the
link between them:

  agent.py serve PORT            (on the peer; until a "quit" request)
  agent.py call HOST PORT run SECS CMD
                                 run CMD with bash, at most SECS seconds;
                                 print its output, exit with its status
  agent.py call HOST PORT start NAME CMD
                                 start CMD in the background as NAME;
                                 print its process id
  agent.py call HOST PORT wait NAME SECS
                                 wait at most SECS for NAME; print its
                                 output, exit with its status (124 when
                                 it had to be killed)
  agent.py call HOST PORT quit

One request per connection: a JSON object on one line, answered by one.
Both guests are throw-away test VMs on a private link; the agent runs what
it is sent, as root, by design.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile

TIMEOUT_RC = 124


def spawn(cmd, out):
    """CMD under bash in a session of its own (killed as a group)."""
    return subprocess.Popen(['bash', '-c', cmd], stdout=out,
                            stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)


def finish(p, log, secs):
    """Wait at most SECS for P, killing its group after; (rc, output)."""
    try:
        rc = p.wait(timeout=secs)
        note = ''
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        rc = TIMEOUT_RC
        note = f'\n(killed after {secs} s)\n'
    log.seek(0)
    out = log.read().decode(errors='replace') + note
    log.close()
    return rc, out


def serve(port):
    jobs = {}   # name -> (Popen, output file)
    srv = socket.create_server(('', port), reuse_port=False)
    while True:
        conn, _ = srv.accept()
        with conn, conn.makefile('rw') as f:
            req = json.loads(f.readline() or '{}')
            op = req.get('op')
            if op == 'run':
                log = tempfile.TemporaryFile()
                rc, out = finish(spawn(req['cmd'], log), log, req['secs'])
                ans = {'rc': rc, 'out': out}
            elif op == 'start':
                log = tempfile.TemporaryFile()
                p = spawn(req['cmd'], log)
                jobs[req['name']] = (p, log)
                ans = {'rc': 0, 'out': f'{p.pid}\n'}
            elif op == 'wait' and req.get('name') in jobs:
                p, log = jobs.pop(req['name'])
                rc, out = finish(p, log, req['secs'])
                ans = {'rc': rc, 'out': out}
            elif op == 'quit':
                for p, log in jobs.values():
                    finish(p, log, 0)
                f.write(json.dumps({'rc': 0, 'out': ''}) + '\n')
                return
            else:
                ans = {'rc': 2, 'out': f'agent: bad request {req}\n'}
            f.write(json.dumps(ans) + '\n')


def call(host, port, req):
    with socket.create_connection((host, port), timeout=None) as s, \
            s.makefile('rw') as f:
        f.write(json.dumps(req) + '\n')
        f.flush()
        ans = json.loads(f.readline())
    sys.stdout.write(ans['out'])
    return ans['rc']


def main(argv):
    if len(argv) == 3 and argv[1] == 'serve':
        serve(int(argv[2]))
        return 0
    if len(argv) < 5 or argv[1] != 'call':
        sys.stderr.write(__doc__)
        return 2
    host, port, op, args = argv[2], int(argv[3]), argv[4], argv[5:]
    if op == 'run' and len(args) == 2:
        req = {'op': op, 'secs': int(args[0]), 'cmd': args[1]}
    elif op == 'start' and len(args) == 2:
        req = {'op': op, 'name': args[0], 'cmd': args[1]}
    elif op == 'wait' and len(args) == 2:
        req = {'op': op, 'name': args[0], 'secs': int(args[1])}
    elif op == 'quit' and not args:
        req = {'op': op}
    else:
        sys.stderr.write(__doc__)
        return 2
    return call(host, port, req)


if __name__ == '__main__':
    sys.exit(main(sys.argv))
