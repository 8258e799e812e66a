// SPDX-License-Identifier: GPL-2.0
/*
 * test_hdr.c - unit tests of kernel/mech/shca_hdr.c (RoCEv2 transport headers).
 *
 * The expected header lengths and byte images below were written by hand
 * from the InfiniBand Architecture Specification, vol. 1, chapter 9, not
 * derived from the code under test.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "shca_hdr.h"
#include "tap.h"

static u64 rng_state = 0x5eed0f5ca0de1234ULL;

static u64 rnd64(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static u32 rnd32(void)
{
	return (u32)(rnd64() >> 32);
}

/* transport header length of every supported opcode, IBA ch. 9 */
struct exp_len {
	u8 opcode;
	u8 len;
};

static const struct exp_len exp_lens[] = {
	/* RC */
	{ 0x00, 12 }, { 0x01, 12 }, { 0x02, 12 }, { 0x03, 16 },
	{ 0x04, 12 }, { 0x05, 16 }, { 0x06, 28 }, { 0x07, 12 },
	{ 0x08, 12 }, { 0x09, 16 }, { 0x0a, 28 }, { 0x0b, 32 },
	{ 0x0c, 28 }, { 0x0d, 16 }, { 0x0e, 12 }, { 0x0f, 16 },
	{ 0x10, 16 }, { 0x11, 16 }, { 0x12, 24 }, { 0x13, 40 },
	{ 0x14, 40 }, { 0x16, 16 }, { 0x17, 16 }, { 0x1c, 32 },
	{ 0x1d, 28 },
	/* UC */
	{ 0x20, 12 }, { 0x21, 12 }, { 0x22, 12 }, { 0x23, 16 },
	{ 0x24, 12 }, { 0x25, 16 }, { 0x26, 28 }, { 0x27, 12 },
	{ 0x28, 12 }, { 0x29, 16 }, { 0x2a, 28 }, { 0x2b, 32 },
	/* UD */
	{ 0x64, 20 }, { 0x65, 24 },
	/* CNP */
	{ 0x81, 28 },
};

static int expected_len(u8 opcode)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(exp_lens); i++)
		if (exp_lens[i].opcode == opcode)
			return exp_lens[i].len;
	return -1;
}

static void random_hdr(struct shca_pkt_hdr *h, u8 opcode)
{
	memset(h, 0, sizeof(*h));
	h->opcode = opcode;
	h->solicited = rnd32() & 1;
	h->migreq = rnd32() & 1;
	h->fecn = rnd32() & 1;
	h->becn = rnd32() & 1;
	h->ack_req = rnd32() & 1;
	h->pkey = (u16)rnd32();
	h->dest_qpn = rnd32() & SHCA_QPN_MASK;
	h->psn = rnd32() & SHCA_PSN_MASK;
	h->feth.plt = rnd32() & 0xf;
	h->feth.sel = rnd32() & 3;
	h->reth.va = rnd64();
	h->reth.rkey = rnd32();
	h->reth.dma_len = rnd32();
	h->deth.qkey = rnd32();
	h->deth.src_qpn = rnd32() & SHCA_QPN_MASK;
	h->atomic_eth.va = rnd64();
	h->atomic_eth.rkey = rnd32();
	h->atomic_eth.swap_add = rnd64();
	h->atomic_eth.compare = rnd64();
	h->aeth.syndrome = (u8)rnd32();
	h->aeth.msn = rnd32() & SHCA_MSN_MASK;
	h->atomic_ack.orig = rnd64();
	h->imm = rnd32();
	h->ieth.rkey = rnd32();
}

