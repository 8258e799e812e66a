// SPDX-License-Identifier: GPL-2.0
/*
 * shca responder: requests arriving at a QP (RC, UC), UD receives, and
 * what the responder sends back (ACK/NAK, READ responses, ATOMIC
 * acknowledgements).
 *
 * Responses leave in PSN order: READ and ATOMIC resources are answered in
 * the order they were accepted and an owed ACK waits behind them; and a
 * QP's responses leave from one CPU at a time (shca_resp_flight_take()).
 *
 * Every function here runs with qp->lock held, unless it says otherwise.
 */
#include <linux/delay.h>

#include "shca.h"
#include "shca_hdr.h"
#include "shca_icrc.h"
#include "shca_qp.h"
#include "shca_engine.h"
#include "shca_fault.h"

/* how long shca_resp_ack_wait() waits for a deferred ACK to go */
#define SHCA_ACK_WAIT_US	100000

static bool shca_resp_state_ok(struct shca_qp *qp)
{
	return qp->state == IB_QPS_RTR || qp->state == IB_QPS_RTS ||
	       qp->state == IB_QPS_SQD;
}

/* ---- response order across CPUs --------------------------------------- */

#define SHCA_FLIGHT_CNT		GENMASK_ULL(31, 0)
#define SHCA_FLIGHT_TRIES	4

/*
 * Packets one CPU sends keep their order, but a netdev that queues per
 * CPU (a veth's receive backlog, a NIC's transmit queues picked by XPS)
 * may deliver two CPUs' packets in either order: an ACK sent by the
 * receive softirq on one CPU could reach the requester after the READ
 * responses the transmit stage sent next from another, which rdma_rxe
 * (6.12) takes for the end of the READ, without the rest of its data.
 * So a QP's responses leave from one CPU at a time: another CPU sends
 * only once the network stack has let go of all of them (the skb
 * destructor: on a veth the peer's IP receive orphans the packet, a NIC
 * frees it when transmitted, a drop frees it).
 */

/*
 * One response of the flight is gone (any context but hardirq): the last
 * one lets a waiting response go and drops the QP reference the flight
 * held.
 */
static void shca_resp_flight_put(struct shca_qp *qp)
{
	/* fully ordered: pairs with the barrier in shca_resp_may_send() */
	if (atomic64_dec_return(&qp->resp.flight) & SHCA_FLIGHT_CNT)
		return;
	if (atomic_read(&qp->resp.flight_wait) &&
	    atomic_xchg(&qp->resp.flight_wait, 0))
		shca_engine_schedule(qp);
	shca_qp_put(qp);
}

/* skb destructor of a response packet counted in the flight */
static void shca_resp_skb_done(struct sk_buff *skb)
{
	shca_resp_flight_put(skb_shinfo(skb)->destructor_arg);
}

/*
 * Count one more response leaving from this CPU, unless responses from
 * another CPU are still on their way.  The caller holds qp->lock, so the
 * only other writer is the destructor, which only lowers the count: the
 * loop retries after such a change, a bounded number of times (a false
 * return then just makes the response wait for the destructor).
 */
static bool shca_resp_flight_take(struct shca_qp *qp)
{
	u64 cpu = raw_smp_processor_id();
	s64 old = atomic64_read(&qp->resp.flight);
	s64 new;
	int i;

	for (i = 0; i < SHCA_FLIGHT_TRIES; i++) {
		if (!(old & SHCA_FLIGHT_CNT))
			new = (cpu << 32) | 1;
		else if ((u64)old >> 32 == cpu)
			new = old + 1;
		else
			return false;
		if (atomic64_try_cmpxchg(&qp->resp.flight, &old, new)) {
			if (!(old & SHCA_FLIGHT_CNT))
				refcount_inc(&qp->ref);
			return true;
		}
	}
	return false;
}

/* A READ response is held before it leaves (fault injection)? */
static bool shca_resp_holding(struct shca_qp *qp)
{
	return static_branch_unlikely(&shca_fault_armed) && qp->resp.held_skb;
}

/*
 * May this CPU send a response now?  On true, one packet is counted: the
 * caller sends it through shca_resp_xmit() (or builds none, which gives
 * the count back).  On false, the destructor that empties the flight
 * schedules the QP, whose transmit stage sends the response then.
 */
static bool shca_resp_may_send(struct shca_qp *qp)
{
	if (shca_resp_holding(qp)) {
		/* the held response's destructor or timer schedules the QP */
		atomic_set(&qp->resp.flight_wait, 1);
		return false;
	}
	if (shca_resp_flight_take(qp))
		return true;
	atomic_set(&qp->resp.flight_wait, 1);
	/*
	 * A full barrier, not smp_mb__after_atomic(): atomic_set() is a
	 * plain store, which could otherwise pass the load of the count
	 * below (x86 too), and the last destructor would miss this waiter.
	 * Pairs with atomic64_dec_return() in shca_resp_flight_put().
	 */
	smp_mb();
	if (shca_resp_flight_take(qp))
		return true;
	shca_stat_inc(qp->sdev, SHCA_CNT_RSP_CPU_WAITS);
	return false;
}

/*
 * Send a response packet counted by shca_resp_may_send(), or, with a NULL
 * @skb (it could not be built), give its count back.  @counted false: a
 * packet sent outside the count (a NAK that ends the connection).  Caller
 * holds qp->lock, or sends a deferred ACK (shca_resp_ack_send()).
 */
static void shca_resp_xmit(struct shca_qp *qp, struct sk_buff *skb,
			   bool counted)
{
	if (!skb) {
		if (counted)
			shca_resp_flight_put(qp);
		return;
	}
	if (counted) {
		/* unused without SKBFL_ZEROCOPY_ENABLE, which these lack */
		skb_shinfo(skb)->destructor_arg = qp;
		skb->destructor = shca_resp_skb_done;
	}
	shca_send_pkt(qp, &qp->av, skb);
}

/* ---- fault injection: a READ response held before it leaves --------- */

/* The hold ends: send the response (softirq, the timer's). */
static enum hrtimer_restart shca_resp_held_fn(struct hrtimer *t)
{
	struct shca_qp *qp = container_of(t, struct shca_qp,
					  resp.held_timer);
	struct sk_buff *skb;

