#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""trace_check.py: the checks of trace.sh on a saved ftrace buffer.

Usage: trace_check.py CASE TRACE [ARGS...]
  none TRACE                  no shca event at all
  rc TRACE N SIZE MTU         ibv_rc_pingpong -n N -s SIZE, path MTU MTU
  ud TRACE N SIZE             ibv_ud_pingpong -n N -s SIZE
  read TRACE N SIZE MTU DEV   ib_read_lat -n N -s SIZE, DEV reads
  rnr TRACE SENDER RECEIVER   RNR NAKs from RECEIVER stop SENDER
  timeout TRACE DEV           DEV's ACK timeout fires and it resends
  cm TRACE                    rdma_cm over the GSI QPs of kernel MADs

Each check prints what it found ("# ..." lines for TAP) and the first
events that broke it; the exit status is 0 when every check held.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.environ.get('SHCA_TOP', '.'), 'scripts'))
import shca_trace  # noqa: E402

failed = []


def check(ok, what, bad=None):
    print('# %s: %s' % ('ok' if ok else 'FAILED', what))
    if not ok:
        failed.append(what)
        for e in (bad or [])[:5]:
            print('#   %s' % e.line.strip())


def named(ev, name, **want):
    """Events called @name whose fields equal @want (strings)."""
    return [e for e in ev if e.name == name and
            all(e.f.get(k) == str(v) for k, v in want.items())]


def by_key(ev, name, *keys):
    """Events called @name indexed by the tuple of fields @keys."""
    idx = {}
    for e in ev:
        if e.name == name:
            idx.setdefault(tuple(e.f.get(k) for k in keys), []).append(e)
    return idx


def first_after(cands, t):
    for e in cands or []:
        if e.ts >= t:
            return e
    return None


def follow(ev, reqs, what):
    """
    Each requester packet in @reqs (shca_req_pkt) must pass every later
    stage, in time order: the wire layer took it (shca_xmit) and sent it
    (shca_wire_tx), the peer received it (shca_rx) and its drain handled
    it for the QP the packet names (shca_rx_handle).  Returns the
    shca_rx_handle events, by (device, qpn, psn).
    """
    xmit = by_key(ev, 'shca_xmit', 'dqpn', 'psn', 'op')
    wire = by_key(ev, 'shca_wire_tx', 'dqpn', 'psn', 'op')
    rx = by_key(ev, 'shca_rx', 'dqpn', 'psn', 'op')
    hand = by_key(ev, 'shca_rx_handle', 'qpn', 'psn', 'op')
    got = {}
    bad = {'xmit': [], 'wire': [], 'rx': [], 'handle': []}
    for r in reqs:
        k = (r.f['dqpn'], r.f['psn'], r.f['op'])
        x = first_after(xmit.get(k), r.ts)
        w = x and first_after(wire.get(k), x.ts)
        v = w and first_after(rx.get(k), w.ts)
        h = v and first_after(hand.get(k), v.ts)
        for stage, e in (('xmit', x), ('wire', w), ('rx', v),
                         ('handle', h)):
            if not e:
                bad[stage].append(r)
                break
        if h:
            if h.f['dev'] == r.f['dev']:
                bad['handle'].append(h)
            got[(h.f['dev'], h.f['qpn'], h.f['psn'])] = h
    check(not bad['xmit'], '%s: every packet the requester built went to '
          'the wire layer (shca_xmit)' % what, bad['xmit'])
    check(not bad['wire'], '%s: ... left it (shca_wire_tx)' % what,
          bad['wire'])
    check(not bad['rx'], '%s: ... arrived at the peer (shca_rx)' % what,
          bad['rx'])
    check(not bad['handle'], "%s: ... and the peer's drain handled it for "
          'the QP it names, on the other device (shca_rx_handle)' % what,
          bad['handle'])
    return got


def check_places(ev, got, size, mtu, what, op_prefix):
    """The payload of every handled packet was placed where it belongs."""
    place = by_key(ev, 'shca_place', 'dev', 'qpn', 'psn')
    bad = []
    for k, h in got.items():
        p = first_after(place.get(k), h.ts)
        if not p or not p.f['op'].startswith(op_prefix):
            bad.append(h)
    check(not bad, '%s: every packet handled was placed '
          '(shca_place, same QP and PSN)' % what, bad)
    pl = [e for e in ev if e.name == 'shca_place' and
          e.f['op'].startswith(op_prefix)]
    badlen = [e for e in pl if e.i('off') % mtu or
              e.i('len') != min(mtu, size - e.i('off'))]
    check(pl and not badlen, '%s: %d placements, each MTU-aligned with the '
          "packet's share of the %d bytes" % (what, len(pl), size), badlen)


