// SPDX-License-Identifier: GPL-2.0
/*
 * shca shared receive queue verbs: create, modify (limit; resize of a
 * kernel SRQ), query, destroy, and post_srq_recv (kernel SRQs; on a user
 * SRQ it is a doorbell and takes no work requests).
 */
#include "shca.h"
#include "shca_ctx.h"
#include "shca_obj.h"
#include "shca_ring.h"
#include "shca_rqe.h"
#include "shca_srq.h"

static u32 shca_srq_stride(u32 max_sge)
{
	return sizeof(struct shca_rqe) + max_sge * sizeof(struct shca_sge);
}

static int shca_srq_check_attr(const struct ib_srq_attr *attr)
{
	if (!attr->max_wr || attr->max_wr > SHCA_MAX_SRQ_WR ||
	    attr->max_sge > SHCA_MAX_SGE || attr->srq_limit >= attr->max_wr)
		return -EINVAL;
	return 0;
}

/**
 * shca_create_srq - create a shared receive queue and its ring
 * @ibsrq: the RDMA core's SRQ, allocated by the core
 * @init: a basic SRQ's size and SGEs per WQE
 * @udata: for a process, receives struct shca_create_srq_resp: the
 *	ring's mmap key and size and the SRQ number
 *
 * The size is rounded up to a power of two and the SGE count to what the
 * ring's stride holds (at most SHCA_MAX_SGE); @init reports both back.
 * The limit asked for at creation must be below max_wr but is not
 * armed; only modify_srq arms it.  Process context.
 *
 * Return: 0, -EOPNOTSUPP for another SRQ type, -EINVAL for sizes out of
 * range, a limit not below max_wr or driver input, -ENOMEM when SHCA_MAX_SRQ SRQs
 * exist or memory runs out, or -EFAULT.
 */
int shca_create_srq(struct ib_srq *ibsrq,
		    struct ib_srq_init_attr *init,
		    struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibsrq->device);
	struct ib_ucontext *uctx = shca_udata_uctx(udata);
	struct shca_srq *srq = to_ssrq(ibsrq);
	struct shca_create_srq_resp resp = {};
	struct ib_srq_attr *attr = &init->attr;
	int id, ret;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	ret = shca_srq_check_attr(attr);
	if (!ret)
		ret = shca_udata_check_in(udata);
	if (ret)
		return ret;

	spin_lock_init(&srq->lock);
	shca_srq_events_init(srq);
	id = ida_alloc_max(&sdev->srq_ida, SHCA_MAX_SRQ - 1, GFP_KERNEL);
	if (id < 0)
		return id == -ENOSPC ? -ENOMEM : id;
	srq->srqn = id;

	ret = shca_ring_init(&srq->ring, uctx, attr->max_wr,
			     shca_srq_stride(attr->max_sge), &resp.rq);
	if (ret)
		goto err_id;
	/* the rounded-up stride may hold more SGEs than asked for */
	srq->max_sge = min_t(u32, SHCA_MAX_SGE,
			     (srq->ring.stride - sizeof(struct shca_rqe)) /
			     sizeof(struct shca_sge));
	srq->limit = 0;	/* srq_limit is ignored at creation */

	resp.srqn = srq->srqn;
	ret = shca_copy_resp(udata, &resp, sizeof(resp));
	if (ret)
		goto err_ring;

	attr->max_wr = srq->ring.entries;
	attr->max_sge = srq->max_sge;
	shca_obj_get(SHCA_OBJ_SRQ);
	return 0;

err_ring:
	shca_ring_destroy(&srq->ring);
err_id:
	ida_free(&sdev->srq_ida, id);
	return ret;
}

/* Kernel SRQ: move the posted WQEs into a ring of @max_wr slots. */
static int shca_srq_resize(struct shca_srq *srq, u32 max_wr)
{
	struct shca_ring nr, *r = &srq->ring;
	unsigned long flags;
	u32 prod;
	int ret;

	ret = shca_ring_init(&nr, NULL, max_wr, r->stride, NULL);
	if (ret)
		return ret;

	spin_lock_irqsave(&srq->lock, flags);
	prod = r->ctrl->prod;	/* kernel ring: only written under the lock */
	if (prod - r->kidx > nr.entries ||
	    (srq->limit && srq->limit >= nr.entries)) {
		ret = -EINVAL;
	} else {
		shca_ring_move(&nr, r, r->kidx, prod, r->kidx);
		swap(*r, nr);
	}
	spin_unlock_irqrestore(&srq->lock, flags);

	shca_ring_destroy(&nr);
	return ret;
}