	spin_lock(&qp->lock);
	skb = qp->resp.held_skb;
	qp->resp.held_skb = NULL;
	shca_resp_xmit(qp, skb, true);
	/*
	 * What waited behind it leaves from here too, in order: from
	 * another CPU it could pass the held packet, whose flight count
	 * drops (the peer's IP receive orphans it) before the peer has
	 * queued it.
	 */
	shca_resp_transmit(qp, SHCA_TX_BUDGET);
	spin_unlock(&qp->lock);
	shca_fault_hold_done();
	shca_engine_schedule(qp);
	shca_qp_put(qp);
	return HRTIMER_NORESTART;
}

/*
 * Set @skb (a counted READ response) aside if it is the packet the armed
 * hold waits for.  Returns true when it was; the timer sends it.
 */
static bool shca_resp_hold(struct shca_qp *qp, struct sk_buff *skb)
{
	u32 ms;

	if (!static_branch_unlikely(&shca_fault_armed) || !skb ||
	    !shca_fault_take(SHCA_HOLD_XMIT, &ms))
		return false;
	refcount_inc(&qp->ref);
	qp->resp.held_skb = skb;
	/* pinned: it leaves from the CPU the flight counted it on */
	hrtimer_start(&qp->resp.held_timer, ms_to_ktime(ms),
		      HRTIMER_MODE_REL_PINNED_SOFT);
	return true;
}

/*
 * Build and send an ACKNOWLEDGE packet carrying @syndrome and @msn for
 * @psn (@counted: see shca_resp_xmit()).  Caller holds qp->lock, or keeps
 * qp->av and qp->attr.dest_qp_num from changing otherwise
 * (qp->resp.ack_out).
 */
static void shca_resp_ack_out(struct shca_qp *qp, u32 psn, u8 syndrome,
			      u32 msn, bool counted)
{
	struct shca_pkt_hdr h = {
		.opcode = SHCA_RC_ACKNOWLEDGE,
		.dest_qpn = qp->attr.dest_qp_num,
		.psn = psn,
		.aeth = { .syndrome = syndrome, .msn = msn },
	};
	struct sk_buff *skb;
	u8 *payload;

	skb = shca_build_pkt(qp, &qp->av, &h, 0, &payload);
	if (skb && shca_aeth_type(syndrome) == SHCA_AETH_ACK)
		shca_stat_inc(qp->sdev, SHCA_CNT_ACK_SENT);
	shca_resp_xmit(qp, skb, counted);
}

/*
 * Send an ACKNOWLEDGE packet carrying @syndrome for @psn, or leave a
 * positive one to the receive path (qp->resp.ack_defer), which builds
 * and sends it after dropping qp->lock: in a ping-pong the process the
 * packet woke posts its answer at once, and its doorbell call waits for
 * this lock.  It still leaves in order: it is counted in the flight, so
 * no other CPU sends a response before it is gone, and this one sends it
 * before any other.  NAKs go at once.  The caller has counted the packet
 * (shca_resp_may_send()).
 */
static void shca_resp_send_ack(struct shca_qp *qp, u32 psn, u8 syndrome)
{
	struct shca_ack *ack = qp->resp.ack_defer;

	if (ack && !ack->valid && shca_aeth_type(syndrome) == SHCA_AETH_ACK) {
		*ack = (struct shca_ack){ .valid = true, .psn = psn,
					  .syndrome = syndrome,
					  .msn = qp->resp.msn };
		WRITE_ONCE(qp->resp.ack_out, true);
		return;
	}
	shca_resp_ack_out(qp, psn, syndrome, qp->resp.msn, true);
}

/**
 * shca_resp_ack_send - send the ACK shca_resp_send_ack() left
 * @qp: QP (caller holds a reference, not qp->lock, and has BHs off)
 * @ack: the ACK, taken from qp->resp.ack_defer
 *
 * qp->resp.ack_out keeps the address vector and the destination QPN the
 * packet is built from; cleared when it is gone.
 */
void shca_resp_ack_send(struct shca_qp *qp, struct shca_ack *ack)
{
	shca_resp_ack_out(qp, ack->psn, ack->syndrome, ack->msn, true);
	/* pairs with shca_resp_ack_wait() */
	smp_store_release(&qp->resp.ack_out, false);
}

/**
 * shca_resp_ack_wait - wait until no ACK is being sent without qp->lock
 * @qp: QP (caller must hold qp->lock, BHs off)
 *
 * Before qp->av or the destination QPN changes.  The sender runs in a
 * softirq on another CPU (on this one it would have finished before the
 * caller could take the lock) and needs no lock: a few microseconds.  A
 * sender that has not finished after SHCA_ACK_WAIT_US (its CPU stopped)
 * is reported and no longer waited for.
 */
void shca_resp_ack_wait(struct shca_qp *qp)
{
	int i;

	for (i = 0; i < SHCA_ACK_WAIT_US; i++) {
		/* pairs with the release in shca_resp_ack_send() */
		if (!smp_load_acquire(&qp->resp.ack_out))
			return;
		udelay(1);
	}
	ibdev_warn_ratelimited(&qp->sdev->ibdev,
			       "QP %u: ACK sender stuck for %d us\n", qp->qpn,
			       SHCA_ACK_WAIT_US);
}

/*
 * Send a sequence or RNR NAK now and count it in the stats.  The caller
 * has counted the packet in the flight (shca_resp_may_send()).
 */
static void shca_resp_send_nak(struct shca_qp *qp, u32 psn, u8 syndrome)
{
	shca_stat_inc(qp->sdev, shca_aeth_type(syndrome) == SHCA_AETH_RNR_NAK ?
		      SHCA_CNT_RNR_NAK_SENT : SHCA_CNT_NAK_SEQ_SENT);
	shca_resp_send_ack(qp, psn, syndrome);
}

/*
 * A sequence or RNR NAK for @psn.  Responses leave in PSN order: while
 * READ/ATOMIC responses for earlier requests are still to be sent (or
 * another CPU's are on their way), the NAK waits behind them (sent
 * ahead, it would tell the requester those responses were lost).  It
 * acknowledges everything before @psn, so no ACK is owed any more.
 */
static void shca_resp_nak(struct shca_qp *qp, u32 psn, u8 syndrome)
{
	struct shca_resp *resp = &qp->resp;

	resp->ack_pending = false;
	if (!resp->res_out && shca_resp_may_send(qp)) {
		resp->nak_pending = false;
		shca_resp_send_nak(qp, psn, syndrome);
		return;
	}
	resp->nak_pending = true;
	resp->nak_psn = psn;
	resp->nak_syn = syndrome;
}

