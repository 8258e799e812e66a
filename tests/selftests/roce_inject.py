#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Craft hostile RoCEv2 packets for bad_packets.sh (standard library only).

Runs in the namespace of the "attacker" host (shns2 of lib.sh's two_hosts,
with its shca device removed so that UDP port 4791 there is ours) and
talks to the device under test at --dst (shca_ns1).

Packets are written whole, IP header included, through a raw socket
(IPPROTO_RAW, i.e. IP_HDRINCL): the ICRC covers the IPv4 identification,
which a normal UDP socket would choose only after we computed the ICRC.
The kernel still fills in the IPv4 checksum and total length (both known
in advance: the checksum is masked out of the ICRC) and keeps our nonzero
identification.  Over IPv6 (an IPv6 --src/--dst or the "addr" command)
the kernel fills in nothing: the UDP checksum, which IPv6 requires, is
ours too.  Replies of the device are read from a raw IPPROTO_UDP socket,
so their ICRC is checked too (an IPv6 raw socket hands over no IP header:
its ICRC fields are the addresses and the length, the rest is masked).

The ICRC: CRC-32 (zlib.crc32) over 8 bytes of 0xff (the LRH stand-in),
the IPv4 header with TOS, TTL and header checksum set to ones (IPv6:
traffic class, flow label and hop limit set to ones), the UDP header with
its checksum set to ones, the BTH with its byte 4 (FECN, BECN, reserved)
set to ones, and the rest of the transport packet up to the ICRC; stored
least significant byte first.

Usage: roce_inject.py [--src A] [--dst A] [--state FILE] serve | run CMD.. |
cases.  "serve" reads commands from stdin, one a line, and answers each
with its report ("# ..." lines) and "done STATUS SENT QUIET" (QUIET: the
milliseconds since the last packet it sent); "run" does one.
Commands:
  connect rc|uc|ud NAME [PORT]
          play the client of an ibv_rc_pingpong, ibv_uc_pingpong or
          ibv_ud_pingpong server
          (address exchange with a made-up QPN and PSN, over TCP to the
          first --dst); the server's QP becomes target NAME ("rc" and
          "ud" are the ones cases use)
  addr SRC DST
          send from SRC to DST from now on (IPv4 or IPv6; the third host
          is THIRD_ADDR of that version)
  case NAME
          send the packets of one test case ("cases" lists them) and check
          the device's replies on the wire
  flood [COUNT [SEED [MAX_SECONDS]]]
          random and semi-valid garbage to the targets, bounded in count
          and time
