// SPDX-License-Identifier: GPL-2.0
/*
 * shca queue pair verbs: create, modify (the QP state machine), query,
 * destroy, and the kernel's post_send and post_recv (a process posts into
 * its rings; its post_send without work requests is a doorbell).
 *
 * qp->sq_lock only serialises kernel post_send callers.
 */
#include <linux/vmalloc.h>
#include "shca.h"
#include "shca_ah.h"
#include "shca_cqe.h"
#include "shca_ctx.h"
#include "shca_dev.h"
#include "shca_drdma.h"
#include "shca_engine.h"
#include "shca_mcg.h"
#include "shca_obj.h"
#include "shca_qp.h"
#include "shca_qpc.h"
#include "shca_req.h"
#include "shca_resp.h"
#include "shca_ring.h"
#include "shca_rqe.h"
#include "shca_sendq.h"
#include "shca_wq.h"
#include "shca_comp.h"
#include "shca_resp_tx.h"
#include "shca_trace.h"

static int shca_qp_check_cap(struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;

	if (init->qp_type != IB_QPT_RC && init->qp_type != IB_QPT_UC &&
	    init->qp_type != IB_QPT_UD && init->qp_type != IB_QPT_GSI)
		return -EOPNOTSUPP;
	if (init->create_flags & ~IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK)
		return -EOPNOTSUPP;
	if (init->create_flags && init->qp_type != IB_QPT_UD)
		return -EINVAL;
	if (cap->max_send_wr > SHCA_MAX_QP_WR ||
	    cap->max_recv_wr > SHCA_MAX_QP_WR ||
	    cap->max_send_sge > SHCA_MAX_SGE ||
	    cap->max_recv_sge > SHCA_MAX_SGE ||
	    cap->max_inline_data > SHCA_MAX_INLINE)
		return -EINVAL;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	return 0;
}

/*
 * A QP number from the engine's, which the functions on it share; a
 * function's GSI QP is QP 1 (shca_qp_idx()).
 */
static int shca_qp_alloc_qpn(struct shca_qp *qp, struct shca_dev *sdev)
{
	struct shca_engine *eng = sdev->eng;
	struct xa_limit lim = XA_LIMIT(SHCA_FIRST_QPN, eng->nqp - 1);
	int ret;

	qp->serial = atomic64_inc_return(&eng->qp_serial);
	if (qp->type == IB_QPT_GSI) {
		qp->qpn = 1;
		qp->idx = shca_qp_idx(sdev, 1);
		return xa_insert_bh(&eng->qp_xa, qp->idx, NULL, GFP_KERNEL);
	}
	ret = xa_alloc_cyclic_bh(&eng->qp_xa, &qp->qpn, NULL, lim,
				 &eng->qpn_next, GFP_KERNEL);
	qp->idx = qp->qpn;
	/* every QP number taken: out of QPs, like any other resource */
	if (ret == -EBUSY)
		return -ENOMEM;
	return ret < 0 ? ret : 0;
}

static int shca_qp_alloc_queues(struct shca_qp *qp, struct ib_udata *udata,
				struct ib_qp_init_attr *init,
				struct shca_create_qp_resp *resp)
{
	struct shca_ucontext *suc = rdma_udata_to_drv_context(udata,
					struct shca_ucontext, ibuc);
	struct ib_ucontext *uctx = suc ? &suc->ibuc : NULL;
	struct ib_qp_cap *cap = &init->cap;
	u32 words, stride;
	int ret;