/* A NAK that ends the connection: invalid request, access, operational. */
static void shca_resp_nak_fatal_now(struct shca_qp *qp, u32 psn,
				    enum shca_nak_code code, bool counted)
{
	shca_stat_inc(qp->sdev, SHCA_CNT_NAK_OTHER_SENT);
	shca_resp_ack_out(qp, psn, shca_aeth_nak(code), qp->resp.msn, counted);
	shca_qp_error(qp);
}

/* READ/ATOMIC resources in use: the negotiated number, at least one. */
static u32 shca_resp_nres(struct shca_qp *qp)
{
	return min_t(u32, max_t(u32, qp->attr.max_dest_rd_atomic, 1),
		     SHCA_MAX_RD_ATOMIC);
}

/* Are READ/ATOMIC responses owed to a request before @psn? */
static bool shca_resp_owed_before(struct shca_qp *qp, u32 psn)
{
	u32 i, n = shca_resp_nres(qp);

	for (i = 0; i < n; i++) {
		struct shca_rd_res *res = &qp->resp.res[i];

		if (res->valid && res->pending &&
		    shca_psn_diff(res->next_psn, psn) < 0)
			return true;
	}
	return false;
}

/*
 * A NAK that ends the connection: invalid request, access, operational.
 * Responses leave in PSN order: while READ/ATOMIC responses are owed to
 * earlier requests (or one is held by fault injection), the NAK waits
 * behind them (resp->fatal_pending: no request is taken meanwhile, the
 * transmit stage sends them, then the NAK, then moves the QP to error).
 * Sent at once otherwise, even when another CPU's responses may still
 * pass it: the connection ends.
 */
static void shca_resp_nak_fatal(struct shca_qp *qp, u32 psn,
				enum shca_nak_code code)
{
	struct shca_resp *resp = &qp->resp;

	if (!resp->fatal_pending &&
	    (shca_resp_owed_before(qp, psn) || shca_resp_holding(qp))) {
		resp->fatal_pending = true;
		resp->fatal_psn = psn;
		resp->fatal_code = code;
		resp->ack_pending = false;
		resp->nak_pending = false;
		return;
	}
	shca_resp_nak_fatal_now(qp, psn, code, shca_resp_flight_take(qp));
}

/*
 * Post a receive completion for the WQE in qp->resp.rwqe; qp->resp.se
 * says whether the message was solicited.
 */
static void shca_resp_complete_recv(struct shca_qp *qp, u8 opcode,
				    enum ib_wc_status status, u32 byte_len,
				    u16 wc_flags, u32 ex)
{
	struct shca_cqe cqe = {
		.wr_id = qp->resp.rwqe->wr_id,
		.status = status,
		.opcode = opcode,
		.wc_flags = wc_flags,
		.byte_len = byte_len,
		.ex = ex,
		.qp_num = qp->qpn,
		.port_num = 1,
	};

	shca_cq_post(qp->rcq, &cqe, qp->resp.se);
}

/*
 * Take the next receive WQE into qp->resp.rwqe.  A malformed one completes
 * with IB_WC_LOC_QP_OP_ERR and moves the QP to error.  Returns 0, -EAGAIN
 * (none posted) or another negative errno (the caller NAKs).
 */
static int shca_resp_get_rwqe(struct shca_qp *qp)
{
	int ret;

	if (qp->srq) {
		ret = shca_srq_get_wqe(qp->srq, qp->resp.rwqe);
	} else {
		spin_lock(&qp->rq_lock);
		ret = shca_ring_get_rqe(&qp->rq, qp->max_recv_sge,
					qp->resp.rwqe);
		spin_unlock(&qp->rq_lock);
	}
	if (ret == -EBADMSG) {
		shca_resp_complete_recv(qp, IB_WC_RECV, IB_WC_LOC_QP_OP_ERR,
					0, 0, 0);
		shca_qp_error(qp);
	}
	return ret;
}

static u32 shca_resp_plen(struct sk_buff *skb, const struct shca_pkt_hdr *h,
			  u32 hdr_len)
{
	return shca_payload_len(skb->len + SHCA_ICRC_LEN, hdr_len,
				h->pad_count);
}

/*
 * SEND packets.  Returns 0, or a NAK code; -EAGAIN means no receive WQE
 * (RNR).
 */
static int shca_resp_send(struct shca_qp *qp, struct sk_buff *skb,
			  const struct shca_pkt_hdr *h, u32 hdr_len)
{
	const struct shca_opcode_info *oi = shca_opcode_info(h->opcode);
	struct shca_resp *resp = &qp->resp;
	u32 plen = shca_resp_plen(skb, h, hdr_len);
	u16 flags = 0;
	u32 ex = 0;
	int ret;

	if (oi->flags & SHCA_OPF_FIRST) {
		ret = shca_resp_get_rwqe(qp);
		if (ret == -EAGAIN)
			return -EAGAIN;
		if (ret) {
			shca_qp_error(qp);
			return SHCA_NAK_REMOTE_OP_ERR;
		}
		resp->in_send = true;
		resp->recv_off = 0;
	}
	if (plen > resp->rwqe->length - min(resp->recv_off,
					    resp->rwqe->length)) {
		shca_resp_complete_recv(qp, IB_WC_RECV, IB_WC_LOC_LEN_ERR,
					0, 0, 0);
		resp->in_send = false;
		return SHCA_NAK_INVALID_REQ;
	}
	ret = shca_sgl_copy(qp->sdev, qp->pd, resp->rwqe->sge,
			    resp->rwqe->num_sge, resp->recv_off, NULL, skb,
			    hdr_len, plen, SHCA_TO_MR);
	if (ret) {
		shca_resp_complete_recv(qp, IB_WC_RECV, IB_WC_LOC_PROT_ERR,
					0, 0, 0);
		resp->in_send = false;
		return SHCA_NAK_REMOTE_OP_ERR;
	}
	resp->recv_off += plen;
	if (!(oi->flags & SHCA_OPF_LAST))
		return 0;

	if (oi->flags & SHCA_OPF_IMM) {
		flags |= IB_WC_WITH_IMM;
		ex = (__force u32)h->imm;
	} else if (oi->flags & SHCA_OPF_INV) {
		if (shca_mr_invalidate(qp->sdev, qp->pd, h->ieth.rkey, true)) {
			shca_resp_complete_recv(qp, IB_WC_RECV,
						IB_WC_REM_INV_REQ_ERR, 0, 0, 0);
			resp->in_send = false;
			return SHCA_NAK_INVALID_REQ;
		}
		flags |= IB_WC_WITH_INVALIDATE;
		ex = h->ieth.rkey;
	}
	shca_resp_complete_recv(qp, IB_WC_RECV, IB_WC_SUCCESS, resp->recv_off,
				flags, ex);
	resp->in_send = false;
	return 0;
}

