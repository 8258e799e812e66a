// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_hdr.c - libFuzzer harness of kernel/mech/shca_hdr.c.
 *
 * Every input is used three ways:
 *
 * 1. As a received UDP payload: shca_hdr_parse() must return what the
 *    checks documented in shca_hdr.h give, in their order (computed here
 *    from this file's own opcode table, written from IBA vol. 1 ch. 9,
 *    not from the code under test).  On success every field must be the
 *    one at its wire offset, the headers the opcode lacks must be zero,
 *    shca_hdr_build() of the parsed struct must give back the input's
 *    header bytes except the reserved bits (which it must write as
 *    zero), and parsing the rebuilt packet must give the same struct.
 * 2. As the fields of a struct shca_pkt_hdr: build it into a buffer of a
 *    fuzzed size (exactly that size on the heap, so ASan sees any write
 *    past it), check the return code and that nothing after the header
 *    was written, add a payload, parse it back and compare with the
 *    struct truncated to the wire format.
 * 3. As arguments of the small helpers: PSN arithmetic, pad count, AETH
 *    syndromes and the RNR timer codes, against their documented values.
 *
 * Any disagreement traps.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "shca_hdr.h"
#include "fuzz_util.h"

/*
 * Extension headers and payload of every supported opcode, from IBA
 * vol. 1 ch. 9 (table 38), 1.5's FLUSH and ATOMIC WRITE and annex A17
 * for the CNP.  UC has the RC
 * SEND and RDMA WRITE opcodes (0x00..0x0b); UD only SEND ONLY, with and
 * without immediate.
 */
struct ref_op {
	u8 opcode;
	u16 hdrs;	/* SHCA_HDR_* bits */
	bool payload;
};

#define RETH	SHCA_HDR_RETH
#define IMM	SHCA_HDR_IMMDT
#define AETH	SHCA_HDR_AETH

static const struct ref_op ref_ops[] = {
	{ 0x00, 0, true }, { 0x01, 0, true }, { 0x02, 0, true },
	{ 0x03, IMM, true }, { 0x04, 0, true }, { 0x05, IMM, true },
	{ 0x06, RETH, true }, { 0x07, 0, true }, { 0x08, 0, true },
	{ 0x09, IMM, true }, { 0x0a, RETH, true },
	{ 0x0b, RETH | IMM, true }, { 0x0c, RETH, false },
	{ 0x0d, AETH, true }, { 0x0e, 0, true }, { 0x0f, AETH, true },
	{ 0x10, AETH, true }, { 0x11, AETH, false },
	{ 0x12, AETH | SHCA_HDR_ATOMIC_ACK, false },
	{ 0x13, SHCA_HDR_ATOMIC_ETH, false },
	{ 0x14, SHCA_HDR_ATOMIC_ETH, false },
	{ 0x16, SHCA_HDR_IETH, true }, { 0x17, SHCA_HDR_IETH, true },
	/* IBA 1.5: FLUSH (FETH, RETH, no payload), ATOMIC WRITE */
	{ 0x1c, SHCA_HDR_FETH | RETH, false }, { 0x1d, RETH, true },

	{ 0x20, 0, true }, { 0x21, 0, true }, { 0x22, 0, true },
	{ 0x23, IMM, true }, { 0x24, 0, true }, { 0x25, IMM, true },
	{ 0x26, RETH, true }, { 0x27, 0, true }, { 0x28, 0, true },
	{ 0x29, IMM, true }, { 0x2a, RETH, true },
	{ 0x2b, RETH | IMM, true },

	{ 0x64, SHCA_HDR_DETH, true },
	{ 0x65, SHCA_HDR_DETH | IMM, true },

	{ 0x81, SHCA_HDR_CNP_RSVD, false },
};

#undef RETH
#undef IMM
#undef AETH

/* sizes of the extension headers, in enum shca_ext_hdr order */
static const u8 ref_ext_len[SHCA_EXT_NUM] = {
	[SHCA_EXT_FETH] = 4,
	[SHCA_EXT_DETH] = 8,
	[SHCA_EXT_RETH] = 16,
	[SHCA_EXT_ATOMIC_ETH] = 28,
	[SHCA_EXT_AETH] = 4,
	[SHCA_EXT_ATOMIC_ACK] = 8,
	[SHCA_EXT_IMMDT] = 4,
	[SHCA_EXT_IETH] = 4,
	[SHCA_EXT_CNP_RSVD] = 16,
};

