// SPDX-License-Identifier: GPL-2.0
/*
 * shca requester and completer.
 *
 * Send WQEs sit on their QP's list of the TX LLQ from fetch to completion;
 * the LLQ's peek pointer hands each new WQE to the requester once.  When
 * the requester builds a message's first packet it pushes a record on the
 * QP's transmit history (seed 004, shca_txhist.c): WQE index, opcode,
 * first and last PSN, MSN, the segment size (path MTU) in effect, how far
 * the first transmission got, whether a completion is owed.
 *
 * The transmit cursor is a position in the history (record, PSN).  Every
 * packet is built from a record: its PSN, byte offset, length and segment
 * size come from the record, only the data and the addresses from the
 * WQE's kernel copy.  So a NAK or an ACK timeout replays by moving the
 * cursor back to the record holding the lost PSN and walking forward,
 * with each message cut as it was first sent even if the path MTU has
 * changed since; packets past a record's first-transmission frontier are
 * new, those before it are retransmissions.
 *
 * Acknowledgements retire records from the oldest, in PSN order; each
 * retired record gives its WQE its final status (the TX LLQ ready bit),
 * and completion pops ready WQEs from the head of the LLQ list, so
 * completions leave in order.  A READ or ATOMIC record retires only with
 * its response; an ACK that passes one whose response is missing means
 * the response was lost (implicit NAK): replay from it.
 *
 * UC and UD messages get records too (the same packet builder), which
 * retire as soon as their last packet is built.
 *
 * Every function here runs with qp->lock held.
 */
#include "shca.h"
#include "shca_hdr.h"
#include "shca_qp.h"
#include "shca_engine.h"

#define SHCA_ACK_REQ_EVERY	32	/* a power of 2 */
#define SHCA_RETIRE_BATCH	8

static bool shca_req_ack_wanted(struct shca_qp *qp,
				const struct shca_txhist_rec *rec,
				const struct shca_txhist_pos *pos);

