/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libshca: the process side of the shca rings.
 *
 * Every SQ, RQ, SRQ and CQ is a ring the kernel allocates and this process
 * maps (see <rdma/shca-abi.h>): a struct shca_ring_ctrl followed by
 * power-of-two slots.  The process produces SQ/RQ/SRQ entries and consumes
 * CQ entries; it keeps a private copy of the index it owns and never reads
 * it back from the shared control block.
 *
 * Everything here is a pure helper (no system calls, no locking): callers
 * hold the lock of the queue the ring belongs to.
 */

#ifndef __SHCA_RING_H__
#define __SHCA_RING_H__

#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/shca-abi.h>

/* The SQE flags are the IBV_SEND_* bits, the CQE opcodes IBV_WC_* values */
static_assert((int)SHCA_SQE_F_FENCE == (int)IBV_SEND_FENCE &&
	      (int)SHCA_SQE_F_SIGNALED == (int)IBV_SEND_SIGNALED &&
	      (int)SHCA_SQE_F_SOLICITED == (int)IBV_SEND_SOLICITED &&
	      (int)SHCA_SQE_F_INLINE == (int)IBV_SEND_INLINE &&
	      (int)SHCA_SQE_F_IP_CSUM == (int)IBV_SEND_IP_CSUM, "SQE flags");
static_assert(IBV_WR_RDMA_WRITE == 0 && IBV_WR_SEND == 2 &&
	      IBV_WR_ATOMIC_FETCH_AND_ADD == 6 && IBV_WR_BIND_MW == 8 &&
	      IBV_WR_SEND_WITH_INV == 9, "ib_uverbs_wr_opcode values");
static_assert(IBV_WC_RECV == 128 && IBV_WC_RECV_RDMA_WITH_IMM == 129,
	      "receive completion opcodes");
static_assert(sizeof(struct shca_sqe) == 64 && sizeof(struct shca_rqe) == 16 &&
	      sizeof(struct shca_cqe) == 64 && sizeof(struct shca_sge) == 16 &&
	      sizeof(struct shca_ring_ctrl) == SHCA_RING_DATA_OFFSET,
	      "ring entry layout");

/* Sanity bounds on what the kernel reports for a ring */
#define SHCA_RING_MAX_ENTRIES	(1U << 24)
#define SHCA_RING_MAX_STRIDE	(1U << 16)

/**
 * struct shca_uring - a mapped ring
 * @ctrl: shared control block
 * @slots: first slot (@ctrl + SHCA_RING_DATA_OFFSET)
 * @map: the mapping, NULL when the ring is not mapped
 * @map_size: bytes mapped
 * @entries: number of slots, a power of two
 * @mask: @entries - 1
 * @stride: bytes per slot, a power of two
 * @idx: the index this process owns: producer of a SQ/RQ/SRQ, consumer
 *	of a CQ (free running, the shared copy is only ever written)
 * @peer: last value read of the index the kernel owns
 */
struct shca_uring {
	struct shca_ring_ctrl *ctrl;
	uint8_t *slots;
	void *map;
	size_t map_size;
	uint32_t entries;
	uint32_t mask;
	uint32_t stride;
	uint32_t idx;
	uint32_t peer;
};

static inline bool shca_is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/*
 * Check what the kernel says about a ring before mapping it: a power-of-two
 * number of slots of a power-of-two size of at least @min_stride bytes,
 * all inside the mapping.
 */
static inline bool shca_ring_info_ok(const struct shca_ring_info *info,
				     uint32_t min_stride)
{
	uint64_t need;

	if (!shca_is_pow2(info->entries) ||
	    info->entries > SHCA_RING_MAX_ENTRIES)
		return false;
	if (!shca_is_pow2(info->stride) || info->stride < min_stride ||
	    info->stride > SHCA_RING_MAX_STRIDE)
		return false;

	need = SHCA_RING_DATA_OFFSET + (uint64_t)info->entries * info->stride;
	return info->mmap_size >= need && info->mmap_size <= SIZE_MAX;
}

/*
 * Set up @r over @map, a mapping of @info (already checked).  The kernel
 * starts both indices before handing the ring out (a resized CQ may start
 * anywhere): adopt them.
 */
static inline void shca_ring_attach(struct shca_uring *r, void *map,
				    const struct shca_ring_info *info,
				    bool producer)
{
	r->map = map;
	r->map_size = info->mmap_size;
	r->ctrl = map;
	r->slots = (uint8_t *)map + SHCA_RING_DATA_OFFSET;
	r->entries = info->entries;
	r->mask = info->entries - 1;
	r->stride = info->stride;
	if (producer) {
		r->idx = r->ctrl->prod;
		r->peer = r->ctrl->cons;
	} else {
		r->idx = r->ctrl->cons;
		r->peer = r->ctrl->prod;
	}
}

