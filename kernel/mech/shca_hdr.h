/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca_hdr.h - InfiniBand transport headers as carried by RoCEv2.
 *
 * In RoCEv2 the UDP payload (destination port 4791) is an InfiniBand
 * transport packet: the Base Transport Header (BTH), the extension
 * headers selected by the BTH opcode, the payload, 0..3 pad bytes and the
 * 4-byte invariant CRC (see shca_icrc.h).  This file describes the
 * opcodes of the RC, UC and UD transports and the RoCEv2 CNP, and
 * converts the headers between wire format and struct shca_pkt_hdr.
 *
 * Pure code: no kernel calls, see shca_pure.h.
 */
#ifndef SHCA_HDR_H
#define SHCA_HDR_H

#include "shca_pure.h"

#define SHCA_ROCEV2_UDP_PORT	4791

/* header sizes in bytes */
#define SHCA_BTH_LEN		12
#define SHCA_DETH_LEN		8
#define SHCA_RETH_LEN		16
#define SHCA_ATOMIC_ETH_LEN	28
#define SHCA_AETH_LEN		4
#define SHCA_ATOMIC_ACK_LEN	8
#define SHCA_IMMDT_LEN		4
#define SHCA_IETH_LEN		4
#define SHCA_CNP_RSVD_LEN	16	/* reserved bytes after a CNP's BTH */
#define SHCA_FETH_LEN		4
#define SHCA_ICRC_LEN		4
/* longest transport header of a supported opcode (BTH + AtomicETH) */
#define SHCA_MAX_HDR_LEN	(SHCA_BTH_LEN + SHCA_ATOMIC_ETH_LEN)

#define SHCA_PSN_MASK		0x00ffffffU
#define SHCA_QPN_MASK		0x00ffffffU
#define SHCA_MSN_MASK		0x00ffffffU
#define SHCA_BTH_TVER		0

/* transport service, the top three bits of the opcode */
#define SHCA_OP_TRANSPORT_MASK	0xe0
#define SHCA_OP_RC		0x00
#define SHCA_OP_UC		0x20
#define SHCA_OP_RD		0x40	/* not supported */
#define SHCA_OP_UD		0x60
#define SHCA_OP_CNP_BASE	0x80
#define SHCA_OP_XRC		0xa0	/* not supported */

/* operation, the low five bits of the opcode */
enum shca_op_code {
	SHCA_OP_SEND_FIRST			= 0x00,
	SHCA_OP_SEND_MIDDLE			= 0x01,
	SHCA_OP_SEND_LAST			= 0x02,
	SHCA_OP_SEND_LAST_WITH_IMMEDIATE	= 0x03,
	SHCA_OP_SEND_ONLY			= 0x04,
	SHCA_OP_SEND_ONLY_WITH_IMMEDIATE	= 0x05,
	SHCA_OP_RDMA_WRITE_FIRST		= 0x06,
	SHCA_OP_RDMA_WRITE_MIDDLE		= 0x07,
	SHCA_OP_RDMA_WRITE_LAST			= 0x08,
	SHCA_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE	= 0x09,
	SHCA_OP_RDMA_WRITE_ONLY			= 0x0a,
	SHCA_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE	= 0x0b,
	SHCA_OP_RDMA_READ_REQUEST		= 0x0c,
	SHCA_OP_RDMA_READ_RESPONSE_FIRST	= 0x0d,
	SHCA_OP_RDMA_READ_RESPONSE_MIDDLE	= 0x0e,
	SHCA_OP_RDMA_READ_RESPONSE_LAST		= 0x0f,
	SHCA_OP_RDMA_READ_RESPONSE_ONLY		= 0x10,
	SHCA_OP_ACKNOWLEDGE			= 0x11,
	SHCA_OP_ATOMIC_ACKNOWLEDGE		= 0x12,
	SHCA_OP_COMPARE_SWAP			= 0x13,
	SHCA_OP_FETCH_ADD			= 0x14,
	SHCA_OP_SEND_LAST_WITH_INVALIDATE	= 0x16,
	SHCA_OP_SEND_ONLY_WITH_INVALIDATE	= 0x17,
	SHCA_OP_FLUSH				= 0x1c,
	SHCA_OP_ATOMIC_WRITE			= 0x1d,
};

