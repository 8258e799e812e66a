/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca rings, completion queues and shared receive queues.
 *
 * Every SQ, RQ, SRQ and CQ is a ring (struct shca_ring_ctrl + slots, see
 * include/uapi/rdma/shca-abi.h) in vmalloc memory.  A user ring is mapped
 * by the process through an rdma_user_mmap_entry; a kernel ring (kernel
 * verbs users) is only touched by the kernel.
 *
 * Every mmap entry of the device is created by shca_ring_init() (the
 * device's mmap_free callback assumes so): its vmalloc memory is freed
 * when the ring is destroyed and no mmap() call is using the entry.  Pages
 * the process still has mapped stay alive through the page references the
 * mapping holds, so the kernel never frees memory a process can reach.
 *
 * Lock order: a QP's locks, then cq->lock or srq->lock.  Completion and
 * asynchronous event handlers are called with neither cq->lock nor
 * srq->lock held (but with whatever locks the caller of shca_cq_post() or
 * shca_srq_get_wqe() holds).
 */
#ifndef SHCA_QUEUE_H
#define SHCA_QUEUE_H

#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>
#include <rdma/shca-abi.h>

/*
 * Queue limits.  A ring is one vmalloc_user() area the process maps, so
 * they are bounded by memory only: a CQ of SHCA_MAX_CQE entries takes
 * 256 MiB, a send queue of SHCA_MAX_QP_WR WQEs with SHCA_MAX_SGE SGEs
 * 32 MiB (and the kernel's copy of its WQEs about as much again).  Inline
 * data is copied into the WQE slot, where the SGEs would be.
 */
#define SHCA_MAX_SGE		32
#define SHCA_MAX_INLINE		(SHCA_MAX_SGE * 16)
#define SHCA_MAX_QP_WR		32768
#define SHCA_MAX_CQE		(1 << 22)
#define SHCA_MAX_SRQ_WR		32768
#define SHCA_MAX_SRQ		65536	/* SRQ numbers 0..SHCA_MAX_SRQ-1 */

struct shca_dev;

/**
 * struct shca_ring - one ring
 * @ctrl: control block (shared with the process for a user ring)
 * @slots: first slot
 * @entries: number of slots, a power of two
 * @stride: bytes per slot, a power of two
 * @mask: @entries - 1
 * @kidx: the index the kernel owns (consumer index of SQ/RQ/SRQ, producer
 *	index of a CQ); the kernel never reads it back from @ctrl
 * @buf: vmalloc_user() memory holding @ctrl and the slots
 * @size: bytes of @buf (page aligned)
 * @mmap: the process's mmap entry, NULL for a kernel ring
 *
 * The fields are set by shca_ring_init(); @kidx and the words of @ctrl the
 * kernel owns are written under the lock of the queue the ring belongs to.
 */
struct shca_ring {
	struct shca_ring_ctrl *ctrl;
	u8 *slots;
	u32 entries;
	u32 stride;
	u32 mask;
	u32 kidx;
	void *buf;
	size_t size;
	struct rdma_user_mmap_entry *mmap;
};

/**
 * shca_ring_init - allocate a ring
 * @r: ring to fill
 * @uctx: user context to map it into, or NULL for a kernel ring
 * @entries: minimum number of slots (rounded up to a power of two),
 *	1..2^20
 * @stride: minimum slot size (rounded up to a power of two), 1..2^16
 * @info: filled with what the process needs to map it (may be NULL)
 *
 * The memory is zeroed.  Sleeps.
 *
 * Return: 0 or a negative errno (-EINVAL for out-of-range sizes).
 */
int shca_ring_init(struct shca_ring *r, struct ib_ucontext *uctx,
		   u32 entries, u32 stride, struct shca_ring_info *info);

/**
 * shca_ring_destroy - release a ring; a user mapping keeps the memory
 * alive until the process unmaps it, the kernel no longer touches it
 * @r: ring (a zeroed, never initialised ring is accepted and ignored)
 *
 * May sleep: never call it under a spinlock.
 */
void shca_ring_destroy(struct shca_ring *r);

static inline void *shca_ring_slot(const struct shca_ring *r, u32 idx)
{
	return r->slots + (size_t)(idx & r->mask) * r->stride;
}

/**
 * shca_ring_pending - slots filled by the producer, not yet consumed
 * @r: SQ/RQ/SRQ ring (kernel consumes)
 *
 * Reads the producer index once (acquire).
 *
 * Return: the count, or -EPROTO when the producer index is impossible
 * (more than @entries ahead of the consumer index).
 */
int shca_ring_pending(struct shca_ring *r);

/**
 * shca_ring_consume - advance the kernel's consumer index and publish it
 * @r: SQ/RQ/SRQ ring
 * @n: slots consumed
 */
void shca_ring_consume(struct shca_ring *r, u32 n);

/**
 * struct shca_recv_wqe - validated kernel copy of a receive WQE
 * @wr_id: from the RQE
 * @num_sge: number of valid entries in @sge
 * @length: sum of the SGE lengths (saturated at U32_MAX)
 * @sge: copied SGEs
 */
struct shca_recv_wqe {
	u64 wr_id;
	u32 num_sge;
	u32 length;
	struct shca_sge sge[SHCA_MAX_SGE];
};

/**
 * shca_ring_get_rqe - copy out and validate the next receive WQE
 * @r: RQ or SRQ ring (caller holds the queue's consumer lock)
 * @max_sge: the queue's SGE limit
 * @out: the copy
 *
 * Consumes the slot on success.
 *
 * Return: 0; -EAGAIN when the ring is empty; -EPROTO when the ring or the
 * WQE is corrupt (num_sge > @max_sge, impossible producer index).
 */
int shca_ring_get_rqe(struct shca_ring *r, u32 max_sge,
		      struct shca_recv_wqe *out);

/**
 * struct shca_cq - completion queue
 * @ibcq: RDMA core CQ
 * @lock: serialises producers and resize; kernel consumers poll under it;
 *	protects every field below except @cqn.  Taken with interrupts
 *	disabled (spin_lock_irqsave)
 * @ring: the CQE ring (kernel produces).  Ring indices are preserved by
 *	resize: the new ring continues at the old producer and consumer
 *	indices, so a process just switches its mapping
 * @kqp: kernel CQ only: the QP of the CQE in each slot, for ib_wc.qp
 *	(looked up by qp_num in shca_dev.qp_xa when the CQE is posted); NULL
 *	for a user CQ
 * @cqn: CQ number
 * @notify: armed by req_notify_cq: 0, IB_CQ_SOLICITED or IB_CQ_NEXT_COMP
 * @arm_ack: user CQ: private copy of the arm sequence number last
 *	acknowledged in @ring's control block (never read back from it)
 * @overflow: a CQE was dropped because the ring was full (CQ in error)
 */
struct shca_cq {
	struct ib_cq ibcq;
	spinlock_t lock;
	struct shca_ring ring;
	struct ib_qp **kqp;
	u32 cqn;
	u8 notify;
	u32 arm_ack;
	bool overflow;
};

static inline struct shca_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct shca_cq, ibcq);
}

