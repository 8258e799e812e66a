// SPDX-License-Identifier: GPL-2.0
/*
 * shca_hdr.c - InfiniBand transport header build and parse for RoCEv2.
 *
 * Wire format (IBA vol. 1, ch. 9), all fields big endian:
 *
 *   BTH (12)     0: opcode  1: SE(7) M(6) PadCnt(5:4) TVer(3:0)
 *                2: P_Key   4: FECN(31) BECN(30) resv(29:24) DestQP(23:0)
 *                8: AckReq(31) resv(30:24) PSN(23:0)
 *   FETH (4)     0: resv(31:6) SelectivityLevel(5:4) PlacementType(3:0)
 *   DETH (8)     0: Q_Key   4: resv(31:24) SrcQP(23:0)
 *   RETH (16)    0: VA      8: R_Key  12: DMA length
 *   AtomicETH    0: VA      8: R_Key  12: swap/add data  20: compare data
 *   AETH (4)     0: syndrome(31:24) MSN(23:0)
 *   AtomicAckETH 0: original remote data (8)
 *   ImmDt (4), IETH (4: R_Key), CNP: 16 reserved bytes.
 */
#include "shca_pure.h"
#include "shca_hdr.h"

#ifndef __KERNEL__
#include <errno.h>	/* shca_pure.h does not provide the E* codes */
#endif

/* size of a header if present in @m, else 0 */
#define SHCA_SZ(m, bit, n)	(((m) & (bit)) ? (n) : 0)

/*
 * offsets following the order of enum shca_ext_hdr; each takes the header
 * mask (SHCA_OFF() pastes their names), though an FETH always follows the
 * BTH
 */
#define SHCA_O_FETH(m)		(SHCA_BTH_LEN + 0 * (m))
#define SHCA_O_DETH(m)		(SHCA_O_FETH(m) + \
				 SHCA_SZ(m, SHCA_HDR_FETH, SHCA_FETH_LEN))
#define SHCA_O_RETH(m)		(SHCA_O_DETH(m) + \
				 SHCA_SZ(m, SHCA_HDR_DETH, SHCA_DETH_LEN))
#define SHCA_O_ATOMIC_ETH(m)	(SHCA_O_RETH(m) + \
				 SHCA_SZ(m, SHCA_HDR_RETH, SHCA_RETH_LEN))
#define SHCA_O_AETH(m)		(SHCA_O_ATOMIC_ETH(m) + \
				 SHCA_SZ(m, SHCA_HDR_ATOMIC_ETH, \
					 SHCA_ATOMIC_ETH_LEN))
#define SHCA_O_ATOMIC_ACK(m)	(SHCA_O_AETH(m) + \
				 SHCA_SZ(m, SHCA_HDR_AETH, SHCA_AETH_LEN))
#define SHCA_O_IMMDT(m)		(SHCA_O_ATOMIC_ACK(m) + \
				 SHCA_SZ(m, SHCA_HDR_ATOMIC_ACK, \
					 SHCA_ATOMIC_ACK_LEN))
#define SHCA_O_IETH(m)		(SHCA_O_IMMDT(m) + \
				 SHCA_SZ(m, SHCA_HDR_IMMDT, SHCA_IMMDT_LEN))
#define SHCA_O_CNP_RSVD(m)	(SHCA_O_IETH(m) + \
				 SHCA_SZ(m, SHCA_HDR_IETH, SHCA_IETH_LEN))
#define SHCA_O_END(m)		(SHCA_O_CNP_RSVD(m) + \
				 SHCA_SZ(m, SHCA_HDR_CNP_RSVD, \
					 SHCA_CNP_RSVD_LEN))

/* offset of a header if present in @m, else 0 */
#define SHCA_OFF(m, x)	(((m) & SHCA_HDR_##x) ? SHCA_O_##x(m) : 0)