STATUS: 0 when every check passed, 1 otherwise, 2 for usage errors.
"""
import argparse
import json
import os
import random
import select
import socket
import struct
import sys
import time
import zlib

ROCE_PORT = 4791
GSI_QKEY = 0x80010000
UD_PP_QKEY = 0x11111111		# ibv_ud_pingpong's Q_Key
FAKE_QPN = 0x00abcd		# our made-up QP, never created anywhere
# a third host on the segment (third-host), by IP version
THIRD_ADDR = {4: '198.18.0.3', 6: '2001:db8::3'}
FAKE_PSN = {'rc': 0xfffffe, 'ud': 0x000100, 'uc': 0x000200,	# rc: PSN wrap
            'srq': 0x000300}
# ibv_srq_pingpong exchanges this many addresses whatever its QP count
SRQ_PP_ADDRS = 256
PSN_MASK = 0xffffff
FLOOD_POOL = 25000

# transport | operation
RC, UC, UD = 0x00, 0x20, 0x60
SEND_LAST = 0x02
SEND_ONLY = 0x04
SEND_ONLY_IMM = 0x05
WRITE_ONLY = 0x0a
WRITE_ONLY_IMM = 0x0b
READ_REQ = 0x0c
READ_RESP_FIRST = 0x0d
READ_RESP_MIDDLE = 0x0e
READ_RESP_LAST = 0x0f
READ_RESP_ONLY = 0x10
ACK = 0x11
ATOMIC_ACK = 0x12
CMP_SWAP = 0x13
FETCH_ADD = 0x14
SEND_ONLY_INV = 0x17
CNP = 0x81

# extension header lengths
DETH, RETH, ATOMIC_ETH, AETH, ATOMIC_ACK_ETH, IMMDT, IETH = 8, 16, 28, 4, 8, 4, 4

# opcode: (length of BTH + extension headers, may carry payload)
OPCODES = {}


def _op(code, hdr, payload):
    OPCODES[code] = (12 + hdr, payload)


for _t in (RC, UC):
    for _o, _h in ((0x00, 0), (0x01, 0), (0x02, 0), (0x03, IMMDT), (0x04, 0),
                   (0x05, IMMDT), (0x06, RETH), (0x07, 0), (0x08, 0),
                   (0x09, IMMDT), (0x0a, RETH), (0x0b, RETH + IMMDT)):
        _op(_t | _o, _h, True)
_op(RC | READ_REQ, RETH, False)
_op(RC | READ_RESP_FIRST, AETH, True)
_op(RC | READ_RESP_MIDDLE, 0, True)
_op(RC | READ_RESP_LAST, AETH, True)
_op(RC | READ_RESP_ONLY, AETH, True)
_op(RC | ACK, AETH, False)
_op(RC | ATOMIC_ACK, AETH + ATOMIC_ACK_ETH, False)
_op(RC | CMP_SWAP, ATOMIC_ETH, False)
_op(RC | FETCH_ADD, ATOMIC_ETH, False)
_op(RC | 0x16, IETH, True)
_op(RC | SEND_ONLY_INV, IETH, True)
_op(UD | SEND_ONLY, DETH, True)
_op(UD | SEND_ONLY_IMM, DETH + IMMDT, True)
_op(CNP, 16, False)

# opcodes no conforming device accepts: reserved RC/UC codes, RD and XRC
# (not supported), UD codes other than SEND_ONLY[_IMM], CNP range but CNP,
# manufacturer-specific codes
BAD_OPCODES = [0x15, 0x18, 0x1f, 0x2c, 0x30, 0x3f, 0x40, 0x44, 0x4a, 0x5f,
               0x60, 0x62, 0x66, 0x7f, 0x80, 0x9f, 0xa0, 0xa4, 0xbf, 0xc0,
               0xe5, 0xff]


# ---- packet construction ----------------------------------------------------

def ipv4_csum(hdr):
    s = 0
    for i in range(0, len(hdr), 2):
        s += (hdr[i] << 8) | hdr[i + 1]
    while s > 0xffff:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def udp6_csum(src, dst, udp):
    """UDP checksum over IPv6 (RFC 8200 pseudo-header), never 0."""
    s = 0
    data = (socket.inet_pton(socket.AF_INET6, src) +
            socket.inet_pton(socket.AF_INET6, dst) +
            struct.pack('!II', len(udp), 17) + udp + b'\0' * (len(udp) & 1))
    for i in range(0, len(data), 2):
        s += (data[i] << 8) | data[i + 1]
    while s > 0xffff:
        s = (s & 0xffff) + (s >> 16)
    return ((~s) & 0xffff) or 0xffff


def ipv6_hdr(src, dst, plen, hop=64):
    return struct.pack('!IHBB16s16s', 6 << 28, plen, 17, hop,
                       socket.inet_pton(socket.AF_INET6, src),
                       socket.inet_pton(socket.AF_INET6, dst))


def icrc(ip_to_pad):
    """ICRC of an IPv4 or IPv6 packet from its IP header to the end of
    the pad."""
    b = bytearray(ip_to_pad)
    if b[0] >> 4 == 6:
        ihl = 40
        b[0:4] = b'\x6f\xff\xff\xff'	# traffic class, flow label
        b[7] = 0xff			# hop limit
    else:
        ihl = (b[0] & 0x0f) * 4
        b[1] = 0xff			# TOS
        b[8] = 0xff			# TTL
        b[10:12] = b'\xff\xff'	# header checksum
    b[ihl + 6:ihl + 8] = b'\xff\xff'	# UDP checksum
    if len(b) > ihl + 8 + 4:
        b[ihl + 8 + 4] = 0xff	# BTH FECN, BECN, reserved
    return zlib.crc32(b'\xff' * 8 + bytes(b)) & 0xffffffff


def bth(opcode, qpn, psn, ackreq=False, se=False, mig=True, pad=0, tver=0,
        pkey=0xffff, fecn=False, becn=False):
    return struct.pack('!BBHII', opcode & 0xff,
                       (se << 7) | (mig << 6) | ((pad & 3) << 4) |
                       (tver & 0x0f), pkey & 0xffff,
                       (fecn << 31) | (becn << 30) | (qpn & PSN_MASK),
                       (ackreq << 31) | (psn & PSN_MASK))


def reth(va, rkey, length):
    return struct.pack('!QII', va, rkey, length)


def deth(qkey, src_qpn):
    return struct.pack('!II', qkey, src_qpn & PSN_MASK)


def aeth(syndrome, msn):
    return struct.pack('!I', ((syndrome & 0xff) << 24) | (msn & PSN_MASK))


def transport(opcode, qpn, psn, payload=b'', ext=None, **kw):
    """BTH + extension headers (zeros unless @ext) + payload + pad."""
    hdr_len = OPCODES.get(opcode, (12, True))[0]
    if ext is None:
        ext = bytes(hdr_len - 12)
    pad = -len(payload) & 3
    kw.setdefault('pad', pad)
    return bth(opcode, qpn, psn, **kw) + ext + payload + bytes(pad)


def ip_version(addr):
    return 6 if ':' in addr else 4


class Injector:
    """Raw IPv4 or IPv6 sender to the device under test, and reply
    receiver."""

    last_tx = 0.0	# when any injector last sent (time.monotonic())

    def __init__(self, src, dst, sport):
        self.src, self.dst, self.sport = src, dst, sport
        self.version = ip_version(src)
        if ip_version(dst) != self.version:
            raise ValueError('%s and %s: not one IP version' % (src, dst))
        fam = socket.AF_INET6 if self.version == 6 else socket.AF_INET
        self.ident = random.Random(sport).randrange(1, 0x10000)
        self.tx = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_RAW)
        self.rx = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_UDP)
        self.rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        # a bound socket on 4791, so that the device's replies are not
        # answered with ICMP port unreachable; they are read from self.rx
        self.sink = socket.socket(fam, socket.SOCK_DGRAM)
        self.sink.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 16)
        deadline = time.monotonic() + 10
        while True:
            try:
                self.sink.bind((src, ROCE_PORT))
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.sent = 0

    def close(self):
        for s in (self.tx, self.rx, self.sink):
            s.close()

    def datagram(self, payload, crc='good', udp_len=None, tail=b'', df=True):
        """Full IPv4 packet.  @payload: UDP payload without ICRC.
        @crc: 'good', 'none' (no ICRC appended), 'bad' (off by one), 'swap'
        (stored in the wrong byte order), 'nomask' (TTL/TOS not masked).
        @udp_len: UDP length field (default: the true one).  @tail: bytes
        after the ICRC (inside the IP packet)."""
        if self.version == 6:
            return self.datagram6(payload, crc, udp_len, tail)
        self.ident = self.ident % 0xffff + 1		# never 0
        icrc_len = 0 if crc == 'none' else 4
        ulen_true = 8 + len(payload) + icrc_len + len(tail)
        ulen = ulen_true if udp_len is None else udp_len
        tot = 20 + ulen_true
        iph = bytearray(struct.pack('!BBHHHBBH4s4s', 0x45, 0, tot,
                                    self.ident, 0x4000 if df else 0, 64, 17,
                                    0,
                                    socket.inet_aton(self.src),
                                    socket.inet_aton(self.dst)))
        iph[10:12] = struct.pack('!H', ipv4_csum(iph))
        udph = struct.pack('!HHHH', self.sport, ROCE_PORT, ulen & 0xffff, 0)
        body = bytes(iph) + udph + payload
        if crc == 'none':
            return body + tail
        if crc == 'nomask':
            c = zlib.crc32(b'\xff' * 8 + body) & 0xffffffff
        else:
            c = icrc(body)
        if crc == 'bad':
            c ^= 1
        trailer = struct.pack('>I' if crc == 'swap' else '<I', c)
        return body + trailer + tail

    def datagram6(self, payload, crc, udp_len, tail):
        """Full IPv6 packet, as datagram() (@crc: 'good', 'none' or 'bad'),
        its UDP checksum right."""
        icrc_len = 0 if crc == 'none' else 4
        ulen_true = 8 + len(payload) + icrc_len + len(tail)
        ulen = ulen_true if udp_len is None else udp_len
        iph = ipv6_hdr(self.src, self.dst, ulen_true)
        udph = struct.pack('!HHHH', self.sport, ROCE_PORT, ulen & 0xffff, 0)
        udp = udph + payload
        if crc != 'none':
            c = icrc(iph + udp) ^ (crc == 'bad')
            udp += struct.pack('<I', c)
        udp += tail
        csum = struct.pack('!H', udp6_csum(self.src, self.dst, udp))
        return iph + udp[:6] + csum + udp[8:]

    def fragments(self, pkt, size):
        """Split IPv4 packet @pkt (DF clear) into fragments of @size
        payload bytes (a multiple of 8), all with its identification."""
        iph, data = bytearray(pkt[:20]), pkt[20:]
        out = []
        for off in range(0, len(data), size):
            part = data[off:off + size]
            h = bytearray(iph)
            more = off + size < len(data)
            h[2:4] = struct.pack('!H', 20 + len(part))
            h[6:8] = struct.pack('!H', (0x2000 if more else 0) | (off // 8))
            h[10:12] = b'\0\0'
            h[10:12] = struct.pack('!H', ipv4_csum(h))
            out.append(bytes(h) + part)
        return out

    def send_raw(self, pkt):
        for _ in range(1000):
            try:
                self.tx.sendto(pkt, (self.dst, 0))
                self.sent += 1
                Injector.last_tx = time.monotonic()
                return
            except OSError as e:	# ENOBUFS under load: retry
                if e.errno not in (105, 11):
                    raise
                time.sleep(0.001)
        raise OSError('sendto keeps failing')

    def send(self, payload, **kw):
        self.send_raw(self.datagram(payload, **kw))

    def drain(self):
        while select.select([self.rx, self.sink], [], [], 0)[0]:
            for s in (self.rx, self.sink):
                if select.select([s], [], [], 0)[0]:
                    s.recv(65535)

    def reply6(self):
        """One IPv6 UDP datagram from self.rx, its IP header rebuilt (the
        fields the ICRC does not mask: addresses and length), or None."""
        udp, addr = self.rx.recvfrom(65535)
        if addr[0] != self.dst or len(udp) < 8:
            return None
        if struct.unpack('!H', udp[2:4])[0] != ROCE_PORT:
            return None
        return ipv6_hdr(self.dst, self.src, len(udp)) + udp

    def replies(self, timeout, want=None):
        """RoCEv2 packets from the device for up to @timeout seconds (or
        until @want have arrived), parsed; failures noted in 'err'."""
        out = []
        end = time.monotonic() + timeout
        while want is None or len(out) < want:
            left = end - time.monotonic()
            if left <= 0:
                break
            if not select.select([self.rx], [], [], left)[0]:
                continue
            if self.version == 6:
                pkt = self.reply6()
                if pkt:
                    out.append(parse_reply(pkt, 40))
                continue
            pkt = self.rx.recv(65535)
            if len(pkt) < 28 or pkt[9] != 17:
                continue
            ihl = (pkt[0] & 0x0f) * 4
            if socket.inet_ntoa(pkt[12:16]) != self.dst:
                continue
            sport, dport, ulen = struct.unpack('!HHH', pkt[ihl:ihl + 6])
            if dport != ROCE_PORT:
                continue
            out.append(parse_reply(pkt, ihl))
        return out


def parse_reply(pkt, ihl):
    r = {'len': len(pkt) - ihl - 8, 'err': []}
    t = pkt[ihl + 8:]
    if len(t) < 16:
        r['err'].append('short packet (%d bytes)' % len(t))
        return r
    c = struct.unpack('<I', pkt[-4:])[0]
    if c != icrc(pkt[:-4]):
        r['err'].append('ICRC wrong: 0x%08x, expected 0x%08x' %
                        (c, icrc(pkt[:-4])))
    op, b1, pkey, w4, w8 = struct.unpack('!BBHII', t[:12])
    r.update(opcode=op, pad=(b1 >> 4) & 3, tver=b1 & 0xf, pkey=pkey,
             qpn=w4 & PSN_MASK, psn=w8 & PSN_MASK, ackreq=w8 >> 31)
    hdr = OPCODES.get(op, (12, True))[0]
    if op in (RC | ACK, RC | ATOMIC_ACK, RC | READ_RESP_FIRST,
              RC | READ_RESP_LAST, RC | READ_RESP_ONLY):
        w = struct.unpack('!I', t[12:16])[0]
        r.update(syndrome=w >> 24, msn=w & PSN_MASK)
    if op & 0xe0 == UD and len(t) >= 20:
        r.update(qkey=struct.unpack('!I', t[12:16])[0],
                 src_qpn=struct.unpack('!I', t[16:20])[0] & PSN_MASK)
    r['payload_len'] = len(t) - hdr - r['pad'] - 4
    return r


def fmt(r):
    keys = ('opcode', 'qpn', 'psn', 'ackreq', 'syndrome', 'msn', 'qkey',
            'src_qpn', 'payload_len')
    s = ' '.join('%s=0x%x' % (k, r[k]) for k in keys if k in r)
    return s + (' ' + '; '.join(r['err']) if r['err'] else '')


# ---- test state ------------------------------------------------------------

def load_state(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


def save_state(path, st):
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(st, f)
    os.replace(tmp, path)


def wire_gid(addr):
    """@addr as ibv_*_pingpong write a GID: IPv4-mapped for IPv4."""
    if ip_version(addr) == 6:
        return socket.inet_pton(socket.AF_INET6, addr).hex()
    return '00000000000000000000ffff' + socket.inet_aton(addr).hex()


class Session:
    """The injector, and what we know of the target QPs (by name: the
    server's QPN and next send PSN 'spsn', our QPN, the PSN its responder
    expects 'epsn', the MSN of our ACKs)."""

    def __init__(self, a):
        self.a = a
        self.inj = Injector(a.src, a.dst, a.sport)
        self.st = load_state(a.state) if a.state else {}
        self.tcp = a.dst		# the pingpong servers' address exchange

    def readdress(self, src, dst):
        """Send from @src to @dst from now on (and from the third host of
        that IP version)."""
        old = [self.inj] + ([self.third] if hasattr(self, 'third') else [])
        for inj in old:
            inj.close()
        if hasattr(self, 'third'):
            del self.third
        self.inj = Injector(src, dst, self.a.sport)

    def save(self):
        if self.a.state:
            save_state(self.a.state, self.st)


def do_connect(sess, kind, name, port='18515', timeout=20.0):
    """Client side of the ibv_*_pingpong address exchange (for 'srq',
    ibv_srq_pingpong's: SRQ_PP_ADDRS addresses each way, its first QP
    ours)."""
    my_psn = FAKE_PSN[kind]
    n = SRQ_PP_ADDRS if kind == 'srq' else 1
    one = ('%04x:%06x:%06x:%s' % (0, FAKE_QPN, my_psn,
                                  wire_gid(sess.inj.src))).encode() + b'\0'
    msg = one * n
    deadline = time.monotonic() + timeout
    while True:
        try:
            s = socket.create_connection((sess.tcp, int(port)),
                                         timeout=timeout)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    s.sendall(msg)
    buf = b''
    while len(buf) < len(msg):
        chunk = s.recv(len(msg) - len(buf))
        if not chunk:
            break
        buf += chunk
    s.sendall(b'done\0')
    s.close()
    if len(buf) != len(msg):
        print('# short address message from the server: %r' % buf)
        return 1
    qpn, psn, gid = buf[:len(one)].rstrip(b'\0').decode().split(':')[1:]
    qpn, psn = int(qpn, 16), int(psn, 16)
    sess.st[name] = {'kind': kind, 'qpn': qpn, 'spsn': psn,
                     'my_qpn': FAKE_QPN, 'epsn': my_psn, 'msn': 0}
    print('# %s server: QPN 0x%06x PSN 0x%06x GID %s; we are QPN 0x%06x '
          'PSN 0x%06x' % (kind, qpn, psn, gid, FAKE_QPN, my_psn))
    return 0


# ---- test cases ------------------------------------------------------------

class Case:
    """Context of one case: sender, state, failures."""

    def __init__(self, sess):
        self.sess = sess
        self.inj = sess.inj
        self.st = sess.st
        self.failed = []
        self.inj.drain()

    def third(self):
        """A sender at THIRD_ADDR (made once a session and address)."""
        if not hasattr(self.sess, 'third'):
            self.sess.third = Injector(THIRD_ADDR[self.inj.version],
                                       self.inj.dst,
                                       self.inj.sport + 1)
        return self.sess.third

    def qp(self, name):
        if name not in self.st:
            raise KeyError('no %s QP: connect first' % name)
        return self.st[name]

    def check(self, cond, what):
        print('# %s: %s' % ('ok' if cond else 'FAILED', what))
        if not cond:
            self.failed.append(what)

    def expect_none(self, what, timeout=0.5):
        got = self.inj.replies(timeout)
        for r in got:
            print('#   unexpected reply: ' + fmt(r))
        self.check(not got, 'no reply to ' + what)

    def expect_one(self, what, timeout=3.0, **fields):
        """Wait for one reply and check its fields (a field's wanted value
        may be a tuple of allowed values); returns it or None."""
        got = self.inj.replies(timeout, want=1)
        if not got:
            self.check(False, '%s: no reply within %.1f s' % (what, timeout))
            return None
        r = got[0]
        bad = []
        for k, v in fields.items():
            ok = v if isinstance(v, tuple) else (v,)
            if r.get(k) not in ok:
                bad.append('%s=0x%x (want %s)' % (
                    k, r.get(k, -1), ' or '.join('0x%x' % x for x in ok)))
        self.check(not bad and not r['err'],
                   '%s: %s%s' % (what, fmt(r),
                                 ' MISMATCH ' + ', '.join(bad) if bad else ''))
        return r


CASES = {}


def case(fn):
    CASES[fn.__name__.replace('_', '-')] = fn
    return fn


@case
def no_qp(c):
    """valid RC SEND_ONLY to QPNs that do not exist (0x3fff, 0x4000,
    0xffffff, 0)"""
    for qpn in (0x3fff, 0x4000, 0xffffff, 0):
        c.inj.send(transport(RC | SEND_ONLY, qpn, 0, b'x' * 8, ackreq=True))
    c.expect_none('SEND to missing QPs')


@case
def bad_icrc(c):
    """in-sequence SEND to the live RC QP with a wrong ICRC: off by one,
    wrong byte order, TOS/TTL not masked, payload changed after the ICRC"""
    q = c.qp('rc')
    t = transport(RC | SEND_ONLY, q['qpn'], q['epsn'], b'icrc' * 4,
                  ackreq=True)
    for how in ('bad', 'swap', 'nomask'):
        c.inj.send(t, crc=how)
    pkt = bytearray(c.inj.datagram(t))
    pkt[20 + 8 + 12] ^= 0x01		# first payload byte, ICRC unchanged
    c.inj.send_raw(bytes(pkt))
    c.expect_none('bad-ICRC SENDs')


@case
def bad_tver(c):
    """BTH transport version 1 and 15 on an in-sequence SEND"""
    q = c.qp('rc')
    for v in (1, 15):
        c.inj.send(transport(RC | SEND_ONLY, q['qpn'], q['epsn'], b'v' * 8,
                             ackreq=True, tver=v))
    c.expect_none('TVer != 0')


@case
def bad_opcode(c):
    """reserved, unknown, RD and XRC opcodes to the live RC QP"""
    q = c.qp('rc')
    for op in BAD_OPCODES:
        c.inj.send(bth(op, q['qpn'], q['epsn'], ackreq=True) + bytes(28))
    print('# opcodes: ' + ' '.join('0x%02x' % o for o in BAD_OPCODES))
    c.expect_none('invalid opcodes')


@case
def wrong_transport(c):
    """UD SEND_ONLY and UC SEND_ONLY (well formed) to the live RC QP"""
    q = c.qp('rc')
    c.inj.send(transport(UD | SEND_ONLY, q['qpn'], q['epsn'], b'u' * 8,
                         ext=deth(UD_PP_QKEY, FAKE_QPN)))
    c.inj.send(transport(UC | SEND_ONLY, q['qpn'], q['epsn'], b'u' * 8))
    c.expect_none('UD/UC opcodes to an RC QP')


def truncations(c, qpn, psn, ops):
    """Every opcode of @ops with full headers (random contents) cut at
    every length below its header length, each with a correct ICRC; plus
    UDP payloads of 0..3 bytes (no room for an ICRC)."""
    rnd = random.Random(7)
    n = 0
    for op in ops:
        hdr_len = OPCODES[op][0]
        full = bth(op, qpn, psn, ackreq=True) + \
            bytes(rnd.randrange(256) for _ in range(hdr_len - 12))
        for k in range(hdr_len):
            c.inj.send(full[:k])
            n += 1
    for k in range(4):
        c.inj.send(bth(ops[0], qpn, psn)[:k], crc='none')
        n += 1
    print('# %d truncated packets' % n)


@case
def truncated(c):
    """RC opcodes with extension headers cut at every header length"""
    q = c.qp('rc')
    truncations(c, q['qpn'], q['epsn'],
                [RC | SEND_ONLY_IMM, RC | WRITE_ONLY, RC | WRITE_ONLY_IMM,
                 RC | READ_REQ, RC | CMP_SWAP, RC | FETCH_ADD,
                 RC | SEND_ONLY_INV, RC | ACK, RC | ATOMIC_ACK,
                 RC | READ_RESP_ONLY])
    c.expect_none('truncated packets')


@case
def bad_pad(c):
    """pad count larger than the payload, payload on opcodes without one,
    length not a multiple of 4"""
    q = c.qp('rc')
    qpn, psn = q['qpn'], q['epsn']
    pk = [
        bth(RC | SEND_ONLY, qpn, psn, ackreq=True, pad=3),
        bth(RC | SEND_ONLY, qpn, psn, ackreq=True, pad=1),
        bth(RC | WRITE_ONLY, qpn, psn, ackreq=True, pad=2) +
        reth(0x1000, 0x100, 0),
        bth(RC | READ_REQ, qpn, psn, ackreq=True) + reth(0x1000, 0x100, 8) +
        b'more',
        bth(RC | ACK, qpn, q['spsn'] - 1) + aeth(0x1f, 0) + b'more',
        bth(RC | SEND_ONLY, qpn, psn, ackreq=True) + b'x' * 13,
        bth(RC | SEND_ONLY, qpn, psn, ackreq=True, pad=3) + b'abc',
    ]
    for p in pk:
        c.inj.send(p)
    c.expect_none('bad pad/length')


@case
def udp_len_long(c):
    """UDP length larger than the datagram, and below 8: the UDP layer
    drops them, nothing reaches the device"""
    q = c.qp('rc')
    t = transport(RC | SEND_ONLY, q['qpn'], q['epsn'], b'L' * 8, ackreq=True)
    c.inj.send(t, udp_len=8 + len(t) + 4 + 4)
    c.inj.send(t, udp_len=4)
    c.expect_none('UDP length too large')


@case
def udp_len_short(c):
    """UDP length 4 short of the datagram (the ICRC then lies beyond it)"""
    q = c.qp('rc')
    t = transport(RC | SEND_ONLY, q['qpn'], q['epsn'], b'S' * 8, ackreq=True)
    c.inj.send(t, udp_len=8 + len(t))
    c.expect_none('UDP length too small')


@case
def udp_len_zero(c):
    """UDP length 8 (empty payload) followed by a whole packet"""
    q = c.qp('rc')
    t = transport(RC | SEND_ONLY, q['qpn'], q['epsn'], b'Z' * 8, ackreq=True)
    c.inj.send(t, udp_len=8)
    c.expect_none('empty UDP payload')


@case
def fragmented(c):
    """a 4 KiB SEND_ONLY to a missing QP in IP fragments (the IP layer
    reassembles it: a non-linear skb), with a correct ICRC, then with a
    byte of the second fragment changed"""
    t = transport(RC | SEND_ONLY, 0x3fff, 0, bytes(range(256)) * 16)
    frags = c.inj.fragments(c.inj.datagram(t, df=False), 1480)
    for f in frags:
        c.inj.send_raw(f)
    frags = c.inj.fragments(c.inj.datagram(t, df=False), 1480)
    bad = bytearray(frags[1])
    bad[100] ^= 0x40
    frags[1] = bytes(bad)
    for f in frags:
        c.inj.send_raw(f)
    c.expect_none('fragmented SENDs')


@case
def cnp(c):
    """a RoCEv2 CNP (BECN set) for the live RC QP: a congestion
    notification, not an error"""
    q = c.qp('rc')
    c.inj.send(bth(CNP, q['qpn'], 0, mig=False, becn=True, pad=0) +
               bytes(16))
    c.expect_none('CNP')


@case
def dup(c):
    """SEND with the PSN before the expected one: a duplicate, re-ACKed"""
    q = c.qp('rc')
    psn = (q['epsn'] - 1) & PSN_MASK
    c.inj.send(transport(RC | SEND_ONLY, q['qpn'], psn, b'd' * 8,
                         ackreq=True))
    r = c.expect_one('ACK of the duplicate', opcode=RC | ACK,
                     qpn=q['my_qpn'], psn=psn)
    if r:
        c.check(r.get('syndrome', 0xff) & 0x60 == 0,
                'the reply is a positive ACK (syndrome 0x%02x)' %
                r.get('syndrome', 0xff))


@case
def psn_ahead(c):
    """SEND 1000 PSNs ahead: one NAK PSN sequence error carrying the
    expected PSN; a second one: dropped, no second NAK"""
    q = c.qp('rc')
    c.inj.send(transport(RC | SEND_ONLY, q['qpn'], q['epsn'] + 1000,
                         b'a' * 8, ackreq=True))
    c.expect_one('NAK sequence error', opcode=RC | ACK, qpn=q['my_qpn'],
                 psn=q['epsn'], syndrome=0x60)
    c.inj.send(transport(RC | SEND_ONLY, q['qpn'], q['epsn'] + 1001,
                         b'a' * 8, ackreq=True))
    c.expect_none('a second out-of-sequence SEND')


@case
def bad_pkey(c):
    """SEND with a P_Key of another partition (0x1234) and the invalid
    P_Key 0; sent 5 PSNs ahead so that a device skipping the P_Key check
    shows it as a PSN drop rather than taking the packet"""
    q = c.qp('rc')
    for pkey in (0x1234, 0x0000):
        c.inj.send(transport(RC | SEND_ONLY, q['qpn'], q['epsn'] + 5,
                             b'p' * 8, ackreq=True, pkey=pkey))
    c.expect_none('foreign P_Key')


@case
def unsolicited_resp(c):
    """ACK and READ response for PSNs the QP never sent"""
    q = c.qp('rc')
    c.inj.send(transport(RC | ACK, q['qpn'], q['spsn'],
                         ext=aeth(0x1f, q['msn'])))
    c.inj.send(transport(RC | READ_RESP_ONLY, q['qpn'], q['spsn'], b'r' * 8,
                         ext=aeth(0x1f, q['msn'])))
    c.expect_none('responses to nothing')


@case
def good_send(c):
    """in-sequence SEND: ACKed, ibv_rc_pingpong answers with a SEND,
    which we ACK (the QP still works after all of the above)"""
    q = c.qp('rc')
    c.inj.send(transport(RC | SEND_ONLY, q['qpn'], q['epsn'], b'g' * 32,
                         ackreq=True))
    got = c.inj.replies(5.0, want=2)
    ack = [r for r in got if r.get('opcode') == RC | ACK]
    snd = [r for r in got if r.get('opcode') in (RC | SEND_ONLY,
                                                 RC | SEND_LAST)]
    for r in got:
        print('#   reply: ' + fmt(r))
    c.check(len(ack) == 1 and ack[0]['psn'] == q['epsn'] and
            ack[0].get('syndrome', 0xff) & 0x60 == 0 and
            ack[0]['qpn'] == q['my_qpn'] and not ack[0]['err'],
            'ACK of PSN 0x%06x' % q['epsn'])
    c.check(len(snd) == 1 and snd[0]['psn'] == q['spsn'] and
            snd[0]['qpn'] == q['my_qpn'] and not snd[0]['err'],
            'the server answers with a SEND, PSN 0x%06x' % q['spsn'])
    if snd:
        c.inj.send(transport(RC | ACK, q['qpn'], snd[0]['psn'],
                             ext=aeth(0x1f, 1)))
        q['spsn'] = (snd[0]['psn'] + 1) & PSN_MASK
    q['epsn'] = (q['epsn'] + 1) & PSN_MASK
    q['msn'] = 1
    time.sleep(0.3)
    c.inj.replies(0.3)		# retransmissions, if our ACK was late


@case
def stale_acks(c):
    """in-sequence SEND: ACKed, and the server answers with a SEND, which
    we never acknowledge; instead a stale ACK (the PSN before it) every
    20 ms for 3 s.  Stale ACKs are no progress: they must not hold off
    the server's ACK timeout (ibv_rc_pingpong: 67 ms, retry_cnt 7), so it
    retransmits its SEND retry_cnt times, then stops (RETRY_EXC_ERR)
    well within the 3 s"""
    q = c.qp('rc')
    c.inj.send(transport(RC | SEND_ONLY, q['qpn'], q['epsn'], b's' * 32,
                         ackreq=True))
    got = c.inj.replies(5.0, want=2)
    snd = [r for r in got if r.get('opcode') == RC | SEND_ONLY]
    c.check(len(snd) == 1, 'the server answers with a SEND')
    if not snd:
        return
    psn = snd[0]['psn']
    stale = (psn - 1) & PSN_MASK
    t0 = time.monotonic()
    seen = []
    while time.monotonic() - t0 < 3.0:
        c.inj.send(transport(RC | ACK, q['qpn'], stale, ext=aeth(0x1f, 1)))
        for r in c.inj.replies(0.02):
            if r.get('opcode') == RC | SEND_ONLY and r['psn'] == psn:
                seen.append(time.monotonic() - t0)
    print('# retransmissions at: %s s' %
          ' '.join('%.2f' % t for t in seen))
    c.check(len(seen) == 7, 'the SEND was retransmitted 7 times '
            '(retry_cnt) although stale ACKs kept coming (%d)' % len(seen))
    c.check(not seen or seen[-1] < 2.0,
            'the retransmissions stopped within 2 s')


def rc_exchange(c, q, fill, stale=None):
    """One ping-pong turn with the ibv_rc_pingpong server: our SEND, its
    ACK and its answering SEND, which we leave unacknowledged.  A SEND
    with PSN @stale is a retransmission of the previous answer that was
    on its way when we acknowledged it: not the answer.  Returns the
    answer's PSN, or None (a failed check)."""
    c.inj.send(transport(RC | SEND_ONLY, q['qpn'], q['epsn'], fill * 32,
                         ackreq=True))
    def answer(r):
        return r.get('opcode') == RC | SEND_ONLY and r['psn'] != stale

    got = []
    end = time.monotonic() + 5.0
    # its ACK and its answer, in either order
    while (len(got) < 2 or not any(answer(r) for r in got)) and \
            time.monotonic() < end:
        got += c.inj.replies(end - time.monotonic(), want=1)
    for r in got:
        if r.get('opcode') == RC | SEND_ONLY and r['psn'] == stale:
            print('#   late retransmission: ' + fmt(r))
    snd = [r for r in got if answer(r)]
    q['epsn'] = (q['epsn'] + 1) & PSN_MASK
    c.check(len(snd) >= 1 and snd[0]['qpn'] == q['my_qpn'],
            'the server answers with a SEND')
    return snd[0]['psn'] if snd else None