	qp->max_send_sge = max_t(u32, cap->max_send_sge, 1);
	qp->max_recv_sge = max_t(u32, cap->max_recv_sge, 1);
	qp->max_inline = cap->max_inline_data;
	words = max_t(u32, qp->max_send_sge,
		      DIV_ROUND_UP(qp->max_inline, sizeof(struct shca_sge)));
	stride = sizeof(struct shca_sqe) + words * sizeof(struct shca_sge);
	ret = shca_ring_init(&qp->sq, uctx, max_t(u32, cap->max_send_wr, 1),
			     stride, &resp->sq);
	if (ret)
		return ret;
	if (!qp->srq) {
		stride = sizeof(struct shca_rqe) +
			 qp->max_recv_sge * sizeof(struct shca_sge);
		ret = shca_ring_init(&qp->rq, uctx,
				     max_t(u32, cap->max_recv_wr, 1), stride,
				     &resp->rq);
		if (ret)
			goto err_sq;
	}
	qp->wqe_stride = ALIGN(sizeof(struct shca_send_wqe) +
			       words * sizeof(struct shca_sge), 8);
	qp->wqe = kvcalloc(qp->sq.entries, qp->wqe_stride,
			   uctx ? GFP_KERNEL_ACCOUNT : GFP_KERNEL);
	qp->resp.rwqe = kzalloc(sizeof(*qp->resp.rwqe), GFP_KERNEL);
	if (!qp->wqe || !qp->resp.rwqe) {
		ret = -ENOMEM;
		goto err_rq;
	}
	ret = shca_req_hist_alloc(qp);
	if (ret)
		goto err_rq;
	cap->max_send_wr = qp->sq.entries;
	cap->max_send_sge = qp->max_send_sge;
	cap->max_inline_data = qp->max_inline;
	cap->max_recv_wr = qp->srq ? 0 : qp->rq.entries;
	cap->max_recv_sge = qp->srq ? 0 : qp->max_recv_sge;
	return 0;

err_rq:
	kvfree(qp->wqe);
	kfree(qp->resp.rwqe);
	if (!qp->srq)
		shca_ring_destroy(&qp->rq);
err_sq:
	shca_ring_destroy(&qp->sq);
	return ret;
}

static void shca_qp_free_queues(struct shca_qp *qp)
{
	shca_req_hist_free(qp);
	kvfree(qp->wqe);
	kfree(qp->resp.rwqe);
	if (!qp->srq)
		shca_ring_destroy(&qp->rq);
	shca_ring_destroy(&qp->sq);
}

/**
 * shca_create_qp - create an RC, UC, UD or GSI queue pair
 * @ibqp: the RDMA core's QP, allocated by the core
 * @init: type, CQs, SRQ and capacities; no create flags are supported
 * @udata: for a process, receives struct shca_create_qp_resp: the send
 *	and receive rings' mmap keys and sizes and the QP number
 *
 * The QP starts in RESET.  Its number comes from the range the max_qp
 * module parameter allows, cyclically, so a number is not reused at once;
 * the GSI QP is number 1.  Process context.
 *
 * Return: 0, -EOPNOTSUPP for another type or create flags, -EINVAL for
 * capacities past the device limits, a missing CQ or driver input, -ENOMEM when every
 * QP number is taken or memory runs out, or -EFAULT.
 */
