/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca receive WQEs of RQs and SRQs (shca_rqe.c), and the SRQ object.
 *
 * Lock order: a QP's locks, then srq->lock.  The SRQ's asynchronous event
 * handler is called from a work item, with no shca lock held.
 */
#ifndef SHCA_RQE_H
#define SHCA_RQE_H

#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include "shca_ring.h"

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

int shca_ring_get_rqe(struct shca_ring *r, u32 max_sge, u32 need,
		      struct shca_recv_wqe *out);

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
 * @limit_work: delivers IB_EVENT_SRQ_LIMIT_REACHED
 */
struct shca_srq {
	struct ib_srq ibsrq;
	spinlock_t lock;
	struct shca_ring ring;
	u32 srqn;
	u32 max_sge;
	u32 limit;
	struct work_struct limit_work;
};

static inline struct shca_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct shca_srq, ibsrq);
}

int shca_srq_get_wqe(struct shca_srq *srq, u32 need,
		     struct shca_recv_wqe *out);
void shca_srq_events_init(struct shca_srq *srq);
void shca_srq_events_stop(struct shca_srq *srq);

#endif /* SHCA_RQE_H */
