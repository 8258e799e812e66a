// SPDX-License-Identifier: GPL-2.0
/*
 * shca requester and completer.
 *
 * Send WQEs sit on their QP's list of the TX LLQ from fetch to completion.
 * The requester walks the list with the LLQ's peek pointer, building the
 * packets of one WQE after another; each WQE keeps its transmit history
 * (first/last PSN, the MTU it was segmented with).  Acknowledgements set
 * the ready bit of the WQEs they cover, and completion pops ready WQEs
 * from the head, so completions leave in order.  Retransmission resets
 * the peek pointer and rebuilds packets from the history, not from the
 * work queue.
 *
 * Every function here runs with qp->lock held.
 */
#include "shca.h"
#include "shca_hdr.h"
#include "shca_qp.h"
#include "shca_engine.h"

#define SHCA_ACK_REQ_EVERY	32

static bool shca_wqe_is_rd_atomic(const struct shca_send_wqe *wqe)
{
	return wqe->opcode == IB_WR_RDMA_READ ||
	       wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       wqe->opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

static bool shca_wqe_is_local(const struct shca_send_wqe *wqe)
{
	return wqe->opcode == IB_WR_REG_MR || wqe->opcode == IB_WR_LOCAL_INV ||
	       wqe->opcode == IB_WR_BIND_MW;
}

/**
 * shca_wqe_done - give a WQE its final status; it completes in order
 * @qp: QP
 * @wqe: WQE
 * @status: completion status
 */
void shca_wqe_done(struct shca_qp *qp, struct shca_send_wqe *wqe,
		   enum ib_wc_status status)
{
	struct shca_engine *eng = qp->sdev->eng;

	if (wqe->state == SHCA_WQE_DONE)
		return;
	if (wqe->sent_once && shca_wqe_is_rd_atomic(wqe) && qp->req.rd_atomic)
		qp->req.rd_atomic--;
	wqe->state = SHCA_WQE_DONE;
	wqe->status = status;
	spin_lock(&eng->tx_lock);
	shca_llq_set_ready(&eng->tx_llq, wqe->entry);
	spin_unlock(&eng->tx_lock);
}

static void shca_req_arm_timer(struct shca_qp *qp)
{
	if (!qp->req.timeout_ns || qp->req.rnr_wait)
		return;
	hrtimer_start(&qp->req.timer, ns_to_ktime(qp->req.timeout_ns),
		      HRTIMER_MODE_REL_SOFT);
}

static bool shca_req_outstanding(struct shca_qp *qp)
{
	return shca_psn_diff(qp->req.psn, qp->req.una_psn) > 0;
}

/* First packet of a WQE ever: write its transmit history record. */
static void shca_req_start_wqe(struct shca_qp *qp, struct shca_send_wqe *wqe)
{
	u32 mtu = shca_qp_mtu(qp);
	u32 npkts = 1;

	if (qp->type == IB_QPT_UD || qp->type == IB_QPT_GSI)
		mtu = max_t(u32, wqe->length, 1);
	else if (wqe->length && !shca_wqe_is_rd_atomic(wqe))
		npkts = DIV_ROUND_UP(wqe->length, mtu);
	else if (wqe->opcode == IB_WR_RDMA_READ && wqe->length)
		npkts = DIV_ROUND_UP(wqe->length, mtu);

	wqe->mtu = mtu;
	wqe->first_psn = qp->req.psn;
	wqe->last_psn = shca_psn_add(qp->req.psn, npkts - 1);
	wqe->sent_once = true;
	wqe->state = SHCA_WQE_SENDING;
	qp->req.psn = shca_psn_add(wqe->last_psn, 1);
	if (shca_wqe_is_rd_atomic(wqe))
		qp->req.rd_atomic++;
}

static u8 shca_send_opcode(const struct shca_send_wqe *wqe, bool first,
			   bool last)
{
	bool imm = wqe->opcode == IB_WR_SEND_WITH_IMM;
	bool inv = wqe->opcode == IB_WR_SEND_WITH_INV;

	if (first && last)
		return imm ? SHCA_OP_SEND_ONLY_WITH_IMMEDIATE :
		       inv ? SHCA_OP_SEND_ONLY_WITH_INVALIDATE :
		       SHCA_OP_SEND_ONLY;
	if (first)
		return SHCA_OP_SEND_FIRST;
	if (!last)
		return SHCA_OP_SEND_MIDDLE;
	return imm ? SHCA_OP_SEND_LAST_WITH_IMMEDIATE :
	       inv ? SHCA_OP_SEND_LAST_WITH_INVALIDATE : SHCA_OP_SEND_LAST;
}

static u8 shca_write_opcode(const struct shca_send_wqe *wqe, bool first,
			    bool last)
{
	bool imm = wqe->opcode == IB_WR_RDMA_WRITE_WITH_IMM;

	if (first && last)
		return imm ? SHCA_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE :
		       SHCA_OP_RDMA_WRITE_ONLY;
	if (first)
		return SHCA_OP_RDMA_WRITE_FIRST;
	if (!last)
		return SHCA_OP_RDMA_WRITE_MIDDLE;
	return imm ? SHCA_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE :
	       SHCA_OP_RDMA_WRITE_LAST;
}

static u8 shca_tr_base(const struct shca_qp *qp)
{
	switch (qp->type) {
	case IB_QPT_UC:
		return SHCA_OP_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return SHCA_OP_UD;
	default:
		return SHCA_OP_RC;
	}
}

/* Header fields of the packet of @wqe at byte offset @off. */
static void shca_req_fill_hdr(struct shca_qp *qp, struct shca_send_wqe *wqe,
			      struct shca_pkt_hdr *h, u32 off, u32 plen)
{
	bool first = off == 0;
	bool last = off + plen >= wqe->length;
	u8 op;

	switch (wqe->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		op = shca_write_opcode(wqe, first, last);
		if (first) {
			h->reth.va = wqe->u.rdma.va;
			h->reth.rkey = wqe->u.rdma.rkey;
			h->reth.dma_len = wqe->length;
		}
		break;
	case IB_WR_RDMA_READ:
		op = SHCA_OP_RDMA_READ_REQUEST;
		h->reth.va = wqe->u.rdma.va + off;
		h->reth.rkey = wqe->u.rdma.rkey;
		h->reth.dma_len = wqe->length - off;
		last = true;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		op = wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
		     SHCA_OP_COMPARE_SWAP : SHCA_OP_FETCH_ADD;
		h->atomic_eth.va = wqe->u.atomic.va;
		h->atomic_eth.rkey = wqe->u.atomic.rkey;
		h->atomic_eth.swap_add = wqe->opcode ==
			IB_WR_ATOMIC_CMP_AND_SWP ? wqe->u.atomic.swap :
			wqe->u.atomic.compare_add;
		h->atomic_eth.compare = wqe->u.atomic.compare_add;
		last = true;
		break;
	default:
		op = shca_send_opcode(wqe, first, last);
		break;
	}
	h->opcode = shca_tr_base(qp) | op;
	if (last) {
		h->imm = (__force __be32)wqe->ex;
		h->ieth.rkey = wqe->ex;
		h->solicited = !!(wqe->flags & SHCA_SQE_F_SOLICITED);
		h->ack_req = true;
	}
	if (qp->type == IB_QPT_UD || qp->type == IB_QPT_GSI) {
		h->dest_qpn = wqe->u.ud.remote_qpn;
		h->deth.qkey = (wqe->u.ud.remote_qkey & 0x80000000) ?
			       qp->attr.qkey : wqe->u.ud.remote_qkey;
		h->deth.src_qpn = qp->qpn;
	} else {
		h->dest_qpn = qp->attr.dest_qp_num;
	}
}

/*
 * Build and send the packet of the current WQE at cur_off / cur_psn.
 * Returns 1 when a packet went out (or was lost in transmission), a
 * negative errno when the WQE failed locally.
 */
static int shca_req_send_one(struct shca_qp *qp, struct shca_send_wqe *wqe)
{
	struct shca_req *req = &qp->req;
	struct shca_pkt_hdr h = { .psn = req->cur_psn };
	const struct shca_av *av = &qp->av;
	bool again = shca_psn_diff(req->cur_psn, req->sent_psn) < 0;
	struct sk_buff *skb;
	u32 plen = 0;
	u8 *payload;
	int ret;

	if (wqe->opcode != IB_WR_RDMA_READ && !shca_wqe_is_rd_atomic(wqe))
		plen = min(wqe->mtu, wqe->length - req->cur_off);
	shca_req_fill_hdr(qp, wqe, &h, req->cur_off, plen);
	if (shca_psn_diff(req->cur_psn, wqe->first_psn) %
	    SHCA_ACK_REQ_EVERY == SHCA_ACK_REQ_EVERY - 1)
		h.ack_req = true;
	if (qp->type == IB_QPT_UD || qp->type == IB_QPT_GSI)
		av = &wqe->u.ud.av;

	skb = shca_build_pkt(qp, av, &h, plen, &payload);
	if (!skb)
		return -ENOMEM;
	if (plen && wqe->flags & SHCA_SQE_F_INLINE) {
		memcpy(payload, wqe->inline_data + req->cur_off, plen);
	} else if (plen) {
		ret = shca_sgl_copy(qp->sdev, qp->pd, wqe->sge, wqe->num_sge,
				    req->cur_off, payload, NULL, 0, plen,
				    SHCA_FROM_MR);
		if (ret) {
			kfree_skb(skb);
			return ret;
		}
	}
	if (again)
		shca_stat_inc(qp->sdev, SHCA_CNT_RETRANSMIT_PKTS);
	shca_send_pkt(qp, av, skb);

	if (shca_wqe_is_rd_atomic(wqe)) {
		/* one request packet; its responses own the PSN range */
		req->cur_off = wqe->length;
		req->cur_psn = shca_psn_add(wqe->last_psn, 1);
	} else {
		req->cur_off += plen;
		req->cur_psn = shca_psn_add(req->cur_psn, 1);
	}
	if (shca_psn_diff(req->cur_psn, req->sent_psn) > 0)
		req->sent_psn = req->cur_psn;
	return 1;
}

/* Local work requests: they use no PSN and complete in order. */
static void shca_req_local(struct shca_qp *qp, struct shca_send_wqe *wqe)
{
	enum ib_wc_status status = IB_WC_SUCCESS;
	int ret;

	switch (wqe->opcode) {
	case IB_WR_REG_MR:
		ret = shca_mr_fast_reg(qp, wqe->u.reg.mr, wqe->u.reg.key,
				       wqe->u.reg.access);
		break;
	case IB_WR_LOCAL_INV:
		ret = shca_mr_invalidate(qp->sdev, qp->pd, wqe->ex, false);
		break;
	default:
		ret = shca_mw_bind(qp, wqe->u.bind.mw_rkey, wqe->u.bind.rkey,
				   wqe->u.bind.mr_lkey, wqe->u.bind.addr,
				   wqe->u.bind.length, wqe->u.bind.access);
		if (ret)
			status = IB_WC_MW_BIND_ERR;
		break;
	}
	if (ret && status == IB_WC_SUCCESS)
		status = IB_WC_LOC_PROT_ERR;
	shca_wqe_done(qp, wqe, status);
	if (status != IB_WC_SUCCESS)
		shca_qp_error(qp);
}

/* Move the transmit cursor to the next WQE on the list (peek). */
static struct shca_send_wqe *shca_req_next_wqe(struct shca_qp *qp)
{
	struct shca_engine *eng = qp->sdev->eng;
	struct shca_llq_payload p;
	struct shca_send_wqe *wqe;
	int ret;

	spin_lock(&eng->tx_lock);
	ret = shca_llq_peek(&eng->tx_llq, qp->qpn, &p);
	spin_unlock(&eng->tx_lock);
	if (ret < 0)
		return NULL;
	wqe = shca_qp_wqe(qp, (u32)p.w[0]);
	qp->req.cur = (u32)p.w[0];
	qp->req.cur_valid = true;
	qp->req.cur_off = 0;
	qp->req.cur_psn = wqe->sent_once ? wqe->first_psn : qp->req.psn;
	return wqe;
}

/* May @wqe start now (fence, READ/ATOMIC limit, window)? */
static bool shca_req_may_start(struct shca_qp *qp, struct shca_send_wqe *wqe)
{
	if (wqe->sent_once)
		return true;
	if ((wqe->flags & SHCA_SQE_F_FENCE) && qp->req.rd_atomic)
		return false;
	if (shca_wqe_is_rd_atomic(wqe) &&
	    qp->req.rd_atomic >= max_t(u32, qp->attr.max_rd_atomic, 1))
		return false;
	return true;
}

static bool shca_req_window_open(struct shca_qp *qp)
{
	return qp->type != IB_QPT_RC ||
	       shca_psn_diff(qp->req.cur_psn, qp->req.una_psn) <
	       SHCA_MAX_UNACKED_PKTS;
}

/*
 * Restart transmission from retry_psn: rewind the peek pointer and walk
 * to the WQE whose history holds that PSN.
 */
static void shca_req_rewind(struct shca_qp *qp)
{
	struct shca_engine *eng = qp->sdev->eng;
	struct shca_req *req = &qp->req;
	struct shca_send_wqe *wqe;
	u32 psn = req->retry_psn;

	req->need_retry = false;
	req->cur_valid = false;
	spin_lock(&eng->tx_lock);
	shca_llq_reset_peek(&eng->tx_llq, qp->qpn);
	spin_unlock(&eng->tx_lock);

	while ((wqe = shca_req_next_wqe(qp))) {
		if (!wqe->sent_once) {
			/* never sent: it starts from scratch */
			return;
		}
		if (wqe->state == SHCA_WQE_DONE ||
		    shca_psn_diff(wqe->last_psn, psn) < 0)
			continue;
		if (shca_psn_diff(psn, wqe->first_psn) > 0) {
			req->cur_psn = psn;
			req->cur_off = min(wqe->length,
					   shca_psn_diff(psn, wqe->first_psn) *
					   wqe->mtu);
		}
		wqe->state = SHCA_WQE_SENDING;
		return;
	}
	/* nothing sent holds that PSN: carry on with what comes next */
	req->cur_valid = false;
}

/**
 * shca_req_transmit - requester stage of the transmit pipeline
 * @qp: QP (caller must hold qp->lock)
 * @budget: most packets to send
 *
 * Return: packets sent.
 */
int shca_req_transmit(struct shca_qp *qp, int budget)
{
	struct shca_req *req = &qp->req;
	struct shca_send_wqe *wqe;
	int n = 0, ret;

	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD)
		return 0;
	shca_qp_fetch(qp);
	if (req->rnr_wait)
		return 0;
	if (req->need_retry)
		shca_req_rewind(qp);

	while (n < budget && qp->state == IB_QPS_RTS) {
		if (!req->cur_valid && !shca_req_next_wqe(qp))
			break;
		wqe = shca_qp_wqe(qp, req->cur);
		if (wqe->state == SHCA_WQE_DONE) {
			req->cur_valid = false;
			continue;
		}
		/*
		 * The cursor only meets a WQE it has sent completely after a
		 * rewind: go back N, send it again from its history.
		 */
		if (wqe->state == SHCA_WQE_SENT)
			wqe->state = SHCA_WQE_SENDING;
		if (shca_wqe_is_local(wqe)) {
			shca_req_local(qp, wqe);
			req->cur_valid = false;
			continue;
		}
		if (!shca_req_may_start(qp, wqe))
			break;
		if (!wqe->sent_once) {
			shca_req_start_wqe(qp, wqe);
			req->cur_psn = wqe->first_psn;
		}
		if (!shca_req_window_open(qp))
			break;
		ret = shca_req_send_one(qp, wqe);
		if (ret < 0) {
			shca_wqe_done(qp, wqe, IB_WC_LOC_PROT_ERR);
			shca_qp_error(qp);
			break;
		}
		n++;
		if (req->cur_off >= wqe->length) {
			req->cur_valid = false;
			if (qp->type == IB_QPT_RC)
				wqe->state = SHCA_WQE_SENT;
			else
				shca_wqe_done(qp, wqe, IB_WC_SUCCESS);
		}
	}
	if (qp->type == IB_QPT_RC && shca_req_outstanding(qp) &&
	    !hrtimer_active(&req->timer))
		shca_req_arm_timer(qp);
	shca_qp_complete(qp);
	return n;
}