/**
 * shca_cq_post - add a completion
 * @cq: CQ
 * @cqe: the completion.  @cqe->opcode holds the kernel's enum ib_wc_opcode
 *	value, which equals enum ib_uverbs_wc_opcode for every opcode a
 *	process can see (IB_WC_RECV = 128, IB_WC_RECV_RDMA_WITH_IMM = 129;
 *	IB_WC_REG_MR only on kernel QPs); @cqe->rsvd is zeroed in the copy
 * @solicited: the completion is for a solicited message
 *
 * Raises the completion event when the CQ is armed for it (next or
 * solicited, by req_notify_cq or by the ring's arm word); on the first
 * overflow reports IB_EVENT_CQ_ERR.  Any context; must not be called
 * under @cq->lock.  The handlers run after @cq->lock is released, in the
 * caller's context.  Counts SHCA_CNT_COMPLETIONS.
 *
 * Return: 0 or -ENOSPC on overflow.
 */
int shca_cq_post(struct shca_cq *cq, const struct shca_cqe *cqe,
		 bool solicited);
void shca_cq_clean(struct shca_cq *cq, u32 qpn);

/**
 * struct shca_srq - shared receive queue
 * @ibsrq: RDMA core SRQ
 * @lock: consumer side (the engine taking WQEs), the kernel producer
 *	(post_srq_recv of a kernel SRQ), limit state and ring resize.  Taken
 *	with interrupts disabled (spin_lock_irqsave)
 * @ring: the receive ring (slot: struct shca_rqe then @max_sge SGEs)
 * @srqn: SRQ number
 * @max_sge: SGE limit of its WQEs
 * @limit: limit event threshold, 0 = disarmed
 */
struct shca_srq {
	struct ib_srq ibsrq;
	spinlock_t lock;
	struct shca_ring ring;
	u32 srqn;
	u32 max_sge;
	u32 limit;
};

static inline struct shca_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct shca_srq, ibsrq);
}

/**
 * shca_srq_get_wqe - take the next WQE of an SRQ (raises the SRQ limit
 * event when the queue drops below the armed limit)
 * @srq: SRQ
 * @out: the copy
 *
 * Any context; takes @srq->lock, calls the event handler after releasing
 * it.
 *
 * Return: as shca_ring_get_rqe().
 */
int shca_srq_get_wqe(struct shca_srq *srq, struct shca_recv_wqe *out);

/*
 * CQ and SRQ verbs (create/destroy/poll/req_notify/resize CQ; create/
 * modify/query/destroy/post_recv SRQ; the object sizes) and the mmap
 * callbacks, set on the device with ib_set_device_ops().
 *
 * poll_cq serves kernel CQs only (a process polls its ring itself).  On a
 * user SRQ, post_srq_recv takes no work requests (a doorbell: returns 0).
 * modify_srq IB_SRQ_MAX_WR resizes kernel SRQs only (-EOPNOTSUPP for a
 * user SRQ: modify_srq has no response to carry a new ring).
 */
extern const struct ib_device_ops shca_queue_ops;

#endif /* SHCA_QUEUE_H */
