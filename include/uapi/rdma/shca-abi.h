/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * shca user/kernel ABI: shared by the shca kernel module and the libshca
 * rdma-core provider.
 *
 * Every work queue and completion queue is a ring in memory that the
 * kernel allocates and the process maps.  A ring starts with a control
 * block (struct shca_ring_ctrl) followed, at SHCA_RING_DATA_OFFSET, by a
 * power-of-two number of fixed-size slots.  Indices are free-running
 * 32-bit counters; a slot is index & (entries - 1).
 *
 * Ownership of the control words:
 *  - the producer writes @prod, the consumer writes @cons;
 *  - for SQ/RQ/SRQ the process produces and the kernel consumes;
 *    for a CQ the kernel produces and the process consumes;
 *  - the kernel never trusts what it reads from a ring: it reads a shared
 *    index once per batch, checks it against its private copy, copies a
 *    slot out before validating it, and never reads back a word it owns.
 *
 * Doorbells: after advancing @prod of a SQ/RQ/SRQ the provider issues a
 * memory barrier and reads @flags.  If SHCA_RING_F_NEED_DOORBELL is set
 * the engine has gone idle for this queue and the provider makes one
 * post_send/post_recv system call with no work requests, which wakes it.
 * Otherwise the engine is still polling and will see @prod by itself.
 */
#ifndef SHCA_ABI_USER_H
#define SHCA_ABI_USER_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

#define SHCA_UVERBS_ABI_VERSION		1

/* Content of /sys/class/infiniband/<dev>/hca_type: how libshca knows a device. */
#define SHCA_HCA_TYPE			"shca"

/* Default RoCEv2 UDP destination port (IANA). */
#define SHCA_ROCEV2_UDP_PORT		4791

/* Bytes reserved at the start of every ring for struct shca_ring_ctrl. */
#define SHCA_RING_DATA_OFFSET		256

/* shca_ring_ctrl.flags, written by the kernel */
enum {
	/* engine idle on this queue: the next post must ring the doorbell */
	SHCA_RING_F_NEED_DOORBELL	= 1 << 0,
	/* queue is in error: the kernel no longer consumes it */
	SHCA_RING_F_ERROR		= 1 << 1,
};

/* shca_ring_ctrl.arm (CQ only), written by the process */
enum {
	SHCA_CQ_ARM_SEQ_MASK		= 0x7fffffff,
	SHCA_CQ_ARM_SOLICITED		= 1U << 31,
};

/**
 * struct shca_ring_ctrl - control block at offset 0 of every ring
 * @prod: producer index (free running)
 * @cons: consumer index (free running)
 * @flags: SHCA_RING_F_* (kernel owned)
 * @arm: CQ arm request: sequence number | SHCA_CQ_ARM_SOLICITED (process
 *	owned).  The CQ is armed while (@arm & SEQ_MASK) != @arm_ack.
 * @arm_ack: last arm sequence number the kernel consumed (kernel owned)
 *
 * @prod and @cons live on separate cache lines so producer and consumer do
 * not bounce one line between CPUs.
 */
struct shca_ring_ctrl {
	__u32 prod;
	__u32 rsvd0[15];
	__u32 cons;
	__u32 rsvd1[15];
	__u32 flags;
	__u32 arm;
	__u32 arm_ack;
	__u32 rsvd2[13];
	__u32 rsvd3[16];
};

/**
 * struct shca_sge - scatter/gather element in a SQE or RQE
 * @addr: virtual address within the MR
 * @length: byte count
 * @lkey: local key of the MR
 */
struct shca_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* shca_sqe.flags: same bit values as enum ib_uverbs_send_flags */
enum {
	SHCA_SQE_F_FENCE		= 1 << 0,
	SHCA_SQE_F_SIGNALED		= 1 << 1,
	SHCA_SQE_F_SOLICITED		= 1 << 2,
	SHCA_SQE_F_INLINE		= 1 << 3,
	SHCA_SQE_F_IP_CSUM		= 1 << 4,
};

/*
 * shca_sqe.opcode values of IBA 1.5's operations, the numbers of
 * IB_UVERBS_WR_FLUSH and IB_UVERBS_WR_ATOMIC_WRITE (Linux 6.2 and later):
 * FLUSH takes u.flush, ATOMIC_WRITE u.atomic_write; neither takes SGEs
 * or inline data.
 */
enum {
	SHCA_WR_FLUSH			= 14,
	SHCA_WR_ATOMIC_WRITE		= 15,
};