/* compare the fields of the headers @opcode carries */
static int same_hdr(const struct shca_pkt_hdr *a, const struct shca_pkt_hdr *b)
{
	u16 m = shca_opcode_info(a->opcode)->hdrs;

	if (a->opcode != b->opcode || a->solicited != b->solicited ||
	    a->migreq != b->migreq || a->pad_count != b->pad_count ||
	    a->tver != b->tver || a->fecn != b->fecn || a->becn != b->becn ||
	    a->ack_req != b->ack_req || a->pkey != b->pkey ||
	    a->dest_qpn != b->dest_qpn || a->psn != b->psn)
		return 0;
	if ((m & SHCA_HDR_FETH) &&
	    (a->feth.plt != b->feth.plt || a->feth.sel != b->feth.sel))
		return 0;
	if ((m & SHCA_HDR_RETH) &&
	    (a->reth.va != b->reth.va || a->reth.rkey != b->reth.rkey ||
	     a->reth.dma_len != b->reth.dma_len))
		return 0;
	if ((m & SHCA_HDR_DETH) &&
	    (a->deth.qkey != b->deth.qkey ||
	     a->deth.src_qpn != b->deth.src_qpn))
		return 0;
	if ((m & SHCA_HDR_ATOMIC_ETH) &&
	    (a->atomic_eth.va != b->atomic_eth.va ||
	     a->atomic_eth.rkey != b->atomic_eth.rkey ||
	     a->atomic_eth.swap_add != b->atomic_eth.swap_add ||
	     a->atomic_eth.compare != b->atomic_eth.compare))
		return 0;
	if ((m & SHCA_HDR_AETH) &&
	    (a->aeth.syndrome != b->aeth.syndrome ||
	     a->aeth.msn != b->aeth.msn))
		return 0;
	if ((m & SHCA_HDR_ATOMIC_ACK) &&
	    a->atomic_ack.orig != b->atomic_ack.orig)
		return 0;
	if ((m & SHCA_HDR_IMMDT) && a->imm != b->imm)
		return 0;
	if ((m & SHCA_HDR_IETH) && a->ieth.rkey != b->ieth.rkey)
		return 0;
	return 1;
}

/* parse from an exactly sized heap copy so ASan sees any over-read */
static int parse_exact(const u8 *pkt, size_t len, struct shca_pkt_hdr *h)
{
	u8 *copy = malloc(len ? len : 1);
	int ret;

	if (!copy)
		tap_bail("out of memory");
	memcpy(copy, pkt, len);
	ret = shca_hdr_parse(copy, len, h);
	free(copy);
	return ret;
}