def only_retransmissions(c, psn, what):
    """For 0.2 s the server sends nothing but retransmissions of its
    SEND at @psn."""
    other = [r for r in c.inj.replies(0.2)
             if r.get('opcode') != RC | SEND_ONLY or r['psn'] != psn]
    for r in other:
        print('#   reply: ' + fmt(r))
    c.check(not other, what)


def second_turn(c, q, psn, fill, what):
    """After the server's answer at @psn was acknowledged (MSN 1): one
    more turn, whose answer must be the next PSN; acknowledged (MSN 2)."""
    psn2 = rc_exchange(c, q, fill, stale=psn)
    c.check(psn2 == (psn + 1) & PSN_MASK,
            '%s: the server sends PSN 0x%06x (got %s)' %
            (what, (psn + 1) & PSN_MASK,
             'none' if psn2 is None else '0x%06x' % psn2))
    if psn2 is not None:
        c.inj.send(transport(RC | ACK, q['qpn'], psn2, ext=aeth(0x1f, 2)))
    time.sleep(0.3)
    c.inj.replies(0.3)		# retransmissions, if our ACK was late


@case
def stale_naks(c):
    """the server's answer (a SEND) is outstanding while NAKs for PSNs
    before it arrive: invalid request, remote access and remote
    operational error 1, 1000 and 65536 PSNs back, and a sequence error
    and an RNR NAK 1000 back.  Each names a request no longer
    outstanding: dropped, not failing the SEND.  Then we ACK the SEND and
    a second turn works: the QP did not move to error"""
    q = c.qp('rc')
    psn = rc_exchange(c, q, b'n')
    if psn is None:
        return
    t_ans = time.monotonic()
    naks = [(syn, back) for syn in (0x61, 0x62, 0x63)
            for back in (1, 1000, 65536)] + [(0x60, 1000), (0x2e, 1000)]
    for syn, back in naks:
        c.inj.send(transport(RC | ACK, q['qpn'], (psn - back) & PSN_MASK,
                             ext=aeth(syn, q['msn'])))
    # (the server may retransmit its SEND meanwhile; nothing else).  The
    # answer must be acknowledged well inside the server's retry budget:
    # ibv_rc_pingpong fails it at its 8th ACK timeout of 67 ms, about
    # 540 ms after its first transmission.
    only_retransmissions(c, psn, 'no answer to the stale NAKs')
    c.inj.send(transport(RC | ACK, q['qpn'], psn, ext=aeth(0x1f, 1)))
    print('#   answer acknowledged %.0f ms after it arrived' %
          ((time.monotonic() - t_ans) * 1000))
    second_turn(c, q, psn, b'm', 'a second turn')