/* shca_cqe.opcode of their completions (IB_UVERBS_WC_FLUSH, _ATOMIC_WRITE) */
enum {
	SHCA_WC_FLUSH			= 8,
	SHCA_WC_ATOMIC_WRITE		= 9,
};

/* u.flush.type (a mask) and u.flush.level: IB_FLUSH_* and IBV_FLUSH_* */
enum {
	SHCA_FLUSH_GLOBAL		= 1 << 0,
	SHCA_FLUSH_PERSISTENT		= 1 << 1,
};

enum {
	SHCA_FLUSH_RANGE		= 0,
	SHCA_FLUSH_MR			= 1,
};

/**
 * struct shca_sqe - send queue entry (header; SGEs or inline data follow)
 * @wr_id: returned in the completion
 * @opcode: enum ib_uverbs_wr_opcode
 * @flags: SHCA_SQE_F_*
 * @num_sge: number of struct shca_sge following the header
 * @inline_len: bytes of inline data following the header (INLINE flag)
 * @ex: immediate data (network order) or the rkey to invalidate
 * @u: opcode-specific fields
 */
struct shca_sqe {
	__aligned_u64 wr_id;
	__u8 opcode;
	__u8 flags;
	__u16 num_sge;
	__u32 inline_len;
	__u32 ex;
	__u32 rsvd;
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 rsvd;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 rsvd;
		} atomic;
		struct {
			__aligned_u64 remote_addr;	/* 8-byte aligned */
			__aligned_u64 value;	/* the 8 bytes to store */
			__u32 rkey;
			__u32 rsvd;
		} atomic_write;
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 length;	/* SHCA_FLUSH_RANGE: bytes flushed */
			__u8 type;	/* SHCA_FLUSH_GLOBAL or _PERSISTENT */
			__u8 level;	/* SHCA_FLUSH_RANGE or SHCA_FLUSH_MR */
			__u8 rsvd[6];
		} flush;
		struct {
			__u32 ah;	/* from struct shca_create_ah_resp */
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 rsvd;
		} ud;
		struct {
			__aligned_u64 addr;
			__aligned_u64 length;
			__u32 mr_lkey;
			__u32 mw_rkey;
			__u32 rkey;	/* new rkey of the window */
			__u32 access;
		} bind;
		__u8 raw[32];
	} u;
	__aligned_u64 rsvd1;
};

/**
 * struct shca_rqe - receive queue entry (header; SGEs follow)
 * @wr_id: returned in the completion
 * @num_sge: number of struct shca_sge following the header
 */
struct shca_rqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 rsvd;
};

/**
 * enum shca_cqe_net - network header a UD receive arrived with
 * @SHCA_CQE_NET_IPV4: RoCEv2 over IPv4 (the header area's last 20 bytes
 *	hold the IPv4 header)
 * @SHCA_CQE_NET_IPV6: RoCEv2 over IPv6 (the 40 bytes hold the IPv6 header)
 *
 * The values of the kernel's enum rdma_network_type.
 */
enum shca_cqe_net {
	SHCA_CQE_NET_IPV4 = 2,
	SHCA_CQE_NET_IPV6 = 3,
};

/**
 * struct shca_cqe - completion queue entry (64 bytes)
 * @wr_id: from the work request
 * @status: enum ib_wc_status
 * @opcode: enum ib_uverbs_wc_opcode, or 128 + n for receive completions
 * @wc_flags: IB_WC_* flags (GRH, WITH_IMM, WITH_INVALIDATE, ...)
 * @vendor_err: engine-specific error detail
 * @byte_len: bytes received or transferred
 * @ex: immediate data (network order) or invalidated rkey
 * @qp_num: local QP
 * @src_qp: remote QP (UD)
 * @pkey_index: P_Key index
 * @slid: source LID (0 on RoCE)
 * @sl: service level
 * @dlid_path_bits: 0 on RoCE
 * @port_num: port of the QP
 * @network_hdr_type: enum shca_cqe_net for UD receives, 0 otherwise
 * @timestamp: on a CQ created with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION
 *	(SHCA_CAP_CQ_TIMESTAMP): the device clock (CLOCK_MONOTONIC in
 *	nanoseconds, hca_core_clock 1 GHz) when the completion was written;
 *	non-decreasing in ring order.  0 on any other CQ.
 * @rsvd: zero
 */