static void test_table(void)
{
	int valid = 0, bad_len = 0, bad_off = 0, bad_tr = 0, bad_flags = 0;
	unsigned int op;

	for (op = 0; op < 256; op++) {
		const struct shca_opcode_info *oi = shca_opcode_info(op);
		int exp = expected_len(op);
		unsigned int e, end = SHCA_BTH_LEN;

		if (shca_opcode_valid(op) != (exp >= 0))
			bad_len++;
		if (exp < 0)
			continue;
		valid++;
		if (oi->hdr_len != exp)
			bad_len++;
		/* present headers tile [12, hdr_len) in enum order */
		for (e = 0; e < SHCA_EXT_NUM; e++) {
			static const u8 sz[SHCA_EXT_NUM] = {
				4, 8, 16, 28, 4, 8, 4, 4, 16 };

			if (!(oi->hdrs & (1U << e))) {
				bad_off += oi->off[e] != 0;
				continue;
			}
			bad_off += oi->off[e] != end;
			end += sz[e];
		}
		bad_off += end != oi->hdr_len;
		switch (op >> 5) {
		case 0:
			bad_tr += oi->transport != SHCA_TR_RC;
			break;
		case 1:
			bad_tr += oi->transport != SHCA_TR_UC;
			break;
		case 3:
			bad_tr += oi->transport != SHCA_TR_UD;
			break;
		default:
			bad_tr += oi->transport != SHCA_TR_CNP;
		}
		/* exactly one of request/response, or CNP */
		bad_flags += !!(oi->flags & SHCA_OPF_REQ) +
			     !!(oi->flags & SHCA_OPF_RESP) +
			     !!(oi->flags & SHCA_OPF_CNP) != 1;
		/* immediate data <=> ImmDt; invalidate <=> IETH */
		bad_flags += !(oi->flags & SHCA_OPF_IMM) !=
			     !(oi->hdrs & SHCA_HDR_IMMDT);
		bad_flags += !(oi->flags & SHCA_OPF_INV) !=
			     !(oi->hdrs & SHCA_HDR_IETH);
		bad_flags += !oi->name;
	}
	ok_eq(valid, 40, "40 supported opcodes (25 RC, 12 UC, 2 UD, CNP)");
	ok_eq(bad_len, 0, "header length of every opcode matches IBA");
	ok_eq(bad_off, 0, "extension header offsets are contiguous, in order");
	ok_eq(bad_tr, 0, "transport of every opcode");
	ok_eq(bad_flags, 0, "flag consistency of every opcode");
	ok(shca_opcode_info(0x0c)->flags & SHCA_OPF_READ &&
	   !(shca_opcode_info(0x0c)->flags & SHCA_OPF_PAYLOAD) &&
	   (shca_opcode_info(0x0c)->flags & SHCA_OPF_ONLY) == SHCA_OPF_ONLY,
	   "READ_REQUEST: read, only, no payload");
	ok((shca_opcode_info(0x0e)->flags &
	    (SHCA_OPF_RESP | SHCA_OPF_PAYLOAD | SHCA_OPF_MIDDLE)) ==
	   (SHCA_OPF_RESP | SHCA_OPF_PAYLOAD | SHCA_OPF_MIDDLE) &&
	   !shca_opcode_info(0x0e)->hdrs,
	   "READ_RESPONSE_MIDDLE: response, payload, middle, no AETH");
	ok(shca_opcode_info(0x12)->flags & SHCA_OPF_ACK &&
	   shca_opcode_info(0x12)->flags & SHCA_OPF_ATOMIC &&
	   shca_opcode_info(0x12)->off[SHCA_EXT_AETH] == 12 &&
	   shca_opcode_info(0x12)->off[SHCA_EXT_ATOMIC_ACK] == 16,
	   "ATOMIC_ACKNOWLEDGE: AETH at 12, AtomicAckETH at 16");
	ok(shca_opcode_info(0x17)->flags & SHCA_OPF_INV &&
	   shca_opcode_info(0x17)->flags & SHCA_OPF_SEND &&
	   shca_opcode_info(0x17)->off[SHCA_EXT_IETH] == 12,
	   "SEND_ONLY_WITH_INVALIDATE: send, invalidate, IETH at 12");
	ok(shca_opcode_info(0x2b)->off[SHCA_EXT_RETH] == 12 &&
	   shca_opcode_info(0x2b)->off[SHCA_EXT_IMMDT] == 28,
	   "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE: RETH at 12, ImmDt at 28");
	ok(shca_opcode_info(0x1c)->flags & SHCA_OPF_FLUSH &&
	   !(shca_opcode_info(0x1c)->flags & SHCA_OPF_PAYLOAD) &&
	   shca_opcode_info(0x1c)->off[SHCA_EXT_FETH] == 12 &&
	   shca_opcode_info(0x1c)->off[SHCA_EXT_RETH] == 16,
	   "FLUSH: no payload, FETH at 12, RETH at 16");
	ok(shca_opcode_info(0x1d)->flags & SHCA_OPF_ATOMIC_WRITE &&
	   shca_opcode_info(0x1d)->flags & SHCA_OPF_PAYLOAD &&
	   shca_opcode_info(0x1d)->off[SHCA_EXT_RETH] == 12,
	   "ATOMIC_WRITE: payload, RETH at 12");
	ok(!strcmp(shca_opcode_name(0x65), "UD_SEND_ONLY_WITH_IMMEDIATE") &&
	   !strcmp(shca_opcode_name(0x40), "UNKNOWN"), "opcode names");
	ok(SHCA_MAX_HDR_LEN == 40, "longest header is 40 bytes");
}

static void test_roundtrip(void)
{
	unsigned int op;

	for (op = 0; op < 256; op++) {
		int fails = 0, iter;

		if (!shca_opcode_valid(op))
			continue;
		for (iter = 0; iter < 64; iter++) {
			struct shca_pkt_hdr h, p;
			u8 buf[SHCA_MAX_HDR_LEN + 64 + 3 + SHCA_ICRC_LEN];
			const struct shca_opcode_info *oi = shca_opcode_info(op);
			u32 payload = 0;
			size_t len;
			int n, r;

			random_hdr(&h, op);
			if (oi->flags & SHCA_OPF_PAYLOAD)
				payload = rnd32() % 65;
			h.pad_count = shca_pad_count(payload);
			memset(buf, 0xa5, sizeof(buf));
			n = shca_hdr_build(buf, sizeof(buf), &h);
			len = shca_pkt_len(op, payload);
			r = parse_exact(buf, len, &p);
			if (n != oi->hdr_len || r != n || !same_hdr(&h, &p) ||
			    shca_payload_len(len, r, p.pad_count) != payload)
				fails++;
			/* reserved bits are sent as zero */
			if ((buf[4] & 0x3f) || (buf[8] & 0x7f))
				fails++;
			if ((oi->hdrs & SHCA_HDR_DETH) && buf[16])
				fails++;
			/* nothing written past the headers */
			if (buf[n] != 0xa5)
				fails++;
		}
		ok_eq(fails, 0, "build/parse round trip of %s (0x%02x)",
		      shca_opcode_name(op), op);
	}
}