/**
 * shca_req_has_work - anything the requester could send now
 * @qp: QP (caller must hold qp->lock)
 *
 * Return: true when new WQEs, an unfinished WQE or a retry are waiting.
 */
bool shca_req_has_work(struct shca_qp *qp)
{
	struct shca_engine *eng = qp->sdev->eng;
	struct shca_send_wqe *wqe;
	int pending;

	if (qp->state != IB_QPS_RTS || qp->req.rnr_wait)
		return false;
	if (qp->req.need_retry)
		return true;
	if (qp->req.cur_valid) {
		wqe = shca_qp_wqe(qp, qp->req.cur);
		return shca_req_may_start(qp, wqe) &&
		       shca_req_window_open(qp);
	}
	if (!shca_req_window_open(qp))
		return false;
	/* fetched WQEs the cursor has not reached, or unfetched ones */
	spin_lock(&eng->tx_lock);
	pending = shca_llq_peek_pending(&eng->tx_llq, qp->qpn);
	spin_unlock(&eng->tx_lock);
	if (pending > 0)
		return true;
	pending = shca_ring_pending(&qp->sq);
	return pending > (int)(qp->req.fetch - qp->req.comp);
}

/* ---- completer: acknowledgements and responses -------------------- */

/* Go back to @psn at the next transmit turn. */
static void shca_req_retry_from(struct shca_qp *qp, u32 psn)
{
	struct shca_req *req = &qp->req;

	/* several reasons before that turn: the earliest PSN wins */
	if (req->need_retry && shca_psn_diff(psn, req->retry_psn) >= 0)
		return;
	req->need_retry = true;
	req->retry_psn = psn;
}

