// SPDX-License-Identifier: GPL-2.0
/*
 * shca completion queue producer: completions written into a CQ's ring,
 * the completion event, overflow, and removal of a destroyed QP's
 * completions from a kernel CQ.
 */
#include "shca.h"
#include "shca_cqe.h"
#include "shca_qpc.h"
#include "shca_engine.h"
#include "shca_wq.h"
#include "shca_trace.h"

/**
 * shca_cq_used - slots of a CQ the consumer has not freed
 * @cq: CQ (caller holds cq->lock)
 *
 * Return: the count, as the consumer index read now says (untrusted for
 * a user CQ: any value is possible).
 */
u32 shca_cq_used(struct shca_cq *cq)
{
	struct shca_ring *r = &cq->ring;
	u32 cons;

	lockdep_assert_held(&cq->lock);
	/*
	 * A user CQ's consumer index is untrusted: any value is possible.
	 * Acquire: the consumer's reads of the slots before cons are done
	 * before we overwrite them.
	 */
	cons = smp_load_acquire(&r->ctrl->cons);
	return r->kidx - cons;
}

static struct ib_qp *shca_cq_lookup_qp(struct shca_cq *cq, u32 qpn)
{
	struct shca_dev *sdev = to_sdev(cq->ibcq.device);
	struct shca_qp *qp;

	if (qpn >= sdev->eng->nqp)
		return NULL;
	qp = xa_load(&sdev->eng->qp_xa, shca_qp_idx(sdev, qpn));
	return qp && qp->sdev == sdev ? &qp->ibqp : NULL;
}

/*
 * Decide whether the CQE just posted raises the completion event and
 * disarm what fired.  Caller holds cq->lock and has published the CQE.
 */
static bool shca_cq_should_fire(struct shca_cq *cq, bool solicited)
{
	struct shca_ring_ctrl *ctrl = cq->ring.ctrl;
	bool fire = false;
	u32 arm, seq;

	lockdep_assert_held(&cq->lock);
	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED && solicited)) {
		cq->notify = 0;
		fire = true;
	}
	if (!shca_ring_is_user(&cq->ring))
		return fire;

	/* prod store before arm load: pairs with the provider's barrier */
	smp_mb();
	arm = READ_ONCE(ctrl->arm);
	seq = arm & SHCA_CQ_ARM_SEQ_MASK;
	if (seq != cq->arm_ack &&
	    (solicited || !(arm & SHCA_CQ_ARM_SOLICITED))) {
		cq->arm_ack = seq;
		WRITE_ONCE(ctrl->arm_ack, seq);
		fire = true;
	}
	return fire;
}