static int check_image(const struct shca_pkt_hdr *h, const u8 *exp,
		       size_t exp_len, const char *what)
{
	u8 buf[64];
	struct shca_pkt_hdr p;
	int n, r, bad = 0;
	size_t i;

	memset(buf, 0x5a, sizeof(buf));
	n = shca_hdr_build(buf, sizeof(buf), h);
	if (n != (int)exp_len) {
		diag("%s: built %d bytes, expected %zu", what, n, exp_len);
		bad++;
	}
	for (i = 0; i < exp_len; i++) {
		if (buf[i] != exp[i]) {
			diag("%s: byte %zu is 0x%02x, expected 0x%02x",
			     what, i, buf[i], exp[i]);
			bad++;
		}
	}
	/* the expected image must parse back to the same fields */
	memset(buf, 0, sizeof(buf));
	memcpy(buf, exp, exp_len);
	r = shca_hdr_parse(buf, exp_len + h->pad_count + SHCA_ICRC_LEN +
			   ((4 - h->pad_count) & 3), &p);
	if (r != (int)exp_len || !same_hdr(h, &p)) {
		diag("%s: parse of the image returned %d", what, r);
		bad++;
	}
	return ok(!bad, "byte image of %s", what);
}

static void test_images(void)
{
	struct shca_pkt_hdr h;

	{
		static const u8 exp[] = {
			0x04, 0xa0, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
			0x80, 0x00, 0xab, 0xcd,
		};

		memset(&h, 0, sizeof(h));
		h.opcode = 0x04;	/* RC SEND_ONLY */
		h.solicited = true;
		h.pad_count = 2;
		h.pkey = 0xffff;
		h.dest_qpn = 0x11;
		h.ack_req = true;
		h.psn = 0xabcd;
		check_image(&h, exp, sizeof(exp), "RC SEND_ONLY");
	}
	{
		static const u8 exp[] = {
			0x06, 0x40, 0x80, 0x01, 0x00, 0x12, 0x34, 0x56,
			0x00, 0xff, 0xff, 0xfe,
			/* RETH */
			0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
			0x89, 0xab, 0xcd, 0xef, 0x00, 0x01, 0x00, 0x00,
		};

		memset(&h, 0, sizeof(h));
		h.opcode = 0x06;	/* RC RDMA_WRITE_FIRST */
		h.migreq = true;
		h.pkey = 0x8001;
		h.dest_qpn = 0x123456;
		h.psn = 0xfffffe;
		h.reth.va = 0x0001020304050607ULL;
		h.reth.rkey = 0x89abcdef;
		h.reth.dma_len = 0x10000;
		check_image(&h, exp, sizeof(exp), "RC RDMA_WRITE_FIRST");
	}
	{
		static const u8 exp[] = {
			0x1c, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x22,
			0x80, 0x00, 0x00, 0x07,
			/* FETH: selectivity MR (1), placement global (1) */
			0x00, 0x00, 0x00, 0x11,
			/* RETH */
			0x00, 0x00, 0x7f, 0x00, 0x10, 0x00, 0x00, 0x00,
			0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x10, 0x00,
		};

		memset(&h, 0, sizeof(h));
		h.opcode = 0x1c;	/* RC FLUSH */
		h.pkey = 0xffff;
		h.dest_qpn = 0x22;
		h.ack_req = true;
		h.psn = 7;
		h.feth.plt = SHCA_FETH_GLOBAL;
		h.feth.sel = SHCA_FETH_MR;
		h.reth.va = 0x7f0010000000ULL;
		h.reth.rkey = 0x1234;
		h.reth.dma_len = 0x1000;
		check_image(&h, exp, sizeof(exp), "RC FLUSH");
	}
	{
		static const u8 exp[] = {
			0x11, 0x00, 0xff, 0xff, 0x00, 0xab, 0xcd, 0xef,
			0x00, 0x00, 0x01, 0x00,
			/* AETH: NAK remote access error, MSN */
			0x62, 0x0a, 0x0b, 0x0c,
		};

		memset(&h, 0, sizeof(h));
		h.opcode = 0x11;	/* RC ACKNOWLEDGE */
		h.pkey = 0xffff;
		h.dest_qpn = 0xabcdef;
		h.psn = 0x100;
		h.aeth.syndrome = shca_aeth_nak(SHCA_NAK_REMOTE_ACCESS_ERR);
		h.aeth.msn = 0x0a0b0c;
		check_image(&h, exp, sizeof(exp), "RC ACKNOWLEDGE (NAK)");
	}
	{
		static const u8 exp[] = {
			0x13, 0x00, 0xff, 0xff, 0x00, 0x00, 0x01, 0x01,
			0x80, 0x00, 0x00, 0x05,
			/* AtomicETH */
			0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x56, 0x78,
			0x00, 0x00, 0x12, 0x34,
			0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x22, 0x22,
			0x33, 0x33, 0x33, 0x33, 0x44, 0x44, 0x44, 0x44,
		};

		memset(&h, 0, sizeof(h));
		h.opcode = 0x13;	/* RC COMPARE_SWAP */
		h.pkey = 0xffff;
		h.dest_qpn = 0x101;
		h.ack_req = true;
		h.psn = 5;
		h.atomic_eth.va = 0x00007f0012345678ULL;
		h.atomic_eth.rkey = 0x1234;
		h.atomic_eth.swap_add = 0x1111111122222222ULL;
		h.atomic_eth.compare = 0x3333333344444444ULL;
		check_image(&h, exp, sizeof(exp), "RC COMPARE_SWAP");
	}
	{
		static const u8 exp[] = {
			0x12, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x07,
			0x00, 0x00, 0x00, 0x09,
			/* AETH: ACK, no credit count */
			0x1f, 0x00, 0x00, 0x03,
			/* AtomicAckETH */
			0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,
		};

		memset(&h, 0, sizeof(h));
		h.opcode = 0x12;	/* RC ATOMIC_ACKNOWLEDGE */
		h.pkey = 0xffff;
		h.dest_qpn = 7;
		h.psn = 9;
		h.aeth.syndrome = shca_aeth_ack(SHCA_AETH_CREDITS_INVALID);
		h.aeth.msn = 3;
		h.atomic_ack.orig = 0xfedcba9876543210ULL;
		check_image(&h, exp, sizeof(exp), "RC ATOMIC_ACKNOWLEDGE");
	}
	{
		static const u8 exp[] = {
			0x2b, 0x10, 0x12, 0x34, 0x00, 0x00, 0x00, 0x2a,
			0x00, 0x00, 0x00, 0x00,
			/* RETH */
			0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88,
			0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x03,
			/* ImmDt */
			0x01, 0x02, 0x03, 0x04,
		};
		static const u8 imm[4] = { 1, 2, 3, 4 };

		memset(&h, 0, sizeof(h));
		h.opcode = 0x2b;  /* UC RDMA_WRITE_ONLY_WITH_IMMEDIATE */
		h.pad_count = 1;
		h.pkey = 0x1234;
		h.dest_qpn = 42;
		h.reth.va = 0xffeeddccbbaa9988ULL;
		h.reth.rkey = 1;
		h.reth.dma_len = 3;
		memcpy(&h.imm, imm, 4);
		check_image(&h, exp, sizeof(exp),
			    "UC RDMA_WRITE_ONLY_WITH_IMMEDIATE");
	}
	{
		static const u8 exp[] = {
			0x65, 0xb0, 0xff, 0xff, 0x80, 0x00, 0x00, 0x01,
			0x00, 0x00, 0x00, 0x07,
			/* DETH */
			0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
			/* ImmDt */
			0xde, 0xad, 0xbe, 0xef,
		};

		memset(&h, 0, sizeof(h));
		h.opcode = 0x65;	/* UD SEND_ONLY_WITH_IMMEDIATE */
		h.solicited = true;
		h.pad_count = 3;
		h.pkey = 0xffff;
		h.fecn = true;
		h.dest_qpn = 1;
		h.psn = 7;
		h.deth.qkey = 0x80010000;
		h.deth.src_qpn = 2;
		h.imm = cpu_to_be32(0xdeadbeef);
		check_image(&h, exp, sizeof(exp),
			    "UD SEND_ONLY_WITH_IMMEDIATE");
	}
	{
		/*
		 * BTH and reserved bytes of a CNP captured from a ConnectX-4
		 * Lx, as quoted in scapy's test/contrib/roce.uts ("RoCE CNP
		 * captured on ConnectX-4 Lx").
		 */
		static const u8 exp[] = {
			0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18,
			0x00, 0x00, 0x00, 0x00,
			0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		};

		memset(&h, 0, sizeof(h));
		h.opcode = SHCA_OPCODE_CNP;
		h.pkey = 0xffff;
		h.becn = true;
		h.dest_qpn = 0x118;
		check_image(&h, exp, sizeof(exp), "CNP (ConnectX-4 Lx capture)");
	}
}

