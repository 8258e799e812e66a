// SPDX-License-Identifier: GPL-2.0
/*
 * shca receive WQEs: the next receive WQE of an RQ or SRQ, copied out of
 * its ring and validated, and the SRQ limit event.
 */
#include "shca.h"
#include "shca_rqe.h"

/**
 * shca_ring_get_rqe - copy out and validate the next receive WQE
 * @r: RQ or SRQ ring (caller holds the queue's consumer lock)
 * @max_sge: the queue's SGE limit (at most SHCA_MAX_SGE is honoured)
 * @need: bytes the WQE must hold to be taken (0: any WQE)
 * @out: the copy
 *
 * The slot is copied before anything in it is looked at; only the copy
 * is validated and used.  A WQE is consumed when it is taken or
 * malformed; one too small for @need stays at the head of the ring.
 *
 * Return: 0; -EAGAIN when the ring is empty; -EPROTO when the ring's
 * producer index is corrupt; -EBADMSG when the WQE is malformed (it is
 * consumed, and @out holds its wr_id and no SGEs, for an error
 * completion: too many SGEs, or a reserved field not zero); -EMSGSIZE when it holds fewer than @need bytes.
 */
int shca_ring_get_rqe(struct shca_ring *r, u32 max_sge, u32 need,
		      struct shca_recv_wqe *out)
{
	struct shca_rqe hdr;
	const u8 *slot;
	u32 i, n, len = 0;
	int pending;

	pending = shca_ring_pending(r);
	if (pending < 0)
		return pending;
	if (!pending)
		return -EAGAIN;

	slot = shca_ring_slot(r, r->kidx);
	memcpy(&hdr, slot, sizeof(hdr));
	n = hdr.num_sge;
	/* a reserved field that is not zero is refused like a bad count */
	if (hdr.rsvd || n > max_sge || n > SHCA_MAX_SGE ||
	    sizeof(hdr) + (size_t)n * sizeof(struct shca_sge) > r->stride) {
		out->wr_id = hdr.wr_id;
		out->num_sge = 0;
		out->length = 0;
		shca_ring_consume(r, 1);
		return -EBADMSG;
	}
	memcpy(out->sge, slot + sizeof(hdr), n * sizeof(struct shca_sge));

	for (i = 0; i < n; i++) {
		if (check_add_overflow(len, out->sge[i].length, &len))
			len = U32_MAX;
	}
	if (len < need)
		return -EMSGSIZE;
	out->wr_id = hdr.wr_id;
	out->num_sge = n;
	out->length = len;
	shca_ring_consume(r, 1);
	return 0;
}

/* IB_EVENT_SRQ_LIMIT_REACHED, outside every shca lock */
static void shca_srq_limit_work(struct work_struct *work)
{
	struct shca_srq *srq = container_of(work, struct shca_srq,
					    limit_work);
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/**
 * shca_srq_events_init - prepare a new SRQ's limit event
 * @srq: SRQ being created
 */
void shca_srq_events_init(struct shca_srq *srq)
{
	INIT_WORK(&srq->limit_work, shca_srq_limit_work);
}

/**
 * shca_srq_events_stop - cancel the SRQ's pending event or wait for it
 * @srq: SRQ being destroyed, which no QP uses any more
 *
 * Sleeps.
 */
void shca_srq_events_stop(struct shca_srq *srq)
{
	cancel_work_sync(&srq->limit_work);
}

/**
 * shca_srq_get_wqe - take the next WQE of an SRQ
 * @srq: SRQ
 * @need: bytes the WQE must hold to be taken (0: any WQE)
 * @out: the copy
 *
 * Raises IB_EVENT_SRQ_LIMIT_REACHED (once per arming) when fewer WQEs
 * than the armed limit remain, from a work item.  Any context; takes
 * @srq->lock.
 *
 * Return: as shca_ring_get_rqe().
 */
int shca_srq_get_wqe(struct shca_srq *srq, u32 need,
		     struct shca_recv_wqe *out)
{
	unsigned long flags;
	bool fire = false;
	int ret, left;

	spin_lock_irqsave(&srq->lock, flags);
	ret = shca_ring_get_rqe(&srq->ring, srq->max_sge, need, out);
	if (!ret && srq->limit) {
		left = shca_ring_pending(&srq->ring);
		if (left >= 0 && (u32)left < srq->limit) {
			srq->limit = 0;
			fire = true;
		}
	}
	spin_unlock_irqrestore(&srq->lock, flags);

	if (fire)
		schedule_work(&srq->limit_work);
	return ret;
}