static void shca_cq_err_event(struct shca_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/* The CQ's "interrupt": the handler calls shca_cq_post() asked for. */
static void shca_cq_events(struct tasklet_struct *t)
{
	struct shca_cq *cq = from_tasklet(cq, t, events);
	int seq = atomic_read(&cq->ev_raised);

	/* pairs with shca_cq_raise(): the bits of every raise counted */
	smp_mb();
	if (test_and_clear_bit(SHCA_CQ_EV_COMP, &cq->pending) &&
	    cq->ibcq.comp_handler) {
		trace_shca_comp_handler(cq->ibcq.device, cq->cqn);
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	}
	if (test_and_clear_bit(SHCA_CQ_EV_ERR, &cq->pending))
		shca_cq_err_event(cq);
	/* release: the calls made before a flusher sees @seq done */
	smp_store_release(&cq->ev_done, seq);
}

/**
 * shca_cq_events_init - prepare a new CQ's handler calls
 * @cq: CQ being created
 */
void shca_cq_events_init(struct shca_cq *cq)
{
	tasklet_setup(&cq->events, shca_cq_events);
}

/**
 * shca_cq_events_flush - wait until the handler calls asked for so far
 *	have been made
 * @cq: CQ of a QP being destroyed (which posts to it no more)
 *
 * The RDMA core stops a kernel CQ's polling context (ib_free_cq()) only
 * after its QPs are destroyed, so no handler call may be left for later.
 * Does not take the tasklet away from other QPs' completions.  Sleeps.
 */
void shca_cq_events_flush(struct shca_cq *cq)
{
	int want = atomic_read(&cq->ev_raised);

	/* acquire: pairs with the release at the end of shca_cq_events() */
	while (smp_load_acquire(&cq->ev_done) - want < 0)
		usleep_range(50, 200);
}

/**
 * shca_cq_events_stop - wait for the CQ's pending handler calls
 * @cq: CQ being destroyed, which no QP uses any more (nothing posts to
 *	it, so nothing schedules its tasklet again)
 *
 * Sleeps.
 */
void shca_cq_events_stop(struct shca_cq *cq)
{
	tasklet_kill(&cq->events);
}

/* Ask the CQ's tasklet for handler call @ev. */
static void shca_cq_raise(struct shca_cq *cq, int ev)
{
	set_bit(ev, &cq->pending);
	/* the bit before the count: pairs with shca_cq_events()'s smp_mb() */
	smp_mb__before_atomic();
	atomic_inc(&cq->ev_raised);
	tasklet_schedule(&cq->events);
}

/**
 * shca_cq_post - add a completion
 * @cq: CQ
 * @cqe: the completion
 * @solicited: the completion is for a solicited message
 *
 * Takes cq->lock; the completion or error handler is called from the
 * CQ's tasklet.
 *
 * Return: 0 or -ENOSPC on overflow.
 */
int shca_cq_post(struct shca_cq *cq, const struct shca_cqe *cqe,
		 bool solicited)
{
	struct shca_ring *r = &cq->ring;
	struct ib_qp *ibqp = NULL;
	bool fire = false, err_event = false;
	struct shca_cqe c = *cqe;
	unsigned long flags;
	int ret = 0;

	/* never show a process stale kernel bytes */
	memset(c.rsvd, 0, sizeof(c.rsvd));
	c.timestamp = 0;
	if (READ_ONCE(cq->kqp))
		ibqp = shca_cq_lookup_qp(cq, c.qp_num);

	spin_lock_irqsave(&cq->lock, flags);
	if (shca_cq_used(cq) >= r->entries) {
		err_event = !cq->overflow;
		cq->overflow = true;
		ret = -ENOSPC;
		goto unlock;
	}
	/* under the lock: stamps never go back in ring order */
	if (cq->timestamp)
		c.timestamp = ktime_get_ns();
	memcpy(shca_ring_slot(r, r->kidx), &c, sizeof(c));
	if (cq->kqp)
		cq->kqp[r->kidx & r->mask] = ibqp;
	r->kidx++;
	/* release: the CQE is visible before the index that covers it */
	smp_store_release(&r->ctrl->prod, r->kidx);
	fire = shca_cq_should_fire(cq, solicited);
	trace_shca_cqe(cq->ibcq.device, cq->cqn, r->kidx - 1, c.qp_num, c.wr_id,
		       c.opcode, c.status, c.byte_len, fire);
unlock:
	spin_unlock_irqrestore(&cq->lock, flags);

	if (fire)
		shca_cq_raise(cq, SHCA_CQ_EV_COMP);
	if (err_event)
		shca_cq_raise(cq, SHCA_CQ_EV_ERR);
	if (!ret)
		shca_stat_inc(to_sdev(cq->ibcq.device), SHCA_CNT_COMPLETIONS);
	return ret;
}

/**
 * shca_cq_clean - drop a kernel QP's completions from a kernel CQ
 * @cq: CQ; nothing is done for a process's CQ, whose provider cleans it
 * @qpn: the QP, moved to RESET or destroyed: it adds no completion any
 *	more
 *
 * Completions not polled yet would otherwise be read as those of the
 * QP's next life, or carry a pointer to a QP that no longer exists.  The
 * ones kept move toward the producer end; the consumer index moves past
 * the room freed.
 */
void shca_cq_clean(struct shca_cq *cq, u32 qpn)
{
	struct shca_ring *r = &cq->ring;
	unsigned long flags;
	u32 cons, i, freed = 0;
	struct shca_cqe *c;

	if (!READ_ONCE(cq->kqp))
		return;
	spin_lock_irqsave(&cq->lock, flags);
	cons = r->ctrl->cons;	/* kernel ring: written under cq->lock */
	for (i = r->kidx; i != cons; ) {
		c = shca_ring_slot(r, --i);
		if (c->qp_num == qpn) {
			freed++;
		} else if (freed) {
			memcpy(shca_ring_slot(r, i + freed), c, sizeof(*c));
			cq->kqp[(i + freed) & r->mask] = cq->kqp[i & r->mask];
		}
	}
	/* release: pairs with shca_cq_used() of the producer */
	smp_store_release(&r->ctrl->cons, cons + freed);
	spin_unlock_irqrestore(&cq->lock, flags);
}