static void test_parse_errors(void)
{
	u8 pkt[SHCA_MAX_HDR_LEN + 64];
	struct shca_pkt_hdr h, p;
	unsigned int op;
	int unknown = 0, unknown_bad = 0, n, r;

	for (op = 0; op < 256; op++) {
		const struct shca_opcode_info *oi = shca_opcode_info(op);
		int bad = 0;
		size_t len;

		if (!shca_opcode_valid(op)) {
			unknown++;
			memset(pkt, 0, sizeof(pkt));
			pkt[0] = op;
			r = parse_exact(pkt, sizeof(pkt), &p);
			memset(&h, 0, sizeof(h));
			h.opcode = op;
			n = shca_hdr_build(pkt, sizeof(pkt), &h);
			if (r != -EOPNOTSUPP || n != -EOPNOTSUPP) {
				diag("opcode 0x%02x: parse %d build %d",
				     op, r, n);
				unknown_bad++;
			}
			continue;
		}
		random_hdr(&h, op);
		n = shca_hdr_build(pkt, sizeof(pkt), &h);
		/* every length that does not cover headers + ICRC */
		for (len = 0; len < (size_t)n + SHCA_ICRC_LEN; len++)
			if (parse_exact(pkt, len, &p) != -EBADMSG)
				bad++;
		if (parse_exact(pkt, n + SHCA_ICRC_LEN, &p) != n)
			bad++;
		/* no room to build */
		if (shca_hdr_build(pkt, oi->hdr_len - 1, &h) != -ENOSPC)
			bad++;
		ok_eq(bad, 0, "%s: short buffers rejected", oi->name);
	}
	ok_eq(unknown, 216, "216 unsupported opcodes");
	ok_eq(unknown_bad, 0,
	      "unknown, RD and XRC opcodes rejected by parse and build");

	/* BTH version */
	memset(&h, 0, sizeof(h));
	h.opcode = SHCA_RC_SEND_ONLY;
	n = 0;
	for (h.tver = 1; h.tver < 16; h.tver++) {
		shca_hdr_build(pkt, sizeof(pkt), &h);
		n += parse_exact(pkt, 16, &p) == -EPROTONOSUPPORT;
	}
	ok_eq(n, 15, "TVer 1..15 rejected with -EPROTONOSUPPORT");
	h.tver = 0;

	/* pad count larger than the payload */
	n = 0;
	for (h.pad_count = 1; h.pad_count < 4; h.pad_count++) {
		shca_hdr_build(pkt, sizeof(pkt), &h);
		n += parse_exact(pkt, 16, &p) == -EBADMSG;
		n += parse_exact(pkt, 20, &p) == 12;
	}
	ok_eq(n, 6, "pad count must not exceed payload + pad");
	h.pad_count = 0;

	/* length not a multiple of 4 */
	shca_hdr_build(pkt, sizeof(pkt), &h);
	ok(parse_exact(pkt, 17, &p) == -EBADMSG &&
	   parse_exact(pkt, 18, &p) == -EBADMSG &&
	   parse_exact(pkt, 19, &p) == -EBADMSG &&
	   parse_exact(pkt, 20, &p) == 12, "packet length must be 4-aligned");

	/* payload on opcodes that have none */
	h.opcode = SHCA_RC_ACKNOWLEDGE;
	shca_hdr_build(pkt, sizeof(pkt), &h);
	ok(parse_exact(pkt, 24, &p) == -EBADMSG &&
	   parse_exact(pkt, 20, &p) == 16, "ACKNOWLEDGE with payload rejected");
	h.opcode = 0x0c;
	shca_hdr_build(pkt, sizeof(pkt), &h);
	ok(parse_exact(pkt, 36, &p) == -EBADMSG &&
	   parse_exact(pkt, 32, &p) == 28,
	   "RDMA_READ_REQUEST with payload rejected");
	h.opcode = SHCA_OPCODE_CNP;
	shca_hdr_build(pkt, sizeof(pkt), &h);
	ok(parse_exact(pkt, 36, &p) == -EBADMSG &&
	   parse_exact(pkt, 32, &p) == 28, "CNP with payload rejected");

	/* reserved fields are ignored on receive */
	random_hdr(&h, SHCA_UD_SEND_ONLY_WITH_IMMEDIATE);
	h.pad_count = 0;
	n = shca_hdr_build(pkt, sizeof(pkt), &h);
	pkt[4] |= 0x3f;		/* BTH resv6a */
	pkt[8] |= 0x7f;		/* BTH resv7 */
	pkt[16] = 0xff;		/* DETH reserved byte */
	r = parse_exact(pkt, n + SHCA_ICRC_LEN, &p);
	ok(r == n && same_hdr(&h, &p), "BTH/DETH reserved bits ignored");
	memset(&h, 0, sizeof(h));
	h.opcode = SHCA_OPCODE_CNP;
	n = shca_hdr_build(pkt, sizeof(pkt), &h);
	memset(pkt + 12, 0x77, 16);
	r = parse_exact(pkt, n + SHCA_ICRC_LEN, &p);
	ok(r == 28 && same_hdr(&h, &p), "CNP reserved bytes ignored");

	/* field widths: build truncates, parse returns 24 bits */
	memset(&h, 0, sizeof(h));
	h.opcode = SHCA_UD_SEND_ONLY;
	h.psn = 0x1234567;
	h.dest_qpn = 0xfedcba98;
	h.deth.src_qpn = 0xff000001;
	h.pad_count = 0x7;
	h.tver = 0x10;
	n = shca_hdr_build(pkt, sizeof(pkt), &h);
	r = parse_exact(pkt, 24 + 4, &p);
	ok(n == 20 && r == 20 && p.psn == 0x234567 &&
	   p.dest_qpn == 0xdcba98 && p.deth.src_qpn == 1 &&
	   p.pad_count == 3 && p.tver == 0 && pkt[1] == 0x30,
	   "oversized fields are truncated to their wire width");
	ok(shca_bth_opcode(pkt) == SHCA_UD_SEND_ONLY &&
	   shca_bth_dest_qpn(pkt) == 0xdcba98 &&
	   shca_bth_psn(pkt) == 0x234567, "raw BTH peek helpers");
}