@case
def third_host(c):
    """a third host (THIRD_ADDR, on the segment) sends into the live
    connection at the PSNs its peer uses, while the server's answer (a
    SEND) is outstanding: a SEND and an RDMA WRITE at the PSN the
    server's responder expects, an ACK, NAKs (invalid request, remote
    access and remote operational error) and a READ response at the PSN
    of the outstanding SEND.  None is from the connection's peer: no
    reply, the SEND stays outstanding until the peer ACKs it, and the
    peer's next SEND finds the expected PSN where it left it"""
    q = c.qp('rc')
    psn = rc_exchange(c, q, b'a')
    if psn is None:
        return
    third = c.third()
    third.sent = 0
    third.send(transport(RC | SEND_ONLY, q['qpn'], q['epsn'], b'F' * 32,
                         ackreq=True))
    third.send(transport(RC | WRITE_ONLY, q['qpn'], q['epsn'], b'F' * 16,
                         ext=reth(0x1000, 0x1234, 16), ackreq=True))
    third.send(transport(RC | ACK, q['qpn'], psn, ext=aeth(0x1f, q['msn'])))
    for syn in (0x61, 0x62, 0x63):
        third.send(transport(RC | ACK, q['qpn'], psn,
                             ext=aeth(syn, q['msn'])))
    third.send(transport(RC | READ_RESP_ONLY, q['qpn'], psn, b'F' * 8,
                         ext=aeth(0x1f, q['msn'])))
    print('# %d packets from %s' % (third.sent, third.src))
    c.inj.sent += third.sent
    # the server may retransmit its SEND meanwhile; nothing else
    only_retransmissions(c, psn, 'no answer to the third host\'s packets')
    c.inj.send(transport(RC | ACK, q['qpn'], psn, ext=aeth(0x1f, 1)))
    second_turn(c, q, psn, b'b', 'the peer\'s next turn')