/* An opcode as this file understands it. */
struct ref_layout {
	bool valid;
	bool payload;
	u16 hdrs;
	u8 len;			/* BTH + extension headers */
	u8 off[SHCA_EXT_NUM];	/* 0 when absent */
};

static struct ref_layout ref_layout(u8 opcode)
{
	struct ref_layout l = { 0 };
	size_t i;
	int e;

	for (i = 0; i < ARRAY_SIZE(ref_ops); i++)
		if (ref_ops[i].opcode == opcode)
			break;
	if (i == ARRAY_SIZE(ref_ops))
		return l;
	l.valid = true;
	l.payload = ref_ops[i].payload;
	l.hdrs = ref_ops[i].hdrs;
	/* the extension headers follow the BTH in enum shca_ext_hdr order */
	l.len = 12;
	for (e = 0; e < SHCA_EXT_NUM; e++) {
		if (!(l.hdrs & (1U << e)))
			continue;
		l.off[e] = l.len;
		l.len += ref_ext_len[e];
	}
	return l;
}

static u32 rd16(const u8 *p)
{
	return (u32)p[0] << 8 | p[1];
}

static u32 rd32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static u64 rd64(const u8 *p)
{
	return (u64)rd32(p) << 32 | rd32(p + 4);
}

/* The opcode table of shca_hdr.c agrees with ref_layout(). */
static void check_table(u8 opcode)
{
	const struct shca_opcode_info *oi = shca_opcode_info(opcode);
	struct ref_layout l = ref_layout(opcode);
	int e;

	FUZZ_ASSERT(shca_opcode_valid(opcode) == l.valid);
	FUZZ_ASSERT(shca_opcode_name(opcode) != NULL);
	if (!l.valid) {
		FUZZ_ASSERT(oi->flags == 0);
		return;
	}
	FUZZ_ASSERT(oi->hdrs == l.hdrs && oi->hdr_len == l.len);
	FUZZ_ASSERT(!!(oi->flags & SHCA_OPF_PAYLOAD) == l.payload);
	for (e = 0; e < SHCA_EXT_NUM; e++)
		FUZZ_ASSERT(oi->off[e] == l.off[e]);
	FUZZ_ASSERT(oi->hdr_len <= SHCA_MAX_HDR_LEN);
}

/*
 * What shca_hdr_parse() must return for @len bytes at @p: its checks in
 * the order shca_hdr.h lists them.
 */
static int ref_parse_ret(const u8 *p, size_t len)
{
	struct ref_layout l;
	size_t payload;
	u32 pad;

	if (len < 12)
		return -EBADMSG;
	if (p[1] & 0x0f)
		return -EPROTONOSUPPORT;
	l = ref_layout(p[0]);
	if (!l.valid)
		return -EOPNOTSUPP;
	if (len < (size_t)l.len + 4 || len % 4)
		return -EBADMSG;
	payload = len - l.len - 4;
	pad = (p[1] >> 4) & 3;
	if (pad > payload || (payload && !l.payload))
		return -EBADMSG;
	return l.len;
}