static bool shca_resp_access_ok(struct shca_qp *qp, int access)
{
	return (qp->attr.qp_access_flags & access) == access;
}

/* The RDMA WRITE in progress is over (done or abandoned): close its slot. */
static void shca_resp_write_end(struct shca_qp *qp)
{
	struct shca_resp *resp = &qp->resp;

	resp->in_write = false;
	shca_rkey_close(qp, resp->wr_slot);
	resp->wr_slot = -1;
}

/*
 * A WRITE's FIRST (or ONLY) packet: note the message and open its R_Key
 * slot with a full check of the whole range (none for a zero-length
 * WRITE, which accesses no memory).  Returns 0 or a NAK code.
 */
static int shca_resp_write_begin(struct shca_qp *qp,
				 const struct shca_pkt_hdr *h)
{
	struct shca_resp *resp = &qp->resp;
	int slot;

	shca_resp_write_end(qp);
	resp->in_write = true;
	resp->wr_va = h->reth.va;
	resp->wr_rkey = h->reth.rkey;
	resp->wr_resid = h->reth.dma_len;
	resp->wr_len = h->reth.dma_len;
	if (!resp->wr_resid)
		return 0;
	slot = shca_rkey_open(qp, resp->wr_rkey, resp->wr_va, resp->wr_resid,
			      IB_ACCESS_REMOTE_WRITE);
	if (slot < 0)
		return slot == -ENOSPC ? SHCA_NAK_REMOTE_OP_ERR :
		       SHCA_NAK_REMOTE_ACCESS_ERR;
	resp->wr_slot = slot;
	return 0;
}

/*
 * RDMA WRITE packets.  Returns 0 or a NAK code; -EAGAIN = RNR.  The
 * FIRST packet checks the R_Key for the whole message and opens a slot;
 * every packet's payload is placed through the slot (shca_rkey.c), so an
 * invalidation stops the WRITE at its next packet.
 */
static int shca_resp_write(struct shca_qp *qp, struct sk_buff *skb,
			   const struct shca_pkt_hdr *h, u32 hdr_len)
{
	const struct shca_opcode_info *oi = shca_opcode_info(h->opcode);
	struct shca_resp *resp = &qp->resp;
	u32 plen = shca_resp_plen(skb, h, hdr_len);
	int ret;

	if (!shca_resp_access_ok(qp, IB_ACCESS_REMOTE_WRITE))
		return SHCA_NAK_INVALID_REQ;
	if ((oi->flags & SHCA_OPF_IMM) && !resp->in_send) {
		/*
		 * The packet carrying the immediate (ONLY or LAST) takes its
		 * receive WQE before anything changes: after an RNR NAK the
		 * requester sends just this packet again, and the WRITE must
		 * still be in progress then.
		 */
		ret = shca_resp_get_rwqe(qp);
		if (ret == -EAGAIN)
			return -EAGAIN;
		if (ret)
			return SHCA_NAK_REMOTE_OP_ERR;
		resp->in_send = true;
	}
	if (oi->flags & SHCA_OPF_FIRST) {
		ret = shca_resp_write_begin(qp, h);
		if (ret)
			return ret;
	}
	if (plen > resp->wr_resid ||
	    (!(oi->flags & SHCA_OPF_LAST) && plen != resp->seg))
		return SHCA_NAK_INVALID_REQ;
	if (plen && shca_rkey_write_skb(qp, resp->wr_slot, resp->wr_va, skb,
					hdr_len, plen))
		return SHCA_NAK_REMOTE_ACCESS_ERR;
	resp->wr_va += plen;
	resp->wr_resid -= plen;
	if (!(oi->flags & SHCA_OPF_LAST))
		return 0;
	shca_resp_write_end(qp);
	if (resp->wr_resid)
		return SHCA_NAK_INVALID_REQ;
	if (!(oi->flags & SHCA_OPF_IMM))
		return 0;
	resp->in_send = false;
	shca_resp_complete_recv(qp, IB_WC_RECV_RDMA_WITH_IMM, IB_WC_SUCCESS,
				resp->wr_len, IB_WC_WITH_IMM,
				(__force u32)h->imm);
	return 0;
}

/* The READ whose responses hold the READ slot stops holding it. */
static void shca_resp_read_stop(struct shca_qp *qp)
{
	struct shca_resp *resp = &qp->resp;

	shca_rkey_close(qp, resp->rd_slot);
	resp->rd_slot = -1;
	resp->rd_res = NULL;
}

static struct shca_rd_res *shca_resp_new_res(struct shca_qp *qp)
{
	struct shca_resp *resp = &qp->resp;
	u32 n = shca_resp_nres(qp);
	struct shca_rd_res *res;

	res = &resp->res[resp->res_next % n];
	if (res->valid && res->pending && !res->sent)
		return NULL;	/* more outstanding than negotiated */
	/*
	 * The oldest resource, answered once and queued again for a
	 * duplicate: the requester has completed it since (it used the
	 * credit for this request), so that answer is no longer needed.
	 */
	if (res->valid && res->pending && resp->res_out)
		resp->res_out--;
	if (res == resp->rd_res)
		shca_resp_read_stop(qp);
	resp->res_next++;
	memset(res, 0, sizeof(*res));
	res->valid = true;
	res->pending = true;
	resp->res_out++;
	/* responses acknowledge every earlier request */
	resp->ack_pending = false;
	return res;
}

static int shca_resp_read(struct shca_qp *qp, const struct shca_pkt_hdr *h)
{
	u32 mtu = shca_qp_mtu(qp);
	struct shca_rd_res *res;

	if (!shca_resp_access_ok(qp, IB_ACCESS_REMOTE_READ))
		return SHCA_NAK_INVALID_REQ;
	if (h->reth.dma_len > SHCA_MAX_MSG_SIZE)
		return SHCA_NAK_INVALID_REQ;
	/* checked now; its responses open a slot when they are built */
	if (h->reth.dma_len &&
	    shca_rkey_check(qp, h->reth.rkey, h->reth.va, h->reth.dma_len,
			    IB_ACCESS_REMOTE_READ))
		return SHCA_NAK_REMOTE_ACCESS_ERR;
	res = shca_resp_new_res(qp);
	if (!res)
		return SHCA_NAK_INVALID_REQ;
	res->mtu = mtu;
	res->first_psn = h->psn;
	res->next_psn = h->psn;
	res->last_psn = shca_psn_add(h->psn,
				     max_t(u32, DIV_ROUND_UP(h->reth.dma_len,
							     mtu), 1) - 1);
	res->va = h->reth.va;
	res->rkey = h->reth.rkey;
	res->length = h->reth.dma_len;
	qp->resp.epsn = shca_psn_add(res->last_psn, 1);
	return 0;
}