int shca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibqp->device);
	struct shca_qp *qp = to_sqp(ibqp);
	struct shca_create_qp_resp resp = {};
	int ret;

	ret = shca_qp_check_cap(init);
	if (!ret)
		ret = shca_udata_check_in(udata);
	if (ret)
		return ret;
	qp->sdev = sdev;
	qp->type = init->qp_type;
	qp->user = !!udata;
	qp->pd = to_spd(ibqp->pd);
	qp->scq = to_scq(init->send_cq);
	qp->rcq = to_scq(init->recv_cq);
	qp->srq = init->srq ? to_ssrq(init->srq) : NULL;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->mc_block_self = !!(init->create_flags &
			       IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK);
	INIT_LIST_HEAD(&qp->mc_list);
	INIT_LIST_HEAD(&qp->dm_wait);
	qp->state = IB_QPS_RESET;
	spin_lock_init(&qp->lock);
	spin_lock_init(&qp->rq_lock);
	spin_lock_init(&qp->sq_lock);
	refcount_set(&qp->ref, 1);
	init_completion(&qp->done);
	INIT_LIST_HEAD(&qp->sched_node);
	shca_txc_qp_init(qp, rdma_udata_to_drv_context(udata,
						       struct shca_ucontext,
						       ibuc));
	shca_req_timer_init(qp);
	shca_rkey_set_init(qp);
	shca_resp_init(qp);
	shca_qp_events_init(qp);

	ret = shca_qp_alloc_qpn(qp, sdev);
	if (ret)
		return ret;
	ret = shca_qp_alloc_queues(qp, udata, init, &resp);
	if (ret)
		goto err_qpn;
	ret = dst_cache_init(&qp->route, GFP_KERNEL);
	if (ret)
		goto err_queues;
	shca_db_init(qp);
	if (udata) {
		resp.qpn = qp->qpn;
		ret = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (ret)
			goto err_route;
	}
	qp->ibqp.qp_num = qp->qpn;
	if (qp->type == IB_QPT_RC || qp->type == IB_QPT_UC)
		shca_rkey_set_join(qp);
	xa_store_bh(&sdev->eng->qp_xa, qp->idx, qp, GFP_KERNEL);
	shca_obj_get(SHCA_OBJ_QP);
	return 0;

err_route:
	dst_cache_destroy(&qp->route);
err_queues:
	shca_qp_free_queues(qp);
err_qpn:
	xa_erase_bh(&sdev->eng->qp_xa, qp->idx);
	return ret;
}

/*
 * A kernel QP's completions still in its CQs go with a reset or a
 * destroy (a process's provider cleans its own CQs).
 */
static void shca_qp_clean_cqs(struct shca_qp *qp)
{
	shca_cq_clean(qp->scq, qp->qpn);
	if (qp->rcq != qp->scq)
		shca_cq_clean(qp->rcq, qp->qpn);
}

/* Empty the QP: no completions (RESET). Caller must hold qp->lock. */
static void shca_qp_reset(struct shca_qp *qp)
{
	struct shca_engine *eng = qp->sdev->eng;
	int pending;

	lockdep_assert_held(&qp->lock);
	/*
	 * Routes cached for the old peer are invalid from now on (no ACK
	 * is being sent, which could cache one again: shca_modify_qp()
	 * waited), so that the next INIT->RTR need not invalidate them.
	 */
	dst_cache_reset(&qp->route);
	spin_lock(&eng->tx_lock);
	shca_llq_reclaim(&eng->tx_llq, qp->idx, NULL, NULL);
	spin_unlock(&eng->tx_lock);
	/* the reclaimed WQEs give their transmit credits back */
	shca_txc_uncharge(qp, qp->req.fetch - qp->req.comp);
	hrtimer_try_to_cancel(&qp->req.timer);
	pending = shca_ring_pending(&qp->sq);
	if (pending > 0)
		shca_ring_consume(&qp->sq, pending);
	qp->req.comp = qp->sq.kidx;
	qp->req.fetch = qp->sq.kidx;
	spin_lock(&qp->rq_lock);
	if (!qp->srq && qp->rq.entries) {
		pending = shca_ring_pending(&qp->rq);
		if (pending > 0)
			shca_ring_consume(&qp->rq, pending);
	}
	spin_unlock(&qp->rq_lock);
	shca_ring_set_flags(&qp->sq, 0);
	shca_ring_set_flags(&qp->rq, 0);
	shca_db_reset(qp);
	shca_req_reset(qp);
	shca_resp_reset(qp);
	shca_qp_clean_cqs(qp);
}