/* Fail the QP's oldest outstanding WQE with @status and stop the QP. */
static void shca_req_fail(struct shca_qp *qp, enum ib_wc_status status)
{
	u32 i;

	for (i = qp->req.comp; i != qp->req.fetch; i++) {
		struct shca_send_wqe *wqe = shca_qp_wqe(qp, i);

		if (wqe->state != SHCA_WQE_DONE) {
			shca_wqe_done(qp, wqe, status);
			break;
		}
	}
	shca_qp_error(qp);
}

/* The peer made progress: the retry counts start again. */
static void shca_req_progress(struct shca_qp *qp)
{
	qp->req.retry = qp->attr.retry_cnt;
	qp->req.rnr_retry = qp->attr.rnr_retry;
	qp->req.retrying = false;
}

/*
 * The peer's answers show a loss (a sequence NAK, a gap in the READ
 * responses, an acknowledgement past a READ or ATOMIC whose response
 * never came): go back to @psn.  One retry is counted per episode; until
 * the peer makes progress again, further signs of the same episode
 * change nothing (a lost retransmission is left to the ACK timer).
 * Returns false when the retries ran out and the QP failed.
 */
static bool shca_req_lost(struct shca_qp *qp, u32 psn)
{
	struct shca_req *req = &qp->req;

	if (req->retrying)
		return true;
	if (req->retry-- <= 0) {
		shca_req_fail(qp, IB_WC_RETRY_EXC_ERR);
		return false;
	}
	req->retrying = true;
	shca_req_retry_from(qp, psn);
	return true;
}