#define SHCA_OPE(nm, tr, m, f) {					\
	.name = (nm),							\
	.flags = SHCA_OPF_VALID | (f),					\
	.hdrs = (m),							\
	.transport = (tr),						\
	.hdr_len = SHCA_O_END(m),					\
	.off = {							\
		[SHCA_EXT_FETH] = SHCA_OFF(m, FETH),			\
		[SHCA_EXT_DETH] = SHCA_OFF(m, DETH),			\
		[SHCA_EXT_RETH] = SHCA_OFF(m, RETH),			\
		[SHCA_EXT_ATOMIC_ETH] = SHCA_OFF(m, ATOMIC_ETH),	\
		[SHCA_EXT_AETH] = SHCA_OFF(m, AETH),			\
		[SHCA_EXT_ATOMIC_ACK] = SHCA_OFF(m, ATOMIC_ACK),	\
		[SHCA_EXT_IMMDT] = SHCA_OFF(m, IMMDT),			\
		[SHCA_EXT_IETH] = SHCA_OFF(m, IETH),			\
		[SHCA_EXT_CNP_RSVD] = SHCA_OFF(m, CNP_RSVD),		\
	},								\
}

#define T_RQ	SHCA_OPF_REQ
#define T_RS	SHCA_OPF_RESP
#define T_PL	SHCA_OPF_PAYLOAD
#define T_F	SHCA_OPF_FIRST
#define T_M	SHCA_OPF_MIDDLE
#define T_L	SHCA_OPF_LAST
#define T_O	SHCA_OPF_ONLY
#define T_SEND	(SHCA_OPF_SEND | T_RQ | T_PL)
#define T_WRITE	(SHCA_OPF_WRITE | T_RQ | T_PL)
#define T_READ	SHCA_OPF_READ
#define T_ATOMIC	SHCA_OPF_ATOMIC
#define T_IMM	SHCA_OPF_IMM
#define T_INV	SHCA_OPF_INV
#define T_ACK	(SHCA_OPF_ACK | T_RS)
#define T_HIMM	SHCA_HDR_IMMDT
#define T_HRETH	SHCA_HDR_RETH

#define T_RC(op)	(SHCA_OP_RC | SHCA_OP_##op)
#define T_UC(op)	(SHCA_OP_UC | SHCA_OP_##op)
#define T_UD(op)	(SHCA_OP_UD | SHCA_OP_##op)

