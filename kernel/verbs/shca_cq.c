// SPDX-License-Identifier: GPL-2.0
/*
 * shca completion queue verbs: create, destroy, resize, poll (kernel CQs;
 * a process polls its ring itself) and arm.
 */
#include <linux/vmalloc.h>
#include "shca.h"
#include "shca_cq.h"
#include "shca_cqe.h"
#include "shca_ctx.h"
#include "shca_dev.h"
#include "shca_obj.h"
#include "shca_qpc.h"
#include "shca_ring.h"
#include "shca_engine.h"
#include "shca_wq.h"

static int shca_create_cq_common(struct ib_cq *ibcq,
				 const struct ib_cq_init_attr *attr,
				 struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibcq->device);
	struct ib_ucontext *uctx = shca_udata_uctx(udata);
	struct shca_cq *cq = to_scq(ibcq);
	struct shca_create_cq_resp resp = {};
	int id, ret;

	if (attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION)
		return -EOPNOTSUPP;
	ret = shca_udata_check_in(udata);
	if (ret)
		return ret;
	if (!attr->cqe || attr->cqe > SHCA_MAX_CQE ||
	    attr->comp_vector >= (u32)ibcq->device->num_comp_vectors)
		return -EINVAL;

	spin_lock_init(&cq->lock);
	shca_cq_events_init(cq);
	cq->timestamp = attr->flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
	id = ida_alloc_max(&sdev->cq_ida, shca_max_cq - 1, GFP_KERNEL);
	if (id < 0)
		return id == -ENOSPC ? -ENOMEM : id;
	cq->cqn = id;

	ret = shca_ring_init(&cq->ring, uctx, attr->cqe,
			     sizeof(struct shca_cqe), &resp.cq);
	if (ret)
		goto err_id;
	if (!uctx) {
		cq->kqp = kvcalloc(cq->ring.entries, sizeof(*cq->kqp),
				   GFP_KERNEL);
		if (!cq->kqp) {
			ret = -ENOMEM;
			goto err_ring;
		}
	}
	resp.cqn = cq->cqn;
	ret = shca_copy_resp(udata, &resp, sizeof(resp));
	if (ret)
		goto err_kqp;

	ibcq->cqe = cq->ring.entries;
	shca_obj_get(SHCA_OBJ_CQ);
	return 0;

err_kqp:
	kvfree(cq->kqp);
	cq->kqp = NULL;
err_ring:
	shca_ring_destroy(&cq->ring);
err_id:
	ida_free(&sdev->cq_ida, id);
	return ret;
}

/**
 * shca_create_cq - create a completion queue and its ring
 * @ibcq: the RDMA core's CQ, allocated by the core
 * @attr: size (rounded up to a power of two), completion vector; the one
 *	flag supported is IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION (each
 *	completion carries the device clock, struct shca_cqe.timestamp)
 * @attrs: (6.11 and later) the uverbs bundle whose driver udata, for a
 *	process, receives struct shca_create_cq_resp: the ring's mmap key
 *	and size, and the CQ number
 *
 * Kernels before 6.11 pass @udata directly.  A process's CQ ring is
 * mapped into it and polled there; a kernel CQ also keeps, per slot, the
 * QP its completion belongs to.  Process context.
 *
 * Return: 0, -EOPNOTSUPP for another flag, -EINVAL for a size of 0 or above
 * SHCA_MAX_CQE, a bad vector or driver input, -ENOMEM when max_cq CQs exist or memory
 * runs out, or -EFAULT when the response cannot be copied out.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
int shca_create_cq(struct ib_cq *ibcq,
		   const struct ib_cq_init_attr *attr,
		   struct uverbs_attr_bundle *attrs)
{
	return shca_create_cq_common(ibcq, attr,
				     attrs ? &attrs->driver_udata : NULL);
}
#else
int shca_create_cq(struct ib_cq *ibcq,
		   const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata)
{
	return shca_create_cq_common(ibcq, attr, udata);
}
#endif

/**
 * shca_destroy_cq - free a completion queue and its ring
 * @ibcq: the CQ
 * @udata: the process's, or NULL
 *
 * The RDMA core destroys a CQ only once no QP uses it, so no engine
 * context can be writing to it any more.  A process's mapping of the
 * ring keeps its pages until it is unmapped.
 *
 * Return: 0.
 */