static int shca_qp_check_attr(struct shca_qp *qp, struct ib_qp_attr *attr,
			      int mask)
{
	enum ib_qp_state cur = qp->state;
	enum ib_qp_state next = mask & IB_QP_STATE ? attr->qp_state : cur;
	int tmask = mask;

	/*
	 * cur_qp_state is the state the caller believes the QP is in.  The
	 * transition is checked from the real one, and a belief that is not
	 * the real state is refused (as an HCA's firmware would): taken on
	 * trust, it let a QP in RESET, INIT or ERROR claim SQD and go to RTS
	 * without any of the transitions (and resets) between.
	 */
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur)
		return -EINVAL;

	/*
	 * Beyond IBA: an RC or UC QP in RTS or SQD may change its path MTU.
	 * New messages are cut with the new one; messages already sent keep
	 * theirs when retransmitted (the transmit history records it), and
	 * the responder accepts both (Documentation/retransmission.md).
	 */
	if ((mask & IB_QP_PATH_MTU) && cur == next &&
	    (cur == IB_QPS_RTS || cur == IB_QPS_SQD) &&
	    (qp->type == IB_QPT_RC || qp->type == IB_QPT_UC))
		tmask &= ~IB_QP_PATH_MTU;
	if (!ib_modify_qp_is_ok(cur, next, qp->type, tmask))
		return -EINVAL;
	if (mask & IB_QP_PORT && attr->port_num != 1)
		return -EINVAL;
	if (mask & IB_QP_PKEY_INDEX && attr->pkey_index >= SHCA_PKEY_TBL_LEN)
		return -EINVAL;
	if (mask & IB_QP_PATH_MTU &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC &&
	    attr->max_rd_atomic > SHCA_MAX_RD_ATOMIC)
		return -EINVAL;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC &&
	    attr->max_dest_rd_atomic > SHCA_MAX_RD_ATOMIC)
		return -EINVAL;
	if (mask & IB_QP_TIMEOUT && attr->timeout > 31)
		return -EINVAL;
	if (mask & IB_QP_RETRY_CNT && attr->retry_cnt > 7)
		return -EINVAL;
	if (mask & IB_QP_RNR_RETRY && attr->rnr_retry > 7)
		return -EINVAL;
	if (mask & IB_QP_MIN_RNR_TIMER && attr->min_rnr_timer > 31)
		return -EINVAL;
	return 0;
}

/* Copy the attributes named by @mask. Caller must hold qp->lock. */
static void shca_qp_set_attr(struct shca_qp *qp, struct ib_qp_attr *attr,
			     int mask)
{
	struct ib_qp_attr *a = &qp->attr;

	lockdep_assert_held(&qp->lock);
	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_PATH_MTU) {
		a->path_mtu = attr->path_mtu;
		qp->resp.mtu_seen |= 1U << attr->path_mtu;
	}
	if (mask & IB_QP_TIMEOUT) {
		a->timeout = attr->timeout;
		qp->req.timeout_ns = attr->timeout ?
				     4096ULL << attr->timeout : 0;
	}
	if (mask & IB_QP_RETRY_CNT) {
		a->retry_cnt = attr->retry_cnt;
		qp->req.retry = attr->retry_cnt;
	}
	if (mask & IB_QP_RNR_RETRY) {
		a->rnr_retry = attr->rnr_retry;
		qp->req.rnr_retry = attr->rnr_retry;
	}
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn & 0xffffff;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn & 0xffffff;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num & 0xffffff;
	if (mask & IB_QP_PATH_MIG_STATE)
		a->path_mig_state = attr->path_mig_state;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
}

static void shca_qp_set_state(struct shca_qp *qp, enum ib_qp_state next)
{
	enum ib_qp_state cur = qp->state;

	/* a move to ERR is traced by shca_qp_error(), if it happens */
	if (next != IB_QPS_ERR)
		trace_shca_qp_state(&qp->sdev->ibdev, qp->qpn, cur, next);
	switch (next) {
	case IB_QPS_RESET:
		qp->state = next;
		shca_qp_reset(qp);
		break;
	case IB_QPS_RTR:
		if (cur == IB_QPS_INIT)
			shca_resp_reset(qp);
		qp->state = next;
		break;
	case IB_QPS_RTS:
		if (cur == IB_QPS_RTR)
			shca_req_reset(qp);
		qp->state = next;
		break;
	case IB_QPS_ERR:
		shca_qp_error(qp);
		break;
	default:
		qp->state = next;
		break;
	}
}

