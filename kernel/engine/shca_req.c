// SPDX-License-Identifier: GPL-2.0
/*
 * shca requester: turns a QP's send WQEs into packets.
 *
 * The transmit cursor is a position in the QP's transmit history (record,
 * PSN).  Every packet is built from a record: its PSN, byte offset, length
 * and segment size come from the record, only the data and the addresses
 * from the WQE's kernel copy.  So a NAK or an ACK timeout replays by
 * moving the cursor back to the record holding the lost PSN and walking
 * forward, with each message cut as it was first sent even if the path
 * MTU has changed since; packets past a record's first-transmission
 * frontier are new, those before it are retransmissions.  The window,
 * fences and the READ/ATOMIC limit decide when a new message may start.
 *
 * Every function here runs with qp->lock held.
 */
#include "shca.h"
#include "shca_drdma.h"
#include "shca_engine.h"
#include "shca_mcg.h"
#include "shca_hdr.h"
#include "shca_mem.h"
#include "shca_pkt.h"
#include "shca_qpc.h"
#include "shca_req.h"
#include "shca_sendq.h"
#include "shca_wq.h"
#include "shca_memreg.h"
#include "shca_trace.h"
#include "shca_udp_tx.h"

#define SHCA_ACK_REQ_EVERY	32	/* a power of 2 */

static bool shca_req_ack_wanted(struct shca_qp *qp,
				const struct shca_txhist_rec *rec,
				const struct shca_txhist_pos *pos);

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
	case SHCA_WR_ATOMIC_WRITE:
		op = SHCA_OP_ATOMIC_WRITE;
		h->reth.va = wqe->u.atomic_write.va;
		h->reth.rkey = wqe->u.atomic_write.rkey;
		h->reth.dma_len = sizeof(u64);
		last = true;
		break;
	case SHCA_WR_FLUSH:
		op = SHCA_OP_FLUSH;
		h->feth.plt = wqe->u.flush.type;
		h->feth.sel = wqe->u.flush.level;
		h->reth.va = wqe->u.flush.va;
		h->reth.rkey = wqe->u.flush.rkey;
		h->reth.dma_len = wqe->u.flush.length;
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

/* The packet at @pos of @rec is built (tracepoint shca_req_pkt). */
static void shca_req_trace(struct shca_qp *qp,
			   const struct shca_txhist_rec *rec,
			   const struct shca_txhist_pos *pos,
			   const struct shca_pkt_hdr *h)
{
	bool again = shca_psn_diff(pos->psn, shca_txhist_frontier(rec)) < 0;

	trace_shca_req_pkt(&qp->sdev->ibdev, qp->qpn, h->dest_qpn, pos->psn,
			   h->opcode, rec->wqe, pos->off, pos->len, again,
			   h->ack_req);
}

/*
 * The ICRC of a FLUSH: as IBA says, or as rdma_rxe computes it, which
 * drops the other (shca_pkt_icrc_rxe()).  A FLUSH sent again because it
 * went unanswered itself (the replay starts at it) goes in the other
 * form, and the form tried last is kept for the next ones; FLUSHes sent
 * again behind it keep that form.
 */
static void shca_req_flush_icrc(struct shca_qp *qp,
				const struct shca_txhist_rec *rec,
				const struct shca_txhist_pos *pos,
				struct sk_buff *skb)
{
	struct shca_req *req = &qp->req;

	if (pos->psn == req->una_psn &&
	    shca_psn_diff(pos->psn, shca_txhist_frontier(rec)) < 0)
		req->flush_rxe = !req->flush_rxe;
	if (!req->flush_rxe)
		return;
	shca_pkt_icrc_rxe(skb);
	shca_stat_inc(qp->sdev, SHCA_CNT_FLUSH_RXE_ICRC);
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
	if (trace_shca_req_pkt_enabled())
		shca_req_trace(qp, rec, pos, &h);
	if (qp->type == IB_QPT_UD || qp->type == IB_QPT_GSI)
		av = &wqe->u.ud.av;
	if (rec->opcode == SHCA_WR_ATOMIC_WRITE) {
		/* its 8 bytes travel as the payload */
		src.len = sizeof(u64);
		src.buf = &wqe->u.atomic_write.value;
	} else if (src.len && wqe->flags & SHCA_SQE_F_INLINE) {
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
	if (h.dest_qpn == SHCA_MC_QPN && qp->type == IB_QPT_UD)
		shca_stat_inc(qp->sdev, SHCA_CNT_MC_TX_PKTS);
	if (rec->opcode == SHCA_WR_FLUSH)
		shca_req_flush_icrc(qp, rec, pos, skb);
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
		ret = shca_mw_bind(qp, &wqe->u.bind);
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
		ret = shca_llq_peek(&eng->tx_llq, qp->idx, &p);
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
	/* a DRDMA WRITE waits for its producer (other QPs do not) */
	if (unlikely(wqe->dm_range) && !shca_drdma_may_send(qp, wqe))
		return false;
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

/**
 * shca_req_arm_timer - (re)start the ACK timeout
 * @qp: QP (caller must hold qp->lock)
 *
 * Moves the deadline, and starts the timer only when it is not queued
 * already (it re-arms itself up to the deadline).  The deadline comes
 * from the coarse clock, which reads no clocksource (a VM's HPET costs
 * about a microsecond a read, once per message here) and lags by less
 * than a tick: one tick added makes the timeout never shorter than
 * timeout_ns and at most a tick longer.
 */
void shca_req_arm_timer(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;
	u64 span;

	lockdep_assert_held(&qp->lock);
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
	trace_shca_replay(&qp->sdev->ibdev, qp->qpn, pos.psn,
			  shca_psn_add(req->psn, -1));
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

	lockdep_assert_held(&qp->lock);
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
	lockdep_assert_held(&qp->lock);

	return qp->req.fetch == qp->req.comp && !qp->req.rnr_wait &&
	       !qp->req.need_retry;
}

/**
 * shca_req_off_wire - none of the requester's packets can still be on
 * their way
 * @qp: QP (caller must hold qp->lock)
 *
 * shca_req_quiet(), or, on an RC QP, WQEs fetched but none started: every
 * packet sent has been acknowledged (a DRDMA WRITE waiting for its
 * producer, and what was posted behind it).
 *
 * Return: true when a packet built now cannot overtake an earlier one.
 */
bool shca_req_off_wire(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;

	lockdep_assert_held(&qp->lock);

	if (shca_req_quiet(qp))
		return true;
	return qp->type == IB_QPT_RC && !req->cur_valid && !req->rnr_wait &&
	       !req->need_retry && req->una_psn == req->psn;
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

	lockdep_assert_held(&qp->lock);
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
	pending = shca_llq_peek_pending(&eng->tx_llq, qp->idx);
	spin_unlock(&eng->tx_lock);
	if (pending > 0)
		return true;
	if (!ring)
		return false;
	pending = shca_ring_pending(&qp->sq);
	return pending > (int)(req->fetch - req->comp) && shca_txc_room(qp);
}

/**
 * shca_req_has_work - anything the requester could send now
 * @qp: QP (caller must hold qp->lock)
 *
 * Return: true when new WQEs, an unfinished message or a replay wait.
 */
bool shca_req_has_work(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->lock);

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
	lockdep_assert_held(&qp->lock);

	return shca_req_work(qp, false);
}
