// SPDX-License-Identifier: GPL-2.0
/*
 * shca completer: what the requester receives.  ACKs and NAKs (with their
 * AETH), READ responses (also the empty ones that answer a FLUSH or an
 * ATOMIC WRITE) and ATOMIC acknowledgements retire transmit
 * history records in PSN order; a sequence NAK, a lost response (an ACK
 * that passes a READ or ATOMIC whose response is missing: an implicit
 * NAK) or the ACK timeout replays from the oldest unacknowledged packet;
 * an RNR NAK waits out its timer.  Retries are counted per episode.
 *
 * Every function here runs with qp->lock held, but the timer's.
 */
#include "shca.h"
#include "shca_comp.h"
#include "shca_engine.h"
#include "shca_hdr.h"
#include "shca_mem.h"
#include "shca_qpc.h"
#include "shca_req.h"
#include "shca_sendq.h"
#include "shca_wq.h"
#include "shca_trace.h"

/*
 * Go back N before sending anything new (see shca_req_replay()); @why:
 * enum shca_trace_retry_why, @left: the retries left.
 */
static void shca_req_retry(struct shca_qp *qp, u8 why, int left)
{
	trace_shca_retry(&qp->sdev->ibdev, qp->qpn, qp->req.una_psn, why, left);
	qp->req.need_retry = true;
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
 * @why: the sign (enum shca_trace_retry_why).
 */
static void shca_req_loss(struct shca_qp *qp, u8 why)
{
	struct shca_req *req = &qp->req;

	if (req->retrying || !shca_req_live(qp))
		return;
	if (req->retry-- <= 0) {
		shca_req_fail(qp, req->una_psn, IB_WC_RETRY_EXC_ERR);
		return;
	}
	req->retrying = true;
	shca_req_retry(qp, why, req->retry);
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
	trace_shca_rnr(&qp->sdev->ibdev, qp->qpn, psn,
		       shca_rnr_timer_usec(timer), req->rnr_retry);
	shca_req_retry(qp, SHCA_RETRY_RNR, req->rnr_retry);
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
		shca_req_loss(qp, SHCA_RETRY_NAK_SEQ);
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

/*
 * Is @psn one of the READ or ATOMIC whose response is still awaited, the
 * oldest outstanding request?  Its responses move ack_psn past the PSNs
 * they cover, but the request is not complete.
 */
static bool shca_req_in_reply(struct shca_qp *qp, u32 psn)
{
	const struct shca_txhist_rec *old = shca_req_oldest(qp);

	return old && (old->flags & SHCA_TXH_F_REPLY) &&
	       shca_psn_diff(psn, old->first_psn) >= 0 &&
	       shca_psn_diff(psn, old->last_psn) <= 0;
}

static void shca_req_aeth(struct shca_qp *qp, const struct shca_pkt_hdr *h)
{
	u8 syn = h->aeth.syndrome;
	bool stale = shca_psn_diff(h->psn, qp->req.ack_psn) < 0;

	trace_shca_ack_recv(&qp->sdev->ibdev, qp->qpn, h->psn, syn, h->aeth.msn);
	switch (shca_aeth_type(syn)) {
	case SHCA_AETH_ACK:
		shca_stat_inc(qp->sdev, SHCA_CNT_ACK_RCVD);
		shca_req_ack_upto(qp, h->psn);
		if (shca_req_reply_lost(qp))
			shca_req_loss(qp, SHCA_RETRY_IMPLICIT);
		break;
	case SHCA_AETH_RNR_NAK:
		shca_stat_inc(qp->sdev, SHCA_CNT_RNR_NAK_RCVD);
		/* a NAK for a PSN acknowledged since is old news */
		if (stale) {
			shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_PSN);
			break;
		}
		shca_req_ack_upto(qp, shca_psn_add(h->psn, -1));
		if (shca_req_live(qp))
			shca_req_rnr(qp, h->psn, shca_aeth_value(syn));
		break;
	case SHCA_AETH_NAK:
		shca_stat_inc(qp->sdev, shca_aeth_value(syn) ==
			      SHCA_NAK_PSN_SEQ_ERR ? SHCA_CNT_NAK_SEQ_RCVD :
			      SHCA_CNT_NAK_OTHER_RCVD);
		/*
		 * Any NAK names the request it refuses.  One before the
		 * oldest unacknowledged PSN names a request completed
		 * already (a late duplicate, or a forgery): it matches no
		 * outstanding request and must not fail a newer one.  But
		 * the PSNs of a READ still waiting for the rest of its
		 * responses are behind that PSN too: a responder that
		 * resent the READ from an earlier PSN (our retry) and
		 * failed it there (its R_Key invalidated meanwhile) NAKs
		 * one of them, and will answer nothing more.
		 */
		if (stale && (shca_aeth_value(syn) == SHCA_NAK_PSN_SEQ_ERR ||
			      !shca_req_in_reply(qp, h->psn))) {
			shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_PSN);
			break;
		}
		if (!stale)
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
	if (shca_sgl_copy_skb(&SHCA_SGL(qp, wqe->sge, wqe->num_sge), off, skb,
			      hdr_len, plen, SHCA_TO_MR))
		return IB_WC_LOC_PROT_ERR;
	trace_shca_place(&qp->sdev->ibdev, qp->qpn, h->psn, h->opcode, off,
			 plen);
	return IB_WC_SUCCESS;
}

/*
 * FLUSH and ATOMIC WRITE are answered by a READ response (ONLY) without
 * data (IBA 1.5).  Returns a completion status.
 */
static enum ib_wc_status shca_req_empty_response(struct sk_buff *skb,
						 const struct shca_pkt_hdr *h,
						 u32 hdr_len)
{
	u8 op = h->opcode & 0x1f;

	if (op != SHCA_OP_RDMA_READ_RESPONSE_ONLY ||
	    shca_payload_len(skb->len + SHCA_ICRC_LEN, hdr_len, h->pad_count))
		return IB_WC_BAD_RESP_ERR;
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
			shca_req_loss(qp, SHCA_RETRY_RSP_GAP);
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_PSN);
		return;
	}

	if (rec->opcode == SHCA_WR_FLUSH ||
	    rec->opcode == SHCA_WR_ATOMIC_WRITE) {
		st = shca_req_empty_response(skb, h, hdr_len);
	} else if (rec->flags & SHCA_TXH_F_ATOMIC) {
		st = IB_WC_BAD_RESP_ERR;
		if (oi->flags & SHCA_OPF_ATOMIC)
			st = shca_sgl_copy_buf(&SHCA_SGL(qp, wqe->sge,
							 wqe->num_sge), 0,
					       (void *)&h->atomic_ack.orig,
					       sizeof(u64), SHCA_TO_MR) ?
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

	lockdep_assert_held(&qp->lock);
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

	lockdep_assert_held(&qp->lock);
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
	/*
	 * Started again while this expiry waited for the lock (an ACK
	 * timer armed, or an RNR wait begun, after the timer left its
	 * queue): that start owns the next expiry, and forwarding a queued
	 * timer is not allowed.
	 */
	if (hrtimer_is_queued(t)) {
		spin_unlock(&qp->lock);
		return HRTIMER_NORESTART;
	}
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
		trace_shca_timeout(&qp->sdev->ibdev, qp->qpn, req->una_psn,
				   req->retry);
		if (req->retry-- <= 0) {
			shca_req_fail(qp, req->una_psn, IB_WC_RETRY_EXC_ERR);
		} else {
			shca_req_retry(qp, SHCA_RETRY_TIMEOUT, req->retry);
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