/*
 * Everything up to and including @psn is acknowledged (@psn was sent:
 * shca_req_recv() checked), so every WQE ending there is complete, even
 * one a rewind has started to send again.  A READ or ATOMIC that the
 * acknowledgement passes without its (whole) response means the response
 * was lost: the acknowledgement stops where the response is missing and
 * the request goes out again.
 */
static void shca_req_ack_upto(struct shca_qp *qp, u32 psn)
{
	struct shca_req *req = &qp->req;
	bool lost = false;
	u32 i;

	for (i = req->comp; i != req->fetch; i++) {
		struct shca_send_wqe *wqe = shca_qp_wqe(qp, i);

		if (wqe->state == SHCA_WQE_DONE)
			continue;
		if (!wqe->sent_once || shca_psn_diff(psn, wqe->first_psn) < 0)
			break;
		if (shca_wqe_is_rd_atomic(wqe)) {
			if (shca_psn_diff(req->una_psn, wqe->first_psn) > 0)
				psn = shca_psn_add(req->una_psn, -1);
			else
				psn = shca_psn_add(wqe->first_psn, -1);
			lost = true;
			break;
		}
		if (shca_psn_diff(psn, wqe->last_psn) < 0)
			break;
		shca_wqe_done(qp, wqe, IB_WC_SUCCESS);
	}
	if (shca_psn_diff(psn, req->una_psn) >= 0) {
		req->una_psn = shca_psn_add(psn, 1);
		shca_req_progress(qp);
	}
	if (lost)
		shca_req_lost(qp, req->una_psn);
}