@case
def bad_rkey(c):
    """in-sequence RDMA WRITE with an R_Key that cannot exist (below 256),
    to a QP without remote write access: a fatal NAK for its PSN, invalid
    request (the operation is not enabled on the QP, IBA and rdma_rxe) or
    remote access error"""
    q = c.qp('rc')
    c.inj.send(transport(RC | WRITE_ONLY, q['qpn'], q['epsn'], b'w' * 16,
                         ext=reth(0x1000, 0x17, 16), ackreq=True))
    c.expect_one('fatal NAK', opcode=RC | ACK, qpn=q['my_qpn'],
                 psn=q['epsn'], syndrome=(0x61, 0x62))
    q['epsn'] = (q['epsn'] + 1) & PSN_MASK


@case
def nak_inside_read(c):
    """shca_readreq_test (target "rd") reads 4096 bytes from us: four
    responses at path MTU 1024.  We send the first two, then NAK the READ
    (remote access error) at its first PSN, behind the PSN it now
    expects: what a responder does that went back to an earlier PSN for
    a retried READ and found the R_Key invalidated there.  The READ is
    failed at once (shca_readreq_test prints its status), and the QP
    sends nothing more: no retried READ request"""
    q = c.qp('rd')
    r = c.expect_one('the READ request', timeout=10.0, opcode=RC | READ_REQ,
                     qpn=q['my_qpn'], psn=q['spsn'])
    if not r:
        return
    psn = r['psn']
    c.inj.send(transport(RC | READ_RESP_FIRST, q['qpn'], psn, b'r' * 1024,
                         ext=aeth(0x1f, 1)))
    c.inj.send(transport(RC | READ_RESP_MIDDLE, q['qpn'],
                         (psn + 1) & PSN_MASK, b'r' * 1024))
    c.inj.send(transport(RC | ACK, q['qpn'], psn, ext=aeth(0x62, 1)))
    # (its ACK timeout is about 0.5 s: a READ that waits for the rest of
    # its responses is retried well within this)
    c.expect_none('the NAK inside the READ (no retried READ request)',
                  timeout=2.0)