/**
 * shca_modify_qp - change a QP's attributes and move it through the state
 * machine
 * @ibqp: the QP
 * @attr: the new values
 * @mask: which of them (IB_QP_*)
 * @udata: the process's, or NULL (carries nothing)
 *
 * The whole change is checked first under qp->lock (shca_qp_check_attr():
 * the transition, and each attribute against the state and the limits)
 * and applied only when all of it is valid.  A new path (address vector
 * or destination QP) first waits, spinning under qp->lock, until an ACK
 * the responder is sending on the old one is out.  A QP in RTS after the
 * call is scheduled, so work posted before it got there is sent.
 *
 * Return: 0, -EOPNOTSUPP for unknown mask bits, or -EINVAL for an
 * invalid transition, attribute or address, or driver input.
 */
int shca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		   int mask, struct ib_udata *udata)
{
	struct shca_qp *qp = to_sqp(ibqp);
	struct shca_av av;
	int ret;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	ret = shca_udata_check_in(udata);
	if (ret)
		return ret;
	if (mask & IB_QP_AV) {
		ret = shca_av_from_attr(qp->sdev, &av, &attr->ah_attr);
		if (ret)
			return ret;
	}
	spin_lock_bh(&qp->lock);
	/* may drop the lock: the state is checked after it */
	if ((mask & (IB_QP_AV | IB_QP_DEST_QPN)) ||
	    ((mask & IB_QP_STATE) && attr->qp_state == IB_QPS_RESET))
		shca_resp_ack_wait(qp);
	ret = shca_qp_check_attr(qp, attr, mask);
	if (ret)
		goto out;
	if (mask & IB_QP_AV) {
		qp->av = av;
		/*
		 * A reset makes the cache miss on every packet sent in the
		 * same jiffy (dst_cache_get()), a whole first burst of a new
		 * connection.  A QP in INIT has sent nothing since its cache
		 * was created or reset with the QP, so it has nothing to drop.
		 */
		if (qp->state != IB_QPS_INIT)
			dst_cache_reset(&qp->route);
	}
	shca_qp_set_attr(qp, attr, mask);
	if (mask & IB_QP_STATE)
		shca_qp_set_state(qp, attr->qp_state);
out:
	spin_unlock_bh(&qp->lock);
	if (!ret && qp->state == IB_QPS_RTS)
		shca_engine_schedule(qp);
	return ret;
}

/**
 * shca_query_qp - report a QP's attributes and creation parameters
 * @ibqp: the QP
 * @attr: its current attributes and state
 * @mask: ignored: every attribute is reported
 * @init: what it was created with, its capacities as allocated (ring
 *	sizes rounded up to powers of two)
 *
 * Return: 0.
 */
int shca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		  int mask, struct ib_qp_init_attr *init)
{
	struct shca_qp *qp = to_sqp(ibqp);

	spin_lock_bh(&qp->lock);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->sq_draining = 0;
	spin_unlock_bh(&qp->lock);
	attr->cap.max_send_wr = qp->sq.entries;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_inline_data = qp->max_inline;
	attr->cap.max_recv_wr = qp->srq ? 0 : qp->rq.entries;
	attr->cap.max_recv_sge = qp->srq ? 0 : qp->max_recv_sge;
	if (qp->type == IB_QPT_RC || qp->type == IB_QPT_UC)
		shca_av_to_attr(qp->sdev, &qp->av, &attr->ah_attr);

	memset(init, 0, sizeof(*init));
	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
			    IB_SIGNAL_REQ_WR;
	init->qp_type = qp->type;
	init->port_num = 1;
	return 0;
}