/* full 8-bit opcodes of the frequently named packets */
#define SHCA_OPCODE(tr, op)	((u8)((tr) | (op)))
#define SHCA_RC_SEND_ONLY	SHCA_OPCODE(SHCA_OP_RC, SHCA_OP_SEND_ONLY)
#define SHCA_RC_ACKNOWLEDGE	SHCA_OPCODE(SHCA_OP_RC, SHCA_OP_ACKNOWLEDGE)
#define SHCA_UD_SEND_ONLY	SHCA_OPCODE(SHCA_OP_UD, SHCA_OP_SEND_ONLY)
#define SHCA_UD_SEND_ONLY_WITH_IMMEDIATE \
	SHCA_OPCODE(SHCA_OP_UD, SHCA_OP_SEND_ONLY_WITH_IMMEDIATE)
#define SHCA_OPCODE_CNP		0x81

/**
 * enum shca_transport - transport service of an opcode
 * @SHCA_TR_RC: reliable connected
 * @SHCA_TR_UC: unreliable connected
 * @SHCA_TR_UD: unreliable datagram
 * @SHCA_TR_CNP: RoCEv2 congestion notification packet
 */
enum shca_transport {
	SHCA_TR_RC,
	SHCA_TR_UC,
	SHCA_TR_UD,
	SHCA_TR_CNP,
};

/**
 * enum shca_ext_hdr - extension headers, in the order they follow the BTH
 * @SHCA_EXT_FETH: flush extended transport header (FLUSH)
 * @SHCA_EXT_DETH: datagram extended transport header (UD)
 * @SHCA_EXT_RETH: RDMA extended transport header
 * @SHCA_EXT_ATOMIC_ETH: atomic extended transport header
 * @SHCA_EXT_AETH: ACK extended transport header
 * @SHCA_EXT_ATOMIC_ACK: atomic acknowledge extended transport header
 * @SHCA_EXT_IMMDT: immediate data
 * @SHCA_EXT_IETH: invalidate extended transport header
 * @SHCA_EXT_CNP_RSVD: the 16 reserved bytes of a CNP
 * @SHCA_EXT_NUM: number of extension header kinds
 *
 * No supported opcode carries two headers that would be ordered
 * differently than this list, so the offset of each present header is the
 * BTH length plus the sizes of the present headers listed before it.
 */
enum shca_ext_hdr {
	SHCA_EXT_FETH,
	SHCA_EXT_DETH,
	SHCA_EXT_RETH,
	SHCA_EXT_ATOMIC_ETH,
	SHCA_EXT_AETH,
	SHCA_EXT_ATOMIC_ACK,
	SHCA_EXT_IMMDT,
	SHCA_EXT_IETH,
	SHCA_EXT_CNP_RSVD,
	SHCA_EXT_NUM,
};

#define SHCA_HDR_FETH		(1U << SHCA_EXT_FETH)
#define SHCA_HDR_DETH		(1U << SHCA_EXT_DETH)
#define SHCA_HDR_RETH		(1U << SHCA_EXT_RETH)
#define SHCA_HDR_ATOMIC_ETH	(1U << SHCA_EXT_ATOMIC_ETH)
#define SHCA_HDR_AETH		(1U << SHCA_EXT_AETH)
#define SHCA_HDR_ATOMIC_ACK	(1U << SHCA_EXT_ATOMIC_ACK)
#define SHCA_HDR_IMMDT		(1U << SHCA_EXT_IMMDT)
#define SHCA_HDR_IETH		(1U << SHCA_EXT_IETH)
#define SHCA_HDR_CNP_RSVD	(1U << SHCA_EXT_CNP_RSVD)

