#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Structure-aware RoCEv2 packet fuzzer aimed at live connections
(packet_fuzz.sh; standard library only).

Packets are built with roce_inject.py's Injector (whole IPv4 packets with
a valid ICRC through a raw socket, from the "attacker" namespace) and
aimed at the QPs that shca_live_test describes in its state file (JSON,
rewritten every 50 ms): RC requester and responder QPNs, the requester's
next and oldest unacknowledged PSN, its count of acknowledged WRs, the
published MR (R_Key, VA, length, atomic word), the UC and UD pairs.

Every packet is a template drawn from the seed, with its QPN, PSN, MSN,
R_Key and address given relative to the live state ("the responder's
QPN + 1", "the next PSN - 2", "the R_Key with its index + 1", "the MR's
end + 1"); the random draws never depend on the state, so one seed makes
the same templates in the same order, and the same packets for the same
state.  The state is read again whenever the file changed (checked
every 32 packets); after each packet built, --reuse - 1 packets picked
(by the seed) from the last RING built are sent again, since building
costs more than sending.  --dump FILE keeps every
packet sent (a 2-byte big-endian length before each), which "replay"
sends again: the way to cut a failure down to its packets.

With --stale, only RC requests and responses to the RC victim, with PSNs
before the requester's oldest unacknowledged one: duplicates to the
responder, responses to nothing outstanding to the requester; the IBA
has all of them discarded or answered without effect.

Payload bytes are always 0xc0..0xff (so is a pad the header does not
account for): the live program tells the fuzzer's bytes from its own,
which are all below 0x80.

Usage: roce_fuzz.py [--src A] [--dst A] [--sport P] [--dump FILE]
                    fuzz STATE COUNT SEED [MAX_SECONDS]
       roce_fuzz.py [--src A] [--dst A] replay FILE [FIRST [LAST]]
"""
import argparse
import json
import os
import random
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import roce_inject as ri  # noqa: E402

PSN_MASK = 0xffffff
RING = 4096			# recent packets to resend from
MTU = 1024
GSI_QKEY = ri.GSI_QKEY
RC, UC, UD, CNP = ri.RC, ri.UC, ri.UD, ri.CNP

# a foreign byte for every byte value: 0xc0 | low 6 bits
FOREIGN = bytes(0xc0 | (b & 0x3f) for b in range(256))

# opcodes by role
RC_SEND = [RC | o for o in (0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x16, 0x17)]
RC_WRITE = [RC | o for o in (0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b)]
RC_READ = [RC | ri.READ_REQ]
RC_ATOMIC = [RC | ri.CMP_SWAP, RC | ri.FETCH_ADD]
RC_RESP = [RC | o for o in (0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12)]
UC_ALL = [UC | o for o in range(0x0c)]
UD_ALL = [UD | ri.SEND_ONLY, UD | ri.SEND_ONLY_IMM]
FIRST = {0x00, 0x06}
MIDDLE = {0x01, 0x07, 0x0e}
LAST = {0x02, 0x03, 0x08, 0x09, 0x16, 0x0f}
ONLY = {0x04, 0x05, 0x0a, 0x0b, 0x17, 0x10}
HAS_RETH = {0x06, 0x0a, 0x0b, 0x0c}
HAS_IMM = {0x03, 0x05, 0x09, 0x0b}
HAS_IETH = {0x16, 0x17}

LENGTHS = (0, 1, 2, 3, 4, 7, 8, MTU - 1, MTU, MTU + 1, 2 * MTU, 4095, 4096,
           4097, 1 << 31, (1 << 31) - 1, (1 << 32) - 1, (1 << 32) - MTU)
CLASSES = ('rc_req', 'rc_resp', 'uc', 'ud', 'cnp', 'mutated', 'pad',
           'truncated', 'garbage')
WEIGHTS = (30, 22, 10, 8, 2, 14, 5, 5, 4)


def load(path):
    """The live state, or None while it cannot be read."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


class Gen:
    """Packet templates from one seed, realised against a state."""

    def __init__(self, seed, inj):
        self.rnd = random.Random(seed)
        self.inj = inj
        self.blob = self.rnd.randbytes(1 << 16).translate(FOREIGN)
        self.classes = dict.fromkeys(CLASSES, 0)
        self.opcodes = {}
        self.exact = 0
        self.st = {}
        self.stale = False
        self.rand = self.rnd.random
        self.bits = self.rnd.getrandbits

    # cheaper than randrange() and choice(), which dominate the cost
    def rr(self, a, b=None):
        if b is None:
            return int(self.rand() * a)
        return a + int(self.rand() * (b - a))

    def pick(self, seq):
        return seq[int(self.rand() * len(seq))]

    # ---- draws (their number never depends on the state) -----------------

    def payload(self, n):
        if n <= 0:
            return b''
        off = self.rr(len(self.blob) - min(n, 8192))
        out = self.blob[off:off + n]
        while len(out) < n:
            out += self.blob[:n - len(out)]
        return out

    def qpn(self, main, others):
        """@main QPN mostly, else another live one, +-1, QP1 or random"""
        if self.stale:
            return main
        r = self.rand()
        k = self.rr(8)
        rand = self.bits(24)
        d = self.pick((-1, 1))
        if r < 0.70:
            return main
        if r < 0.80:
            return others[k % len(others)] if others else main
        if r < 0.90:
            return (main + d) & PSN_MASK
        if r < 0.93:
            return 1
        return rand

    def psn(self, base, span=0):
        """a PSN near base .. base+span (the outstanding window)"""
        if self.stale:
            # before the oldest unacknowledged PSN: to the requester a
            # response to nothing outstanding, to the responder a
            # duplicate; mostly just before, at most 2^22 back
            back = self.pick((1, 2, 3, 8, 64)) if self.rand() < 0.6 \
                else 1 + self.rr(1 << 22)
            return (base - back) & PSN_MASK
        r = self.rand()
        frac = self.rand()
        small = self.rr(-3, 4)
        mid = self.pick((-1, 1)) * self.rr(4, 200)
        edge = self.pick((0x800000, 0x7fffff, -0x800000, -0x7fffff,
                                0x400000))
        rand = self.bits(24)
        b = base + int(frac * span)
        if r < 0.55:
            if small == 0:
                self.exact += 1
            return (b + small) & PSN_MASK
        if r < 0.75:
            return (b + mid) & PSN_MASK
        if r < 0.88:
            return (b + edge) & PSN_MASK
        return rand

    def rkey(self, key):
        r = self.rr(10)
        rand = self.bits(32)
        return (key, key, key, (key + 0x100) & 0xffffffff,
                (key - 0x100) & 0xffffffff,
                (key & ~0xff) | ((key + 1) & 0xff),
                (key & ~0xff) | ((key - 1) & 0xff), 0, rand,
                key ^ 0x80000000)[r]

    def length(self, mrlen):
        r = self.rand()
        pick = self.pick(LENGTHS)
        small = self.rr(0, 3 * MTU)
        edge = mrlen + self.rr(-1, 2)
        if r < 0.5:
            return pick
        if r < 0.8:
            return small
        return max(edge, 0)

    def addr(self, va, mrlen, ln):
        r = self.rr(12)
        inside = int(self.rand() * max(mrlen - ln, 0))
        rand = self.bits(64)
        m64 = (1 << 64) - 1
        return (va, va - 1, va + mrlen - ln, va + mrlen, va + mrlen + 1,
                va + inside, va + inside, (1 << 64) - max(ln // 2, 1),
                m64, va + mrlen - ln + 1, rand,
                va + (inside & ~7))[r] & m64

    def plen(self, low):
        """payload length for an opcode position"""
        r = self.rand()
        any_ = self.pick((0, 1, 3, MTU - 1, MTU, MTU + 1, 1200))
        small = self.rr(0, MTU + 1)
        if low in FIRST or low in MIDDLE:
            return MTU if r < 0.7 else any_
        return small if r < 0.6 else any_

    def flags(self):
        return dict(ackreq=self.rand() < 0.6,
                    se=self.rand() < 0.2,
                    mig=self.rand() < 0.9)

    # ---- classes -----------------------------------------------------------

    def req_parts(self, low, addr, key, ln):
        """A request's flags, payload length and extension headers (RETH,
        ImmDt) for opcode @low, aimed at @addr, @key, @ln."""
        fl = self.flags()
        n = self.plen(low)
        imm = self.payload(4)
        ext = b''
        if low in HAS_RETH:
            ext += ri.reth(addr, key, ln)
        if low in HAS_IMM:
            ext += imm
        return fl, n, ext

    def rc_req(self):
        rc = self.st.get('rc', {})
        op = self.pick(RC_SEND + RC_WRITE + RC_WRITE + RC_READ +
                             RC_READ + RC_ATOMIC + RC_ATOMIC)
        low = op & 0x1f
        qpn = self.qpn(rc.get('resp_qpn', 0),
                       [rc.get('req_qpn', 0),
                        self.st.get('uc', {}).get('dst_qpn', 0)])
        psn = self.psn(rc.get('una_psn', 0),
                       (rc.get('next_psn', 0) - rc.get('una_psn', 0)) &
                       PSN_MASK)
        key = self.rkey(rc.get('rkey', 0))
        va, mrlen = rc.get('va', 0), rc.get('len', 0)
        ln = self.length(mrlen)
        addr = self.addr(va, mrlen, min(ln, 1 << 20))
        fl, n, ext = self.req_parts(low, addr, key, ln)
        if low in HAS_IETH:
            ext += struct.pack('!I', self.rkey(rc.get('rkey', 0)))
        if op in RC_ATOMIC:
            where = self.rr(8)
            a = (va + rc.get('word', 0), va + rc.get('word', 0),
                 va + rc.get('word', 0) + 4, va, va + mrlen - 8, va + mrlen,
                 (1 << 64) - 8, addr)[where] & ((1 << 64) - 1)
            ext = struct.pack('!QIQQ', a, key, self.bits(64),
                              self.bits(64))
            n = 0 if self.rand() < 0.9 else 8
        if op in RC_READ:
            n = 0 if self.rand() < 0.9 else 4
        return op, qpn, psn, fl, ext, n

    def rc_resp(self):
        rc = self.st.get('rc', {})
        op = self.pick(RC_RESP + [RC | ri.ACK] * 3 +
                             [RC | ri.ATOMIC_ACK])
        low = op & 0x1f
        qpn = self.qpn(rc.get('req_qpn', 0), [rc.get('resp_qpn', 0)])
        psn = self.psn(rc.get('una_psn', 0),
                       (rc.get('next_psn', 0) - rc.get('una_psn', 0)) &
                       PSN_MASK)
        r = self.rand()
        syn = self.pick((0x00, 0x1f, 0x1f, 0x01, 0x20, 0x21, 0x3f,
                               0x60, 0x60, 0x61, 0x62, 0x63, 0x64, 0x40,
                               0x80, 0xe0, 0x9f))
        if r < 0.5:
            syn = 0x1f if self.rand() < 0.7 else 0x00
        msn = (rc.get('acked', 0) + self.rr(-2, 9)) & PSN_MASK
        if self.rand() < 0.15:
            msn = self.bits(24)
        fl = self.flags()
        fl['ackreq'] = self.rand() < 0.1
        n = self.plen(low)
        orig = self.bits(64) | (0xc0 << 56)
        ext = b''
        if low != 0x0e:
            ext = ri.aeth(syn, msn)
        if op == RC | ri.ATOMIC_ACK:
            ext += struct.pack('!Q', orig)
            n = 0 if self.rand() < 0.9 else 4
        if op == RC | ri.ACK:
            n = 0 if self.rand() < 0.9 else 8
        return op, qpn, psn, fl, ext, n

    def uc(self):
        uc = self.st.get('uc', {})
        rc = self.st.get('rc', {})
        op = self.pick(UC_ALL)
        low = op & 0x1f
        qpn = self.qpn(uc.get('dst_qpn', 0),
                       [uc.get('src_qpn', 0), rc.get('resp_qpn', 0)])
        psn = self.psn(uc.get('next_psn', 0), 0)
        key = self.rkey(rc.get('rkey', 0))
        ln = self.length(rc.get('len', 0))
        addr = self.addr(rc.get('va', 0), rc.get('len', 0), min(ln, 1 << 20))
        fl, n, ext = self.req_parts(low, addr, key, ln)
        return op, qpn, psn, fl, ext, n

    def ud(self):
        ud = self.st.get('ud', {})
        op = self.pick(UD_ALL)
        qpn = self.qpn(ud.get('dst_qpn', 0), [ud.get('src_qpn', 0)])
        r = self.rand()
        qkey = ud.get('qkey', ri.UD_PP_QKEY)
        qk = (qkey, qkey, qkey, qkey ^ 1, GSI_QKEY, 0,
              self.bits(32) | 0x80000000)[int(r * 7)]
        gsi = self.rand()
        if qpn == 1 and gsi < 0.9:
            qk = qkey		# the MAD layer logs garbage MADs: rarely
        src = self.pick((ud.get('src_qpn', 0), 1, 0,
                               self.bits(24)))
        psn = self.bits(24)
        fl = self.flags()
        n = self.pick((0, 1, 3, 4, 64, MTU - 1, MTU, MTU + 1,
                             self.rr(0, MTU + 1)))
        ext = ri.deth(qk, src)
        imm = self.payload(4)
        if op == UD | ri.SEND_ONLY_IMM:
            ext += imm
        return op, qpn, psn, fl, ext, n

    def cnp(self):
        rc = self.st.get('rc', {})
        qpn = self.qpn(rc.get('req_qpn', 0), [rc.get('resp_qpn', 0)])
        n = self.pick((16, 16, 16, 0, 8, 20, 64))
        return CNP, qpn, self.bits(24), \
            dict(mig=False, becn=True), self.payload(n), 0

    # ---- realisation ---------------------------------------------------

    def transport(self, op, qpn, psn, fl, ext, n, pad=None):
        pay = self.payload(n)
        real_pad = -len(pay) & 3
        t = ri.bth(op, qpn, psn, pad=real_pad if pad is None else pad,
                   **fl) + ext + pay
        return t + bytes(real_pad)

    def one(self):
        """One packet (IPv4 bytes) and its class."""
        cls = self.rnd.choices(CLASSES, WEIGHTS)[0]
        if self.stale:
            cls = self.pick(('rc_req', 'rc_resp'))
        if cls == 'garbage':
            n = self.rr(0, 1200)
            how = self.pick(('good', 'bad', 'none', 'swap'))
            return cls, self.inj.datagram(self.payload(n), crc=how)
        base = self.pick(('rc_req', 'rc_req', 'rc_resp', 'uc', 'ud'))
        if cls in ('rc_req', 'rc_resp', 'uc', 'ud', 'cnp'):
            base = cls
        op, qpn, psn, fl, ext, n = getattr(self, base)()
        self.opcodes[op] = self.opcodes.get(op, 0) + 1
        if cls == 'pad':
            # a pad count that does not match, the extra bytes foreign
            pay = self.payload(n)
            claimed = self.rr(4)
            extra = self.rr(0, 4)
            t = ri.bth(op, qpn, psn, pad=claimed, **fl) + ext + pay + \
                b'\xee' * ((-len(pay) & 3) + extra)
            return cls, self.inj.datagram(t)
        t = bytearray(self.transport(op, qpn, psn, fl, ext, n))
        if cls == 'truncated':
            hdr = 12 + len(ext)
            cut = self.rr(0, hdr + 1)
            return cls, self.inj.datagram(bytes(t[:cut]))
        if cls == 'mutated':
            self.mutate(t, 12 + len(ext))
        return cls, self.inj.datagram(bytes(t))

    def mutate(self, t, hdr):
        """bit flips in the headers, or one field set to an edge value"""
        r = self.rr(8)
        i = self.rr(hdr)
        bit = self.rr(8)
        v = self.rr(256)
        k = self.rr(1, 4)
        if r < 3:
            for _ in range(k):
                t[i] ^= 1 << bit
                i = (i * 7 + 5) % hdr
                bit = (bit + 3) & 7
        elif r == 3:
            t[0] = v				# opcode
        elif r == 4:
            # pad count; TVer too when bit 2 is set
            t[1] = (t[1] & 0xc0) | ((v & 3) << 4) | \
                ((v >> 4) if v & 4 else 0)
        elif r == 5:
            t[2:4] = bytes(self.pick(((0, 0), (0x7f, 0xff),
                                            (0x80, 0), (v, v))))
        elif r == 6:
            t[4] = v				# FECN/BECN/reserved
            t[8] = (t[8] & 0x80) | (v & 0x7f)	# reserved bits
        else:
            t[i] = v

    def batch(self, n):
        out = []
        for _ in range(n):
            cls, p = self.one()
            self.classes[cls] += 1
            out.append(p)
        return out


class StateFile:
    """The live state, read again when the file changed."""

    def __init__(self, path):
        self.path, self.mtime, self.st, self.reads = path, None, None, 0

    def get(self):
        try:
            m = os.stat(self.path).st_mtime_ns
        except OSError:
            return self.st
        if m != self.mtime:
            s = load(self.path)
            if s is not None:
                self.st, self.mtime = s, m
                self.reads += 1
        return self.st


def do_fuzz(a):
    """Build a packet against the freshest state and send it, then
    --reuse - 1 packets picked from the RING last built (staler ones)."""
    inj = ri.Injector(a.src, a.dst, a.sport)
    gen = Gen(a.seed, inj)
    gen.stale = a.stale
    pick = random.Random(a.seed ^ 0x5eed)
    dump = open(a.dump, 'wb') if a.dump else None
    sf = StateFile(a.state)
    start = time.monotonic()
    while sf.get() is None:
        if time.monotonic() - start > 20:
            print('# no state in %s' % a.state)
            return 1
        time.sleep(0.1)
    ring = []
    built = 0
    gens = set()

    def send(p):
        inj.send_raw(p)
        if dump:
            dump.write(struct.pack('!H', len(p)) + p)

    while inj.sent < a.count:
        if built % 32 == 0:
            gen.st = sf.get()
            gens.add(gen.st.get('rc', {}).get('gen', 0))
            if time.monotonic() - start > a.max_seconds:
                break
            if built % 1024 == 0:
                inj.drain()
        cls, p = gen.one()
        gen.classes[cls] += 1
        built += 1
        send(p)
        if len(ring) < RING:
            ring.append(p)
        else:
            ring[built % RING] = p
        for _ in range(a.reuse - 1):
            if inj.sent >= a.count:
                break
            send(ring[pick.randrange(len(ring))])
    inj.drain()
    if dump:
        dump.close()
    took = time.monotonic() - start
    print('# fuzz: seed %d, %d packets (%d built, each followed by %d '
          'resent from the last %d) in %.1f s: %.0f packets/s, %.0f '
          'built/s; state read %d times; RC victim generations %s..%s' %
          (a.seed, inj.sent, built, a.reuse - 1, RING, took,
           inj.sent / max(took, 1e-6), built / max(took, 1e-6), sf.reads,
           min(gens), max(gens)))
    print('# classes (built): ' +
          ' '.join('%s %d' % kv for kv in gen.classes.items()))
    print('# opcodes (built): ' +
          ' '.join('0x%02x:%d' % kv for kv in sorted(gen.opcodes.items())))
    print('# PSN at the live una/next PSN + 0: %d' % gen.exact)
    if inj.sent < a.count:
        print('# stopped by the %d s limit' % a.max_seconds)
        return 1
    return 0


def do_replay(a):
    inj = ri.Injector(a.src, a.dst, a.sport)
    with open(a.file, 'rb') as f:
        data = f.read()
    i = k = 0
    while i + 2 <= len(data):
        n = struct.unpack('!H', data[i:i + 2])[0]
        p = data[i + 2:i + 2 + n]
        i += 2 + n
        if a.first <= k <= a.last:
            inj.send_raw(p)
        k += 1
    inj.drain()
    print('# replayed %d of %d packets' % (inj.sent, k))
    return 0


def main():
    p = argparse.ArgumentParser(
        description=__doc__.split('\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--src', default='198.18.0.2')
    p.add_argument('--dst', default='198.18.0.1')
    p.add_argument('--sport', type=int, default=49153)
    p.add_argument('--dump', help='keep every packet sent in this file')
    p.add_argument('--stale', action='store_true',
                   help='only RC requests and responses to the victim '
                   'with PSNs before its oldest unacknowledged one, '
                   'which it must survive')
    p.add_argument('--reuse', type=int, default=5,
                   help='packets sent per packet built')
    sub = p.add_subparsers(dest='cmd', required=True)
    s = sub.add_parser('fuzz')
    s.add_argument('state')
    s.add_argument('count', type=int)
    s.add_argument('seed', type=int)
    s.add_argument('max_seconds', type=float, nargs='?', default=300)
    s.set_defaults(fn=do_fuzz)
    s = sub.add_parser('replay')
    s.add_argument('file')
    s.add_argument('first', type=int, nargs='?', default=0)
    s.add_argument('last', type=int, nargs='?', default=1 << 62)
    s.set_defaults(fn=do_replay)
    a = p.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    return a.fn(a)


if __name__ == '__main__':
    sys.exit(main())
