#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Independent reference for the RoCEv2 ICRC test vectors of test_icrc.c.

Writes icrc_vectors.h (C arrays of complete IP packets and their ICRC) to
stdout:

    python3 tests/unit/vectors/icrc_vectors.py > tests/unit/vectors/icrc_vectors.h

The ICRC is computed here with zlib.crc32 (the IEEE 802.3 CRC-32) over
    8 bytes of 0xff (the LRH stand-in)
    + the IP header with IPv4 TOS, TTL, header checksum, or IPv6 traffic
      class, flow label, hop limit replaced by ones
    + the UDP header with its checksum replaced by ones
    + the BTH with byte 4 (FECN, BECN, reserved) replaced by ones
    + the rest of the UDP payload up to, not including, the ICRC,
and stored in the packet least significant byte first (as the Ethernet
FCS, and as rdma_rxe does on little-endian hosts).

Two of the vectors are not made up here but taken from public material,
and the script asserts that the reference computation reproduces them:
  - "cnp_cx4": a CNP captured from a Mellanox ConnectX-4 Lx (hardware
    ICRC), quoted in scapy's test/contrib/roce.uts, "RoCE CNP captured on
    ConnectX-4 Lx";
  - "uc_scapy": the UC SEND_ONLY example packet of the same file, whose
    ICRC scapy's own RoCE layer computes as 0x78f353f3 (wire order).
