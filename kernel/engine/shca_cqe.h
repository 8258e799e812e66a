/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca completion queue producer (shca_cqe.c), and the CQ object.
 *
 * Lock order: a QP's locks, then cq->lock.  Completion and asynchronous
 * event handlers are called from the CQ's tasklet, with no shca lock held
 * (a hardware HCA's interrupt): a handler may post to, poll and re-arm
 * any QP and CQ, its own among them.
 */
#ifndef SHCA_CQE_H
#define SHCA_CQE_H

#include <linux/interrupt.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>
#include "shca_ring.h"

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
 *	(looked up by qp_num in shca_engine.qp_xa when the CQE is posted); NULL
 *	for a user CQ
 * @cqn: CQ number
 * @notify: armed by req_notify_cq: 0, IB_CQ_SOLICITED or IB_CQ_NEXT_COMP
 * @arm_ack: user CQ: private copy of the arm sequence number last
 *	acknowledged in @ring's control block (never read back from it)
 * @overflow: a CQE was dropped because the ring was full (CQ in error)
 * @timestamp: created with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION: each
 *	CQE carries ktime_get_ns() taken under @lock (set at creation)
 * @events: delivers the handler calls @pending asks for
 * @pending: SHCA_CQ_EV_* bits (atomic bitops, no lock)
 * @ev_raised: handler calls asked for (shca_cq_raise())
 * @ev_done: @ev_raised as the last complete run of @events read it
 *	before delivering (store-release)
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
	bool timestamp;
	struct tasklet_struct events;
	unsigned long pending;
	atomic_t ev_raised;
	int ev_done;
};

/* what the CQ's tasklet delivers (struct shca_cq.pending bits) */
enum {
	SHCA_CQ_EV_COMP,	/* the completion handler */
	SHCA_CQ_EV_ERR,		/* IB_EVENT_CQ_ERR */
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
 * under @cq->lock.  The handlers run from the CQ's tasklet, never in the
 * caller's context (which may hold a QP's locks).  Counts
 * SHCA_CNT_COMPLETIONS.
 *
 * Return: 0 or -ENOSPC on overflow.
 */
int shca_cq_post(struct shca_cq *cq, const struct shca_cqe *cqe,
		 bool solicited);
void shca_cq_events_init(struct shca_cq *cq);
void shca_cq_events_flush(struct shca_cq *cq);
void shca_cq_events_stop(struct shca_cq *cq);
void shca_cq_clean(struct shca_cq *cq, u32 qpn);
u32 shca_cq_used(struct shca_cq *cq);

#endif /* SHCA_CQE_H */