/* struct shca_opcode_info.flags */
#define SHCA_OPF_VALID		(1U << 0)  /* opcode known and supported */
#define SHCA_OPF_FIRST		(1U << 1)  /* first packet of a message */
#define SHCA_OPF_MIDDLE		(1U << 2)  /* middle packet of a message */
#define SHCA_OPF_LAST		(1U << 3)  /* last packet of a message */
#define SHCA_OPF_ONLY		(SHCA_OPF_FIRST | SHCA_OPF_LAST)
#define SHCA_OPF_REQ		(1U << 4)  /* sent by the requester */
#define SHCA_OPF_RESP		(1U << 5)  /* sent by the responder */
#define SHCA_OPF_ACK		(1U << 6)  /* ACKNOWLEDGE, ATOMIC_ACKNOWLEDGE */
#define SHCA_OPF_PAYLOAD	(1U << 7)  /* may carry payload */
#define SHCA_OPF_IMM		(1U << 8)  /* carries immediate data */
#define SHCA_OPF_INV		(1U << 9)  /* carries an rkey to invalidate */
#define SHCA_OPF_SEND		(1U << 10)
#define SHCA_OPF_WRITE		(1U << 11)
#define SHCA_OPF_READ		(1U << 12) /* read request or response */
#define SHCA_OPF_ATOMIC		(1U << 13) /* atomic request or its ack */
#define SHCA_OPF_CNP		(1U << 14)
#define SHCA_OPF_FLUSH		(1U << 15) /* FLUSH request */
#define SHCA_OPF_ATOMIC_WRITE	(1U << 16) /* ATOMIC WRITE request */
/* requests a responder resource answers (READ responses, atomic ACK) */
#define SHCA_OPF_RES_REQ	(SHCA_OPF_READ | SHCA_OPF_ATOMIC | \
				 SHCA_OPF_FLUSH | SHCA_OPF_ATOMIC_WRITE)

/**
 * struct shca_opcode_info - static description of one BTH opcode
 * @name: printable name, e.g. "RC_SEND_FIRST"; NULL for invalid opcodes
 * @flags: SHCA_OPF_* bits; 0 for unknown or unsupported opcodes
 * @hdrs: SHCA_HDR_* bits of the extension headers present
 * @transport: enum shca_transport
 * @hdr_len: length of BTH plus all extension headers
 * @off: offset from the start of the BTH of each present extension
 *	header, indexed by enum shca_ext_hdr; 0 when absent
 */
struct shca_opcode_info {
	const char *name;
	u32 flags;
	u16 hdrs;
	u8 transport;
	u8 hdr_len;
	u8 off[SHCA_EXT_NUM];
};

extern const struct shca_opcode_info shca_opcode_table[256];

/**
 * shca_opcode_info() - look up an opcode
 * @opcode: 8-bit BTH opcode
 *
 * Return: the table entry; its @flags is 0 if @opcode is not supported.
 */
static inline const struct shca_opcode_info *shca_opcode_info(u8 opcode)
{
	return &shca_opcode_table[opcode];
}

/**
 * shca_opcode_valid() - is an opcode known and supported
 * @opcode: 8-bit BTH opcode
 *
 * Return: true for the RC, UC and UD opcodes and CNP.
 */
static inline bool shca_opcode_valid(u8 opcode)
{
	return shca_opcode_table[opcode].flags & SHCA_OPF_VALID;
}

/**
 * shca_opcode_name() - printable name of an opcode
 * @opcode: 8-bit BTH opcode
 *
 * Return: e.g. "UD_SEND_ONLY", or "UNKNOWN".
 */
static inline const char *shca_opcode_name(u8 opcode)
{
	const char *name = shca_opcode_table[opcode].name;

	return name ? name : "UNKNOWN";
}

/* FETH placement types (bit mask) and selectivity levels (IBA 1.5) */
#define SHCA_FETH_GLOBAL	0x1	/* global visibility */
#define SHCA_FETH_PERSISTENT	0x2	/* persistence */
#define SHCA_FETH_RANGE	0	/* the bytes the RETH names */
#define SHCA_FETH_MR		1	/* the whole memory region */

/**
 * struct shca_feth - flush extended transport header
 * @plt: placement type, SHCA_FETH_GLOBAL and/or SHCA_FETH_PERSISTENT
 *	(4 bits)
 * @sel: selectivity level, SHCA_FETH_RANGE or SHCA_FETH_MR (2 bits)
 */
struct shca_feth {
	u8 plt;
	u8 sel;
};

/**
 * struct shca_reth - RDMA extended transport header
 * @va: remote virtual address
 * @rkey: remote key
 * @dma_len: length of the whole RDMA operation in bytes
 */
struct shca_reth {
	u64 va;
	u32 rkey;
	u32 dma_len;
};

/**
 * struct shca_deth - datagram extended transport header
 * @qkey: queue key
 * @src_qpn: source queue pair number (24 bits)
 */