/* A parsed header holds the fields at their wire offsets in @p. */
static void check_fields(const u8 *p, const struct shca_pkt_hdr *h)
{
	struct ref_layout l = ref_layout(p[0]);
	const u8 *x;

	FUZZ_ASSERT(h->opcode == p[0]);
	FUZZ_ASSERT(h->solicited == !!(p[1] & 0x80));
	FUZZ_ASSERT(h->migreq == !!(p[1] & 0x40));
	FUZZ_ASSERT(h->pad_count == ((p[1] >> 4) & 3));
	FUZZ_ASSERT(h->tver == (p[1] & 0x0f));
	FUZZ_ASSERT(h->pkey == rd16(p + 2));
	FUZZ_ASSERT(h->fecn == !!(p[4] & 0x80));
	FUZZ_ASSERT(h->becn == !!(p[4] & 0x40));
	FUZZ_ASSERT(h->dest_qpn == (rd32(p + 4) & 0xffffff));
	FUZZ_ASSERT(h->ack_req == !!(p[8] & 0x80));
	FUZZ_ASSERT(h->psn == (rd32(p + 8) & 0xffffff));

	/* present headers from their bytes, absent ones zero */
	x = p + l.off[SHCA_EXT_FETH];
	FUZZ_ASSERT(h->feth.plt == (l.hdrs & SHCA_HDR_FETH ? x[3] & 0xf : 0));
	FUZZ_ASSERT(h->feth.sel ==
		    (l.hdrs & SHCA_HDR_FETH ? (x[3] >> 4) & 3 : 0));
	x = p + l.off[SHCA_EXT_DETH];
	FUZZ_ASSERT(h->deth.qkey ==
		    (l.hdrs & SHCA_HDR_DETH ? rd32(x) : 0));
	FUZZ_ASSERT(h->deth.src_qpn ==
		    (l.hdrs & SHCA_HDR_DETH ? rd32(x + 4) & 0xffffff : 0));
	x = p + l.off[SHCA_EXT_RETH];
	if (l.hdrs & SHCA_HDR_RETH) {
		FUZZ_ASSERT(h->reth.va == rd64(x));
		FUZZ_ASSERT(h->reth.rkey == rd32(x + 8));
		FUZZ_ASSERT(h->reth.dma_len == rd32(x + 12));
	} else {
		FUZZ_ASSERT(!h->reth.va && !h->reth.rkey && !h->reth.dma_len);
	}
	x = p + l.off[SHCA_EXT_ATOMIC_ETH];
	if (l.hdrs & SHCA_HDR_ATOMIC_ETH) {
		FUZZ_ASSERT(h->atomic_eth.va == rd64(x));
		FUZZ_ASSERT(h->atomic_eth.rkey == rd32(x + 8));
		FUZZ_ASSERT(h->atomic_eth.swap_add == rd64(x + 12));
		FUZZ_ASSERT(h->atomic_eth.compare == rd64(x + 20));
	} else {
		FUZZ_ASSERT(!h->atomic_eth.va && !h->atomic_eth.rkey &&
			    !h->atomic_eth.swap_add &&
			    !h->atomic_eth.compare);
	}
	x = p + l.off[SHCA_EXT_AETH];
	if (l.hdrs & SHCA_HDR_AETH) {
		FUZZ_ASSERT(h->aeth.syndrome == x[0]);
		FUZZ_ASSERT(h->aeth.msn == (rd32(x) & 0xffffff));
	} else {
		FUZZ_ASSERT(!h->aeth.syndrome && !h->aeth.msn);
	}
	x = p + l.off[SHCA_EXT_ATOMIC_ACK];
	FUZZ_ASSERT(h->atomic_ack.orig ==
		    (l.hdrs & SHCA_HDR_ATOMIC_ACK ? rd64(x) : 0));
	/* immediate data stays in network order */
	x = p + l.off[SHCA_EXT_IMMDT];
	if (l.hdrs & SHCA_HDR_IMMDT)
		FUZZ_ASSERT(!memcmp(&h->imm, x, 4));
	else
		FUZZ_ASSERT(h->imm == 0);
	x = p + l.off[SHCA_EXT_IETH];
	FUZZ_ASSERT(h->ieth.rkey ==
		    (l.hdrs & SHCA_HDR_IETH ? rd32(x) : 0));
}

/* Two parsed headers are equal field by field (absent ones are zero). */
static bool same_hdr(const struct shca_pkt_hdr *a,
		     const struct shca_pkt_hdr *b)
{
	return a->opcode == b->opcode && a->solicited == b->solicited &&
	       a->migreq == b->migreq && a->pad_count == b->pad_count &&
	       a->tver == b->tver && a->fecn == b->fecn &&
	       a->becn == b->becn && a->ack_req == b->ack_req &&
	       a->pkey == b->pkey && a->dest_qpn == b->dest_qpn &&
	       a->psn == b->psn &&
	       a->feth.plt == b->feth.plt && a->feth.sel == b->feth.sel &&
	       a->reth.va == b->reth.va && a->reth.rkey == b->reth.rkey &&
	       a->reth.dma_len == b->reth.dma_len &&
	       a->deth.qkey == b->deth.qkey &&
	       a->deth.src_qpn == b->deth.src_qpn &&
	       a->atomic_eth.va == b->atomic_eth.va &&
	       a->atomic_eth.rkey == b->atomic_eth.rkey &&
	       a->atomic_eth.swap_add == b->atomic_eth.swap_add &&
	       a->atomic_eth.compare == b->atomic_eth.compare &&
	       a->aeth.syndrome == b->aeth.syndrome &&
	       a->aeth.msn == b->aeth.msn &&
	       a->atomic_ack.orig == b->atomic_ack.orig &&
	       a->imm == b->imm && a->ieth.rkey == b->ieth.rkey;
}