static int shca_resp_atomic(struct shca_qp *qp, const struct shca_pkt_hdr *h)
{
	bool cmp = (h->opcode & 0x1f) == SHCA_OP_COMPARE_SWAP;
	struct shca_rd_res *res;
	int slot, ret;
	u64 orig;

	if (!shca_resp_access_ok(qp, IB_ACCESS_REMOTE_ATOMIC))
		return SHCA_NAK_INVALID_REQ;
	if (h->atomic_eth.va & 7)
		return SHCA_NAK_INVALID_REQ;
	slot = shca_rkey_open(qp, h->atomic_eth.rkey, h->atomic_eth.va,
			      sizeof(u64), IB_ACCESS_REMOTE_ATOMIC);
	if (slot < 0)
		return slot == -ENOSPC ? SHCA_NAK_REMOTE_OP_ERR :
		       SHCA_NAK_REMOTE_ACCESS_ERR;
	res = shca_resp_new_res(qp);
	if (!res) {
		shca_rkey_close(qp, slot);
		return SHCA_NAK_INVALID_REQ;
	}
	ret = shca_rkey_atomic(qp, slot, h->atomic_eth.va,
			       cmp ? SHCA_ATOMIC_CMP_SWAP :
			       SHCA_ATOMIC_FETCH_ADD,
			       cmp ? h->atomic_eth.compare :
			       h->atomic_eth.swap_add,
			       h->atomic_eth.swap_add, &orig);
	shca_rkey_close(qp, slot);
	if (ret) {
		res->valid = false;
		res->pending = false;
		qp->resp.res_out--;
		return SHCA_NAK_REMOTE_ACCESS_ERR;
	}
	res->atomic = true;
	res->first_psn = h->psn;
	res->last_psn = h->psn;
	res->next_psn = h->psn;
	res->orig = orig;
	return 0;
}

/* Largest path MTU the QP has had since RTR. */
static u32 shca_resp_max_seg(struct shca_qp *qp)
{
	u32 m = qp->resp.mtu_seen & 0x3e;	/* IB_MTU_256..IB_MTU_4096 */

	return m ? ib_mtu_enum_to_int((enum ib_mtu)__fls(m)) : 0;
}

/* Is @plen one of the path MTUs the QP has had since RTR? */
static bool shca_resp_seg_ok(struct shca_qp *qp, u32 plen)
{
	u32 m = qp->resp.mtu_seen & 0x3e;

	return plen >= 256 && plen <= 4096 && is_power_of_2(plen) &&
	       (m & (1U << (ilog2(plen) - 7)));
}

/*
 * Payload length rules of a SEND or WRITE packet.  A multi-packet message
 * is cut into segments of the path MTU: its FIRST packet carries exactly
 * one segment, every MIDDLE the same, its LAST at most that and not
 * nothing; an ONLY packet at most the MTU.  "The path MTU" is the one the
 * requester cut the message with: the current one, or one the QP had
 * before a path MTU change (a message sent before the change may be
 * retransmitted after it).  A FIRST packet sets the segment size.
 */
static bool shca_resp_len_ok(struct shca_qp *qp,
			     const struct shca_opcode_info *oi, u32 plen)
{
	struct shca_resp *resp = &qp->resp;

	if (!(oi->flags & (SHCA_OPF_SEND | SHCA_OPF_WRITE)))
		return true;
	if ((oi->flags & SHCA_OPF_ONLY) == SHCA_OPF_ONLY)
		return plen <= shca_resp_max_seg(qp);
	if (oi->flags & SHCA_OPF_FIRST) {
		if (!shca_resp_seg_ok(qp, plen))
			return false;
		resp->seg = plen;
		return true;
	}
	if (!(oi->flags & SHCA_OPF_LAST))
		return plen == resp->seg;
	return plen && plen <= resp->seg;
}

/* Is @op (low five bits) the right next packet of the message? */
static bool shca_resp_seq_ok(struct shca_qp *qp,
			     const struct shca_opcode_info *oi)
{
	if (qp->resp.in_write)
		return (oi->flags & SHCA_OPF_WRITE) &&
		       !(oi->flags & SHCA_OPF_FIRST);
	if (qp->resp.in_send)
		return (oi->flags & SHCA_OPF_SEND) &&
		       !(oi->flags & SHCA_OPF_FIRST);
	return !!(oi->flags & SHCA_OPF_FIRST);
}

/* A duplicate request: answer it again, never execute it again. */
static void shca_resp_duplicate(struct shca_qp *qp,
				const struct shca_pkt_hdr *h)
{
	struct shca_resp *resp = &qp->resp;
	u32 i, n = shca_resp_nres(qp);
	const struct shca_opcode_info *oi = shca_opcode_info(h->opcode);
	struct shca_rd_res *res;

	shca_stat_inc(qp->sdev, SHCA_CNT_DUP_REQ);
	/*
	 * SEND/WRITE: acknowledge everything received again, after the
	 * READ/ATOMIC responses still to go when there are some.  Only
	 * when the newest request is a SEND/WRITE (ack_psn is its PSN): a
	 * plain ACK must not carry the PSN of a READ/ATOMIC, which only
	 * its response acknowledges (rdma_rxe completes a READ/ATOMIC on
	 * such an ACK, without its data), and an ACK for an older PSN
	 * could reach the requester in the middle of a READ's responses.
	 * Behind this duplicate the requester resends that READ/ATOMIC
	 * too, and its response acknowledges everything before it.
	 */
	if (!(oi->flags & (SHCA_OPF_READ | SHCA_OPF_ATOMIC))) {
		if (resp->ack_psn != shca_psn_add(resp->epsn, -1))
			return;
		if (resp->res_out || !shca_resp_may_send(qp))
			resp->ack_pending = true;
		else
			shca_resp_send_ack(qp, resp->ack_psn,
					   shca_aeth_ack(SHCA_AETH_CREDITS_INVALID));
		return;
	}
	for (i = 0; i < n; i++) {
		res = &resp->res[i];
		if (!res->valid ||
		    shca_psn_diff(h->psn, res->first_psn) < 0 ||
		    shca_psn_diff(h->psn, res->last_psn) > 0)
			continue;
		if (!!(oi->flags & SHCA_OPF_ATOMIC) != res->atomic)
			return;
		/* answered from the saved resource: never executed again */
		shca_stat_inc(qp->sdev, SHCA_CNT_DUP_RD_ATOMIC);
		if (!res->pending) {
			res->pending = true;
			resp->res_out++;
		}
		if (shca_psn_diff(h->psn, res->next_psn) < 0 ||
		    !res->atomic)
			res->next_psn = h->psn;
		return;
	}
}