/**
 * shca_destroy_qp - destroy a QP
 * @ibqp: the QP
 * @udata: the process's, or NULL
 *
 * The QP leaves its multicast groups and stops being found by its
 * number first; a process's UD QP then sends what it posted
 * (shca_engine_send_posted()); then it is taken off
 * the scheduler and the doorbell poll list, and the call waits until the
 * last engine context holding a reference is done with it, before its
 * timers, R_Key slots, queued packets and a kernel QP's completions in
 * its CQs go.  Sleeps.
 *
 * Return: 0.
 */
int shca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct shca_qp *qp = to_sqp(ibqp);
	struct shca_dev *sdev = qp->sdev;

	shca_mcg_detach_all(qp);
	xa_erase_bh(&sdev->eng->qp_xa, qp->idx);
	shca_engine_send_posted(qp);
	spin_lock_bh(&qp->lock);
	qp->state = IB_QPS_RESET;
	spin_unlock_bh(&qp->lock);
	shca_drdma_unwait(qp);
	shca_txc_qp_gone(qp);
	shca_engine_unschedule(qp);
	shca_db_forget(qp);
	hrtimer_cancel(&qp->req.timer);
	shca_qp_events_stop(qp);
	shca_qp_put(qp);
	wait_for_completion(&qp->done);
	/* nobody can reach the QP any more */
	hrtimer_cancel(&qp->req.timer);
	hrtimer_cancel(&qp->resp.held_timer);
	shca_rkey_set_leave(qp);
	shca_engine_drop_qp(sdev->eng, qp->idx);
	spin_lock_bh(&sdev->eng->tx_lock);
	shca_llq_reclaim(&sdev->eng->tx_llq, qp->idx, NULL, NULL);
	spin_unlock_bh(&sdev->eng->tx_lock);
	shca_txc_uncharge(qp, qp->req.fetch - qp->req.comp);
	shca_qp_clean_cqs(qp);
	shca_cq_events_flush(qp->scq);
	if (qp->rcq != qp->scq)
		shca_cq_events_flush(qp->rcq);
	shca_qp_free_queues(qp);
	dst_cache_destroy(&qp->route);
	shca_obj_put(SHCA_OBJ_QP);
	return 0;
}

/**
 * shca_attach_mcast - attach a UD QP to a multicast group
 * @ibqp: the QP (the RDMA core checked it is UD and @gid is multicast)
 * @gid: the group
 * @lid: unused on RoCE
 *
 * Return: 0 or the error of shca_mcg_attach().
 */
int shca_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct shca_qp *qp = to_sqp(ibqp);

	if (qp->type != IB_QPT_UD)
		return -EINVAL;
	return shca_mcg_attach(qp, gid->raw);
}

/**
 * shca_detach_mcast - detach a QP from a multicast group
 * @ibqp: the QP
 * @gid: the group
 * @lid: unused on RoCE
 *
 * Return: 0 or the error of shca_mcg_detach().
 */
int shca_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	return shca_mcg_detach(to_sqp(ibqp), gid->raw);
}

/* ---- kernel post_send / post_recv ------------------------------------ */

/* the send flags a kernel work request may carry (the SQE's bit values) */
#define SHCA_KERNEL_SEND_FLAGS	(IB_SEND_FENCE | IB_SEND_SIGNALED | \
				 IB_SEND_SOLICITED | IB_SEND_INLINE)

static int shca_sqe_from_wr(struct shca_qp *qp, const struct ib_send_wr *wr,
			    struct shca_sqe *sqe, u8 *slot)
{
	struct shca_sge *sge = (struct shca_sge *)(slot + sizeof(*sqe));
	u32 room = qp->sq.stride - sizeof(*sqe);
	u32 i, len = 0;