struct shca_deth {
	u32 qkey;
	u32 src_qpn;
};

/**
 * struct shca_atomic_eth - atomic extended transport header
 * @va: remote virtual address (8-byte aligned)
 * @rkey: remote key
 * @swap_add: swap value (COMPARE_SWAP) or addend (FETCH_ADD)
 * @compare: compare value (COMPARE_SWAP only)
 */
struct shca_atomic_eth {
	u64 va;
	u32 rkey;
	u64 swap_add;
	u64 compare;
};

/**
 * struct shca_aeth - ACK extended transport header
 * @syndrome: ACK/NAK syndrome, see shca_aeth_ack() and friends
 * @msn: message sequence number (24 bits)
 */
struct shca_aeth {
	u8 syndrome;
	u32 msn;
};

/**
 * struct shca_atomic_ack - atomic acknowledge extended transport header
 * @orig: original contents of the remote location
 */
struct shca_atomic_ack {
	u64 orig;
};

/**
 * struct shca_ieth - invalidate extended transport header
 * @rkey: remote key to invalidate
 */
struct shca_ieth {
	u32 rkey;
};

/**
 * struct shca_pkt_hdr - transport headers of one packet, host order
 * @opcode: BTH opcode
 * @solicited: BTH solicited event bit
 * @migreq: BTH migration request bit
 * @pad_count: BTH pad count (0..3)
 * @tver: BTH transport header version (0)
 * @fecn: BTH forward explicit congestion notification bit
 * @becn: BTH backward explicit congestion notification bit (set in CNPs)
 * @ack_req: BTH acknowledge request bit
 * @pkey: BTH partition key
 * @dest_qpn: BTH destination QP number (24 bits)
 * @psn: BTH packet sequence number (24 bits)
 * @feth: FETH, valid if the opcode has SHCA_HDR_FETH
 * @reth: RETH, valid if the opcode has SHCA_HDR_RETH
 * @deth: DETH, valid if the opcode has SHCA_HDR_DETH
 * @atomic_eth: AtomicETH, valid if the opcode has SHCA_HDR_ATOMIC_ETH
 * @aeth: AETH, valid if the opcode has SHCA_HDR_AETH
 * @atomic_ack: AtomicAckETH, valid if the opcode has SHCA_HDR_ATOMIC_ACK
 * @imm: immediate data exactly as on the wire (network order, like the
 *	verbs imm_data), valid if the opcode has SHCA_HDR_IMMDT
 * @ieth: IETH, valid if the opcode has SHCA_HDR_IETH
 *
 * Reserved fields are not represented: they are sent as zero and
 * ignored on receive.
 */
struct shca_pkt_hdr {
	u8 opcode;
	bool solicited;
	bool migreq;
	u8 pad_count;
	u8 tver;
	bool fecn;
	bool becn;
	bool ack_req;
	u16 pkey;
	u32 dest_qpn;
	u32 psn;
	struct shca_feth feth;
	struct shca_reth reth;
	struct shca_deth deth;
	struct shca_atomic_eth atomic_eth;
	struct shca_aeth aeth;
	struct shca_atomic_ack atomic_ack;
	__be32 imm;
	struct shca_ieth ieth;
};

/**
 * shca_hdr_build() - write the BTH and extension headers of a packet
 * @buf: where the BTH starts
 * @buflen: room at @buf
 * @h: header values; only the headers that @h->opcode carries are used
 *
 * Fields wider than their wire format (e.g. a PSN above 24 bits) are
 * truncated to it; reserved fields are written as zero.
 *
 * Return: the number of bytes written (the opcode's header length),
 * -EOPNOTSUPP if @h->opcode is not supported, -ENOSPC if @buflen is too
 * small.
 */
int shca_hdr_build(void *buf, size_t buflen, const struct shca_pkt_hdr *h);

/**
 * shca_hdr_parse() - validate and decode the transport headers of a packet
 * @buf: the BTH, i.e. the start of the UDP payload
 * @len: UDP payload length: headers, payload, pad bytes and the ICRC
 * @h: filled in; fields of absent headers are zeroed
 *
 * Checks, in this order: @len covers a BTH, the BTH version is 0, the
 * opcode is supported, @len covers all headers and the ICRC, @len is a
 * multiple of 4, the pad count does not exceed the payload and an opcode
 * without payload carries none.  Reserved fields are ignored.  @h may
 * have been written to even when an error is returned.
 *
 * Return: the transport header length (payload offset) on success,
 * -EBADMSG for a malformed length, -EPROTONOSUPPORT for a BTH version
 * other than 0, -EOPNOTSUPP for an unknown, RD or XRC opcode.
 */