static void shca_resp_rnr(struct shca_qp *qp, u32 psn)
{
	shca_resp_nak(qp, psn, shca_aeth_rnr_nak(qp->attr.min_rnr_timer));
}

/* An in-sequence RC request. */
static void shca_resp_rc(struct shca_qp *qp, struct sk_buff *skb,
			 const struct shca_pkt_hdr *h, u32 hdr_len)
{
	const struct shca_opcode_info *oi = shca_opcode_info(h->opcode);
	struct shca_resp *resp = &qp->resp;
	int ret;

	/* the PSN a NAK asked for arrived: a NAK still waiting is moot */
	resp->nak_sent = false;
	resp->nak_pending = false;
	resp->se = h->solicited;
	if (!shca_resp_seq_ok(qp, oi) ||
	    !shca_resp_len_ok(qp, oi, shca_resp_plen(skb, h, hdr_len))) {
		shca_resp_nak_fatal(qp, h->psn, SHCA_NAK_INVALID_REQ);
		return;
	}
	if (oi->flags & SHCA_OPF_SEND)
		ret = shca_resp_send(qp, skb, h, hdr_len);
	else if (oi->flags & SHCA_OPF_WRITE)
		ret = shca_resp_write(qp, skb, h, hdr_len);
	else if (oi->flags & SHCA_OPF_READ)
		ret = shca_resp_read(qp, h);
	else
		ret = shca_resp_atomic(qp, h);

	if (ret == -EAGAIN) {
		shca_resp_rnr(qp, h->psn);
		return;
	}
	if (ret) {
		shca_resp_nak_fatal(qp, h->psn, ret);
		return;
	}
	if (oi->flags & SHCA_OPF_READ)
		return;		/* epsn moved past the responses */
	if (oi->flags & SHCA_OPF_LAST || oi->flags & SHCA_OPF_ATOMIC)
		resp->msn = (resp->msn + 1) & 0xffffff;
	resp->epsn = shca_psn_add(h->psn, 1);
	if (oi->flags & SHCA_OPF_ATOMIC)
		return;
	/*
	 * Coalescing: an ACK is owed only when the requester asks for one
	 * (AckReq); it then acknowledges everything up to this PSN.
	 */
	resp->ack_psn = h->psn;
	if (!h->ack_req)
		return;
	resp->ack_pending = true;
	if (!resp->res_out)
		shca_resp_transmit(qp, 1);
}

/* UC: no acknowledgements; a gap drops the message in progress. */
static void shca_resp_uc(struct shca_qp *qp, struct sk_buff *skb,
			 const struct shca_pkt_hdr *h, u32 hdr_len)
{
	const struct shca_opcode_info *oi = shca_opcode_info(h->opcode);
	struct shca_resp *resp = &qp->resp;

	if (h->psn != resp->epsn) {
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_PSN);
		resp->in_send = false;
		shca_resp_write_end(qp);
		resp->epsn = shca_psn_add(h->psn, 1);
		if (!(oi->flags & SHCA_OPF_FIRST))
			return;
	} else {
		resp->epsn = shca_psn_add(h->psn, 1);
	}
	if (!shca_resp_seq_ok(qp, oi)) {
		resp->in_send = false;
		shca_resp_write_end(qp);
		if (!(oi->flags & SHCA_OPF_FIRST))
			return;
	}
	/* UC drops what it cannot take; no NAK, no RNR */
	resp->se = h->solicited;
	if (!shca_resp_len_ok(qp, oi, shca_resp_plen(skb, h, hdr_len))) {
		resp->in_send = false;
		shca_resp_write_end(qp);
		return;
	}
	if (oi->flags & SHCA_OPF_SEND) {
		if (shca_resp_send(qp, skb, h, hdr_len))
			resp->in_send = false;
	} else if (shca_resp_write(qp, skb, h, hdr_len)) {
		shca_resp_write_end(qp);
		resp->in_send = false;
	}
}

/**
 * shca_resp_recv - responder: a request packet for an RC or UC QP
 * @qp: QP (caller must hold qp->lock)
 * @skb: packet, consumed
 * @h: parsed transport headers
 * @hdr_len: their length
 */
void shca_resp_recv(struct shca_qp *qp, struct sk_buff *skb,
		    const struct shca_pkt_hdr *h, u32 hdr_len)
{
	struct shca_resp *resp = &qp->resp;
	s32 diff;

	if (!shca_resp_state_ok(qp)) {
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_QP_STATE);
		goto out;
	}
	if (qp->type == IB_QPT_UC) {
		shca_resp_uc(qp, skb, h, hdr_len);
		goto out;
	}
	if (resp->fatal_pending) {
		/* a request failed: nothing after it is taken */
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_QP_STATE);
		goto out;
	}
	diff = shca_psn_diff(h->psn, resp->epsn);
	if (diff > 0) {
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_PSN);
		if (!resp->nak_sent) {
			resp->nak_sent = true;
			shca_resp_nak(qp, resp->epsn,
				      shca_aeth_nak(SHCA_NAK_PSN_SEQ_ERR));
		}
	} else if (diff < 0) {
		shca_resp_duplicate(qp, h);
	} else {
		shca_resp_rc(qp, skb, h, hdr_len);
	}
out:
	kfree_skb(skb);
}

/* ---- responder transmit: READ responses, ATOMIC acks, owed ACK ---- */

static struct shca_rd_res *shca_resp_next_res(struct shca_qp *qp)
{
	u32 n = shca_resp_nres(qp);
	struct shca_rd_res *best = NULL;
	u32 i;

	/* the pending resource with the oldest PSN goes first */
	for (i = 0; i < n; i++) {
		struct shca_rd_res *res = &qp->resp.res[i];

		if (res->valid && res->pending &&
		    (!best ||
		     shca_psn_diff(res->next_psn, best->next_psn) < 0))
			best = res;
	}
	return best;
}