@case
def qp_error(c):
    """in-sequence SEND to the RC QP in the error state: dropped silently"""
    q = c.qp('rc')
    c.inj.send(transport(RC | SEND_ONLY, q['qpn'], q['epsn'], b'e' * 8,
                         ackreq=True))
    c.expect_none('SEND to a QP in error')


def fatal_nak(c, pkts, what, name='rc'):
    """Send @pkts (opcode, payload, PSN offset) in sequence to the RC QP
    @name, AckReq on the last only: it must get NAK invalid request
    (0x61)."""
    q = c.qp(name)
    for i, (op, payload, off) in enumerate(pkts):
        c.inj.send(transport(op, q['qpn'], q['epsn'] + off, payload,
                             ackreq=i == len(pkts) - 1))
    psn = (q['epsn'] + pkts[-1][2]) & PSN_MASK
    c.expect_one(what, opcode=RC | ACK, qpn=q['my_qpn'], psn=psn,
                 syndrome=0x61)
    c.expect_none('anything after the fatal NAK')


@case
def nak_seq_middle(c):
    """SEND_MIDDLE with no SEND_FIRST before: NAK invalid request"""
    fatal_nak(c, [(RC | 0x01, b'm' * 1024, 0)], 'NAK invalid request')


@case
def nak_first_only(c):
    """SEND_FIRST then SEND_ONLY (the message in progress is not ended):
    NAK invalid request for the SEND_ONLY"""
    fatal_nak(c, [(RC | 0x00, b'f' * 1024, 0), (RC | SEND_ONLY, b'o' * 8, 1)],
              'NAK invalid request')


