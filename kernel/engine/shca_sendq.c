// SPDX-License-Identifier: GPL-2.0
/*
 * shca send queue in the engine: the transmit history of a QP's messages
 * and the order its WQEs complete in.
 *
 * Send WQEs sit on their QP's list of the TX LLQ from fetch to completion;
 * the LLQ's peek pointer hands each new WQE to the requester once.  When
 * the requester builds a message's first packet it pushes a record on the
 * QP's transmit history (shca_txhist.c): WQE index, opcode, first and last
 * PSN, MSN, the segment size (path MTU) in effect, how far the first
 * transmission got, whether a completion is owed.
 *
 * Acknowledgements retire records from the oldest, in PSN order; each
 * retired record gives its WQE its final status (the TX LLQ ready bit),
 * and completion pops ready WQEs from the head of the LLQ list, so
 * completions leave in order.  UC and UD messages get records too (the
 * same packet builder), which retire as soon as their last packet is
 * built.
 *
 * Every function here runs with qp->lock held.
 */
#include "shca.h"
#include "shca_hdr.h"
#include "shca_qpc.h"
#include "shca_sendq.h"
#include "shca_wq.h"
#include "shca_engine.h"

#define SHCA_RETIRE_BATCH	8

/**
 * shca_op_is_rd_atomic - is a work request opcode a READ or an ATOMIC?
 * @opcode: enum ib_wr_opcode
 *
 * FLUSH and ATOMIC WRITE count as well: the responder answers them from
 * a resource too (a READ response without data).
 *
 * Return: true for the opcodes that use a responder resource.
 */
bool shca_op_is_rd_atomic(u8 opcode)
{
	return opcode == IB_WR_RDMA_READ ||
	       opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_WR_ATOMIC_FETCH_AND_ADD ||
	       opcode == SHCA_WR_FLUSH || opcode == SHCA_WR_ATOMIC_WRITE;
}

/**
 * shca_req_live - do messages in flight still make progress and recover?
 * @qp: QP
 *
 * Return: true in RTS and SQD.
 */
bool shca_req_live(const struct shca_qp *qp)
{
	return qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD;
}

/**
 * shca_wqe_is_local - is the WQE executed by this HCA alone (no packet)?
 * @wqe: the WQE
 *
 * Return: true for REG_MR, LOCAL_INV and BIND_MW.
 */
bool shca_wqe_is_local(const struct shca_send_wqe *wqe)
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
				    qp->user ? GFP_KERNEL_ACCOUNT : GFP_KERNEL);
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

/**
 * shca_req_rec_wqe - the WQE a transmit history record names
 * @qp: QP (caller must hold qp->lock)
 * @rec: the record
 *
 * The record's index must be one of the QP's outstanding WQEs, started
 * and of the same opcode: a record never makes the requester touch a WQE
 * it does not own.
 *
 * Return: the WQE, or NULL when the record is inconsistent.
 */
struct shca_send_wqe *shca_req_rec_wqe(struct shca_qp *qp,
				       const struct shca_txhist_rec *rec)
{
	struct shca_req *req = &qp->req;
	struct shca_send_wqe *wqe;

	lockdep_assert_held(&qp->lock);
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
u32 shca_req_sent_end(struct shca_qp *qp)
{
	const struct shca_txhist_rec *rec;
	u32 id;

	if (shca_txhist_newest(&qp->req.hist, &id))
		return qp->req.psn;
	rec = shca_txhist_get(&qp->req.hist, id);
	return rec ? shca_txhist_frontier(rec) : qp->req.psn;
}

/**
 * shca_req_outstanding - is any sent packet not acknowledged yet?
 * @qp: QP (caller must hold qp->lock)
 *
 * Return: true while packets are in flight.
 */
bool shca_req_outstanding(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->lock);

	return shca_psn_diff(shca_req_sent_end(qp), qp->req.una_psn) > 0;
}

/**
 * shca_req_oldest - the oldest transmit history record
 * @qp: QP (caller must hold qp->lock)
 *
 * Return: the record, or NULL when the history is empty.
 */
const struct shca_txhist_rec *shca_req_oldest(struct shca_qp *qp)
{
	u32 id;

	lockdep_assert_held(&qp->lock);
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

/**
 * shca_req_fail - fail a message and move the QP to the error state
 * @qp: QP (caller must hold qp->lock)
 * @psn: a PSN of the message (else the oldest outstanding one fails)
 * @status: its completion status
 *
 * The error state flushes the rest.
 */
void shca_req_fail(struct shca_qp *qp, u32 psn,
		   enum ib_wc_status status)
{
	struct shca_req *req = &qp->req;
	struct shca_send_wqe *wqe = NULL;
	u32 id, i;

	lockdep_assert_held(&qp->lock);
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

/**
 * shca_req_retire - retire the records an acknowledgement covers and
 * complete their WQEs
 * @qp: QP (caller must hold qp->lock)
 * @psn: the acknowledgement covers the PSNs up to this one
 * @flags: SHCA_TXH_RETIRE_REPLY when a response came
 */
void shca_req_retire(struct shca_qp *qp, u32 psn, u32 flags)
{
	struct shca_txhist_rec out[SHCA_RETIRE_BATCH];
	struct shca_req *req = &qp->req;
	u32 turns = req->hist.cap / SHCA_RETIRE_BATCH + 1;
	int n, i;

	lockdep_assert_held(&qp->lock);
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

/**
 * shca_req_flush - forget every message in flight (the QP failed; its
 * WQEs were given their final status)
 * @qp: QP (caller must hold qp->lock)
 */
void shca_req_flush(struct shca_qp *qp)
{
	struct shca_req *req = &qp->req;

	lockdep_assert_held(&qp->lock);
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

	lockdep_assert_held(&qp->lock);
	shca_req_flush(qp);
	shca_txhist_reset(&req->hist);
	req->psn = qp->attr.sq_psn & SHCA_PSN_MASK;
	req->una_psn = req->psn;
	req->ack_psn = req->psn;
	req->retrying = false;
	req->retry = qp->attr.retry_cnt;
	req->rnr_retry = qp->attr.rnr_retry;
}