/**
 * shca_modify_srq - arm the limit event, or resize a kernel SRQ
 * @ibsrq: the SRQ
 * @attr: the new values
 * @mask: IB_SRQ_MAX_WR and/or IB_SRQ_LIMIT
 * @udata: the process's, or NULL
 *
 * A resize moves the posted WQEs into a new ring under srq->lock and
 * fails if they do not fit; a process's SRQ cannot be resized.  The
 * limit must be below the SRQ's size.
 *
 * Return: 0, -EINVAL for other mask bits, values out of range or driver
 * input, -EOPNOTSUPP to resize a process's SRQ, or -ENOMEM.
 */
int shca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct shca_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	int ret = 0;

	if ((mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT)) ||
	    shca_udata_check_in(udata))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR) {
		if (shca_ring_is_user(&srq->ring))
			return -EOPNOTSUPP;
		if (!attr->max_wr || attr->max_wr > SHCA_MAX_SRQ_WR ||
		    ((mask & IB_SRQ_LIMIT) && attr->srq_limit >= attr->max_wr))
			return -EINVAL;
		ret = shca_srq_resize(srq, attr->max_wr);
		if (ret)
			return ret;
	}
	if (mask & IB_SRQ_LIMIT) {
		spin_lock_irqsave(&srq->lock, flags);
		if (attr->srq_limit >= srq->ring.entries)
			ret = -EINVAL;
		else
			srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->lock, flags);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * shca_query_srq - report an SRQ's size, SGEs per WQE and armed limit
 * @ibsrq: the SRQ
 * @attr: filled in
 *
 * Return: 0.
 */
int shca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct shca_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;

	spin_lock_irqsave(&srq->lock, flags);
	attr->max_wr = srq->ring.entries;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

/**
 * shca_destroy_srq - free an SRQ and its ring
 * @ibsrq: the SRQ
 * @udata: the process's, or NULL
 *
 * The RDMA core destroys an SRQ only once no QP uses it, so the engine no
 * longer takes WQEs from it.
 *
 * Return: 0.
 */
int shca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibsrq->device);
	struct shca_srq *srq = to_ssrq(ibsrq);

	shca_srq_events_stop(srq);
	shca_ring_destroy(&srq->ring);
	ida_free(&sdev->srq_ida, srq->srqn);
	shca_obj_put(SHCA_OBJ_SRQ);
	return 0;
}

/* Write one receive WR into a kernel SRQ.  Caller holds srq->lock. */
static int shca_srq_post_one(struct shca_srq *srq, const struct ib_recv_wr *wr)
{
	struct shca_ring *r = &srq->ring;
	u32 prod = r->ctrl->prod;	/* kernel ring: only written here */
	struct shca_rqe *rqe;
	struct shca_sge *sge;
	int i;

	if (wr->num_sge < 0 || (u32)wr->num_sge > srq->max_sge)
		return -EINVAL;
	if (prod - r->kidx >= r->entries)
		return -ENOMEM;

	rqe = shca_ring_slot(r, prod);
	rqe->wr_id = wr->wr_id;
	rqe->num_sge = wr->num_sge;
	rqe->rsvd = 0;
	sge = (struct shca_sge *)(rqe + 1);
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	/* release: the RQE is visible before the index that covers it */
	smp_store_release(&r->ctrl->prod, prod + 1);
	return 0;
}

/**
 * shca_post_srq_recv - post receive work requests to a kernel SRQ
 * @ibsrq: the SRQ
 * @wr: the chain of requests; none for a process's SRQ
 * @bad_wr: receives the first request not posted
 *
 * A process posts into its SRQ ring itself; a call without requests is
 * accepted and does nothing.
 *
 * Return: 0, -EINVAL for too many SGEs or for requests to a process's
 * SRQ, or -ENOMEM when the ring is full.
 */
int shca_post_srq_recv(struct ib_srq *ibsrq,
		       const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct shca_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	int ret = 0;

	if (shca_ring_is_user(&srq->ring)) {
		/* a process posts into its ring; a call is only a doorbell */
		if (!wr)
			return 0;
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		ret = shca_srq_post_one(srq, wr);
		if (ret)
			break;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (ret)
		*bad_wr = wr;
	return ret;
}