/*
 * The READ or ATOMIC WQE whose response PSN range holds @psn, or NULL.
 * WQEs before it may still wait for their ACK: the response acknowledges
 * them.
 */
static struct shca_send_wqe *shca_req_find_rd(struct shca_qp *qp, u32 psn)
{
	u32 i;

	for (i = qp->req.comp; i != qp->req.fetch; i++) {
		struct shca_send_wqe *wqe = shca_qp_wqe(qp, i);

		if (wqe->state == SHCA_WQE_DONE)
			continue;
		if (!wqe->sent_once || shca_psn_diff(psn, wqe->first_psn) < 0)
			return NULL;
		if (shca_psn_diff(psn, wqe->last_psn) <= 0)
			return shca_wqe_is_rd_atomic(wqe) ? wqe : NULL;
	}
	return NULL;
}

static void shca_req_rnr(struct shca_qp *qp, u32 psn, u8 timer)
{
	struct shca_req *req = &qp->req;

	shca_stat_inc(qp->sdev, SHCA_CNT_RNR_NAK_RCVD);
	if (!req->rnr_retry) {
		shca_req_fail(qp, IB_WC_RNR_RETRY_EXC_ERR);
		return;
	}
	if (req->rnr_retry != 7)
		req->rnr_retry--;
	shca_req_retry_from(qp, psn);
	/* the packets sent behind the refused one draw sequence NAKs */
	req->retrying = true;
	req->rnr_wait = true;
	hrtimer_start(&req->timer,
		      ns_to_ktime((u64)shca_rnr_timer_usec(timer) * 1000),
		      HRTIMER_MODE_REL_SOFT);
}