/*
 * Bits of each header byte of @opcode that must round-trip: all but the
 * reserved ones (BTH byte 4 bits 5..0, byte 8 bits 6..0, the FETH's
 * first 26 bits, the DETH byte before SrcQP, the 16 bytes of a CNP).
 */
static void wire_mask(u8 opcode, u8 *m)
{
	struct ref_layout l = ref_layout(opcode);

	memset(m, 0xff, l.len);
	m[4] = 0xc0;
	m[8] = 0x80;
	if (l.hdrs & SHCA_HDR_FETH) {
		memset(m + l.off[SHCA_EXT_FETH], 0, 3);
		m[l.off[SHCA_EXT_FETH] + 3] = 0x3f;
	}
	if (l.hdrs & SHCA_HDR_DETH)
		m[l.off[SHCA_EXT_DETH] + 4] = 0;
	if (l.hdrs & SHCA_HDR_CNP_RSVD)
		memset(m + l.off[SHCA_EXT_CNP_RSVD], 0, 16);
}

/* Use 1: the input as a received packet. */
static void fuzz_parse(const u8 *data, size_t size)
{
	struct shca_pkt_hdr h, h2;
	u8 mask[SHCA_MAX_HDR_LEN];
	u8 *pkt;
	int ret, exp, i;

	if (size >= 1)
		check_table(data[0]);
	exp = ref_parse_ret(data, size);
	ret = shca_hdr_parse(data, size, &h);
	FUZZ_ASSERT(ret == exp);
	if (ret < 0)
		return;
	check_fields(data, &h);

	/* rebuild the header over a copy of the packet */
	pkt = malloc(size);
	FUZZ_ASSERT(pkt);
	memcpy(pkt, data, size);
	memset(pkt, 0x5a, ret);
	FUZZ_ASSERT(shca_hdr_build(pkt, size, &h) == ret);
	wire_mask(data[0], mask);
	for (i = 0; i < ret; i++) {
		FUZZ_ASSERT((pkt[i] & mask[i]) == (data[i] & mask[i]));
		FUZZ_ASSERT((pkt[i] & ~mask[i]) == 0);
	}
	FUZZ_ASSERT(!memcmp(pkt + ret, data + ret, size - ret));

	FUZZ_ASSERT(shca_hdr_parse(pkt, size, &h2) == ret);
	FUZZ_ASSERT(same_hdr(&h, &h2));
	free(pkt);
}

/* every supported opcode, for use 2 to pick from */
static u8 pick_opcode(struct fuzz_in *in)
{
	u8 b = fuzz_u8(in);

	/* one in eight: any byte, mostly unsupported opcodes */
	if ((b & 7) == 7)
		return fuzz_u8(in);
	return ref_ops[fuzz_u8(in) % ARRAY_SIZE(ref_ops)].opcode;
}

/* @h as the wire format keeps it: what parsing its build gives. */
static struct shca_pkt_hdr wire_view(const struct shca_pkt_hdr *h)
{
	struct ref_layout l = ref_layout(h->opcode);
	struct shca_pkt_hdr w;