int shca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibcq->device);
	struct shca_cq *cq = to_scq(ibcq);

	shca_cq_events_stop(cq);
	shca_ring_destroy(&cq->ring);
	kvfree(cq->kqp);
	cq->kqp = NULL;
	ida_free(&sdev->cq_ida, cq->cqn);
	shca_obj_put(SHCA_OBJ_CQ);
	return 0;
}

static void shca_cqe_to_wc(const struct shca_cqe *c, struct ib_qp *qp,
			   struct ib_wc *wc)
{
	wc->wr_id = c->wr_id;
	wc->status = c->status;
	wc->opcode = c->opcode;
	wc->vendor_err = c->vendor_err;
	wc->byte_len = c->byte_len;
	wc->qp = qp;
	if (c->wc_flags & IB_WC_WITH_INVALIDATE)
		wc->ex.invalidate_rkey = c->ex;
	else
		wc->ex.imm_data = (__force __be32)c->ex;
	wc->src_qp = c->src_qp;
	wc->slid = c->slid;
	wc->wc_flags = c->wc_flags;
	wc->pkey_index = c->pkey_index;
	wc->sl = c->sl;
	wc->dlid_path_bits = c->dlid_path_bits;
	wc->port_num = c->port_num;
	memcpy(wc->smac, c->smac, ETH_ALEN);
	wc->vlan_id = c->vlan_id;
	wc->network_hdr_type = c->network_hdr_type;
}

/**
 * shca_poll_cq - take completions from a kernel CQ
 * @ibcq: the CQ
 * @num: at most this many
 * @wc: where they go
 *
 * Only kernel CQs: a process polls its own ring in the provider.  Any
 * context; takes cq->lock.
 *
 * Return: the number of completions taken, or -EOPNOTSUPP for a
 * process's CQ.
 */
int shca_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct shca_cq *cq = to_scq(ibcq);
	struct shca_ring *r = &cq->ring;
	unsigned long flags;
	u32 cons;
	int n = 0;

	if (!READ_ONCE(cq->kqp))
		return -EOPNOTSUPP;

	spin_lock_irqsave(&cq->lock, flags);
	cons = r->ctrl->cons;	/* kernel ring: only written here */
	while (n < num && cons != r->kidx) {
		shca_cqe_to_wc(shca_ring_slot(r, cons), cq->kqp[cons & r->mask],
			       &wc[n]);
		cons++;
		n++;
	}
	/* release: pairs with shca_cq_used() of the producer */
	smp_store_release(&r->ctrl->cons, cons);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * shca_req_notify_cq - arm a kernel CQ for its next completion event
 * @ibcq: the CQ
 * @flags: IB_CQ_NEXT_COMP or IB_CQ_SOLICITED, optionally with
 *	IB_CQ_REPORT_MISSED_EVENTS
 *
 * An armed IB_CQ_NEXT_COMP is not weakened by a later IB_CQ_SOLICITED.
 * A process arms its CQ through the ring's control block instead.
 *
 * Return: 1 when missed events were asked for and the CQ holds
 * completions, 0 otherwise.
 */