static void test_psn(void)
{
	int bad = 0, i;

	ok_eq(shca_psn_diff(0, 0xffffff), 1, "psn_diff(0, 0xffffff)");
	ok_eq(shca_psn_diff(0xffffff, 0), -1, "psn_diff(0xffffff, 0)");
	ok_eq(shca_psn_diff(5, 5), 0, "psn_diff(5, 5)");
	ok_eq(shca_psn_diff(0x10, 0xfffff0), 0x20, "psn_diff across wrap");
	ok_eq(shca_psn_diff(0xfffff0, 0x10), -0x20, "psn_diff back across wrap");
	ok_eq(shca_psn_diff(0x7fffff, 0), 0x7fffff, "largest positive distance");
	ok_eq(shca_psn_diff(0x800000, 0), -0x800000, "half way is negative");
	ok_eq(shca_psn_diff(0x1000005, 3), 2, "bits above 24 ignored");
	ok_eq(shca_psn_add(0xffffff, 1), 0, "psn_add wraps to 0");
	ok_eq(shca_psn_add(0xfffffe, 5), 3, "psn_add(0xfffffe, 5)");
	ok_eq(shca_psn_add(5, (u32)-10), 0xfffffb, "psn_add of a negative");
	for (i = 0; i < 100000; i++) {
		u32 a = rnd32() & SHCA_PSN_MASK;
		s32 d = (s32)(rnd32() % 0x1000000) - 0x800000;

		if (shca_psn_diff(shca_psn_add(a, (u32)d), a) != d)
			bad++;
		if (shca_psn_diff(a, shca_psn_add(a, (u32)d)) !=
		    (d == -0x800000 ? d : -d))
			bad++;
	}
	ok_eq(bad, 0, "psn_diff(psn_add(a, d), a) == d, 100000 random");
}