	memset(&w, 0, sizeof(w));
	w.opcode = h->opcode;
	w.solicited = h->solicited;
	w.migreq = h->migreq;
	w.pad_count = h->pad_count & 3;
	w.tver = h->tver & 0x0f;
	w.fecn = h->fecn;
	w.becn = h->becn;
	w.ack_req = h->ack_req;
	w.pkey = h->pkey;
	w.dest_qpn = h->dest_qpn & 0xffffff;
	w.psn = h->psn & 0xffffff;
	if (l.hdrs & SHCA_HDR_FETH) {
		w.feth.plt = h->feth.plt & 0xf;
		w.feth.sel = h->feth.sel & 3;
	}
	if (l.hdrs & SHCA_HDR_RETH)
		w.reth = h->reth;
	if (l.hdrs & SHCA_HDR_DETH) {
		w.deth.qkey = h->deth.qkey;
		w.deth.src_qpn = h->deth.src_qpn & 0xffffff;
	}
	if (l.hdrs & SHCA_HDR_ATOMIC_ETH)
		w.atomic_eth = h->atomic_eth;
	if (l.hdrs & SHCA_HDR_AETH) {
		w.aeth.syndrome = h->aeth.syndrome;
		w.aeth.msn = h->aeth.msn & 0xffffff;
	}
	if (l.hdrs & SHCA_HDR_ATOMIC_ACK)
		w.atomic_ack = h->atomic_ack;
	if (l.hdrs & SHCA_HDR_IMMDT)
		w.imm = h->imm;
	if (l.hdrs & SHCA_HDR_IETH)
		w.ieth = h->ieth;
	return w;
}

#define CANARY	0xc3

/* Use 2: the input as the fields of a header to send. */
static void fuzz_build(const u8 *data, size_t size)
{
	struct fuzz_in in;
	struct shca_pkt_hdr h, got, exp;
	struct ref_layout l;
	size_t buflen, plen, len, i;
	u8 flags, room;
	u8 *buf, *pkt;
	int ret, pret;

	fuzz_in_init(&in, data, size);
	memset(&h, 0, sizeof(h));
	h.opcode = pick_opcode(&in);
	flags = fuzz_u8(&in);
	h.solicited = flags & 1;
	h.migreq = flags & 2;
	h.fecn = flags & 4;
	h.becn = flags & 8;
	h.ack_req = flags & 16;
	/* a nonzero version now and then: parse must refuse it */
	h.tver = (flags & 0xe0) == 0xe0 ? fuzz_u8(&in) : 0;
	h.pad_count = fuzz_u8(&in);
	h.pkey = fuzz_u16(&in);
	h.dest_qpn = fuzz_u32(&in);
	h.psn = fuzz_u32(&in);
	h.feth.plt = fuzz_u8(&in);
	h.feth.sel = fuzz_u8(&in);
	h.reth.va = fuzz_u64(&in);
	h.reth.rkey = fuzz_u32(&in);
	h.reth.dma_len = fuzz_u32(&in);
	h.deth.qkey = fuzz_u32(&in);
	h.deth.src_qpn = fuzz_u32(&in);
	h.atomic_eth.va = fuzz_u64(&in);
	h.atomic_eth.rkey = fuzz_u32(&in);
	h.atomic_eth.swap_add = fuzz_u64(&in);
	h.atomic_eth.compare = fuzz_u64(&in);
	h.aeth.syndrome = fuzz_u8(&in);
	h.aeth.msn = fuzz_u32(&in);
	h.atomic_ack.orig = fuzz_u64(&in);
	h.imm = fuzz_u32(&in);
	h.ieth.rkey = fuzz_u32(&in);
	l = ref_layout(h.opcode);

	/* room: the header length -8..+7, clamped at 0 */
	room = fuzz_u8(&in);
	buflen = l.len + (room & 15) >= 8 ? l.len + (room & 15) - 8 : 0;
	buf = malloc(buflen ? buflen : 1);
	FUZZ_ASSERT(buf);
	memset(buf, CANARY, buflen);
	ret = shca_hdr_build(buf, buflen, &h);
	if (!l.valid) {
		/* which of the two errors wins is not documented */
		FUZZ_ASSERT(ret == -EOPNOTSUPP ||
			    (ret == -ENOSPC && buflen < SHCA_MAX_HDR_LEN));
		free(buf);
		return;
	}
	if (buflen < l.len) {
		FUZZ_ASSERT(ret == -ENOSPC);
		free(buf);
		return;
	}
	FUZZ_ASSERT(ret == l.len);
	for (i = l.len; i < buflen; i++)
		FUZZ_ASSERT(buf[i] == CANARY);

	/* header, then payload and pad (a multiple of 4 bytes), then ICRC */
	plen = l.payload ? 4 * fuzz_pick(&in, 5) : 0;
	len = l.len + plen + 4;
	pkt = malloc(len);
	FUZZ_ASSERT(pkt);
	memcpy(pkt, buf, l.len);
	fuzz_bytes(&in, pkt + l.len, plen + 4);
	pret = shca_hdr_parse(pkt, len, &got);
	FUZZ_ASSERT(pret == ref_parse_ret(pkt, len));
	if (pret >= 0) {
		FUZZ_ASSERT(pret == l.len);
		exp = wire_view(&h);
		FUZZ_ASSERT(same_hdr(&got, &exp));
		check_fields(pkt, &got);
	} else {
		/* only a version or a pad the payload cannot hold fail */
		FUZZ_ASSERT((h.tver & 0x0f) || (h.pad_count & 3) > plen);
	}
	free(pkt);
	free(buf);
}