const struct shca_opcode_info shca_opcode_table[256] = {
	/* reliable connected */
	[T_RC(SEND_FIRST)] =
		SHCA_OPE("RC_SEND_FIRST", SHCA_TR_RC, 0, T_SEND | T_F),
	[T_RC(SEND_MIDDLE)] =
		SHCA_OPE("RC_SEND_MIDDLE", SHCA_TR_RC, 0, T_SEND | T_M),
	[T_RC(SEND_LAST)] =
		SHCA_OPE("RC_SEND_LAST", SHCA_TR_RC, 0, T_SEND | T_L),
	[T_RC(SEND_LAST_WITH_IMMEDIATE)] =
		SHCA_OPE("RC_SEND_LAST_WITH_IMMEDIATE", SHCA_TR_RC,
			 T_HIMM, T_SEND | T_L | T_IMM),
	[T_RC(SEND_ONLY)] =
		SHCA_OPE("RC_SEND_ONLY", SHCA_TR_RC, 0, T_SEND | T_O),
	[T_RC(SEND_ONLY_WITH_IMMEDIATE)] =
		SHCA_OPE("RC_SEND_ONLY_WITH_IMMEDIATE", SHCA_TR_RC,
			 T_HIMM, T_SEND | T_O | T_IMM),
	[T_RC(RDMA_WRITE_FIRST)] =
		SHCA_OPE("RC_RDMA_WRITE_FIRST", SHCA_TR_RC,
			 T_HRETH, T_WRITE | T_F),
	[T_RC(RDMA_WRITE_MIDDLE)] =
		SHCA_OPE("RC_RDMA_WRITE_MIDDLE", SHCA_TR_RC, 0, T_WRITE | T_M),
	[T_RC(RDMA_WRITE_LAST)] =
		SHCA_OPE("RC_RDMA_WRITE_LAST", SHCA_TR_RC, 0, T_WRITE | T_L),
	[T_RC(RDMA_WRITE_LAST_WITH_IMMEDIATE)] =
		SHCA_OPE("RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", SHCA_TR_RC,
			 T_HIMM, T_WRITE | T_L | T_IMM),
	[T_RC(RDMA_WRITE_ONLY)] =
		SHCA_OPE("RC_RDMA_WRITE_ONLY", SHCA_TR_RC,
			 T_HRETH, T_WRITE | T_O),
	[T_RC(RDMA_WRITE_ONLY_WITH_IMMEDIATE)] =
		SHCA_OPE("RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", SHCA_TR_RC,
			 T_HRETH | T_HIMM, T_WRITE | T_O | T_IMM),
	[T_RC(RDMA_READ_REQUEST)] =
		SHCA_OPE("RC_RDMA_READ_REQUEST", SHCA_TR_RC,
			 T_HRETH, T_RQ | T_READ | T_O),
	[T_RC(RDMA_READ_RESPONSE_FIRST)] =
		SHCA_OPE("RC_RDMA_READ_RESPONSE_FIRST", SHCA_TR_RC,
			 SHCA_HDR_AETH, T_RS | T_READ | T_PL | T_F),
	[T_RC(RDMA_READ_RESPONSE_MIDDLE)] =
		SHCA_OPE("RC_RDMA_READ_RESPONSE_MIDDLE", SHCA_TR_RC,
			 0, T_RS | T_READ | T_PL | T_M),
	[T_RC(RDMA_READ_RESPONSE_LAST)] =
		SHCA_OPE("RC_RDMA_READ_RESPONSE_LAST", SHCA_TR_RC,
			 SHCA_HDR_AETH, T_RS | T_READ | T_PL | T_L),
	[T_RC(RDMA_READ_RESPONSE_ONLY)] =
		SHCA_OPE("RC_RDMA_READ_RESPONSE_ONLY", SHCA_TR_RC,
			 SHCA_HDR_AETH, T_RS | T_READ | T_PL | T_O),
	[T_RC(ACKNOWLEDGE)] =
		SHCA_OPE("RC_ACKNOWLEDGE", SHCA_TR_RC,
			 SHCA_HDR_AETH, T_ACK | T_O),
	[T_RC(ATOMIC_ACKNOWLEDGE)] =
		SHCA_OPE("RC_ATOMIC_ACKNOWLEDGE", SHCA_TR_RC,
			 SHCA_HDR_AETH | SHCA_HDR_ATOMIC_ACK,
			 T_ACK | T_ATOMIC | T_O),
	[T_RC(COMPARE_SWAP)] =
		SHCA_OPE("RC_COMPARE_SWAP", SHCA_TR_RC,
			 SHCA_HDR_ATOMIC_ETH, T_RQ | T_ATOMIC | T_O),
	[T_RC(FETCH_ADD)] =
		SHCA_OPE("RC_FETCH_ADD", SHCA_TR_RC,
			 SHCA_HDR_ATOMIC_ETH, T_RQ | T_ATOMIC | T_O),
	[T_RC(SEND_LAST_WITH_INVALIDATE)] =
		SHCA_OPE("RC_SEND_LAST_WITH_INVALIDATE", SHCA_TR_RC,
			 SHCA_HDR_IETH, T_SEND | T_L | T_INV),
	[T_RC(SEND_ONLY_WITH_INVALIDATE)] =
		SHCA_OPE("RC_SEND_ONLY_WITH_INVALIDATE", SHCA_TR_RC,
			 SHCA_HDR_IETH, T_SEND | T_O | T_INV),
	[T_RC(FLUSH)] =
		SHCA_OPE("RC_FLUSH", SHCA_TR_RC, SHCA_HDR_FETH | T_HRETH,
			 T_RQ | SHCA_OPF_FLUSH | T_O),
	[T_RC(ATOMIC_WRITE)] =
		SHCA_OPE("RC_ATOMIC_WRITE", SHCA_TR_RC, T_HRETH,
			 T_RQ | T_PL | SHCA_OPF_ATOMIC_WRITE | T_O),

	/* unreliable connected */
	[T_UC(SEND_FIRST)] =
		SHCA_OPE("UC_SEND_FIRST", SHCA_TR_UC, 0, T_SEND | T_F),
	[T_UC(SEND_MIDDLE)] =
		SHCA_OPE("UC_SEND_MIDDLE", SHCA_TR_UC, 0, T_SEND | T_M),
	[T_UC(SEND_LAST)] =
		SHCA_OPE("UC_SEND_LAST", SHCA_TR_UC, 0, T_SEND | T_L),
	[T_UC(SEND_LAST_WITH_IMMEDIATE)] =
		SHCA_OPE("UC_SEND_LAST_WITH_IMMEDIATE", SHCA_TR_UC,
			 T_HIMM, T_SEND | T_L | T_IMM),
	[T_UC(SEND_ONLY)] =
		SHCA_OPE("UC_SEND_ONLY", SHCA_TR_UC, 0, T_SEND | T_O),
	[T_UC(SEND_ONLY_WITH_IMMEDIATE)] =
		SHCA_OPE("UC_SEND_ONLY_WITH_IMMEDIATE", SHCA_TR_UC,
			 T_HIMM, T_SEND | T_O | T_IMM),
	[T_UC(RDMA_WRITE_FIRST)] =
		SHCA_OPE("UC_RDMA_WRITE_FIRST", SHCA_TR_UC,
			 T_HRETH, T_WRITE | T_F),
	[T_UC(RDMA_WRITE_MIDDLE)] =
		SHCA_OPE("UC_RDMA_WRITE_MIDDLE", SHCA_TR_UC, 0, T_WRITE | T_M),
	[T_UC(RDMA_WRITE_LAST)] =
		SHCA_OPE("UC_RDMA_WRITE_LAST", SHCA_TR_UC, 0, T_WRITE | T_L),
	[T_UC(RDMA_WRITE_LAST_WITH_IMMEDIATE)] =
		SHCA_OPE("UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", SHCA_TR_UC,
			 T_HIMM, T_WRITE | T_L | T_IMM),
	[T_UC(RDMA_WRITE_ONLY)] =
		SHCA_OPE("UC_RDMA_WRITE_ONLY", SHCA_TR_UC,
			 T_HRETH, T_WRITE | T_O),
	[T_UC(RDMA_WRITE_ONLY_WITH_IMMEDIATE)] =
		SHCA_OPE("UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", SHCA_TR_UC,
			 T_HRETH | T_HIMM, T_WRITE | T_O | T_IMM),

	/* unreliable datagram */
	[T_UD(SEND_ONLY)] =
		SHCA_OPE("UD_SEND_ONLY", SHCA_TR_UD,
			 SHCA_HDR_DETH, T_SEND | T_O),
	[T_UD(SEND_ONLY_WITH_IMMEDIATE)] =
		SHCA_OPE("UD_SEND_ONLY_WITH_IMMEDIATE", SHCA_TR_UD,
			 SHCA_HDR_DETH | T_HIMM, T_SEND | T_O | T_IMM),

	/* RoCEv2 congestion notification (IBA annex A17) */
	[SHCA_OPCODE_CNP] =
		SHCA_OPE("CNP", SHCA_TR_CNP, SHCA_HDR_CNP_RSVD, SHCA_OPF_CNP),
};