static void test_aeth(void)
{
	int bad = 0;
	unsigned int s;
	u8 c;

	ok_eq(shca_aeth_ack(0), 0x00, "ACK, 0 credits");
	ok_eq(shca_aeth_ack(SHCA_AETH_CREDITS_INVALID), 0x1f,
	      "ACK, invalid credit count");
	ok_eq(shca_aeth_rnr_nak(14), 0x2e, "RNR NAK, timer 14");
	ok_eq(shca_aeth_rnr_nak(0), 0x20, "RNR NAK, timer 0");
	ok_eq(shca_aeth_nak(SHCA_NAK_PSN_SEQ_ERR), 0x60, "NAK PSN seq error");
	ok_eq(shca_aeth_nak(SHCA_NAK_INVALID_REQ), 0x61, "NAK invalid request");
	ok_eq(shca_aeth_nak(SHCA_NAK_REMOTE_ACCESS_ERR), 0x62,
	      "NAK remote access error");
	ok_eq(shca_aeth_nak(SHCA_NAK_REMOTE_OP_ERR), 0x63,
	      "NAK remote operational error");
	ok_eq(shca_aeth_nak(SHCA_NAK_INVALID_RD_REQ), 0x64,
	      "NAK invalid RD request");
	for (s = 0; s < 256; s++) {
		unsigned int t = (s >> 5) & 3, v = s & 0x1f;
		bool valid = t == 0 || t == 1 || (t == 3 && v <= 4);

		bad += shca_aeth_type(s) != t;
		bad += shca_aeth_value(s) != v;
		bad += shca_aeth_valid(s) != valid;
	}
	ok_eq(bad, 0, "decode of all 256 syndromes (bit 7 ignored)");

	ok_eq(shca_rnr_timer_usec(0), 655360, "RNR timer 0 = 655.36 ms");
	ok_eq(shca_rnr_timer_usec(1), 10, "RNR timer 1 = 0.01 ms");
	ok_eq(shca_rnr_timer_usec(4), 40, "RNR timer 4 = 0.04 ms");
	ok_eq(shca_rnr_timer_usec(5), 60, "RNR timer 5 = 0.06 ms");
	ok_eq(shca_rnr_timer_usec(14), 1280, "RNR timer 14 = 1.28 ms");
	ok_eq(shca_rnr_timer_usec(19), 7680, "RNR timer 19 = 7.68 ms");
	ok_eq(shca_rnr_timer_usec(31), 491520, "RNR timer 31 = 491.52 ms");
	bad = 0;
	for (c = 2; c < 32; c++)
		bad += shca_rnr_timer_usec(c) <= shca_rnr_timer_usec(c - 1);
	for (c = 0; c < 32; c++)
		bad += shca_rnr_timer_code(shca_rnr_timer_usec(c)) != c;
	ok_eq(bad, 0, "RNR timer codes increase and invert");
	ok(shca_rnr_timer_code(0) == 1 && shca_rnr_timer_code(11) == 2 &&
	   shca_rnr_timer_code(491521) == 0 &&
	   shca_rnr_timer_code(0xffffffff) == 0, "RNR timer code rounding");
}

static void test_pad(void)
{
	static const u8 exp[8] = { 0, 3, 2, 1, 0, 3, 2, 1 };
	int bad = 0;
	u32 i;

	for (i = 0; i < 8; i++)
		bad += shca_pad_count(i) != exp[i];
	ok_eq(bad, 0, "pad count for payload 0..7");
	ok_eq(shca_pkt_len(SHCA_UD_SEND_ONLY, 5), 32,
	      "UD SEND_ONLY of 5 bytes: 20 + 5 + 3 + 4");
	ok_eq(shca_pkt_len(SHCA_RC_SEND_ONLY, 4096), 4112,
	      "RC SEND_ONLY of 4096 bytes");
	ok_eq(shca_payload_len(32, 20, 3), 5, "payload length of a parsed packet");
}

int main(void)
{
	tap_start();
	test_table();
	test_roundtrip();
	test_images();
	test_parse_errors();
	test_psn();
	test_aeth();
	test_pad();
	return tap_done();
}