int shca_hdr_parse(const void *buf, size_t len, struct shca_pkt_hdr *h);

/**
 * shca_bth_opcode() - peek at the opcode of a raw BTH
 * @bth: start of the BTH
 *
 * Return: the opcode.
 */
static inline u8 shca_bth_opcode(const void *bth)
{
	return *(const u8 *)bth;
}

/**
 * shca_bth_dest_qpn() - peek at the destination QP number of a raw BTH
 * @bth: start of the BTH
 *
 * Return: the 24-bit destination QP number.
 */
static inline u32 shca_bth_dest_qpn(const void *bth)
{
	return get_unaligned_be32((const u8 *)bth + 4) & SHCA_QPN_MASK;
}

/**
 * shca_bth_psn() - peek at the PSN of a raw BTH
 * @bth: start of the BTH
 *
 * Return: the 24-bit packet sequence number.
 */
static inline u32 shca_bth_psn(const void *bth)
{
	return get_unaligned_be32((const u8 *)bth + 8) & SHCA_PSN_MASK;
}

/**
 * shca_psn_add() - advance a PSN
 * @psn: packet sequence number
 * @n: increment, may be negative when cast from a signed value
 *
 * Return: (@psn + @n) modulo 2^24.
 */
static inline u32 shca_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SHCA_PSN_MASK;
}

/**
 * shca_psn_diff() - signed distance between two PSNs
 * @a: packet sequence number
 * @b: packet sequence number
 *
 * The 24-bit sequence space is circular: @a is "after" @b when the result
 * is positive.
 *
 * Return: @a - @b modulo 2^24, as a value in [-2^23, 2^23 - 1].
 */
static inline s32 shca_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

/**
 * shca_pad_count() - pad bytes needed after a payload
 * @payload_len: payload length in bytes
 *
 * Return: 0..3, so that payload plus pad is a multiple of 4.
 */
static inline u8 shca_pad_count(u32 payload_len)
{
	return (u8)(-payload_len & 3);
}

/**
 * shca_payload_len() - payload length of a parsed packet
 * @len: the @len given to shca_hdr_parse()
 * @hdr_len: what shca_hdr_parse() returned
 * @pad_count: the parsed pad count
 *
 * Return: payload bytes, excluding pad and ICRC.
 */
static inline u32 shca_payload_len(size_t len, int hdr_len, u8 pad_count)
{
	return (u32)(len - hdr_len - pad_count - SHCA_ICRC_LEN);
}

/**
 * shca_pkt_len() - UDP payload length of a packet to send
 * @opcode: BTH opcode (must be supported)
 * @payload_len: payload length in bytes
 *
 * Return: headers + payload + pad + ICRC.
 */
static inline u32 shca_pkt_len(u8 opcode, u32 payload_len)
{
	return shca_opcode_table[opcode].hdr_len + payload_len +
	       shca_pad_count(payload_len) + SHCA_ICRC_LEN;
}

/* AETH syndrome: bit 7 reserved, bits 6..5 type, bits 4..0 value */
#define SHCA_AETH_TYPE_SHIFT	5
#define SHCA_AETH_TYPE_MASK	0x60
#define SHCA_AETH_VALUE_MASK	0x1f
#define SHCA_AETH_CREDITS_INVALID 0x1f	/* ACK: no credit count */

/**
 * enum shca_aeth_type - kind of an AETH syndrome
 * @SHCA_AETH_ACK: positive acknowledge, value = credit count
 * @SHCA_AETH_RNR_NAK: receiver not ready, value = RNR timer code
 * @SHCA_AETH_RESERVED: reserved, invalid
 * @SHCA_AETH_NAK: negative acknowledge, value = enum shca_nak_code
 */
enum shca_aeth_type {
	SHCA_AETH_ACK		= 0,
	SHCA_AETH_RNR_NAK	= 1,
	SHCA_AETH_RESERVED	= 2,
	SHCA_AETH_NAK		= 3,
};