static inline void *shca_ring_slot(const struct shca_uring *r, uint32_t idx)
{
	return r->slots + (size_t)(idx & r->mask) * r->stride;
}

static inline uint32_t shca_load_acquire(uint32_t *p)
{
	return atomic_load_explicit((_Atomic(uint32_t) *)p,
				    memory_order_acquire);
}

static inline void shca_store_release(uint32_t *p, uint32_t v)
{
	atomic_store_explicit((_Atomic(uint32_t) *)p, v, memory_order_release);
}

/*
 * Producer side: is slot @idx free?  Rereads the kernel's consumer index
 * (acquire: the kernel has finished reading a slot before it publishes it
 * as consumed) only when the cached one says the ring is full.  An
 * impossible consumer index counts as a full ring.
 */
static inline bool shca_prod_room(struct shca_uring *r, uint32_t idx)
{
	if (idx - r->peer < r->entries)
		return true;

	r->peer = shca_load_acquire(&r->ctrl->cons);
	return idx - r->peer < r->entries;
}

/* Producer side: make every slot before r->idx visible to the kernel. */
static inline void shca_prod_publish(struct shca_uring *r)
{
	shca_store_release(&r->ctrl->prod, r->idx);
}

/*
 * Producer side, after shca_prod_publish(): does the kernel want a
 * doorbell?  The full barrier orders the store of @prod before the load of
 * @flags; the kernel sets SHCA_RING_F_NEED_DOORBELL, issues a full barrier
 * and reads @prod once more before it stops polling, so one of the two
 * sides always sees the other.
 */
static inline bool shca_ring_need_doorbell(struct shca_uring *r)
{
	uint32_t flags;

	atomic_thread_fence(memory_order_seq_cst);
	flags = atomic_load_explicit((_Atomic(uint32_t) *)&r->ctrl->flags,
				     memory_order_relaxed);
	return flags & SHCA_RING_F_NEED_DOORBELL;
}

/*
 * Consumer side (CQ): completions ready after r->idx.  The acquire makes
 * the slots the kernel filled before publishing @prod visible.  Returns -1
 * when the producer index is impossible (more than @entries ahead).
 */
static inline int64_t shca_cons_avail(struct shca_uring *r)
{
	uint32_t n;

	r->peer = shca_load_acquire(&r->ctrl->prod);
	n = r->peer - r->idx;
	if (n > r->entries)
		return -1;
	return n;
}

/* Consumer side: hand the slots before r->idx back to the kernel. */
static inline void shca_cons_publish(struct shca_uring *r)
{
	shca_store_release(&r->ctrl->cons, r->idx);
}

/*
 * Work queue entries
 */

/* Largest SGE count a slot of @stride bytes holds after a @hdr byte header */
static inline uint32_t shca_slot_max_sge(uint32_t stride, size_t hdr)
{
	return stride > hdr ? (stride - hdr) / sizeof(struct shca_sge) : 0;
}

static inline void shca_write_sges(struct shca_sge *dst,
				   const struct ibv_sge *sg, int num_sge)
{
	int i;

	for (i = 0; i < num_sge; i++) {
		dst[i].addr = sg[i].addr;
		dst[i].length = sg[i].length;
		dst[i].lkey = sg[i].lkey;
	}
}

/**
 * struct shca_sq_limits - what a send queue accepts
 * @qp_type: IBV_QPT_RC, IBV_QPT_UC or IBV_QPT_UD
 * @max_sge: SGEs per WR (also bounded by the slot size)
 * @max_inline: inline bytes per WR (also bounded by the slot size)
 * @sig_all: the QP signals every WR
 */
struct shca_sq_limits {
	enum ibv_qp_type qp_type;
	uint32_t max_sge;
	uint32_t max_inline;
	bool sig_all;
};

enum {
	/* no checksum offload: IBV_SEND_IP_CSUM is refused */
	SHCA_SEND_FLAGS = IBV_SEND_FENCE | IBV_SEND_SIGNALED |
			  IBV_SEND_SOLICITED | IBV_SEND_INLINE,
};

/* Is @opcode valid on a QP of type @qp_type? */
static inline bool shca_opcode_ok(enum ibv_qp_type qp_type,
				  enum ibv_wr_opcode opcode)
{
	switch (opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return qp_type == IBV_QPT_RC || qp_type == IBV_QPT_UC ||
		       qp_type == IBV_QPT_UD;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
	case IBV_WR_BIND_MW:
		return qp_type == IBV_QPT_RC || qp_type == IBV_QPT_UC;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return qp_type == IBV_QPT_RC;
	default:
		return false;
	}
}