@case
def srq_first_only(c):
    """nak_first_only to a QP on an SRQ: the receive WQE the SEND_FIRST
    took from the SRQ must complete (flushed) when the QP fails"""
    fatal_nak(c, [(RC | 0x00, b'f' * 1024, 0), (RC | SEND_ONLY, b'o' * 8, 1)],
              'NAK invalid request', name='srq')


@case
def nak_short_first(c):
    """SEND_FIRST carrying less than the path MTU (1024): NAK invalid
    request (length error)"""
    fatal_nak(c, [(RC | 0x00, b's' * 8, 0)], 'NAK invalid request')


@case
def nak_over_mtu(c):
    """SEND_ONLY with 1028 bytes, more than the path MTU (1024), into a
    4096-byte buffer: NAK invalid request (length error)"""
    fatal_nak(c, [(RC | SEND_ONLY, b'M' * 1028, 0)], 'NAK invalid request')


@case
def nak_last_empty(c):
    """SEND_FIRST (1024 bytes) then an empty SEND_LAST: NAK invalid
    request (length error) for the SEND_LAST"""
    fatal_nak(c, [(RC | 0x00, b'f' * 1024, 0), (RC | SEND_LAST, b'', 1)],
              'NAK invalid request')


@case
def nak_too_long(c):
    """SEND_ONLY of 128 bytes into a 64-byte receive buffer: NAK invalid
    request (length error)"""
    fatal_nak(c, [(RC | SEND_ONLY, b'l' * 128, 0)], 'NAK invalid request')


@case
def uc_third_host(c):
    """to the ibv_uc_pingpong server: a whole UC SEND_ONLY at the PSN it
    expects, from a third host (THIRD_ADDR): not from the connection's
    peer, so it takes no receive WQE and the server does not answer"""
    q = c.qp('uc')
    third = c.third()
    third.sent = 0
    third.send(transport(UC | SEND_ONLY, q['qpn'], q['epsn'], b'F' * 64))
    c.inj.sent += third.sent
    c.expect_none('a UC SEND from a third host')


@case
def uc_dropped_messages(c):
    """to the ibv_uc_pingpong server (8 receives posted): 25 UC
    SEND_FIRSTs, each cut off by the next, and a SEND_LAST after a PSN
    gap: messages dropped before their end, which use up no receive WQE;
    then a whole SEND_ONLY, which the server receives and answers"""
    q = c.qp('uc')
    psn = q['epsn']
    for i in range(25):
        c.inj.send(transport(UC | 0x00, q['qpn'], psn + i, b'f' * 1024))
    c.inj.send(transport(UC | SEND_LAST, q['qpn'], psn + 26, b'l' * 8))
    c.inj.send(transport(UC | SEND_ONLY, q['qpn'], psn + 27, b'o' * 64))
    q['epsn'] = (psn + 28) & PSN_MASK
    c.expect_one('the server answers', opcode=UC | SEND_ONLY,
                 qpn=q['my_qpn'])


@case
def ud_bad_qkey(c):
    """UD SEND_ONLY to the ibv_ud_pingpong QP with a wrong Q_Key"""
    q = c.qp('ud')
    c.inj.send(transport(UD | SEND_ONLY, q['qpn'], 0, b'k' * 64,
                         ext=deth(0x22222222, FAKE_QPN)))
    c.expect_none('wrong Q_Key')


@case
def ud_truncated(c):
    """UD opcodes cut at every header length, to the UD QP"""
    q = c.qp('ud')
    truncations(c, q['qpn'], 0, [UD | SEND_ONLY, UD | SEND_ONLY_IMM])
    c.expect_none('truncated UD packets')


@case
def ud_wrong_transport(c):
    """RC SEND_ONLY to the UD QP"""
    q = c.qp('ud')
    c.inj.send(transport(RC | SEND_ONLY, q['qpn'], 0, b'r' * 8, ackreq=True))
    c.expect_none('RC opcode to a UD QP')


@case
def gsi_bad_qkey(c):
    """UD SEND_ONLY to the GSI QP (1) with a Q_Key other than 0x80010000"""
    c.inj.send(transport(UD | SEND_ONLY, 1, 0, bytes(256),
                         ext=deth(UD_PP_QKEY, FAKE_QPN)))
    c.expect_none('wrong GSI Q_Key')


@case
def gsi_too_long(c):
    """700 UD SEND_ONLY of 1000 bytes to the GSI QP with its Q_Key:
    longer than the MAD layer's receive buffers (a 256-byte MAD and the
    GRH), so each is dropped and no buffer is used up; more than the 512
    buffers the MAD layer posts, so rdma_cm would fail after them if they
    were consumed"""
    for i in range(700):
        c.inj.send(transport(UD | SEND_ONLY, 1, i, bytes(1000),
                             ext=deth(GSI_QKEY, FAKE_QPN)))
    c.expect_none('oversized GSI datagrams')


@case
def ud_good(c):
    """UD SEND_ONLY with the right Q_Key: ibv_ud_pingpong answers"""
    q = c.qp('ud')
    c.inj.send(transport(UD | SEND_ONLY, q['qpn'], 0, b'G' * 64,
                         ext=deth(UD_PP_QKEY, FAKE_QPN)))
    c.expect_one('UD answer', opcode=UD | SEND_ONLY, qpn=FAKE_QPN,
                 qkey=UD_PP_QKEY, src_qpn=q['qpn'])


# ---- flood -----------------------------------------------------------------

def random_valid_opcode(rnd):
    return rnd.choice(sorted(OPCODES))