static void shca_req_nak(struct shca_qp *qp, u32 psn, u8 code)
{
	shca_stat_inc(qp->sdev, code == SHCA_NAK_PSN_SEQ_ERR ?
		      SHCA_CNT_NAK_SEQ_RCVD : SHCA_CNT_NAK_OTHER_RCVD);
	switch (code) {
	case SHCA_NAK_PSN_SEQ_ERR:
		/*
		 * One loss (or one RNR episode) makes the packets behind it
		 * draw sequence NAKs too: the retry counts once, until the
		 * peer makes progress again.
		 */
		if (shca_req_lost(qp, psn))
			shca_req_retry_from(qp, psn);
		return;
	case SHCA_NAK_REMOTE_ACCESS_ERR:
		shca_req_fail(qp, IB_WC_REM_ACCESS_ERR);
		return;
	case SHCA_NAK_REMOTE_OP_ERR:
		shca_req_fail(qp, IB_WC_REM_OP_ERR);
		return;
	default:
		shca_req_fail(qp, IB_WC_REM_INV_REQ_ERR);
		return;
	}
}

static void shca_req_aeth(struct shca_qp *qp, const struct shca_pkt_hdr *h)
{
	u8 syn = h->aeth.syndrome;

	switch (shca_aeth_type(syn)) {
	case SHCA_AETH_ACK:
		shca_stat_inc(qp->sdev, SHCA_CNT_ACK_RCVD);
		shca_req_ack_upto(qp, h->psn);
		break;
	case SHCA_AETH_RNR_NAK:
		shca_req_ack_upto(qp, shca_psn_add(h->psn, -1));
		if (qp->state != IB_QPS_ERR)
			shca_req_rnr(qp, h->psn, shca_aeth_value(syn));
		break;
	case SHCA_AETH_NAK:
		shca_req_ack_upto(qp, shca_psn_add(h->psn, -1));
		if (qp->state != IB_QPS_ERR)
			shca_req_nak(qp, h->psn, shca_aeth_value(syn));
		break;
	default:
		break;
	}
}

/* A READ response or ATOMIC acknowledgement. */
static void shca_req_response(struct shca_qp *qp, struct sk_buff *skb,
			      const struct shca_pkt_hdr *h, u32 hdr_len)
{
	const struct shca_opcode_info *oi = shca_opcode_info(h->opcode);
	struct shca_req *req = &qp->req;
	struct shca_send_wqe *wqe;
	u32 plen, off;
	int ret;

	wqe = shca_req_find_rd(qp, h->psn);
	if (!wqe) {
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_PSN);
		return;
	}
	/* responses to this WQE acknowledge every request before it */
	shca_req_ack_upto(qp, shca_psn_add(wqe->first_psn, -1));
	if (qp->state == IB_QPS_ERR)
		return;
	if (h->psn != req->una_psn) {
		/* duplicate, or a gap: responses before it were lost */
		if (shca_psn_diff(h->psn, req->una_psn) > 0)
			shca_req_lost(qp, req->una_psn);
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_PSN);
		return;
	}

	if (oi->flags & SHCA_OPF_ATOMIC) {
		if (wqe->opcode == IB_WR_RDMA_READ)
			goto bad;
		ret = shca_sgl_copy(qp->sdev, qp->pd, wqe->sge, wqe->num_sge,
				    0, (void *)&h->atomic_ack.orig, NULL, 0,
				    sizeof(u64), SHCA_TO_MR);
		if (ret)
			goto prot;
	} else {
		if (wqe->opcode != IB_WR_RDMA_READ)
			goto bad;
		plen = shca_payload_len(skb->len + SHCA_ICRC_LEN, hdr_len,
					h->pad_count);
		off = shca_psn_diff(h->psn, wqe->first_psn) * wqe->mtu;
		if (off + plen > wqe->length ||
		    (!(oi->flags & SHCA_OPF_LAST) && plen != wqe->mtu))
			goto bad;
		ret = shca_sgl_copy(qp->sdev, qp->pd, wqe->sge, wqe->num_sge,
				    off, NULL, skb, hdr_len, plen, SHCA_TO_MR);
		if (ret)
			goto prot;
	}
	req->una_psn = shca_psn_add(h->psn, 1);
	shca_req_progress(qp);
	if (h->psn == wqe->last_psn)
		shca_wqe_done(qp, wqe, IB_WC_SUCCESS);
	return;