"""
import socket
import struct
import zlib


def ipv4_csum(hdr):
    s = 0
    for i in range(0, len(hdr), 2):
        s += (hdr[i] << 8) | hdr[i + 1]
    while s > 0xffff:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def ipv4(tos, ident, flags_frag, ttl, src, dst, payload_len, csum=None):
    h = bytearray(struct.pack('!BBHHHBBH4s4s', 0x45, tos, 20 + payload_len,
                              ident, flags_frag, ttl, 17, 0,
                              socket.inet_aton(src), socket.inet_aton(dst)))
    h[10:12] = struct.pack('!H', ipv4_csum(h) if csum is None else csum)
    return bytes(h)


def ipv6(tclass, flow, hop, src, dst, payload_len):
    w = (6 << 28) | (tclass << 20) | flow
    return struct.pack('!IHBB16s16s', w, payload_len, 17, hop,
                       socket.inet_pton(socket.AF_INET6, src),
                       socket.inet_pton(socket.AF_INET6, dst))


def udp(sport, length, csum):
    return struct.pack('!HHHH', sport, 4791, length, csum)


def bth(opcode, se, m, pad, pkey, fecn, becn, qpn, ackreq, psn):
    return struct.pack('!BBHII', opcode, (se << 7) | (m << 6) | (pad << 4),
                       pkey, (fecn << 31) | (becn << 30) | qpn,
                       (ackreq << 31) | psn)


def icrc(ip_udp_bth_rest, v6):
    """ICRC of everything from the IP header to the end of the pad."""
    b = bytearray(ip_udp_bth_rest)
    if v6:
        iplen = 40
        b[0] |= 0x0f
        b[1:4] = b'\xff\xff\xff'
        b[7] = 0xff
    else:
        iplen = (b[0] & 0x0f) * 4
        b[1] = 0xff
        b[8] = 0xff
        b[10:12] = b'\xff\xff'
    b[iplen + 6:iplen + 8] = b'\xff\xff'
    b[iplen + 8 + 4] = 0xff
    return zlib.crc32(b'\xff' * 8 + bytes(b)) & 0xffffffff


def packet(ip_fn, v6, transport, sport, ucsum):
    """Full IP packet: IP + UDP + transport (headers, payload, pad) + ICRC."""
    ulen = 8 + len(transport) + 4
    iph = ip_fn(ulen)
    udph = udp(sport, ulen, ucsum)
    body = iph + udph + transport
    c = icrc(body, v6)
    return body + struct.pack('<I', c), c


vectors = []

# 1. IPv4, RC RDMA_WRITE_ONLY (BTH + RETH), 13-byte payload, 3 pad bytes
pl = b'Hello, RoCEv2'
t = (bth(0x0a, 0, 0, 3, 0xffff, 0, 0, 0x000012, 1, 0x001234) +
     struct.pack('!QII', 0x00007f1234567000, 0x00c0ffee, len(pl)) +
     pl + b'\0' * 3)
p, c = packet(lambda n: ipv4(0x6a, 0x1234, 0x4000, 64, '192.168.1.10',
                             '192.168.1.20', n), False, t, 0xc0de, 0x1234)
vectors.append(('ipv4_rc_write_only', False, p, c))

# 2. IPv6, UD SEND_ONLY_WITH_IMMEDIATE (BTH + DETH + ImmDt), 8-byte payload
pl = bytes(range(0xa0, 0xa8))
t = (bth(0x65, 1, 0, 0, 0xffff, 0, 0, 0x000001, 0, 0x00abcd) +
     struct.pack('!II', 0x80010000, 0x000002) + b'\xde\xad\xbe\xef' + pl)
p, c = packet(lambda n: ipv6(0xb8, 0x12345, 64, '2001:db8::1',
                             '2001:db8::2', n), True, t, 0xd00d, 0)
vectors.append(('ipv6_ud_send_imm', True, p, c))

# 3. IPv6, RC ACKNOWLEDGE (BTH + AETH), FECN and BECN set
t = (bth(0x11, 0, 0, 0, 0x7fff, 1, 1, 0xabcdef, 0, 0xfffffe) +
     struct.pack('!I', (0x1f << 24) | 0x000777))
p, c = packet(lambda n: ipv6(0x02, 0xfffff, 1, 'fe80::1:2', 'fe80::3:4', n),
              True, t, 0xe000, 0xbeef)
vectors.append(('ipv6_rc_ack', True, p, c))

# 4. CNP captured on a ConnectX-4 Lx (scapy test/contrib/roce.uts)
cap = bytes.fromhex(
    'e41d2dab2bc27cfe90643b32080045c2'
    '003c718c400040119161 0a0011010a00'
    '12010000 12b700280000 8100ffff4000'
    '01180000000000000000000000000000'
    '00000000000082fd002a'.replace(' ', ''))
p = cap[14:]
c = icrc(p[:-4], False)
assert p[-4:] == struct.pack('<I', c), 'captured CNP ICRC mismatch'
vectors.append(('cnp_cx4', False, p, c))

# 5. scapy's UC SEND_ONLY example (ICRC computed by scapy: 78 f3 53 f3)
t = (bth(0x24, 0, 1, 2, 0xffff, 0, 0, 211, 0, 13571856) +
     b'F0\x81\x8b\xe2\x895\xd9\x0e\x9a\x95PT\x01\xbe\x88^P\x00\x00')
p, c = packet(lambda n: ipv4(0x01, 1144, 0x4000, 64, '192.168.0.7',
                             '192.168.0.7', n, 0xb4d5), False, t, 49152, 0xaca2)
assert p[-4:] == bytes.fromhex('78f353f3'), 'scapy UC example mismatch'
vectors.append(('uc_scapy', False, p, c))

print('/* SPDX-License-Identifier: GPL-2.0 */')
print('/* Generated by icrc_vectors.py; do not edit. */')
print('#ifndef ICRC_VECTORS_H\n#define ICRC_VECTORS_H\n')
for name, v6, p, c in vectors:
    print('static const u8 vec_%s[%d] = {' % (name, len(p)))
    for i in range(0, len(p), 8):
        print('\t' + ' '.join('0x%02x,' % x for x in p[i:i + 8]))
    print('};\n')
print('static const struct icrc_vector {\n\tconst char *name;\n'
      '\tbool ipv6;\n\tconst u8 *pkt;\n\tsize_t len;\n\tu32 icrc;\n'
      '} icrc_vectors[] = {')
for name, v6, p, c in vectors:
    print('\t{ "%s", %s, vec_%s,\n\t  sizeof(vec_%s), 0x%08x },'
          % (name, 'true' if v6 else 'false', name, name, c))
print('};\n\n#endif /* ICRC_VECTORS_H */')