def flood_packet(rnd, inj, targets, near_psns):
    """One hostile packet: 40% random bytes, 35% random headers with a
    valid opcode and a correct ICRC, 15% a valid-looking SEND with bits
    flipped before the ICRC, 10% lying lengths."""
    kind = rnd.random()
    if kind < 0.40:
        n = rnd.choice((rnd.randrange(0, 64), rnd.randrange(0, 1400)))
        data = rnd.randbytes(n)
        crc = rnd.choice(('none', 'good', 'bad'))
        if crc == 'none':
            return inj.datagram(data, crc='none')
        return inj.datagram(data, crc=crc)
    qpn = rnd.choice(targets) if rnd.random() < 0.9 else \
        rnd.randrange(0, 1 << 24)
    psn = rnd.choice(near_psns) + rnd.randrange(-3, 4) \
        if rnd.random() < 0.7 else rnd.randrange(0, 1 << 24)
    if kind < 0.75:
        op = random_valid_opcode(rnd)
        hdr_len = OPCODES[op][0]
        ext = rnd.randbytes(hdr_len - 12)
        if op & 0xe0 == UD and rnd.random() < (0.1 if qpn == 1 else 0.5):
            # the right Q_Key; rarely to the GSI QP: the MAD layer logs
            # every garbage MAD it gets
            qk = GSI_QKEY if qpn == 1 else UD_PP_QKEY
            ext = deth(qk, rnd.randrange(1 << 24)) + ext[8:]
        if hdr_len >= 28 and op in (RC | WRITE_ONLY, RC | READ_REQ,
                                    RC | WRITE_ONLY_IMM, UC | WRITE_ONLY):
            # small lengths and VAs, sometimes huge: bounds arithmetic
            ln = rnd.choice((0, 1, 8, 64, 1024, 0xffffffff, 0x80000000))
            ext = reth(rnd.choice((0, 8, 1 << 63, (1 << 64) - 8)),
                       rnd.randrange(1 << 32), ln) + ext[16:]
        plen = rnd.randrange(0, 1100) if OPCODES[op][1] and \
            rnd.random() < 0.8 else 0
        pad = rnd.randrange(4) if rnd.random() < 0.2 else -plen & 3
        t = bth(op, qpn, psn, ackreq=rnd.random() < 0.5,
                se=rnd.random() < 0.2, pad=pad,
                pkey=0xffff if rnd.random() < 0.9 else rnd.randrange(65536),
                fecn=rnd.random() < 0.1, becn=rnd.random() < 0.1) + \
            ext + rnd.randbytes(plen) + bytes(-plen & 3)
        return inj.datagram(t)
    if kind < 0.90:
        t = bytearray(transport(RC | SEND_ONLY, qpn, psn,
                                rnd.randbytes(rnd.randrange(0, 256)),
                                ackreq=True))
        for _ in range(rnd.randrange(1, 4)):
            i = rnd.randrange(len(t))
            t[i] ^= 1 << rnd.randrange(8)
        return inj.datagram(bytes(t))
    t = transport(random_valid_opcode(rnd), qpn, psn,
                  rnd.randbytes(rnd.randrange(0, 64)))
    cut = rnd.randrange(0, len(t) + 1)
    ulen = rnd.choice((None, 0, 7, 8, 9, 8 + cut + 4 + rnd.randrange(1, 9),
                       8 + max(cut - rnd.randrange(1, 9), 0)))
    return inj.datagram(t[:cut], crc=rnd.choice(('good', 'none')),
                        udp_len=ulen)


def do_flood(sess, count='100000', seed='1', max_seconds='150'):
    """@count packets, cycling through a pool of at most FLOOD_POOL
    distinct ones (building a packet costs more than sending it)."""
    count, seed, max_seconds = int(count), int(seed), float(max_seconds)
    inj = sess.inj
    inj.drain()
    targets = [1] + sorted({q['qpn'] for q in sess.st.values()})
    near = [q['epsn'] for q in sess.st.values()] + \
        [q['spsn'] for q in sess.st.values()] or [0]
    rnd = random.Random(seed)
    start = time.monotonic()
    pool = [flood_packet(rnd, inj, targets, near)
            for _ in range(min(count, FLOOD_POOL))]
    built = time.monotonic()
    for i in range(count):
        inj.send_raw(pool[i % len(pool)])
        if i % 1024 == 0:
            inj.drain()
            if time.monotonic() - start > max_seconds:
                break
    end = time.monotonic()
    inj.drain()
    print('# flood: %d packets (%d distinct, seed %d) in %.1f s + %.1f s to '
          'build them; target QPNs %s' %
          (inj.sent, len(pool), seed, end - built, built - start,
           ' '.join('0x%x' % t for t in targets)))
    if inj.sent < count:
        print('# flood stopped by the %d s limit' % max_seconds)
        return 1
    return 0


def do_case(sess, name):
    if name not in CASES:
        print('# unknown case %s' % name)
        return 2
    c = Case(sess)
    print('# %s: %s' % (name, ' '.join(CASES[name].__doc__.split())))
    CASES[name](c)
    return 1 if c.failed else 0


def do_addr(sess, src, dst):
    sess.readdress(src, dst)
    print('# sending from %s to %s' % (src, dst))
    return 0


COMMANDS = {'connect': do_connect, 'case': do_case, 'flood': do_flood,
            'addr': do_addr}


def run(sess, words):
    """One command; prints its report, returns its status."""
    sess.inj.sent = 0
    fn = COMMANDS.get(words[0])
    if not fn:
        print('# unknown command %s' % words[0])
        return 2
    try:
        rc = fn(sess, *words[1:])
    except (OSError, KeyError, TypeError, ValueError) as e:
        print('# %s: %s' % (words[0], e))
        rc = 1
    sess.save()
    print('# sent %d packet(s)' % sess.inj.sent)
    return rc


def cmd_serve(a):
    """Commands from stdin, one a line; after each: "done STATUS SENT
    QUIET"."""
    sess = Session(a)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == 'quit':
            break
        rc = run(sess, words)
        quiet = (time.monotonic() - Injector.last_tx) * 1000
        print('done %d %d %d' % (rc, sess.inj.sent, min(quiet, 10 ** 6)))
    return 0


def cmd_run(a):
    return run(Session(a), a.words)


def cmd_cases(a):
    for name, fn in CASES.items():
        print('%-20s %s' % (name, ' '.join(fn.__doc__.split())))
    return 0


def main():
    p = argparse.ArgumentParser(
        description=__doc__.split('\n')[0],
        epilog='commands: connect rc|uc|ud NAME [PORT]; addr SRC DST; '
        'case NAME; flood [COUNT [SEED [MAX_SECONDS]]]',
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--src', default='198.18.0.2')
    p.add_argument('--dst', default='198.18.0.1')
    p.add_argument('--sport', type=int, default=49152,
                   help='UDP source port of our packets')
    p.add_argument('--state', help='JSON file keeping the QP state '
                   'between runs')
    sub = p.add_subparsers(dest='cmd', required=True)
    sub.add_parser('serve').set_defaults(fn=cmd_serve)
    s = sub.add_parser('run')
    s.add_argument('words', nargs='+')
    s.set_defaults(fn=cmd_run)
    sub.add_parser('cases').set_defaults(fn=cmd_cases)
    a = p.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    return a.fn(a)


if __name__ == '__main__':
    sys.exit(main())