bad:
	shca_req_fail(qp, IB_WC_BAD_RESP_ERR);
	return;
prot:
	shca_req_fail(qp, IB_WC_LOC_PROT_ERR);
}

/**
 * shca_req_recv - completer: a packet from the peer's responder
 * @qp: RC QP (caller must hold qp->lock)
 * @skb: packet, consumed
 * @h: parsed transport headers
 * @hdr_len: their length
 */
void shca_req_recv(struct shca_qp *qp, struct sk_buff *skb,
		   const struct shca_pkt_hdr *h, u32 hdr_len)
{
	const struct shca_opcode_info *oi = shca_opcode_info(h->opcode);
	struct shca_req *req = &qp->req;

	if (qp->type != IB_QPT_RC ||
	    (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD)) {
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_QP_STATE);
		goto out;
	}
	/* a PSN we never sent (or whose responses we never asked for) */
	if (shca_psn_diff(h->psn, req->sent_psn) >= 0) {
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_PSN);
		goto out;
	}

	if (oi->flags & (SHCA_OPF_READ | SHCA_OPF_ATOMIC))
		shca_req_response(qp, skb, h, hdr_len);
	else if ((h->opcode & 0x1f) == SHCA_OP_ACKNOWLEDGE)
		shca_req_aeth(qp, h);

	if (req->rnr_wait)
		goto done;
	if (shca_req_outstanding(qp))
		shca_req_arm_timer(qp);
	else
		hrtimer_try_to_cancel(&req->timer);
done:
	shca_qp_complete(qp);
out:
	kfree_skb(skb);
}

static enum hrtimer_restart shca_req_timer_fn(struct hrtimer *t)
{
	struct shca_qp *qp = container_of(t, struct shca_qp, req.timer);
	struct shca_req *req = &qp->req;
	bool kick = false;

	spin_lock(&qp->lock);
	if (req->rnr_wait) {
		req->rnr_wait = false;
		kick = true;
	} else if (qp->state == IB_QPS_RTS && shca_req_outstanding(qp)) {
		shca_stat_inc(qp->sdev, SHCA_CNT_TIMEOUTS);
		if (req->retry-- <= 0) {
			shca_req_fail(qp, IB_WC_RETRY_EXC_ERR);
		} else {
			shca_req_retry_from(qp, req->una_psn);
			kick = true;
		}
	}
	spin_unlock(&qp->lock);
	if (kick)
		shca_engine_schedule(qp);
	return HRTIMER_NORESTART;
}

/**
 * shca_req_timer_init - set up the ACK timeout / RNR timer of a QP
 * @qp: new QP
 */
void shca_req_timer_init(struct shca_qp *qp)
{
	hrtimer_init(&qp->req.timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	qp->req.timer.function = shca_req_timer_fn;
}

/**
 * shca_req_reset - requester back to its initial state (RESET, RTS entry)
 * @qp: QP (caller must hold qp->lock)
 */
void shca_req_reset(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;

	req->psn = qp->attr.sq_psn & 0xffffff;
	req->una_psn = req->psn;
	req->sent_psn = req->psn;
	req->cur_valid = false;
	req->rd_atomic = 0;
	req->need_retry = false;
	req->retrying = false;
	req->rnr_wait = false;
	req->retry = qp->attr.retry_cnt;
	req->rnr_retry = qp->attr.rnr_retry;
}