struct shca_cqe {
	__aligned_u64 wr_id;
	__u8 status;
	__u8 opcode;
	__u16 wc_flags;
	__u32 vendor_err;
	__u32 byte_len;
	__u32 ex;
	__u32 qp_num;
	__u32 src_qp;
	__u16 pkey_index;
	__u16 slid;
	__u8 sl;
	__u8 dlid_path_bits;
	__u8 port_num;
	__u8 network_hdr_type;
	__u8 smac[6];
	__u16 vlan_id;
	__aligned_u64 timestamp;
	__u32 rsvd[2];
};

/**
 * struct shca_ring_info - where and how a ring is mapped
 * @mmap_offset: pass to mmap() on the context's command fd
 * @mmap_size: bytes to map (control block + slots, page aligned)
 * @entries: number of slots (power of two)
 * @stride: bytes per slot (power of two)
 */
struct shca_ring_info {
	__aligned_u64 mmap_offset;
	__aligned_u64 mmap_size;
	__u32 entries;
	__u32 stride;
};

/* shca_alloc_ucontext_resp.caps */
enum {
	/* the engine polls rings and sets SHCA_RING_F_NEED_DOORBELL */
	SHCA_CAP_DOORBELL_SUPPRESS	= 1 << 0,
	/* the kernel honours shca_ring_ctrl.arm: req_notify_cq needs no call */
	SHCA_CAP_CQ_ARM_WORD		= 1 << 1,
	/* shca_cqe.timestamp on CQs created with timestamps */
	SHCA_CAP_CQ_TIMESTAMP		= 1 << 2,
	/* SHCA_WR_FLUSH (the RDMA core lets an MR allow it: Linux 6.2 on) */
	SHCA_CAP_FLUSH			= 1 << 3,
};

/*
 * shca's own uverbs ioctl attributes and methods (the driver namespace),
 * for importing a context and its PDs (ibv_import_device, ibv_import_pd):
 * UVERBS_METHOD_QUERY_CONTEXT returns the context's driver data (struct
 * shca_alloc_ucontext_resp) in SHCA_ATTR_QUERY_CONTEXT_RESP;
 * SHCA_METHOD_PD_QUERY returns the number of the PD a handle names.
 */
enum shca_query_context_attrs {
	SHCA_ATTR_QUERY_CONTEXT_RESP = (1U << UVERBS_ID_NS_SHIFT),
};

enum shca_pd_methods {
	SHCA_METHOD_PD_QUERY = (1U << UVERBS_ID_NS_SHIFT),
};

enum shca_query_pd_attrs {
	SHCA_ATTR_QUERY_PD_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	SHCA_ATTR_QUERY_PD_RESP_PDN,
};

/**
 * struct shca_alloc_ucontext_resp - driver data returned by alloc_ucontext
 * @caps: SHCA_CAP_*
 * @max_inline: largest inline payload accepted in a SQE
 * @sqe_size: size of struct shca_sqe the kernel was built with
 * @cqe_size: size of struct shca_cqe the kernel was built with
 */
struct shca_alloc_ucontext_resp {
	__u32 caps;
	__u32 max_inline;
	__u32 sqe_size;
	__u32 cqe_size;
};

/**
 * struct shca_alloc_pd_resp - driver data returned by alloc_pd
 * @pdn: protection domain number
 */
struct shca_alloc_pd_resp {
	__u32 pdn;
	__u32 rsvd;
};

/**
 * struct shca_create_cq_resp - driver data returned by create/resize CQ
 * @cq: the completion ring
 * @cqn: CQ number
 */
struct shca_create_cq_resp {
	struct shca_ring_info cq;
	__u32 cqn;
	__u32 rsvd;
};

/**
 * struct shca_create_qp_resp - driver data returned by create_qp
 * @sq: send ring
 * @rq: receive ring (entries == 0 when the QP uses an SRQ)
 * @qpn: QP number
 */
struct shca_create_qp_resp {
	struct shca_ring_info sq;
	struct shca_ring_info rq;
	__u32 qpn;
	__u32 rsvd;
};

/**
 * struct shca_create_srq_resp - driver data returned by create_srq
 * @rq: receive ring
 * @srqn: SRQ number
 */
struct shca_create_srq_resp {
	struct shca_ring_info rq;
	__u32 srqn;
	__u32 rsvd;
};

/**
 * struct shca_create_ah_resp - driver data returned by create_ah
 * @ah: handle a UD SQE names its address with
 */