/* RNR timer delays of IBA table 45, built from the doc's series */
static u32 ref_rnr_usec(u8 code)
{
	u32 t = 20;	/* code 2 */
	u8 c;

	if (code == 1)
		return 10;
	if (code == 0)
		return 655360;
	for (c = 2; c < code; c++)
		t = (c & 1) ? t * 4 / 3 : t * 3 / 2;
	return t;
}

/* Use 3: the helpers of shca_hdr.h. */
static void fuzz_helpers(const u8 *data, size_t size)
{
	struct fuzz_in in;
	u32 a, b, n, usec, want;
	s32 d;
	u8 code, syn, c;

	fuzz_in_init(&in, data, size);
	a = fuzz_u32(&in);
	b = fuzz_u32(&in);
	n = fuzz_u32(&in);

	/* PSN distance modulo 2^24 as a value in [-2^23, 2^23 - 1] */
	d = shca_psn_diff(a, b);
	FUZZ_ASSERT(d >= -(1 << 23) && d < (1 << 23));
	FUZZ_ASSERT((((u32)d - (a - b)) & 0xffffff) == 0);
	FUZZ_ASSERT(shca_psn_add(a, n) == ((a + n) & 0xffffff));
	FUZZ_ASSERT(shca_psn_add(b, (u32)d) == (a & 0xffffff));
	FUZZ_ASSERT(shca_bth_opcode(data) == data[0]);
	FUZZ_ASSERT(shca_bth_dest_qpn(data) == (rd32(data + 4) & 0xffffff));
	FUZZ_ASSERT(shca_bth_psn(data) == (rd32(data + 8) & 0xffffff));

	FUZZ_ASSERT(shca_pad_count(n) <= 3 &&
		    (n + shca_pad_count(n)) % 4 == 0);

	/* AETH syndromes: bit 7 reserved, type in 6..5, value in 4..0 */
	syn = (u8)a;
	FUZZ_ASSERT(shca_aeth_type(syn) == ((syn >> 5) & 3));
	FUZZ_ASSERT(shca_aeth_value(syn) == (syn & 0x1f));
	FUZZ_ASSERT(shca_aeth_valid(syn) ==
		    (((syn >> 5) & 3) < 2 ||
		     (((syn >> 5) & 3) == 3 && (syn & 0x1f) <= 4)));
	FUZZ_ASSERT(shca_aeth_ack(syn) == (syn & 0x1f));
	FUZZ_ASSERT(shca_aeth_rnr_nak(syn) == (0x20 | (syn & 0x1f)));

	/* RNR timer codes 0..31 and their inverse */
	code = (u8)b & 0x1f;
	FUZZ_ASSERT(shca_rnr_timer_usec(code) == ref_rnr_usec(code));
	usec = n % 2 ? n : n % 700000;
	want = 0;
	for (c = 1; c <= 31; c++) {
		if (ref_rnr_usec(c) >= usec) {
			want = c;
			break;
		}
	}
	FUZZ_ASSERT(shca_rnr_timer_code(usec) == want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_parse(data, size);
	fuzz_build(data, size);
	if (size >= 12)
		fuzz_helpers(data, size);
	return 0;
}