/* Does @opcode carry local data (SGEs or inline)? */
static inline bool shca_opcode_has_data(enum ibv_wr_opcode opcode)
{
	return opcode != IBV_WR_LOCAL_INV && opcode != IBV_WR_BIND_MW &&
	       opcode != IBV_WR_FLUSH && opcode != IBV_WR_ATOMIC_WRITE;
}

/* May @opcode carry its data inline? */
static inline bool shca_opcode_inline_ok(enum ibv_wr_opcode opcode)
{
	switch (opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return true;
	default:
		return false;
	}
}

static inline bool shca_opcode_is_atomic(enum ibv_wr_opcode opcode)
{
	return opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/*
 * Check one send WR against @lim; on success *inline_len is the inline
 * payload size (0 without IBV_SEND_INLINE).  Returns 0 or EINVAL.
 */
static inline int shca_send_wr_check(const struct shca_sq_limits *lim,
				     const struct ibv_send_wr *wr,
				     uint32_t *inline_len)
{
	uint64_t len = 0;
	int i;

	*inline_len = 0;
	if (!shca_opcode_ok(lim->qp_type, wr->opcode))
		return EINVAL;
	if (wr->send_flags & ~SHCA_SEND_FLAGS)
		return EINVAL;
	if (lim->qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;
	if (!shca_opcode_has_data(wr->opcode))
		return 0;
	if (wr->num_sge < 0 || (wr->num_sge && !wr->sg_list))
		return EINVAL;

	if ((wr->send_flags & IBV_SEND_INLINE) &&
	    !shca_opcode_inline_ok(wr->opcode))
		return EINVAL;

	/*
	 * One 8 byte local buffer.  The remote address is the responder's to
	 * judge: a misaligned one completes with a remote invalid request.
	 */
	if (shca_opcode_is_atomic(wr->opcode))
		return wr->num_sge != 1 || lim->max_sge < 1 ||
		       wr->sg_list[0].length < 8 ? EINVAL : 0;

	if (!(wr->send_flags & IBV_SEND_INLINE))
		return (uint32_t)wr->num_sge > lim->max_sge ? EINVAL : 0;

	for (i = 0; i < wr->num_sge; i++) {
		len += wr->sg_list[i].length;
		if (len > lim->max_inline)
			return EINVAL;
	}
	*inline_len = len;
	return 0;
}

/* The opcode-specific part of a SQE */
static inline void shca_sqe_fill_op(struct shca_sqe *sqe,
				    const struct shca_sq_limits *lim,
				    const struct ibv_send_wr *wr,
				    uint32_t ah_handle)
{
	const struct ibv_mw_bind_info *bi;

	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		sqe->ex = wr->imm_data;	/* stays in network order */
		break;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		sqe->ex = wr->invalidate_rkey;
		break;
	default:
		break;
	}

	switch (wr->opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		if (lim->qp_type == IBV_QPT_UD) {
			sqe->u.ud.ah = ah_handle;
			sqe->u.ud.remote_qpn = wr->wr.ud.remote_qpn;
			sqe->u.ud.remote_qkey = wr->wr.ud.remote_qkey;
		}
		break;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		sqe->u.rdma.remote_addr = wr->wr.rdma.remote_addr;
		sqe->u.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		sqe->u.atomic.remote_addr = wr->wr.atomic.remote_addr;
		sqe->u.atomic.compare_add = wr->wr.atomic.compare_add;
		sqe->u.atomic.swap = wr->wr.atomic.swap;
		sqe->u.atomic.rkey = wr->wr.atomic.rkey;
		break;
	case IBV_WR_BIND_MW:
		bi = &wr->bind_mw.bind_info;
		sqe->u.bind.addr = bi->addr;
		sqe->u.bind.length = bi->length;
		sqe->u.bind.mr_lkey = bi->mr ? bi->mr->lkey : 0;
		sqe->u.bind.mw_rkey = wr->bind_mw.mw ? wr->bind_mw.mw->rkey : 0;
		sqe->u.bind.rkey = wr->bind_mw.rkey;
		sqe->u.bind.access = bi->mw_access_flags;
		break;
	default:
		break;
	}
}

/*
 * Write a checked send WR into @slot: header, then the inline bytes
 * (@inline_len of them, gathered from the SGEs) or the SGEs.  @ah_handle is
 * the kernel's handle of wr->wr.ud.ah on a UD QP, 0 otherwise.
 */
static inline void shca_sqe_write(void *slot, const struct shca_sq_limits *lim,
				  const struct ibv_send_wr *wr,
				  uint32_t inline_len, uint32_t ah_handle)
{
	struct shca_sqe sqe = {};
	uint8_t *data = (uint8_t *)slot + sizeof(sqe);
	int i;

	sqe.wr_id = wr->wr_id;
	sqe.opcode = wr->opcode;
	sqe.flags = wr->send_flags & SHCA_SEND_FLAGS;
	if (lim->sig_all)
		sqe.flags |= SHCA_SQE_F_SIGNALED;
	shca_sqe_fill_op(&sqe, lim, wr, ah_handle);

	if (!shca_opcode_has_data(wr->opcode)) {
		sqe.flags &= ~SHCA_SQE_F_INLINE;
	} else if (wr->send_flags & IBV_SEND_INLINE) {
		sqe.inline_len = inline_len;
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(data, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			data += wr->sg_list[i].length;
		}
	} else {
		sqe.num_sge = wr->num_sge;
		shca_write_sges((struct shca_sge *)data, wr->sg_list,
				wr->num_sge);
	}
	memcpy(slot, &sqe, sizeof(sqe));
}

/*
 * Check a receive WR against @max_sge (already bounded by the slot size).
 * Returns 0 or EINVAL.
 */
static inline int shca_recv_wr_check(uint32_t max_sge,
				     const struct ibv_recv_wr *wr)
{
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge ||
	    (wr->num_sge && !wr->sg_list))
		return EINVAL;
	return 0;
}