#undef T_RQ
#undef T_RS
#undef T_PL
#undef T_F
#undef T_M
#undef T_L
#undef T_O
#undef T_SEND
#undef T_WRITE
#undef T_READ
#undef T_ATOMIC
#undef T_IMM
#undef T_INV
#undef T_ACK
#undef T_HIMM
#undef T_HRETH
#undef T_RC
#undef T_UC
#undef T_UD

/* 8 + 24 bit field: @top in bits 31..24, @low in 23..0 */
static inline void shca_put_8_24(u8 *p, u8 top, u32 low)
{
	put_unaligned_be32(((u32)top << 24) | (low & 0x00ffffffU), p);
}

int shca_hdr_build(void *buf, size_t buflen, const struct shca_pkt_hdr *h)
{
	const struct shca_opcode_info *oi = &shca_opcode_table[h->opcode];
	u8 *p = buf;
	u8 *x;

	if (unlikely(!(oi->flags & SHCA_OPF_VALID)))
		return -EOPNOTSUPP;
	if (unlikely(buflen < oi->hdr_len))
		return -ENOSPC;

	p[0] = h->opcode;
	p[1] = (h->solicited ? 0x80 : 0) | (h->migreq ? 0x40 : 0) |
	       ((h->pad_count & 3) << 4) | (h->tver & 0x0f);
	put_unaligned_be16(h->pkey, p + 2);
	shca_put_8_24(p + 4, (h->fecn ? 0x80 : 0) | (h->becn ? 0x40 : 0),
		      h->dest_qpn);
	shca_put_8_24(p + 8, h->ack_req ? 0x80 : 0, h->psn);

	if (!oi->hdrs)
		return oi->hdr_len;

	if (oi->hdrs & SHCA_HDR_FETH)
		put_unaligned_be32(((h->feth.sel & 3) << 4) | (h->feth.plt & 0xf),
				   p + oi->off[SHCA_EXT_FETH]);
	if (oi->hdrs & SHCA_HDR_DETH) {
		x = p + oi->off[SHCA_EXT_DETH];
		put_unaligned_be32(h->deth.qkey, x);
		shca_put_8_24(x + 4, 0, h->deth.src_qpn);
	}
	if (oi->hdrs & SHCA_HDR_RETH) {
		x = p + oi->off[SHCA_EXT_RETH];
		put_unaligned_be64(h->reth.va, x);
		put_unaligned_be32(h->reth.rkey, x + 8);
		put_unaligned_be32(h->reth.dma_len, x + 12);
	}
	if (oi->hdrs & SHCA_HDR_ATOMIC_ETH) {
		x = p + oi->off[SHCA_EXT_ATOMIC_ETH];
		put_unaligned_be64(h->atomic_eth.va, x);
		put_unaligned_be32(h->atomic_eth.rkey, x + 8);
		put_unaligned_be64(h->atomic_eth.swap_add, x + 12);
		put_unaligned_be64(h->atomic_eth.compare, x + 20);
	}
	if (oi->hdrs & SHCA_HDR_AETH) {
		x = p + oi->off[SHCA_EXT_AETH];
		shca_put_8_24(x, h->aeth.syndrome, h->aeth.msn);
	}
	if (oi->hdrs & SHCA_HDR_ATOMIC_ACK) {
		x = p + oi->off[SHCA_EXT_ATOMIC_ACK];
		put_unaligned_be64(h->atomic_ack.orig, x);
	}
	if (oi->hdrs & SHCA_HDR_IMMDT)
		memcpy(p + oi->off[SHCA_EXT_IMMDT], &h->imm, SHCA_IMMDT_LEN);
	if (oi->hdrs & SHCA_HDR_IETH)
		put_unaligned_be32(h->ieth.rkey, p + oi->off[SHCA_EXT_IETH]);
	if (oi->hdrs & SHCA_HDR_CNP_RSVD)
		memset(p + oi->off[SHCA_EXT_CNP_RSVD], 0, SHCA_CNP_RSVD_LEN);

	return oi->hdr_len;
}