int shca_req_notify_cq(struct ib_cq *ibcq,
		       enum ib_cq_notify_flags flags)
{
	struct shca_cq *cq = to_scq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (flags & IB_CQ_NEXT_COMP)
		cq->notify = IB_CQ_NEXT_COMP;
	else if ((flags & IB_CQ_SOLICITED) && cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = IB_CQ_SOLICITED;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && shca_cq_used(cq))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/*
 * Move the unconsumed CQEs into @nr and swap it in; on return @nr and
 * *@nkqp hold what the CQ no longer uses.  Caller holds cq->lock.
 */
static int shca_cq_swap_ring(struct shca_cq *cq, struct shca_ring *nr,
			     struct ib_qp ***nkqp)
{
	struct shca_ring *r = &cq->ring;
	/* acquire: the consumer is done with the slots before cons */
	u32 cons = smp_load_acquire(&r->ctrl->cons);
	u32 used = r->kidx - cons, i;

	if (used > r->entries || used > nr->entries)
		return -EINVAL;
	shca_ring_move(nr, r, cons, r->kidx, r->kidx);
	if (*nkqp) {
		for (i = cons; i != r->kidx; i++)
			(*nkqp)[i & nr->mask] = cq->kqp[i & r->mask];
	}
	if (shca_ring_is_user(r)) {
		WRITE_ONCE(nr->ctrl->arm, READ_ONCE(r->ctrl->arm));
		WRITE_ONCE(nr->ctrl->arm_ack, cq->arm_ack);
	}
	swap(*r, *nr);
	swap(cq->kqp, *nkqp);
	cq->ibcq.cqe = r->entries;
	return 0;
}

/**
 * shca_resize_cq - move a CQ to a ring of another size
 * @ibcq: the CQ
 * @cqe: the new size, rounded up to a power of two
 * @udata: for a process's CQ, receives the new ring's mmap key and size
 *
 * Work posted before the call completes into the old ring first; the
 * completions not yet polled move to the new ring under cq->lock, and
 * the old ring is freed.  A process must map the new ring and poll it
 * from the new consumer index (the provider does).  Process context.
 *
 * Return: 0, -EINVAL for a size out of range, a kernel/process mismatch,
 * or fewer entries than completions pending, -ENOMEM, or -EFAULT.
 */
int shca_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct ib_ucontext *uctx = shca_udata_uctx(udata);
	struct shca_cq *cq = to_scq(ibcq);
	struct shca_create_cq_resp resp = {};
	struct ib_qp **nkqp = NULL;
	struct shca_ring nr;
	unsigned long flags;
	int ret;

	if (cqe < 1 || cqe > SHCA_MAX_CQE || !uctx != !cq->ring.mmap ||
	    shca_udata_check_in(udata))
		return -EINVAL;
	/*
	 * Work posted before the resize completes into the old ring first,
	 * so that "more completions pending than the new size" is judged
	 * on them: the engine reads the rings of the QPs sending into this
	 * CQ now, and the transmit stage completes UD sends asynchronously.
	 */
	if (uctx)
		shca_qp_fetch_cq(to_sdev(ibcq->device), cq);
	shca_engine_flush_tx(to_sdev(ibcq->device));
	ret = shca_ring_init(&nr, uctx, cqe, sizeof(struct shca_cqe),
			     &resp.cq);
	if (ret)
		return ret;
	if (!uctx) {
		nkqp = kvcalloc(nr.entries, sizeof(*nkqp), GFP_KERNEL);
		if (!nkqp) {
			ret = -ENOMEM;
			goto out;
		}
	}
	resp.cqn = cq->cqn;
	ret = shca_copy_resp(udata, &resp, sizeof(resp));
	if (ret)
		goto out;

	spin_lock_irqsave(&cq->lock, flags);
	ret = shca_cq_swap_ring(cq, &nr, &nkqp);
	spin_unlock_irqrestore(&cq->lock, flags);
out:
	/* the new ring on failure, the old one on success */
	kvfree(nkqp);
	shca_ring_destroy(&nr);
	return ret;
}

/**
 * shca_modify_cq - completion moderation, which shca does not offer
 * @ibcq: the CQ
 * @count: completions per event
 * @period: microseconds per event
 *
 * Return: -EOPNOTSUPP.
 */
int shca_modify_cq(struct ib_cq *ibcq, u16 count, u16 period)
{
	return -EOPNOTSUPP;
}