static inline void shca_rqe_write(void *slot, const struct ibv_recv_wr *wr)
{
	struct shca_rqe rqe = {};

	rqe.wr_id = wr->wr_id;
	rqe.num_sge = wr->num_sge;
	shca_write_sges((struct shca_sge *)((uint8_t *)slot + sizeof(rqe)),
			wr->sg_list, wr->num_sge);
	memcpy(slot, &rqe, sizeof(rqe));
}

/*
 * Completions
 */

/*
 * The CQE carries the kernel's IB_WC_* flags; IBV_WC_* numbers two of them
 * differently (the invalidate and checksum bits are swapped).
 */
enum {
	SHCA_IB_WC_GRH			= 1 << 0,
	SHCA_IB_WC_WITH_IMM		= 1 << 1,
	SHCA_IB_WC_WITH_INVALIDATE	= 1 << 2,
	SHCA_IB_WC_IP_CSUM_OK		= 1 << 3,
};

static inline unsigned int shca_wc_flags(uint16_t kflags)
{
	unsigned int flags = 0;

	if (kflags & SHCA_IB_WC_GRH)
		flags |= IBV_WC_GRH;
	if (kflags & SHCA_IB_WC_WITH_IMM)
		flags |= IBV_WC_WITH_IMM;
	if (kflags & SHCA_IB_WC_WITH_INVALIDATE)
		flags |= IBV_WC_WITH_INV;
	if (kflags & SHCA_IB_WC_IP_CSUM_OK)
		flags |= IBV_WC_IP_CSUM_OK;
	return flags;
}

/*
 * The SL of a UD receive completion on a RoCE device carries the packet's
 * network header type, as mlx5 and hns devices report it and UCX reads it
 * to find the destination address in the 40-byte header area: bit 3 says
 * the packet came in UDP (RoCEv2), bits 2:0 are 1 for IPv6 and 2 for IPv4.
 * ibv_wc has no field of its own for it.
 */
enum {
	SHCA_WC_SL_UDP	= 1 << 3,
	SHCA_WC_SL_IPV6	= 1,
	SHCA_WC_SL_IPV4	= 2,
};

static inline uint8_t shca_wc_sl(const struct shca_cqe *cqe)
{
	switch (cqe->network_hdr_type) {
	case SHCA_CQE_NET_IPV4:
		return SHCA_WC_SL_UDP | SHCA_WC_SL_IPV4;
	case SHCA_CQE_NET_IPV6:
		return SHCA_WC_SL_UDP | SHCA_WC_SL_IPV6;
	default:
		return cqe->sl;
	}
}

/*
 * enum ib_uverbs_wc_opcode and the receive opcodes (128 + n) have the
 * values of enum ibv_wc_opcode; ib_wc_status those of ibv_wc_status.
 */
static inline void shca_cqe_to_wc(const struct shca_cqe *cqe,
				  struct ibv_wc *wc)
{
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->wc_flags = shca_wc_flags(cqe->wc_flags);
	if (wc->wc_flags & IBV_WC_WITH_INV)
		wc->invalidated_rkey = cqe->ex;
	else
		wc->imm_data = cqe->ex;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = shca_wc_sl(cqe);
	wc->dlid_path_bits = cqe->dlid_path_bits;
}

#endif /* __SHCA_RING_H__ */