static void shca_resp_res_done(struct shca_qp *qp, struct shca_rd_res *res)
{
	res->pending = false;
	res->sent = true;
	if (qp->resp.res_out)
		qp->resp.res_out--;
}

static int shca_resp_send_atomic_ack(struct shca_qp *qp,
				     struct shca_rd_res *res)
{
	struct shca_pkt_hdr h = {
		.opcode = SHCA_OP_RC | SHCA_OP_ATOMIC_ACKNOWLEDGE,
		.dest_qpn = qp->attr.dest_qp_num,
		.psn = res->first_psn,
		.aeth = {
			.syndrome = shca_aeth_ack(SHCA_AETH_CREDITS_INVALID),
			.msn = qp->resp.msn,
		},
		.atomic_ack = { .orig = res->orig },
	};
	struct sk_buff *skb;
	u8 *payload;

	skb = shca_build_pkt(qp, &qp->av, &h, 0, &payload);
	shca_resp_xmit(qp, skb, true);
	shca_resp_res_done(qp, res);
	return 1;
}

static u8 shca_read_resp_opcode(bool first, bool last)
{
	if (first && last)
		return SHCA_OP_RDMA_READ_RESPONSE_ONLY;
	if (first)
		return SHCA_OP_RDMA_READ_RESPONSE_FIRST;
	return last ? SHCA_OP_RDMA_READ_RESPONSE_LAST :
	       SHCA_OP_RDMA_READ_RESPONSE_MIDDLE;
}

/*
 * The R_Key slot @res's responses are built through: opened, with a full
 * check of the READ's range, when they start or resume after another
 * resource's.  Negative when the check fails.
 */
static int shca_resp_read_slot(struct shca_qp *qp, struct shca_rd_res *res)
{
	struct shca_resp *resp = &qp->resp;
	int slot;

	if (resp->rd_res == res)
		return resp->rd_slot;
	shca_resp_read_stop(qp);
	slot = shca_rkey_open(qp, res->rkey, res->va, res->length,
			      IB_ACCESS_REMOTE_READ);
	if (slot >= 0) {
		resp->rd_res = res;
		resp->rd_slot = slot;
	}
	return slot;
}

/*
 * Build a READ response packet with @plen bytes read at @iova through
 * @res's slot.  NULL with *@err 0 when out of memory (a packet lost: the
 * requester asks again), with *@err set when the slot was swept or the
 * memory cannot be read.
 */
static struct sk_buff *shca_resp_build_read(struct shca_qp *qp,
					    struct shca_rd_res *res,
					    struct shca_pkt_hdr *h, u64 iova,
					    u32 plen, int *err)
{
	struct sk_buff *skb;
	u8 *payload;
	int slot = 0;
	u32 crc = 0;

	*err = 0;
	if (plen) {
		slot = shca_resp_read_slot(qp, res);
		if (slot < 0) {
			*err = slot;
			return NULL;
		}
	}
	skb = shca_build_pkt_room(qp, &qp->av, h, plen, &payload);
	if (!skb || !plen)
		return skb;
	/*
	 * Copied, not referenced: a page referenced by a packet could still
	 * be read by the network after an invalidation has completed.  The
	 * payload's CRC is taken in the same pass, so the ICRC reads only
	 * the headers.
	 */
	*err = shca_rkey_read(qp, slot, iova, payload, plen, &crc);
	if (*err) {
		kfree_skb(skb);
		return NULL;
	}
	crc = shca_crc32_le(crc, payload + plen, h->pad_count);
	shca_pkt_tail_crc(skb, plen + h->pad_count, crc);
	return skb;
}

/* One READ response packet.  Returns 1, or -1 when the QP failed. */
static int shca_resp_send_read(struct shca_qp *qp, struct shca_rd_res *res)
{
	u32 mtu = res->mtu;
	u32 off = shca_psn_diff(res->next_psn, res->first_psn) * mtu;
	u32 plen = min(mtu, res->length - min(off, res->length));
	bool first = res->next_psn == res->first_psn;
	bool last = res->next_psn == res->last_psn;
	struct shca_pkt_hdr h = {
		.opcode = SHCA_OP_RC | shca_read_resp_opcode(first, last),
		.dest_qpn = qp->attr.dest_qp_num,
		.psn = res->next_psn,
		.aeth = {
			.syndrome = shca_aeth_ack(SHCA_AETH_CREDITS_INVALID),
			.msn = qp->resp.msn,
		},
	};
	struct sk_buff *skb;
	int err;

	skb = shca_resp_build_read(qp, res, &h, res->va + off, plen, &err);
	if (err) {
		/* invalidated: the READ ends with a remote access error */
		shca_resp_flight_put(qp);
		shca_resp_res_done(qp, res);
		shca_resp_nak_fatal(qp, res->next_psn,
				    SHCA_NAK_REMOTE_ACCESS_ERR);
		return -1;
	}
	if (!shca_resp_hold(qp, skb))
		shca_resp_xmit(qp, skb, true);
	if (last) {
		shca_resp_read_stop(qp);
		shca_resp_res_done(qp, res);
	} else {
		res->next_psn = shca_psn_add(res->next_psn, 1);
	}
	return 1;
}

/**
 * shca_resp_transmit - responder stage of the transmit pipeline
 * @qp: QP (caller must hold qp->lock)
 * @budget: most packets to send
 *
 * Return: packets sent.
 */
int shca_resp_transmit(struct shca_qp *qp, int budget)
{
	struct shca_resp *resp = &qp->resp;
	struct shca_rd_res *res;
	int n = 0, ret;

	if (qp->type != IB_QPT_RC || !shca_resp_state_ok(qp))
		return 0;
	while (n < budget && resp->res_out) {
		res = shca_resp_next_res(qp);
		if (!res) {
			resp->res_out = 0;
			break;
		}
		/* after a failed request: never answered */
		if (resp->fatal_pending &&
		    shca_psn_diff(res->next_psn, resp->fatal_psn) >= 0)
			break;
		if (!shca_resp_may_send(qp))
			return n;
		ret = res->atomic ? shca_resp_send_atomic_ack(qp, res) :
		      shca_resp_send_read(qp, res);
		if (ret < 0)
			return n;
		n += ret;
		resp->rsp_sent += ret;
	}
	if (resp->fatal_pending && n < budget &&
	    !shca_resp_owed_before(qp, resp->fatal_psn)) {
		if (!shca_resp_may_send(qp))
			return n;
		shca_resp_nak_fatal_now(qp, resp->fatal_psn, resp->fatal_code,
					true);
		return n + 1;
	}
	if (!resp->res_out && resp->nak_pending && n < budget) {
		if (!shca_resp_may_send(qp))
			return n;
		resp->nak_pending = false;
		shca_resp_send_nak(qp, resp->nak_psn, resp->nak_syn);
		n++;
	}
	if (!resp->res_out && resp->ack_pending && n < budget) {
		if (!shca_resp_may_send(qp))
			return n;
		resp->ack_pending = false;
		shca_resp_send_ack(qp, resp->ack_psn,
				   shca_aeth_ack(SHCA_AETH_CREDITS_INVALID));
		n++;
	}
	return n;
}