struct shca_create_ah_resp {
	__u32 ah;
	__u32 rsvd;
};

/*
 * Device memory (ibv_alloc_dm).  The RDMA core's DM_ALLOC method carries no
 * driver data, so shca adds driver attributes to it: the kernel returns
 * the mmap offset of the new range there, and the provider maps the
 * range (its length rounded up to whole pages, shared, read and write) to
 * implement ibv_memcpy_to_dm() and ibv_memcpy_from_dm().
 */
enum shca_alloc_dm_attrs {
	/* __u64 out: offset to pass to mmap() for the range */
	SHCA_ATTR_ALLOC_DM_RESP_MMAP_OFFSET = (1U << UVERBS_ID_NS_SHIFT),
	/* __u32 out: the range's index in the device's window */
	SHCA_ATTR_ALLOC_DM_RESP_RANGE,
	/* __u64 out: offset to mmap() the range's register page at (read only) */
	SHCA_ATTR_ALLOC_DM_RESP_REG_OFFSET,
};

/*
 * DRDMA: driver methods of the core's DM object (the direct verbs of
 * shcadv.h).  ARM gives the range's address range register a transfer;
 * COMMIT tells the engine the producer wrote more bytes of a DRDMA WRITE.
 */
enum shca_dm_methods {
	SHCA_METHOD_DM_ARM = (1U << UVERBS_ID_NS_SHIFT),
	SHCA_METHOD_DM_COMMIT,
};

enum shca_dm_arm_attrs {
	SHCA_ATTR_DM_ARM_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	SHCA_ATTR_DM_ARM_DIR,		/* __u32 in: enum shca_arr_dir */
	SHCA_ATTR_DM_ARM_OFFSET,	/* __u64 in: first byte in the range */
	SHCA_ATTR_DM_ARM_LENGTH,	/* __u32 in: bytes of the transfer */
};

enum shca_dm_commit_attrs {
	SHCA_ATTR_DM_COMMIT_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	SHCA_ATTR_DM_COMMIT_BYTES,	/* __u32 in: bytes written since */
	SHCA_ATTR_DM_COMMIT_COUNT,	/* __u32 out: the byte count now */
};

/* shca_arr_reg.dir */
enum shca_arr_dir {
	SHCA_ARR_DIR_NONE	= 0,	/* not armed */
	SHCA_ARR_DIR_WRITE	= 1,	/* DRDMA WRITE: producer -> range -> wire */
	SHCA_ARR_DIR_READ	= 2,	/* DRDMA READ: wire -> range -> consumer */
};

/* shca_arr_reg.flags */
enum {
	/* the bus side may use the range: producer writes, consumer reads */
	SHCA_ARR_F_BUS_VALID	= 1 << 0,
	/* the packet side holds the whole transfer */
	SHCA_ARR_F_PKT_VALID	= 1 << 1,
};

/**
 * struct shca_arr_reg - address range register of a device-memory range,
 *	at offset 0 of its register page (the process maps it read only;
 *	only the engine writes it)
 * @total_len: bytes of the armed transfer
 * @write_count: DRDMA WRITE: bytes the producer committed so far
 * @read_len: DRDMA READ: bytes of the transfer that have landed, counted
 *	from its start (READ responses are placed in order)
 * @block: the range's first packet-memory block (page) in the window
 * @nblocks: its blocks
 * @offset: first byte of the transfer in the range
 * @dir: enum shca_arr_dir
 * @flags: SHCA_ARR_F_*
 * @waiting: send WQEs waiting for the range now
 * @gen: incremented by every arm
 *
 * DRDMA WRITE: armed, the bus side is valid; when @write_count reaches
 * @total_len the bus side closes and the packet side turns valid: the
 * WQEs that waited for it send.  DRDMA READ: armed, neither side is
 * valid; when @read_len reaches @total_len both are.
 */
struct shca_arr_reg {
	__u32 total_len;
	__u32 write_count;
	__u32 read_len;
	__u32 block;
	__u32 nblocks;
	__u32 offset;
	__u8 dir;
	__u8 flags;
	__u16 waiting;
	__u32 gen;
};

/*
 * Device memory is read and written in 4-byte words, as on hardware: the
 * offset and length of ibv_memcpy_to_dm() and ibv_memcpy_from_dm() must be
 * multiples of this.
 */
#define SHCA_DM_ALIGN			4

#endif /* SHCA_ABI_USER_H */
