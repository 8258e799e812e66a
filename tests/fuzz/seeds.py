#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Writes the seed corpora of the fuzz harnesses, tests/fuzz/corpus/<name>/.

    python3 tests/fuzz/seeds.py            # (re)writes tests/fuzz/corpus/

The seeds are the committed output of this script; it only needs to run
again when a harness changes how it reads its input.  Each seed is a
short, well-formed starting point that reaches the deeper paths of its
harness at once: valid packets of several opcodes for fuzz_hdr and
fuzz_icrc (their bytes written here from the IBA layout, not by the code
under test), and operation sequences that fill, drain and wrap the small
instances of fuzz_llq, fuzz_txhist, fuzz_keytab, fuzz_mcast and fuzz_arr.
The encodings below follow the comments and switch statements of the
harnesses.
"""
import os
import struct
import sys

TOP = os.path.dirname(os.path.abspath(__file__))

# --- transport headers (fuzz_hdr, fuzz_icrc) -------------------------------


def bth(opcode, psn, qpn=0x000012, pad=0, se=False, ack_req=False,
        pkey=0xffff, becn=False):
    b1 = (0x80 if se else 0) | (pad << 4)
    w4 = (0x40000000 if becn else 0) | qpn
    w8 = (0x80000000 if ack_req else 0) | psn
    return struct.pack('>BBHII', opcode, b1, pkey, w4, w8)


def reth(va, rkey, dma_len):
    return struct.pack('>QII', va, rkey, dma_len)


def aeth(syndrome, msn):
    return struct.pack('>I', syndrome << 24 | msn)


def packet(hdr, payload=b''):
    """UDP payload: headers, payload, pad to 4 bytes, 4 ICRC bytes.

    The pad count in the BTH must already match len(payload).
    """
    pad = -len(payload) % 4
    return hdr + payload + bytes(pad) + b'\x82\xfd\x00\x2a'


def hdr_seeds():
    imm = b'\xde\xad\xbe\xef'
    return {
        'rc_send_only': packet(bth(0x04, 0x000100, pad=3, se=True),
                               b'hello'),
        'rc_write_only_imm': packet(
            bth(0x0b, 0x000101, ack_req=True) +
            reth(0x00007f0012345000, 0x00abcd01, 8) + imm, b'12345678'),
        'rc_read_request': packet(bth(0x0c, 0xfffffe) +
                                  reth(0x1000, 0x00000203, 65536)),
        'rc_read_response_only': packet(bth(0x10, 0x000005) +
                                        aeth(0x1f, 0x000042),
                                        bytes(range(16))),
        'rc_nak_psn_seq': packet(bth(0x11, 0x000007) +
                                 aeth(0x60, 0x000003)),
        'rc_atomic_ack': packet(bth(0x12, 0x000008) + aeth(0x00, 9) +
                                struct.pack('>Q', 0x0123456789abcdef)),
        'rc_compare_swap': packet(
            bth(0x13, 0x000009, ack_req=True) +
            struct.pack('>QIQQ', 0x2000, 0x00000401, 7, 5)),
        'rc_send_only_inv': packet(bth(0x17, 0x00000a, pad=2) +
                                   struct.pack('>I', 0x00000502), b'xy'),
        'uc_write_first': packet(bth(0x26, 0x000000) +
                                 reth(0x3000, 0x00000601, 4096),
                                 bytes(256)),
        'ud_send_only_imm': packet(
            bth(0x65, 0x00abcd, pad=1, qpn=0x000001) +
            struct.pack('>II', 0x80010000, 0x000002) + imm, b'abc'),
        'cnp': packet(bth(0x81, 0, becn=True, qpn=0x000011) + bytes(16)),
    }


# --- fuzz_icrc: 100 control bytes, then a packet ----------------------------


def icrc_ctl(ipv6, ip, udp_len, hdr_len, cut, crc0=0xffffffff):
    ctl = bytes([2]) + struct.pack('<I', crc0)  # start state: any
    ctl += bytes([3, 3])                        # alignment 3, 4 pieces
    ctl += struct.pack('<HHH', 5, 17, 40)       # the cut points
    ctl += struct.pack('<IHII', 0x12345678, 300, 70000, 0x40000000)
    udp = struct.pack('>HHHH', 0xc0de, 4791, udp_len, 0x1234)
    ctl += bytes([1 if ipv6 else 0]) + ip.ljust(60, b'\0') + udp
    ctl += struct.pack('<HH', hdr_len, cut)
    assert len(ctl) == 100
    return ctl


def ipv4(payload_len):
    return struct.pack('>BBHHHBBH4s4s', 0x45, 0x02, 20 + payload_len, 1,
                       0x4000, 64, 17, 0xbeef, bytes([192, 168, 1, 1]),
                       bytes([192, 168, 1, 2]))


def ipv6(payload_len):
    return struct.pack('>IHBB16s16s', 6 << 28 | 0x2a << 20 | 0x12345,
                       payload_len, 17, 64, bytes(15) + b'\1',
                       bytes(15) + b'\2')


def icrc_seeds():
    out = {}
    for name, pkt in hdr_seeds().items():
        if name not in ('rc_send_only', 'rc_write_only_imm',
                        'ud_send_only_imm', 'cnp', 'uc_write_first'):
            continue
        body = pkt[:-4]     # the ICRC is not fed to the CRC
        udp_len = 8 + len(pkt)
        six = name.startswith('ud') or name == 'cnp'
        ip = ipv6(udp_len) if six else ipv4(udp_len)
        out[name] = icrc_ctl(six, ip, udp_len, 12, len(body) // 2) + body
    return out


# --- operation harnesses ----------------------------------------------------


def op(case, ncases, set_bits=0, clear_bits=0):
    """The first opcode byte that selects @case and has the flag bits."""
    for b in range(256):
        if b % ncases == case and b & set_bits == set_bits and \
                not b & clear_bits:
            return b
    raise ValueError('no opcode byte for case %d' % case)


def llq_seeds():
    n = 12

    def push(index, func, ready):
        return bytes([op(0, n), index, func, 1 if ready else 0])

    def pop_ready():
        return bytes([op(5, n, clear_bits=0xc0)])

    def cfg(entries, lists, index, funcs):
        return bytes([entries - 1, lists - 1, index - 1, funcs - 1, 1])

    # fill 4 entries over 2 lists of 3 indices, refusals, drain round-robin
    fill = cfg(4, 2, 3, 2)
    fill += push(0, 0, True) + push(1, 1, True) + push(2, 0, True)
    fill += push(0, 1, False) + push(1, 0, True) + push(0, 0, True)
    fill += bytes([op(3, n), 3])                 # set_ready entry 3
    fill += bytes([op(7, n, clear_bits=0x80), 0]) * 3     # peek index 0
    fill += pop_ready() * 5 + bytes([op(11, n), 0, 0])
    # credits: function 1 may hold one entry
    credit = cfg(8, 4, 4, 2) + bytes([op(10, n, clear_bits=0x80), 1, 1])
    credit += push(0, 1, True) + push(1, 1, True) + push(2, 0, False)
    credit += bytes([op(4, n, clear_bits=0x80), 2])       # pop: not ready
    credit += bytes([op(8, n), 0]) + pop_ready() * 2
    # reclaim with a callback that pushes to the same index
    reclaim = cfg(6, 2, 2, 1)
    reclaim += push(0, 0, False) + push(0, 0, True) + push(1, 0, True)
    reclaim += bytes([op(9, n), 0, 2 | 0x10, 0, 0, 0])
    reclaim += push(1, 0, False) + bytes([op(10, n, set_bits=0xc0)])
    # one entry, one list: every refusal
    tiny = cfg(1, 1, 2, 1) + push(0, 0, True) + push(1, 0, True)
    tiny += push(0, 0, True) + pop_ready() + push(1, 0, False)
    tiny += bytes([op(3, n), 0]) + pop_ready() + pop_ready()
    return {'fill_drain': fill, 'credit': credit, 'reclaim_cb': reclaim,
            'tiny': tiny}


def txhist_seeds():
    n = 16

    def push(length, mtu_sel, flags=0, psn=None):
        """A record contiguous with the newest (or at @psn)."""
        how = flags | (0 if psn is not None else 0x80)
        b = bytes([op(0, n), how]) + struct.pack('<H', 7) + bytes([0x04])
        b += bytes([mtu_sel])
        b += bytes([0x80]) + struct.pack('<H', length)  # length: a u16
        b += bytes([0])                                 # msn (ignored)
        if psn is not None:
            b += bytes([0x80]) + struct.pack('<I', psn)  # a 24-bit PSN
        return b

    def built(k, all_):
        # arg_id: held id k; offset: the length
        return bytes([op(6, n), 4 + k, 0x20 | (0x80 if all_ else 0)])

    def retire(psn_rec, flags=0, max_=8):
        # arg_psn: last PSN of record psn_rec; max, flags, out
        return bytes([op(8, n), 0x40 | psn_rec, max_ | flags << 4])

    # three messages across the PSN wrap, built, retired, replayed
    wrap = bytes([3, 0x80 | 2])       # capacity 4, ids about to wrap
    wrap += push(3000, 2, psn=0xfffffd) + push(100, 0) + push(0, 4)
    wrap += built(0, True) + built(1, True)
    wrap += bytes([op(11, n), 0x41])    # replay from record 1's last PSN
    wrap += bytes([op(12, n, clear_bits=0x80), 0, 0, 0])  # pos_next
    wrap += retire(1) + bytes([op(14, n)]) + built(2, True) + retire(2)
    # a READ and an ATOMIC wait for their replies
    reply = bytes([5, 0])
    reply += push(8192, 1, flags=0x03, psn=100) + push(8, 0, flags=0x05)
    reply += push(600, 0, flags=0x01)
    reply += built(0, True) + built(1, True) + built(2, True)
    reply += retire(2) + retire(2, flags=1)
    # full history, refusals, flush, reset
    full = bytes([1, 0]) + push(256, 0, psn=5) + push(512, 0)
    full += push(1, 0) + push(1, 0, psn=9)
    full += bytes([op(9, n, set_bits=0x80)])    # pop
    full += bytes([op(13, n, set_bits=0xe0, clear_bits=0x10)])  # flush
    full += push(1, 0, psn=50) + bytes([op(13, n, set_bits=0xf0)])
    full += bytes([op(15, n, set_bits=0x80), 1])   # break the FIFO
    full += push(1, 0, psn=60) + bytes([op(15, n, clear_bits=0x80), 0])
    return {'psn_wrap': wrap, 'reply': reply, 'full': full}


def keytab_seeds():
    n = 10

    def alloc(owner):
        return bytes([op(0, n), owner])

    def key(idx, kind=0):
        # arg_key: kind 0 current key, 2 an earlier key, of index idx
        return bytes([kind << 6 | idx])

    # fill a table of 4, free, reuse in FIFO order, stale keys
    cycle = bytes([3, 1, 1, 2])
    cycle += alloc(1) + alloc(2) + alloc(3) + alloc(4) + alloc(5)
    cycle += bytes([op(4, n)]) + key(2) + bytes([op(4, n)]) + key(1)
    cycle += alloc(6) + alloc(7)
    cycle += bytes([op(2, n)]) + key(2, 2) + bytes([op(2, n)]) + key(1)
    # rekey to any generation, then the old key is stale
    cycle += bytes([op(3, n)]) + key(3) + bytes([0x00, 0x42])
    cycle += bytes([op(4, n)]) + key(3, 2)
    # R_Key slots: record, sweep in the right and wrong PD, release
    slots = bytes([7, 1, 2, 0])
    for q in (0, 0, 1, 2):
        slots += bytes([op(5, n), q, 0x01])
    slots += bytes([op(8, n), 2, 0x01])   # sweep PD 2, R_Key of index 1
    slots += bytes([op(8, n), 1, 0x01])   # sweep PD 1
    slots += bytes([op(7, n), 0, 0, op(7, n), 0, 0])
    slots += bytes([op(5, n), 0, 0x02]) * 17  # fill one set
    return {'alloc_free': cycle, 'rkey_slots': slots}


def mcast_seeds():
    n = 7

    def add(func, qpn, flags=0):
        return bytes([op(0, n), 24, func, qpn, flags, 16 * func + qpn])

    def admit(local, func, qpn):
        return bytes([op(3, n), local, func, qpn])

    step = bytes([op(4, n), 0])
    consume = bytes([op(5, n), 0])
    end = bytes([op(6, n), 0])
    # capacity 24, threshold 4, credit 3: replicate one local packet to
    # six members (the sender blocks its own copy), stalling on credit
    rep = bytes([23, 3, 2])
    for f, q in ((0, 1), (0, 5), (1, 1), (2, 7), (3, 0)):
        rep += add(f, q)
    rep += add(1, 4, 1)
    rep += admit(1, 1, 4) + step * 4 + consume + step * 3 + consume * 3
    rep += step + end + admit(0, 0, 0) + (step + consume) * 7 + end
    # members come and go while a packet replicates from its snapshot
    churn = bytes([7, 1, 7]) + add(0, 1) + add(1, 2) + add(2, 3)
    churn += admit(0, 0, 0) + step + bytes([op(1, n), 24, 1, 2])
    churn += add(3, 3, 1) + admit(1, 3, 3) + admit(0, 0, 0)  # at threshold
    churn += (step + consume) * 4 + end + bytes([op(2, n), 3, 3])
    return {'replicate': rep, 'churn': churn}


def arr_seeds():
    n = 4

    def alloc(blocks):
        return bytes([op(0, n), blocks])

    def retire(i):
        return bytes([op(1, n), i])

    def release(i):
        return bytes([op(2, n), i])

    # 64 blocks, 16 slots: fill with mixed sizes, free every other range
    # (most extents), retire and release the rest, refill the holes
    frag = bytes([63, 15])
    frag += b''.join(alloc(s) for s in (1, 3, 5, 2, 8, 1, 4, 6, 2, 7, 3, 9))
    frag += b''.join(release(i) for i in range(0, 12, 2))
    frag += b''.join(retire(i) for i in range(1, 12, 2)) + alloc(30)
    frag += b''.join(release(i) for i in range(1, 12, 2))
    frag += alloc(64) + release(0) + alloc(65)
    # 8 blocks, 16 slots: slots and blocks run out in turn
    small = bytes([7, 15]) + alloc(1) * 9 + release(3) + alloc(2)
    small += release(4) + alloc(2) + retire(0) + release(0) + alloc(1)
    return {'fragment': frag, 'small': small}


def main():
    corpora = {
        'arr': arr_seeds(),
        'hdr': hdr_seeds(),
        'icrc': icrc_seeds(),
        'llq': llq_seeds(),
        'txhist': txhist_seeds(),
        'keytab': keytab_seeds(),
        'mcast': mcast_seeds(),
    }
    for harness, seeds in corpora.items():
        d = os.path.join(TOP, 'corpus', harness)
        os.makedirs(d, exist_ok=True)
        for name, data in seeds.items():
            with open(os.path.join(d, name), 'wb') as f:
                f.write(data)
    return 0


if __name__ == '__main__':
    sys.exit(main())