	if (wr->send_flags & ~SHCA_KERNEL_SEND_FLAGS)
		return -EINVAL;
	/* IBA 1.5's FLUSH and ATOMIC WRITE: user QPs only (no kernel API) */
	if ((u32)wr->opcode == SHCA_WR_FLUSH ||
	    (u32)wr->opcode == SHCA_WR_ATOMIC_WRITE)
		return -EINVAL;
	sqe->wr_id = wr->wr_id;
	sqe->opcode = wr->opcode;
	sqe->flags = wr->send_flags;
	if (wr->opcode == IB_WR_SEND_WITH_INV || wr->opcode == IB_WR_LOCAL_INV)
		sqe->ex = wr->ex.invalidate_rkey;
	else if (wr->opcode == IB_WR_SEND_WITH_IMM ||
		 wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
		sqe->ex = (__force u32)wr->ex.imm_data;
	if (wr->send_flags & IB_SEND_INLINE) {
		for (i = 0; i < wr->num_sge; i++) {
			if (len + wr->sg_list[i].length > min(room,
							      qp->max_inline))
				return -ENOMEM;
			memcpy(slot + sizeof(*sqe) + len,
			       (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		sqe->inline_len = len;
	} else {
		if (wr->num_sge > qp->max_send_sge)
			return -EINVAL;
		sqe->num_sge = wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
	}
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		sqe->u.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		sqe->u.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		sqe->u.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		sqe->u.atomic.compare_add = atomic_wr(wr)->compare_add;
		sqe->u.atomic.swap = atomic_wr(wr)->swap;
		sqe->u.atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_REG_MR:
		memcpy(sqe->u.raw, &reg_wr(wr)->mr, sizeof(void *));
		memcpy(sqe->u.raw + 8, &reg_wr(wr)->key, sizeof(u32));
		memcpy(sqe->u.raw + 12, &reg_wr(wr)->access, sizeof(int));
		break;
	default:
		break;
	}
	if (qp->type == IB_QPT_UD || qp->type == IB_QPT_GSI) {
		sqe->u.ud.ah = container_of(ud_wr(wr)->ah, struct shca_ah,
					    ibah)->handle;
		sqe->u.ud.remote_qpn = ud_wr(wr)->remote_qpn;
		sqe->u.ud.remote_qkey = ud_wr(wr)->remote_qkey;
	}
	return 0;
}

/*
 * Write a kernel QP's work requests into its send ring; *@staged: where
 * the post is to be sent from (shca_kpost_pick(), which sees how many
 * WQEs are not completed yet and how many SENDs the QP has received).
 */
static int shca_post_send_kernel(struct shca_qp *qp,
				 const struct ib_send_wr *wr,
				 const struct ib_send_wr **bad_wr,
				 bool *staged)
{
	struct shca_ring *r = &qp->sq;
	unsigned long flags;
	u32 prod, first;
	int ret = 0;

	spin_lock_irqsave(&qp->sq_lock, flags);
	prod = r->ctrl->prod;
	first = prod;
	/* a heuristic's readings: a stale count costs one wrong choice */
	*staged = shca_kpost_pick(&qp->kpost, first - READ_ONCE(r->ctrl->cons),
				  READ_ONCE(qp->resp.sends));
	for (; wr; wr = wr->next) {
		struct shca_sqe sqe = {};
		u8 *slot;

		if (prod - READ_ONCE(r->ctrl->cons) >= r->entries) {
			ret = -ENOMEM;
			break;
		}
		slot = shca_ring_slot(r, prod);
		ret = shca_sqe_from_wr(qp, wr, &sqe, slot);
		if (ret)
			break;
		memcpy(slot, &sqe, sizeof(sqe));
		prod++;
	}
	/* the SQEs are written before the fetch stage can see them */
	smp_store_release(&r->ctrl->prod, prod);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	trace_shca_post_send(&qp->sdev->ibdev, qp->qpn, prod, prod - first);
	if (ret)
		*bad_wr = wr;
	return ret;
}

/**
 * shca_post_send - post send work requests, or a process's doorbell
 * @ibqp: the QP
 * @wr: the kernel's chain of work requests; for a process's QP, none:
 *	its WQEs are already in its ring and the call is the doorbell
 * @bad_wr: receives the first request not posted
 *
 * A kernel QP's requests are written into its send ring, then sent from
 * the call for a lone request, else by the transmit stage (a probe, or a
 * poster that runs ahead of its requests: shca_kpost.h; a caller with
 * IRQs off always leaves them to the stage; shca_engine_post_kernel());
 * in the ERROR state they are flushed with completions in error.  Only
 * the state, the send flags, the SGE count and the inline length are
 * checked here; the rest is checked when the engine fetches the WQE, and
 * a bad one then completes in error and moves the QP to ERROR.  A
 * process's doorbell is served in the call where it can be
 * (shca_engine_post()).
 *
 * Return: 0, -EINVAL before RTS (RESET, INIT, RTR, as rdma_rxe), for a
 * send flag other than fence, signaled, solicited and inline, or for too
 * many SGEs, or -ENOMEM when the ring is full or inline data does not
 * fit.
 */
int shca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct shca_qp *qp = to_sqp(ibqp);
	bool staged = false;
	int ret = 0;

	/* read once: modify_qp may change it, and sends wait for RTS */
	switch (READ_ONCE(qp->state)) {
	case IB_QPS_RESET:
	case IB_QPS_INIT:
	case IB_QPS_RTR:
		*bad_wr = wr;
		return -EINVAL;
	default:
		break;
	}
	/* a user QP's post_send is its doorbell: the WQEs are in the ring */
	if (!qp->user && wr)
		ret = shca_post_send_kernel(qp, wr, bad_wr, &staged);

	if (qp->user) {
		shca_engine_post(qp);
		return ret;
	}
	/* sent here for a lone request, else by the transmit stage */
	shca_engine_post_kernel(qp, staged);
	return ret;
}

/**
 * shca_post_recv - post receive work requests (kernel QPs)
 * @ibqp: the QP, which must not use an SRQ
 * @wr: the chain of requests
 * @bad_wr: receives the first request not posted
 *
 * A process posts into its receive ring itself; its call (without work
 * requests) only flushes the ring when the QP is in ERROR.
 *
 * Return: 0, -EINVAL in RESET (as rdma_rxe), for a QP with an SRQ or
 * too many SGEs, or -ENOMEM when the ring is full.
 */
int shca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct shca_qp *qp = to_sqp(ibqp);
	struct shca_ring *r = &qp->rq;
	unsigned long flags;
	int ret = 0;
	u32 prod, i;

	if (qp->srq || READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (!qp->user && wr) {
		spin_lock_irqsave(&qp->rq_lock, flags);
		prod = r->ctrl->prod;
		for (; wr; wr = wr->next) {
			u8 *slot = shca_ring_slot(r, prod);
			struct shca_rqe *rqe = (struct shca_rqe *)slot;
			struct shca_sge *sge = (struct shca_sge *)(rqe + 1);

			if (prod - r->kidx >= r->entries ||
			    wr->num_sge > qp->max_recv_sge) {
				ret = wr->num_sge > qp->max_recv_sge ?
				      -EINVAL : -ENOMEM;
				*bad_wr = wr;
				break;
			}
			rqe->wr_id = wr->wr_id;
			rqe->num_sge = wr->num_sge;
			for (i = 0; i < wr->num_sge; i++) {
				sge[i].addr = wr->sg_list[i].addr;
				sge[i].length = wr->sg_list[i].length;
				sge[i].lkey = wr->sg_list[i].lkey;
			}
			prod++;
		}
		/* the RQEs are written before the responder can see them */
		smp_store_release(&r->ctrl->prod, prod);
		spin_unlock_irqrestore(&qp->rq_lock, flags);
	}
	spin_lock_irqsave(&qp->lock, flags);
	if (qp->state == IB_QPS_ERR)
		shca_rq_flush(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	return ret;
}