/**
 * shca_resp_has_work - responses or an ACK waiting to be sent
 * @qp: QP (caller must hold qp->lock)
 *
 * Not while they wait for another CPU's responses to leave: the
 * destructor of the last one schedules the QP (shca_resp_may_send()).
 *
 * Return: true when shca_resp_transmit() has something to do.
 */
bool shca_resp_has_work(struct shca_qp *qp)
{
	return qp->type == IB_QPT_RC && shca_resp_state_ok(qp) &&
	       (qp->resp.res_out || qp->resp.ack_pending ||
		qp->resp.nak_pending || qp->resp.fatal_pending) &&
	       !atomic_read(&qp->resp.flight_wait) && !shca_resp_holding(qp);
}

/**
 * shca_resp_init - responder state of a new QP
 * @qp: QP being created
 */
void shca_resp_init(struct shca_qp *qp)
{
	qp->resp.wr_slot = -1;
	qp->resp.rd_slot = -1;
	hrtimer_init(&qp->resp.held_timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL_SOFT);
	qp->resp.held_timer.function = shca_resp_held_fn;
}

/**
 * shca_resp_drop_keys - close the R_Key slots of the RDMA operations in
 *	progress (the QP stops executing them: error, reset)
 * @qp: QP (caller must hold qp->lock)
 */
void shca_resp_drop_keys(struct shca_qp *qp)
{
	struct shca_resp *resp = &qp->resp;

	lockdep_assert_held(&qp->lock);
	resp->in_write = false;
	resp->wr_slot = -1;
	resp->rd_slot = -1;
	resp->rd_res = NULL;
	shca_rkey_close_all(qp);
}

/**
 * shca_resp_reset - responder back to its initial state
 * @qp: QP (caller must hold qp->lock)
 */
void shca_resp_reset(struct shca_qp *qp)
{
	struct shca_resp *resp = &qp->resp;

	shca_resp_drop_keys(qp);
	resp->epsn = qp->attr.rq_psn & 0xffffff;
	resp->ack_psn = shca_psn_add(resp->epsn, -1);
	resp->msn = 0;
	resp->nak_sent = false;
	resp->in_send = false;
	resp->ack_pending = false;
	resp->fatal_pending = false;
	resp->nak_pending = false;
	resp->res_out = 0;
	resp->res_next = 0;
	memset(resp->res, 0, sizeof(resp->res));
	resp->seg = 0;
	resp->mtu_seen = 0;
	if (qp->attr.path_mtu >= IB_MTU_256 && qp->attr.path_mtu <= IB_MTU_4096)
		resp->mtu_seen = 1U << qp->attr.path_mtu;
}

/* ---- UD and GSI ------------------------------------------------------ */

/* Write the 40-byte GRH area a UD receive starts with. */
static int shca_ud_put_grh(struct shca_qp *qp, struct sk_buff *skb)
{
	u8 grh[SHCA_GRH_LEN];

	shca_pkt_grh(skb, grh);
	return shca_sgl_copy(qp->sdev, qp->pd, qp->resp.rwqe->sge,
			     qp->resp.rwqe->num_sge, 0, grh, NULL, 0,
			     SHCA_GRH_LEN, SHCA_TO_MR);
}

/**
 * shca_ud_recv - a UD packet for a UD or GSI QP
 * @qp: QP (caller must hold qp->lock)
 * @skb: packet, consumed
 * @h: parsed transport headers
 * @hdr_len: their length
 */
void shca_ud_recv(struct shca_qp *qp, struct sk_buff *skb,
		  const struct shca_pkt_hdr *h, u32 hdr_len)
{
	u32 qkey = qp->type == IB_QPT_GSI ? SHCA_GSI_QKEY : qp->attr.qkey;
	u32 plen = shca_resp_plen(skb, h, hdr_len);
	bool v4 = ip_hdr(skb)->version == 4;
	struct shca_cqe cqe = {
		.opcode = IB_WC_RECV,
		.qp_num = qp->qpn,
		.port_num = 1,
		.wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE,
		.network_hdr_type = v4 ? SHCA_CQE_NET_IPV4 : SHCA_CQE_NET_IPV6,
	};

	/* the CQE's value is the kernel's, as its wc becomes an ib_wc */
	BUILD_BUG_ON((int)SHCA_CQE_NET_IPV4 != (int)RDMA_NETWORK_IPV4 ||
		     (int)SHCA_CQE_NET_IPV6 != (int)RDMA_NETWORK_IPV6);

	if (!shca_resp_state_ok(qp)) {
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_QP_STATE);
		goto out;
	}
	if (h->deth.qkey != qkey) {
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_BAD_KEY);
		goto out;
	}
	if (shca_resp_get_rwqe(qp)) {
		/* UD has no RNR: the packet is lost */
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_QUEUE_FULL);
		goto out;
	}
	cqe.wr_id = qp->resp.rwqe->wr_id;
	cqe.src_qp = h->deth.src_qpn;
	cqe.byte_len = plen + SHCA_GRH_LEN;
	if (plen + SHCA_GRH_LEN > qp->resp.rwqe->length) {
		cqe.status = IB_WC_LOC_LEN_ERR;
	} else if (shca_ud_put_grh(qp, skb) ||
		   shca_sgl_copy(qp->sdev, qp->pd, qp->resp.rwqe->sge,
				 qp->resp.rwqe->num_sge, SHCA_GRH_LEN, NULL,
				 skb, hdr_len, plen, SHCA_TO_MR)) {
		cqe.status = IB_WC_LOC_PROT_ERR;
	}
	if ((h->opcode & 0x1f) == SHCA_OP_SEND_ONLY_WITH_IMMEDIATE) {
		cqe.wc_flags |= IB_WC_WITH_IMM;
		cqe.ex = (__force u32)h->imm;
	}
	shca_cq_post(qp->rcq, &cqe, h->solicited);
out:
	kfree_skb(skb);
}