def cqes(ev, op, size, status='SUCCESS'):
    return named(ev, 'shca_cqe', op=op, status=status, len=size)


def case_none(ev):
    shca = [e for e in ev if e.name.startswith('shca_')]
    check(not shca, 'no shca event recorded (%d)' % len(shca), shca)


def case_rc(ev, n, size, mtu):
    npk = -(-size // mtu)
    fetch = named(ev, 'shca_fetch', op='SEND', len=size, status='SUCCESS')
    check(len(fetch) == 2 * n, '%d SEND WQEs fetched (shca_fetch), %d '
          'expected' % (len(fetch), 2 * n))
    reqs = [e for e in ev if e.name == 'shca_req_pkt' and
            e.f['op'].startswith('RC_SEND')]
    fresh = [e for e in reqs if e.f['retrans'] == '0']
    check(len(fresh) == 2 * n * npk, '%d SEND packets built (shca_req_pkt), '
          '%d expected' % (len(fresh), 2 * n * npk))
    idx = [e for e in fresh if e.i('off') % mtu or e.i('off') >= size]
    check(not idx, 'each packet at an MTU offset of its message', idx)
    got = follow(ev, reqs, 'RC')
    check_places(ev, got, size, mtu, 'RC', 'RC_SEND')
    rc = cqes(ev, 'RECV', size)
    sc = cqes(ev, 'SEND', size)
    check(len(rc) == 2 * n and len(sc) == 2 * n,
          'completions: %d RECV and %d SEND of %d bytes (shca_cqe), %d '
          'each expected' % (len(rc), len(sc), size, 2 * n))
    acks = named(ev, 'shca_ack_recv', type='ACK')
    sent = by_key(ev, 'shca_ack_send', 'psn', 'type')
    bad = [a for a in acks if not any(
        s.ts <= a.ts and s.f['dev'] != a.f['dev']
        for s in sent.get((a.f['psn'], 'ACK'), []))]
    check(acks and not bad, '%d ACKs taken (shca_ack_recv), each sent '
          'before by the peer (shca_ack_send)' % len(acks), bad)
    devs = {e.f['dev'] for e in fresh}
    rung = {e.f['dev'] for e in ev if e.name in ('shca_doorbell',
                                                  'shca_db_state')}
    check(len(devs) == 2 and devs <= rung, 'both devices sent, and each '
          'rang or changed a send ring state (%s)' % ' '.join(sorted(rung)))


def case_ud(ev, n, size):
    reqs = named(ev, 'shca_req_pkt', op='UD_SEND_ONLY', len=size)
    check(len(reqs) == 2 * n, '%d UD datagrams built, %d expected' %
          (len(reqs), 2 * n))
    got = follow(ev, reqs, 'UD')
    pl = named(ev, 'shca_place', op='UD_SEND_ONLY', off=40, len=size)
    check(len(pl) == 2 * n and len(got) == 2 * n,
          '%d datagrams placed after their 40-byte GRH (shca_place)' %
          len(pl))
    rc = cqes(ev, 'RECV', size + 40)
    check(len(rc) == 2 * n, '%d receive completions of %d bytes' %
          (len(rc), size + 40))


def case_read(ev, n, size, mtu, dev):
    npk = -(-size // mtu)
    reqs = named(ev, 'shca_req_pkt', dev=dev, op='RC_READ_REQ', len=size,
                 retrans=0)
    check(len(reqs) >= n, '%d READ requests built by %s (>= %d)' %
          (len(reqs), dev, n))
    got = follow(ev, reqs, 'READ')
    rsp = [e for e in ev if e.name == 'shca_xmit' and
           e.f['op'].startswith('RC_READ_RSP') and e.f['dev'] != dev]
    check(len(rsp) >= n * npk, '%d READ responses sent by the responder '
          '(>= %d)' % (len(rsp), n * npk))
    place = by_key(ev, 'shca_place', 'dev', 'qpn', 'psn')
    bad = []
    for (_, _, psn) in got:
        r = [e for e in reqs if e.f['psn'] == psn]
        for k in range(npk):
            rpsn = str((int(psn) + k) & 0xffffff)
            p = [e for e in place.get((dev, r[0].f['qpn'], rpsn), [])
                 if e.f['op'].startswith('RC_READ_RSP') and
                 e.i('off') == k * mtu and
                 e.i('len') == min(mtu, size - k * mtu)]
            if not p:
                bad.append(r[0])
                break
    check(got and not bad, 'every READ request answered: its %d responses '
          'placed at their offsets on the requester (shca_place)' % npk, bad)
    rc = cqes(ev, 'READ', size)
    check(len(rc) >= n, '%d READ completions of %d bytes' % (len(rc), size))
    sweeps = [e for e in ev if e.name == 'shca_rkey_sweep' and
              e.f['dev'] != dev]
    check(sweeps, "%d R_Key sweeps on the responder (shca_rkey_sweep: "
          "its MR with remote access deregistered at the end)" % len(sweeps))


def case_rnr(ev, snd, rcv):
    nak = named(ev, 'shca_ack_send', dev=rcv, type='RNR_NAK')
    check(nak, '%s sent %d RNR NAKs (shca_ack_send type=RNR_NAK)' %
          (rcv, len(nak)))
    got = named(ev, 'shca_ack_recv', dev=snd, type='RNR_NAK')
    rnr = named(ev, 'shca_rnr', dev=snd)
    retry = named(ev, 'shca_retry', dev=snd, why='rnr')
    check(got and len(rnr) == len(retry) and rnr,
          '%s took %d, waited %d times (shca_rnr) and decided %d replays '
          '(shca_retry why=rnr)' % (snd, len(got), len(rnr), len(retry)))
    replay = named(ev, 'shca_replay', dev=snd)
    again = named(ev, 'shca_req_pkt', dev=snd, retrans=1)
    bad = [r for r in rnr if not first_after(replay, r.ts)]
    check(replay and again and not bad, '%s replayed %d times and resent '
          '%d packets (shca_replay, shca_req_pkt retrans=1)' %
          (snd, len(replay), len(again)), bad)
    psns = {(e.f['qpn'], e.f['psn']) for e in rnr}
    nps = {(e.f['qpn'], e.f['psn']) for e in got}
    check(psns <= nps, 'each RNR wait is for the PSN an RNR NAK named')


def case_timeout(ev, dev):
    tmo = named(ev, 'shca_timeout', dev=dev)
    retry = named(ev, 'shca_retry', dev=dev, why='timeout')
    check(tmo and len(retry) == len(tmo), '%s: %d ACK timeouts '
          '(shca_timeout), %d replays decided for them (shca_retry '
          'why=timeout)' % (dev, len(tmo), len(retry)))
    bad = [t for t in tmo if not first_after(
        named(ev, 'shca_req_pkt', dev=dev, retrans=1, psn=t.f['una_psn']),
        t.ts)]
    check(tmo and not bad, 'after each timeout the unanswered PSN was '
          'sent again (shca_req_pkt retrans=1)', bad)


def case_cm(ev):
    post = [e for e in ev if e.name == 'shca_post_send' and
            e.f['qpn'] == '1']
    check(post, '%d kernel posts on the GSI QP (shca_post_send qpn=1)' %
          len(post))
    mads = named(ev, 'shca_req_pkt', op='UD_SEND_ONLY', dqpn=1)
    got = follow(ev, mads, 'MAD')
    check(mads and len(got) == len(mads), '%d CM MADs sent to QP1 and '
          'handled there' % len(mads))
    hand = named(ev, 'shca_comp_handler')
    check(hand, '%d completion handler calls (shca_comp_handler)' %
          len(hand))
    states = named(ev, 'shca_qp_state', to='RTS')
    check(len(states) >= 2, '%d QPs moved to RTS (shca_qp_state)' %
          len(states))


CASES = {
    'none': (case_none, ()),
    'rc': (case_rc, (int, int, int)),
    'ud': (case_ud, (int, int)),
    'read': (case_read, (int, int, int, str)),
    'rnr': (case_rnr, (str, str)),
    'timeout': (case_timeout, (str,)),
    'cm': (case_cm, ()),
}


def main(argv):
    if len(argv) < 3 or argv[1] not in CASES:
        sys.stderr.write(__doc__)
        return 2
    fn, types = CASES[argv[1]]
    args = argv[3:]
    if len(args) != len(types):
        sys.stderr.write(__doc__)
        return 2
    with open(argv[2]) as f:
        ev = shca_trace.parse(f)
    print('# %d events' % len(ev))
    fn(ev, *[t(a) for t, a in zip(types, args)])
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