int shca_hdr_parse(const void *buf, size_t len, struct shca_pkt_hdr *h)
{
	const struct shca_opcode_info *oi;
	const u8 *p = buf;
	const u8 *x;
	size_t payload;
	u32 w;

	if (unlikely(len < SHCA_BTH_LEN))
		return -EBADMSG;
	if (unlikely((p[1] & 0x0f) != SHCA_BTH_TVER))
		return -EPROTONOSUPPORT;
	oi = &shca_opcode_table[p[0]];
	if (unlikely(!(oi->flags & SHCA_OPF_VALID)))
		return -EOPNOTSUPP;
	if (unlikely(len < (size_t)oi->hdr_len + SHCA_ICRC_LEN || len & 3))
		return -EBADMSG;
	payload = len - oi->hdr_len - SHCA_ICRC_LEN;
	if (unlikely(((p[1] >> 4) & 3) > payload))
		return -EBADMSG;
	if (unlikely(payload && !(oi->flags & SHCA_OPF_PAYLOAD)))
		return -EBADMSG;

	memset(h, 0, sizeof(*h));
	h->opcode = p[0];
	h->solicited = p[1] & 0x80;
	h->migreq = p[1] & 0x40;
	h->pad_count = (p[1] >> 4) & 3;
	h->tver = p[1] & 0x0f;
	h->pkey = get_unaligned_be16(p + 2);
	w = get_unaligned_be32(p + 4);
	h->fecn = w & 0x80000000U;
	h->becn = w & 0x40000000U;
	h->dest_qpn = w & SHCA_QPN_MASK;
	w = get_unaligned_be32(p + 8);
	h->ack_req = w & 0x80000000U;
	h->psn = w & SHCA_PSN_MASK;

	if (!oi->hdrs)
		return oi->hdr_len;

	if (oi->hdrs & SHCA_HDR_FETH) {
		w = get_unaligned_be32(p + oi->off[SHCA_EXT_FETH]);
		h->feth.plt = w & 0xf;
		h->feth.sel = (w >> 4) & 3;
	}
	if (oi->hdrs & SHCA_HDR_DETH) {
		x = p + oi->off[SHCA_EXT_DETH];
		h->deth.qkey = get_unaligned_be32(x);
		h->deth.src_qpn = get_unaligned_be32(x + 4) & SHCA_QPN_MASK;
	}
	if (oi->hdrs & SHCA_HDR_RETH) {
		x = p + oi->off[SHCA_EXT_RETH];
		h->reth.va = get_unaligned_be64(x);
		h->reth.rkey = get_unaligned_be32(x + 8);
		h->reth.dma_len = get_unaligned_be32(x + 12);
	}
	if (oi->hdrs & SHCA_HDR_ATOMIC_ETH) {
		x = p + oi->off[SHCA_EXT_ATOMIC_ETH];
		h->atomic_eth.va = get_unaligned_be64(x);
		h->atomic_eth.rkey = get_unaligned_be32(x + 8);
		h->atomic_eth.swap_add = get_unaligned_be64(x + 12);
		h->atomic_eth.compare = get_unaligned_be64(x + 20);
	}
	if (oi->hdrs & SHCA_HDR_AETH) {
		w = get_unaligned_be32(p + oi->off[SHCA_EXT_AETH]);
		h->aeth.syndrome = w >> 24;
		h->aeth.msn = w & SHCA_MSN_MASK;
	}
	if (oi->hdrs & SHCA_HDR_ATOMIC_ACK) {
		x = p + oi->off[SHCA_EXT_ATOMIC_ACK];
		h->atomic_ack.orig = get_unaligned_be64(x);
	}
	if (oi->hdrs & SHCA_HDR_IMMDT)
		memcpy(&h->imm, p + oi->off[SHCA_EXT_IMMDT], SHCA_IMMDT_LEN);
	if (oi->hdrs & SHCA_HDR_IETH)
		h->ieth.rkey = get_unaligned_be32(p + oi->off[SHCA_EXT_IETH]);

	return oi->hdr_len;
}

u32 shca_rnr_timer_usec(u8 code)
{
	code &= SHCA_AETH_VALUE_MASK;
	if (code == 1)
		return 10;
	if (code == 0)
		code = 32;	/* continues the series of 2..31 */
	/* even codes 20 us << k, odd codes 30 us << k, k = (code - 2) / 2 */
	return ((code & 1) ? 30U : 20U) << ((code - 2) / 2);
}

u8 shca_rnr_timer_code(u32 usec)
{
	u8 code;

	for (code = 1; code <= SHCA_AETH_VALUE_MASK; code++)
		if (shca_rnr_timer_usec(code) >= usec)
			return code;
	return 0;
}