/**
 * enum shca_nak_code - value of a NAK syndrome
 * @SHCA_NAK_PSN_SEQ_ERR: PSN sequence error
 * @SHCA_NAK_INVALID_REQ: invalid request
 * @SHCA_NAK_REMOTE_ACCESS_ERR: remote access error
 * @SHCA_NAK_REMOTE_OP_ERR: remote operational error
 * @SHCA_NAK_INVALID_RD_REQ: invalid RD request
 */
enum shca_nak_code {
	SHCA_NAK_PSN_SEQ_ERR		= 0,
	SHCA_NAK_INVALID_REQ		= 1,
	SHCA_NAK_REMOTE_ACCESS_ERR	= 2,
	SHCA_NAK_REMOTE_OP_ERR		= 3,
	SHCA_NAK_INVALID_RD_REQ		= 4,
};

/**
 * shca_aeth_ack() - syndrome of a positive acknowledge
 * @credits: credit count code (0..30), or SHCA_AETH_CREDITS_INVALID
 *
 * Return: the syndrome byte.
 */
static inline u8 shca_aeth_ack(u8 credits)
{
	return credits & SHCA_AETH_VALUE_MASK;
}

/**
 * shca_aeth_rnr_nak() - syndrome of a receiver-not-ready NAK
 * @timer: RNR timer code (0..31), see shca_rnr_timer_usec()
 *
 * Return: the syndrome byte.
 */
static inline u8 shca_aeth_rnr_nak(u8 timer)
{
	return (SHCA_AETH_RNR_NAK << SHCA_AETH_TYPE_SHIFT) |
	       (timer & SHCA_AETH_VALUE_MASK);
}

/**
 * shca_aeth_nak() - syndrome of a NAK
 * @code: reason
 *
 * Return: the syndrome byte.
 */
static inline u8 shca_aeth_nak(enum shca_nak_code code)
{
	return (SHCA_AETH_NAK << SHCA_AETH_TYPE_SHIFT) |
	       ((u8)code & SHCA_AETH_VALUE_MASK);
}

/**
 * shca_aeth_type() - kind of a received syndrome
 * @syndrome: AETH syndrome byte; the reserved bit 7 is ignored
 *
 * Return: the type.
 */
static inline enum shca_aeth_type shca_aeth_type(u8 syndrome)
{
	return (syndrome & SHCA_AETH_TYPE_MASK) >> SHCA_AETH_TYPE_SHIFT;
}

/**
 * shca_aeth_value() - credit count, RNR timer or NAK code of a syndrome
 * @syndrome: AETH syndrome byte
 *
 * Return: the low five bits.
 */
static inline u8 shca_aeth_value(u8 syndrome)
{
	return syndrome & SHCA_AETH_VALUE_MASK;
}

/**
 * shca_aeth_valid() - is a received syndrome meaningful
 * @syndrome: AETH syndrome byte; the reserved bit 7 is ignored
 *
 * Return: false for the reserved type and for NAK codes above
 * SHCA_NAK_INVALID_RD_REQ.
 */
static inline bool shca_aeth_valid(u8 syndrome)
{
	switch (shca_aeth_type(syndrome)) {
	case SHCA_AETH_ACK:
	case SHCA_AETH_RNR_NAK:
		return true;
	case SHCA_AETH_NAK:
		return shca_aeth_value(syndrome) <= SHCA_NAK_INVALID_RD_REQ;
	default:
		return false;
	}
}

/**
 * shca_rnr_timer_usec() - minimum RNR NAK delay of an RNR timer code
 * @code: 5-bit timer code from an RNR NAK syndrome or the QP attribute
 *
 * Code 1 is 10 us, 2..31 run from 20 us to 491.52 ms in steps that
 * alternate between x1.5 and x4/3, and code 0 is the longest, 655.36 ms.
 *
 * Return: the delay in microseconds.
 */
u32 shca_rnr_timer_usec(u8 code);

/**
 * shca_rnr_timer_code() - smallest RNR timer code of at least a delay
 * @usec: wanted delay in microseconds
 *
 * Return: the code whose delay is the smallest one >= @usec, or 0
 * (655.36 ms) for delays above 491.52 ms.
 */
u8 shca_rnr_timer_code(u32 usec);

#endif /* SHCA_HDR_H */