static bool shca_op_is_rd_atomic(u8 opcode)
{
	return opcode == IB_WR_RDMA_READ ||
	       opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/* RTS or SQD: messages in flight still make progress and recover. */
static bool shca_req_live(const struct shca_qp *qp)
{
	return qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD;
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
	wqe->state = SHCA_WQE_DONE;
	wqe->status = status;
	spin_lock(&eng->tx_lock);
	shca_llq_set_ready(&eng->tx_llq, wqe->entry);
	spin_unlock(&eng->tx_lock);
}

/* ---- the transmit history ------------------------------------------ */

/**
 * shca_req_hist_alloc - allocate a new QP's transmit history
 * @qp: QP whose send ring is set up
 *
 * Return: 0 or -ENOMEM.
 */
int shca_req_hist_alloc(struct shca_qp *qp)
{
	u32 cap = min_t(u32, max_t(u32, qp->sq.entries, 1), SHCA_TXHIST_DEPTH);

	qp->req.hist_mem = kvcalloc(cap, sizeof(*qp->req.hist_mem),
				    GFP_KERNEL);
	if (!qp->req.hist_mem)
		return -ENOMEM;
	if (shca_txhist_init(&qp->req.hist, qp->req.hist_mem, cap)) {
		kvfree(qp->req.hist_mem);
		qp->req.hist_mem = NULL;
		return -ENOMEM;
	}
	return 0;
}

/**
 * shca_req_hist_free - free a QP's transmit history
 * @qp: QP nobody can reach any more
 */
void shca_req_hist_free(struct shca_qp *qp)
{
	kvfree(qp->req.hist_mem);
	qp->req.hist_mem = NULL;
}

/*
 * The WQE a record names.  The record's index must be one of the QP's
 * outstanding WQEs, started and of the same opcode: a record never makes
 * the requester touch a WQE it does not own.
 */
static struct shca_send_wqe *shca_req_rec_wqe(struct shca_qp *qp,
					      const struct shca_txhist_rec *rec)
{
	struct shca_req *req = &qp->req;
	struct shca_send_wqe *wqe;

	if (!rec || rec->wqe - req->comp >= req->fetch - req->comp)
		return NULL;
	wqe = shca_qp_wqe(qp, rec->wqe);
	if (wqe->state != SHCA_WQE_STARTED || wqe->opcode != rec->opcode)
		return NULL;
	return wqe;
}

/* End of the PSNs ever sent: the newest record's first-transmission
 * frontier.
 */
static u32 shca_req_sent_end(struct shca_qp *qp)
{
	const struct shca_txhist_rec *rec;
	u32 id;

	if (shca_txhist_newest(&qp->req.hist, &id))
		return qp->req.psn;
	rec = shca_txhist_get(&qp->req.hist, id);
	return rec ? shca_txhist_frontier(rec) : qp->req.psn;
}

static bool shca_req_outstanding(struct shca_qp *qp)
{
	return shca_psn_diff(shca_req_sent_end(qp), qp->req.una_psn) > 0;
}

/* The oldest record, or NULL. */
static const struct shca_txhist_rec *shca_req_oldest(struct shca_qp *qp)
{
	u32 id;

	if (shca_txhist_oldest(&qp->req.hist, &id))
		return NULL;
	return shca_txhist_get(&qp->req.hist, id);
}

/*
 * The cursor's record was retired (acknowledged while being rebuilt):
 * carry on from the oldest record still held.
 */
static void shca_req_fix_cursor(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;
	const struct shca_txhist_rec *rec;
	u32 id;

	if (!req->cur_valid || shca_txhist_get(&req->hist, req->cur.id))
		return;
	req->cur_valid = false;
	if (shca_txhist_oldest(&req->hist, &id))
		return;
	rec = shca_txhist_get(&req->hist, id);
	if (rec && !shca_txhist_pos_at(&req->hist, id, rec->first_psn,
				       &req->cur))
		req->cur_valid = true;
}

/* A record leaves the history acknowledged: its WQE succeeded. */
static void shca_req_complete_rec(struct shca_qp *qp,
				  const struct shca_txhist_rec *rec)
{
	struct shca_send_wqe *wqe = shca_req_rec_wqe(qp, rec);

	if (rec->flags & SHCA_TXH_F_REPLY && qp->req.rd_atomic)
		qp->req.rd_atomic--;
	if (!wqe)
		return;
	wqe->signal = !!(rec->flags & SHCA_TXH_F_SIGNALED);
	shca_wqe_done(qp, wqe, IB_WC_SUCCESS);
}

static void shca_req_fail(struct shca_qp *qp, u32 psn,
			  enum ib_wc_status status);

/*
 * Retire the records an acknowledgement up to @psn covers and complete
 * them.  @flags: SHCA_TXH_RETIRE_REPLY when a response came.
 */
static void shca_req_retire(struct shca_qp *qp, u32 psn, u32 flags)
{
	struct shca_txhist_rec out[SHCA_RETIRE_BATCH];
	struct shca_req *req = &qp->req;
	u32 turns = req->hist.cap / SHCA_RETIRE_BATCH + 1;
	int n, i;

	do {
		n = shca_txhist_retire(&req->hist, psn, flags, out,
				       SHCA_RETIRE_BATCH);
		for (i = 0; i < n; i++)
			shca_req_complete_rec(qp, &out[i]);
	} while (n == SHCA_RETIRE_BATCH && --turns);
	if (n < 0) {
		shca_req_fail(qp, req->una_psn, IB_WC_GENERAL_ERR);
		return;
	}
	shca_req_fix_cursor(qp);
}

/* ---- building packets ------------------------------------------------ */

static u8 shca_send_opcode(u8 wr_opcode, bool first, bool last)
{
	bool imm = wr_opcode == IB_WR_SEND_WITH_IMM;
	bool inv = wr_opcode == IB_WR_SEND_WITH_INV;

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

static u8 shca_write_opcode(u8 wr_opcode, bool first, bool last)
{
	bool imm = wr_opcode == IB_WR_RDMA_WRITE_WITH_IMM;

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

/* Header fields of the packet at @pos of record @rec (WQE @wqe). */
static void shca_req_fill_hdr(struct shca_qp *qp,
			      const struct shca_send_wqe *wqe,
			      const struct shca_txhist_rec *rec,
			      const struct shca_txhist_pos *pos,
			      struct shca_pkt_hdr *h)
{
	bool first = pos->psn == rec->first_psn;
	bool last = pos->psn == rec->last_psn;
	u8 op;

	switch (rec->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		op = shca_write_opcode(rec->opcode, first, last);
		if (first) {
			h->reth.va = wqe->u.rdma.va;
			h->reth.rkey = wqe->u.rdma.rkey;
			h->reth.dma_len = rec->length;
		}
		break;
	case IB_WR_RDMA_READ:
		/* from a response PSN on: the rest of the message */
		op = SHCA_OP_RDMA_READ_REQUEST;
		h->reth.va = wqe->u.rdma.va + pos->off;
		h->reth.rkey = wqe->u.rdma.rkey;
		h->reth.dma_len = pos->len;
		last = true;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		op = rec->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
		     SHCA_OP_COMPARE_SWAP : SHCA_OP_FETCH_ADD;
		h->atomic_eth.va = wqe->u.atomic.va;
		h->atomic_eth.rkey = wqe->u.atomic.rkey;
		h->atomic_eth.swap_add = rec->opcode ==
			IB_WR_ATOMIC_CMP_AND_SWP ? wqe->u.atomic.swap :
			wqe->u.atomic.compare_add;
		h->atomic_eth.compare = wqe->u.atomic.compare_add;
		last = true;
		break;
	default:
		op = shca_send_opcode(rec->opcode, first, last);
		break;
	}
	h->opcode = shca_tr_base(qp) | op;
	if (last) {
		h->imm = (__force __be32)wqe->ex;
		h->ieth.rkey = wqe->ex;
		h->solicited = !!(wqe->flags & SHCA_SQE_F_SOLICITED);
		h->ack_req = shca_req_ack_wanted(qp, rec, pos);
	}
	if ((pos->psn & (SHCA_ACK_REQ_EVERY - 1)) == SHCA_ACK_REQ_EVERY - 1)
		h->ack_req = true;
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
 * Build and send the packet at @pos.  A packet that cannot be allocated
 * is lost like one the network drops (RC recovers); a bad local key
 * fails the WQE: returns a negative errno.
 */
static int shca_req_build(struct shca_qp *qp, struct shca_send_wqe *wqe,
			  const struct shca_txhist_rec *rec,
			  const struct shca_txhist_pos *pos)
{
	struct shca_pkt_hdr h = { .psn = pos->psn };
	const struct shca_av *av = &qp->av;
	struct shca_pkt_src src = {
		.len = rec->flags & SHCA_TXH_F_REPLY ? 0 : pos->len,
		.sgl = wqe->sge,
		.num_sge = wqe->num_sge,
		.off = pos->off,
	};
	struct sk_buff *skb;
	int ret;

	shca_req_fill_hdr(qp, wqe, rec, pos, &h);
	if (qp->type == IB_QPT_UD || qp->type == IB_QPT_GSI)
		av = &wqe->u.ud.av;
	if (src.len && wqe->flags & SHCA_SQE_F_INLINE) {
		if ((u64)pos->off + src.len > wqe->length)
			return -EINVAL;
		src.buf = wqe->inline_data + pos->off;
	}
	/* by page reference or copied: the same for a retransmission */
	skb = shca_build_data_pkt(qp, av, &h, &src, &ret);
	if (!skb && ret)
		return ret;
	if (!skb) {
		shca_stat_inc(qp->sdev, SHCA_CNT_TX_DROP);
		return 0;
	}
	shca_send_pkt(qp, av, skb);
	return 0;
}

/*
 * Build the packet under the cursor and move the cursor on.  Returns 0,
 * or a negative errno when the message failed locally.
 */
static int shca_req_send_one(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;
	struct shca_txhist_pos pos = req->cur;
	const struct shca_txhist_rec *rec;
	struct shca_send_wqe *wqe;
	bool again, reply, last;
	u32 last_psn;
	int ret;

	rec = shca_txhist_get(&req->hist, pos.id);
	wqe = shca_req_rec_wqe(qp, rec);
	if (!wqe)
		return -EUCLEAN;
	reply = rec->flags & SHCA_TXH_F_REPLY;
	last = reply || pos.psn == rec->last_psn;
	last_psn = rec->last_psn;
	again = shca_psn_diff(pos.psn, shca_txhist_frontier(rec)) < 0;

	ret = shca_req_build(qp, wqe, rec, &pos);
	if (ret)
		return ret;
	if (again)
		shca_stat_inc(qp->sdev, SHCA_CNT_RETRANSMIT_PKTS);
	else if (shca_txhist_built(&req->hist, pos.id,
				   reply ? rec->length : pos.off + pos.len,
				   last))
		return -EUCLEAN;
	if (shca_txhist_pos_next(&req->hist, &req->cur))
		req->cur_valid = false;
	/* UC and UD: sent is done */
	if (last && qp->type != IB_QPT_RC)
		shca_req_retire(qp, last_psn, 0);
	return 0;
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

/* The next fetched WQE not started yet (taken from the LLQ once). */
static struct shca_send_wqe *shca_req_pending(struct shca_qp *qp)
{
	struct shca_engine *eng = qp->sdev->eng;
	struct shca_req *req = &qp->req;
	struct shca_llq_payload p;
	int ret;

	if (!req->pend_valid) {
		spin_lock(&eng->tx_lock);
		ret = shca_llq_peek(&eng->tx_llq, qp->qpn, &p);
		spin_unlock(&eng->tx_lock);
		if (ret < 0)
			return NULL;
		req->pend = (u32)p.w[0];
		req->pend_valid = true;
	}
	return shca_qp_wqe(qp, req->pend);
}

static bool shca_req_window_open(struct shca_qp *qp, u32 psn)
{
	return qp->type != IB_QPT_RC ||
	       shca_psn_diff(psn, qp->req.una_psn) < SHCA_MAX_UNACKED_PKTS;
}

/* May @wqe start now (fence, READ/ATOMIC limit, window, history room)? */
static bool shca_req_may_start(struct shca_qp *qp, struct shca_send_wqe *wqe)
{
	struct shca_req *req = &qp->req;

	if ((wqe->flags & SHCA_SQE_F_FENCE) && req->rd_atomic)
		return false;
	if (shca_op_is_rd_atomic(wqe->opcode) &&
	    req->rd_atomic >= max_t(u32, qp->attr.max_rd_atomic, 1))
		return false;
	if (shca_wqe_is_local(wqe))
		return true;
	return shca_req_window_open(qp, req->psn) &&
	       !shca_txhist_full(&req->hist);
}

/*
 * AckReq on the last packet of a message (@rec, packet @pos): asked for
 * unless the next message follows at once (fetched, sending packets,
 * free to start now), whose own last packet then asks for both.  A
 * retransmission and a READ/ATOMIC always ask.  With every
 * SHCA_ACK_REQ_EVERY-th PSN asking as well, a full window always holds
 * requests the responder will answer, so the requester never stops with
 * nothing but unrequested packets outstanding.  Only a move to SQD
 * between two messages can leave the last one sent unrequested: the ACK
 * timeout's retransmission, which SQD still sends, asks for it.  Halves
 * the packets of a stream of one-packet messages.
 */
static bool shca_req_ack_wanted(struct shca_qp *qp,
				const struct shca_txhist_rec *rec,
				const struct shca_txhist_pos *pos)
{
	struct shca_send_wqe *next;

	if (qp->type != IB_QPT_RC || qp->state != IB_QPS_RTS ||
	    rec->flags & SHCA_TXH_F_REPLY ||
	    shca_psn_diff(pos->psn, shca_txhist_frontier(rec)) < 0)
		return true;
	next = shca_req_pending(qp);
	return !next || next->state != SHCA_WQE_QUEUED ||
	       shca_wqe_is_local(next) || !shca_req_may_start(qp, next);
}

static u32 shca_req_seg(struct shca_qp *qp)
{
	if (qp->type == IB_QPT_UD || qp->type == IB_QPT_GSI)
		return SHCA_TXH_MAX_MTU;	/* one packet, fetch checked */
	return shca_qp_mtu(qp);
}

/*
 * The first packet of @wqe (SQ index @idx) is next: write its history
 * record and point the cursor at it.  Returns 0, SHCA_TXH_EFULL or
 * SHCA_TXH_E2BIG to wait for acknowledgements, another error when the
 * WQE cannot be sent.
 */
static int shca_req_start(struct shca_qp *qp, struct shca_send_wqe *wqe,
			  u32 idx)
{
	struct shca_req *req = &qp->req;
	struct shca_txhist_rec rec = {
		.wqe = idx,
		.first_psn = req->psn,
		.length = wqe->length,
		.mtu = shca_req_seg(qp),
		.opcode = wqe->opcode,
		.flags = wqe->signal ? SHCA_TXH_F_SIGNALED : 0,
	};
	u32 npkts, id;
	int ret;

	if (wqe->opcode == IB_WR_RDMA_READ)
		rec.flags |= SHCA_TXH_F_READ;
	else if (shca_op_is_rd_atomic(wqe->opcode))
		rec.flags |= SHCA_TXH_F_ATOMIC;
	npkts = shca_txhist_npkts(rec.length, rec.mtu);
	if (!npkts)
		return -EINVAL;
	rec.last_psn = shca_psn_add(rec.first_psn, npkts - 1);
	ret = shca_txhist_push(&req->hist, &rec, &id);
	if (ret)
		return ret;
	ret = shca_txhist_pos_at(&req->hist, id, rec.first_psn, &req->cur);
	if (ret)
		return ret;
	req->cur_valid = true;
	req->psn = shca_psn_add(rec.last_psn, 1);
	wqe->state = SHCA_WQE_STARTED;
	if (rec.flags & SHCA_TXH_F_REPLY)
		req->rd_atomic++;
	return 0;
}

/*
 * Take the next WQE: start its message, or run it (local work requests).
 * Returns true when something happened, false when there is nothing to
 * start now.
 */
static bool shca_req_next(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;
	struct shca_send_wqe *wqe;
	int ret;

	wqe = shca_req_pending(qp);
	if (!wqe)
		return false;
	if (wqe->state != SHCA_WQE_QUEUED) {
		/* failed at fetch: it completes with its status */
		req->pend_valid = false;
		return true;
	}
	if (!shca_req_may_start(qp, wqe))
		return false;
	if (shca_wqe_is_local(wqe)) {
		req->pend_valid = false;
		shca_req_local(qp, wqe);
		return true;
	}
	ret = shca_req_start(qp, wqe, req->pend);
	if ((ret == SHCA_TXH_EFULL || ret == SHCA_TXH_E2BIG) &&
	    shca_txhist_count(&req->hist))
		return false;
	req->pend_valid = false;
	if (ret) {
		shca_wqe_done(qp, wqe, IB_WC_LOC_LEN_ERR);
		shca_qp_error(qp);
		return false;
	}
	return true;
}

/*
 * (Re)start the ACK timeout: move the deadline, and start the timer only
 * when it is not queued already (it re-arms itself up to the deadline).
 * The deadline comes from the coarse clock, which reads no clocksource
 * (a VM's HPET costs about a microsecond a read, once per message here)
 * and lags by less than a tick: one tick added makes the timeout never
 * shorter than timeout_ns and at most a tick longer.  Caller must hold
 * qp->lock.
 */
static void shca_req_arm_timer(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;
	u64 span;

	if (!req->timeout_ns || req->rnr_wait)
		return;
	span = req->timeout_ns + TICK_NSEC;
	req->ack_deadline = ktime_get_coarse_ns() + span;
	req->ack_armed = true;
	if (!hrtimer_is_queued(&req->timer))
		hrtimer_start(&req->timer, ns_to_ktime(span),
			      HRTIMER_MODE_REL_SOFT);
}

/*
 * Go back N: move the cursor back to the record holding the oldest PSN
 * still owed an answer (taken now, not when the retry was decided:
 * acknowledgements may have come in between).
 */
static void shca_req_replay(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;
	struct shca_txhist_pos pos;

	req->need_retry = false;
	if (!shca_req_outstanding(qp) ||
	    shca_txhist_replay(&req->hist, req->una_psn, &pos))
		return;		/* nothing sent is unanswered */
	req->cur = pos;
	req->cur_valid = true;
	shca_stat_inc(qp->sdev, SHCA_CNT_HIST_REPLAYS);
	/* the timeout counts from the retransmission */
	shca_req_arm_timer(qp);
}

/*
 * May the requester send: in RTS anything, in SQD only what it started
 * before (the rest of a message, a retransmission).  SQD stops new
 * messages, not the ones in flight.
 */
static bool shca_req_sending(struct shca_qp *qp)
{
	return qp->state == IB_QPS_RTS ||
	       (qp->state == IB_QPS_SQD && qp->req.cur_valid);
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
	int n = 0, ret;

	/* held: a doorbell call's packets must leave first */
	if (!shca_req_live(qp) || req->held)
		return 0;
	shca_qp_fetch(qp);
	if (req->rnr_wait)
		return 0;
	if (req->need_retry)
		shca_req_replay(qp);

	while (n < budget && shca_req_sending(qp)) {
		if (!req->cur_valid) {
			if (!shca_req_next(qp))
				break;
			continue;
		}
		if (!shca_req_window_open(qp, req->cur.psn))
			break;
		ret = shca_req_send_one(qp);
		if (ret < 0) {
			shca_req_fail(qp, req->cur.psn, ret == -EUCLEAN ?
				      IB_WC_GENERAL_ERR : IB_WC_LOC_PROT_ERR);
			break;
		}
		n++;
	}
	if (qp->type == IB_QPT_RC && shca_req_outstanding(qp) &&
	    !req->ack_armed)
		shca_req_arm_timer(qp);
	shca_qp_complete(qp);
	return n;
}

/**
 * shca_req_quiet - nothing of the requester's is in flight
 * @qp: QP (caller must hold qp->lock)
 *
 * Return: true when every WQE fetched so far has completed and no RNR
 * wait runs: no packet of this requester can still be on its way.
 */
bool shca_req_quiet(struct shca_qp *qp)
{
	return qp->req.fetch == qp->req.comp && !qp->req.rnr_wait &&
	       !qp->req.need_retry;
}

/*
 * Anything the requester could send now; WQEs not fetched from the send
 * ring yet count only when @ring.  Caller must hold qp->lock.
 */
static bool shca_req_work(struct shca_qp *qp, bool ring)
{
	struct shca_engine *eng = qp->sdev->eng;
	struct shca_req *req = &qp->req;
	struct shca_send_wqe *wqe;
	int pending;

	if (!shca_req_live(qp) || req->rnr_wait || req->held)
		return false;
	if (req->need_retry)
		return true;
	if (req->cur_valid)
		return shca_req_window_open(qp, req->cur.psn);
	if (qp->state != IB_QPS_RTS)
		return false;
	if (req->pend_valid) {
		wqe = shca_qp_wqe(qp, req->pend);
		return wqe->state != SHCA_WQE_QUEUED ||
		       shca_req_may_start(qp, wqe);
	}
	if (!shca_req_window_open(qp, req->psn))
		return false;
	/* fetched WQEs not taken yet, or unfetched ones */
	spin_lock(&eng->tx_lock);
	pending = shca_llq_peek_pending(&eng->tx_llq, qp->qpn);
	spin_unlock(&eng->tx_lock);
	if (pending > 0)
		return true;
	if (!ring)
		return false;
	pending = shca_ring_pending(&qp->sq);
	return pending > (int)(req->fetch - req->comp);
}

/**
 * shca_req_has_work - anything the requester could send now
 * @qp: QP (caller must hold qp->lock)
 *
 * Return: true when new WQEs, an unfinished message or a replay wait.
 */
bool shca_req_has_work(struct shca_qp *qp)
{
	return shca_req_work(qp, true);
}

/**
 * shca_req_has_fetched_work - shca_req_has_work() without the WQEs still
 * in the send ring
 * @qp: QP (caller must hold qp->lock)
 *
 * For a user QP whose ring is not watched: the process rings for those.
 *
 * Return: true when fetched WQEs, an unfinished message or a replay wait.
 */
bool shca_req_has_fetched_work(struct shca_qp *qp)
{
	return shca_req_work(qp, false);
}

/* ---- completer: acknowledgements and responses -------------------- */

/* Go back N before sending anything new (see shca_req_replay()). */
static void shca_req_retry(struct shca_qp *qp)
{
	qp->req.need_retry = true;
}

/*
 * Fail the message holding @psn (else the oldest outstanding one) with
 * @status and move the QP to the error state, which flushes the rest.
 */
static void shca_req_fail(struct shca_qp *qp, u32 psn,
			  enum ib_wc_status status)
{
	struct shca_req *req = &qp->req;
	struct shca_send_wqe *wqe = NULL;
	u32 id, i;

	if (!shca_txhist_find(&req->hist, psn, &id))
		wqe = shca_req_rec_wqe(qp, shca_txhist_get(&req->hist, id));
	if (!wqe)
		wqe = shca_req_rec_wqe(qp, shca_req_oldest(qp));
	for (i = req->comp; !wqe && i != req->fetch; i++) {
		if (shca_qp_wqe(qp, i)->state != SHCA_WQE_DONE)
			wqe = shca_qp_wqe(qp, i);
	}
	if (wqe)
		shca_wqe_done(qp, wqe, status);
	shca_qp_error(qp);
}

/*
 * The peer made progress: the retry counts start again.
 */
static void shca_req_progress(struct shca_qp *qp)
{
	qp->req.retry = qp->attr.retry_cnt;
	qp->req.rnr_retry = qp->attr.rnr_retry;
	qp->req.retrying = false;
}

/*
 * ack_psn moved: retire what it covers and move una_psn to the first PSN
 * still owed an answer.  Returns true when una_psn moved.
 */
static bool shca_req_acked(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;
	const struct shca_txhist_rec *old;
	u32 una = req->ack_psn;

	shca_req_retire(qp, shca_psn_add(req->ack_psn, -1), 0);
	old = shca_req_oldest(qp);
	if (old && (old->flags & SHCA_TXH_F_REPLY) &&
	    shca_psn_diff(req->ack_psn, old->first_psn) > 0) {
		/* a READ/ATOMIC still waits for (more of) its response */
		una = shca_psn_diff(req->una_psn, old->first_psn) > 0 ?
		      req->una_psn : old->first_psn;
	}
	if (shca_psn_diff(una, req->una_psn) <= 0)
		return false;
	req->una_psn = una;
	return true;
}

/* Everything up to and including @psn is acknowledged. */
static void shca_req_ack_upto(struct shca_qp *qp, u32 psn)
{
	struct shca_req *req = &qp->req;
	u32 next = shca_psn_add(psn, 1);

	if (shca_psn_diff(next, req->ack_psn) > 0)
		req->ack_psn = next;
	if (shca_req_acked(qp))
		shca_req_progress(qp);
}

/*
 * A sign of loss: a sequence NAK, a gap in READ responses, an ACK that
 * passed a READ/ATOMIC whose response has not come.  The first sign of an
 * episode costs one retry and replays from una_psn; later signs (packets
 * that were in flight behind the loss) are ignored until the peer makes
 * progress again.  A lost retransmission is left to the ACK timer.
 */
static void shca_req_loss(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;

	if (req->retrying || !shca_req_live(qp))
		return;
	if (req->retry-- <= 0) {
		shca_req_fail(qp, req->una_psn, IB_WC_RETRY_EXC_ERR);
		return;
	}
	req->retrying = true;
	shca_req_retry(qp);
}

/* An ACK passed a READ/ATOMIC whose response has not come: it is lost. */
static bool shca_req_reply_lost(struct shca_qp *qp)
{
	const struct shca_txhist_rec *old = shca_req_oldest(qp);

	return old && (old->flags & SHCA_TXH_F_REPLY) &&
	       shca_psn_diff(qp->req.ack_psn, old->first_psn) > 0;
}

static void shca_req_rnr(struct shca_qp *qp, u32 psn, u8 timer)
{
	struct shca_req *req = &qp->req;

	if (!req->rnr_retry) {
		shca_req_fail(qp, psn, IB_WC_RNR_RETRY_EXC_ERR);
		return;
	}
	if (req->rnr_retry != 7)
		req->rnr_retry--;
	shca_req_retry(qp);
	/* the packets sent behind the refused one draw sequence NAKs */
	req->retrying = true;
	req->rnr_wait = true;
	req->ack_armed = false;
	hrtimer_start(&req->timer,
		      ns_to_ktime((u64)shca_rnr_timer_usec(timer) * 1000),
		      HRTIMER_MODE_REL_SOFT);
}

static void shca_req_nak(struct shca_qp *qp, u32 psn, u8 code)
{
	switch (code) {
	case SHCA_NAK_PSN_SEQ_ERR:
		shca_req_loss(qp);
		return;
	case SHCA_NAK_REMOTE_ACCESS_ERR:
		shca_req_fail(qp, psn, IB_WC_REM_ACCESS_ERR);
		return;
	case SHCA_NAK_REMOTE_OP_ERR:
		shca_req_fail(qp, psn, IB_WC_REM_OP_ERR);
		return;
	default:
		shca_req_fail(qp, psn, IB_WC_REM_INV_REQ_ERR);
		return;
	}
}

static void shca_req_aeth(struct shca_qp *qp, const struct shca_pkt_hdr *h)
{
	u8 syn = h->aeth.syndrome;
	bool stale = shca_psn_diff(h->psn, qp->req.ack_psn) < 0;

	switch (shca_aeth_type(syn)) {
	case SHCA_AETH_ACK:
		shca_stat_inc(qp->sdev, SHCA_CNT_ACK_RCVD);
		shca_req_ack_upto(qp, h->psn);
		if (shca_req_reply_lost(qp))
			shca_req_loss(qp);
		break;
	case SHCA_AETH_RNR_NAK:
		shca_stat_inc(qp->sdev, SHCA_CNT_RNR_NAK_RCVD);
		/* a NAK for a PSN acknowledged since is old news */
		if (stale)
			break;
		shca_req_ack_upto(qp, shca_psn_add(h->psn, -1));
		if (shca_req_live(qp))
			shca_req_rnr(qp, h->psn, shca_aeth_value(syn));
		break;
	case SHCA_AETH_NAK:
		shca_stat_inc(qp->sdev, shca_aeth_value(syn) ==
			      SHCA_NAK_PSN_SEQ_ERR ? SHCA_CNT_NAK_SEQ_RCVD :
			      SHCA_CNT_NAK_OTHER_RCVD);
		if (stale && shca_aeth_value(syn) == SHCA_NAK_PSN_SEQ_ERR)
			break;
		shca_req_ack_upto(qp, shca_psn_add(h->psn, -1));
		if (shca_req_live(qp))
			shca_req_nak(qp, h->psn, shca_aeth_value(syn));
		break;
	default:
		break;
	}
}

/*
 * READ response payload for @wqe: its place and size follow from the
 * record (segment size, PSN range).  Returns a completion status.
 */
static enum ib_wc_status shca_req_read_data(struct shca_qp *qp,
					    struct shca_send_wqe *wqe,
					    const struct shca_txhist_rec *rec,
					    struct sk_buff *skb,
					    const struct shca_pkt_hdr *h,
					    u32 hdr_len)
{
	const struct shca_opcode_info *oi = shca_opcode_info(h->opcode);
	bool last = h->psn == rec->last_psn;
	u32 plen, off;

	if (!(oi->flags & SHCA_OPF_READ))
		return IB_WC_BAD_RESP_ERR;
	/* FIRST again is fine: a READ resumed from a middle PSN */
	if (!!(oi->flags & SHCA_OPF_LAST) != last ||
	    (h->psn == rec->first_psn && !(oi->flags & SHCA_OPF_FIRST)))
		return IB_WC_BAD_RESP_ERR;
	plen = shca_payload_len(skb->len + SHCA_ICRC_LEN, hdr_len,
				h->pad_count);
	off = shca_psn_diff(h->psn, rec->first_psn) * rec->mtu;
	if (off > rec->length || plen > rec->length - off ||
	    (last ? off + plen != rec->length : plen != rec->mtu))
		return IB_WC_BAD_RESP_ERR;
	if (shca_sgl_copy(qp->sdev, qp->pd, wqe->sge, wqe->num_sge, off, NULL,
			  skb, hdr_len, plen, SHCA_TO_MR))
		return IB_WC_LOC_PROT_ERR;
	return IB_WC_SUCCESS;
}

/* A READ response or ATOMIC acknowledgement. */
static void shca_req_response(struct shca_qp *qp, struct sk_buff *skb,
			      const struct shca_pkt_hdr *h, u32 hdr_len)
{
	const struct shca_opcode_info *oi = shca_opcode_info(h->opcode);
	struct shca_req *req = &qp->req;
	const struct shca_txhist_rec *rec;
	struct shca_send_wqe *wqe;
	enum ib_wc_status st;
	u32 id;

	rec = shca_txhist_find(&req->hist, h->psn, &id) ? NULL :
	      shca_txhist_get(&req->hist, id);
	wqe = shca_req_rec_wqe(qp, rec);
	if (!wqe || !(rec->flags & SHCA_TXH_F_REPLY)) {
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_PSN);
		return;
	}
	/* responses to this message acknowledge every request before it */
	shca_req_ack_upto(qp, shca_psn_add(rec->first_psn, -1));
	rec = shca_txhist_get(&req->hist, id);
	if (!rec || h->psn != req->una_psn) {
		/* an earlier response is missing: replay from it */
		if (rec && shca_psn_diff(h->psn, req->una_psn) > 0)
			shca_req_loss(qp);
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_PSN);
		return;
	}

	if (rec->flags & SHCA_TXH_F_ATOMIC) {
		st = IB_WC_BAD_RESP_ERR;
		if (oi->flags & SHCA_OPF_ATOMIC)
			st = shca_sgl_copy(qp->sdev, qp->pd, wqe->sge,
					   wqe->num_sge, 0,
					   (void *)&h->atomic_ack.orig, NULL,
					   0, sizeof(u64), SHCA_TO_MR) ?
			     IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
	} else {
		st = shca_req_read_data(qp, wqe, rec, skb, h, hdr_len);
	}
	if (st != IB_WC_SUCCESS) {
		shca_req_fail(qp, h->psn, st);
		return;
	}
	req->una_psn = shca_psn_add(h->psn, 1);
	if (shca_psn_diff(req->una_psn, req->ack_psn) > 0)
		req->ack_psn = req->una_psn;
	shca_req_progress(qp);
	if (h->psn == rec->last_psn) {
		shca_req_retire(qp, h->psn, SHCA_TXH_RETIRE_REPLY);
		/* and what ACKs covered behind it */
		shca_req_acked(qp);
	}
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
	u32 una = req->una_psn;

	if (qp->type != IB_QPT_RC ||
	    (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD)) {
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_QP_STATE);
		goto out;
	}
	/* a PSN we never sent */
	if (shca_psn_diff(h->psn, shca_req_sent_end(qp)) >= 0) {
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_PSN);
		goto out;
	}

	if (oi->flags & (SHCA_OPF_READ | SHCA_OPF_ATOMIC))
		shca_req_response(qp, skb, h, hdr_len);
	else if ((h->opcode & 0x1f) == SHCA_OP_ACKNOWLEDGE)
		shca_req_aeth(qp, h);

	if (req->rnr_wait || qp->state == IB_QPS_ERR)
		goto done;
	/*
	 * The ACK timer restarts only on progress.  Duplicate ACKs, stale
	 * responses and NAKs leave it running: a peer that only repeats
	 * itself must not hold off the timeout.
	 */
	if (!shca_req_outstanding(qp))
		req->ack_armed = false;
	else if (una != req->una_psn || !req->ack_armed)
		shca_req_arm_timer(qp);
done:
	shca_qp_complete(qp);
out:
	kfree_skb(skb);
}

/*
 * The ACK deadline has not come yet: run again then.  Caller must hold
 * qp->lock.
 */
static bool shca_req_timer_early(struct shca_qp *qp, struct hrtimer *t)
{
	u64 now = ktime_get_ns();

	if (now >= qp->req.ack_deadline)
		return false;
	hrtimer_forward_now(t, ns_to_ktime(qp->req.ack_deadline - now));
	return true;
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
	} else if (req->ack_armed && shca_req_live(qp) &&
		   shca_req_outstanding(qp)) {
		if (shca_req_timer_early(qp, t)) {
			spin_unlock(&qp->lock);
			return HRTIMER_RESTART;
		}
		shca_stat_inc(qp->sdev, SHCA_CNT_TIMEOUTS);
		if (req->retry-- <= 0) {
			shca_req_fail(qp, req->una_psn, IB_WC_RETRY_EXC_ERR);
		} else {
			shca_req_retry(qp);
			kick = true;
		}
	}
	req->ack_armed = false;
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
 * shca_req_flush - forget every message in flight (the QP failed; its
 * WQEs were given their final status)
 * @qp: QP (caller must hold qp->lock)
 */
void shca_req_flush(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;

	shca_txhist_flush(&req->hist);
	req->cur_valid = false;
	req->pend_valid = false;
	req->rd_atomic = 0;
	req->need_retry = false;
	req->rnr_wait = false;
	req->ack_armed = false;
}

/**
 * shca_req_reset - requester back to its initial state (RESET, RTS entry)
 * @qp: QP (caller must hold qp->lock)
 */
void shca_req_reset(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;

	shca_req_flush(qp);
	shca_txhist_reset(&req->hist);
	req->psn = qp->attr.sq_psn & SHCA_PSN_MASK;
	req->una_psn = req->psn;
	req->ack_psn = req->psn;
	req->retrying = false;
	req->retry = qp->attr.retry_cnt;
	req->rnr_retry = qp->attr.rnr_retry;
}
