// SPDX-License-Identifier: GPL-2.0
/*
 * shca responder transmit: what the responder sends back.  ACKs and NAKs
 * (including the fatal NAK that ends the QP), READ responses built from
 * the responder resources, ATOMIC acknowledgements.
 *
 * Responses leave in PSN order: READ and ATOMIC resources are answered in
 * the order they were accepted and an owed ACK waits behind them; and a
 * QP's responses leave from one CPU at a time (shca_resp_flight_take()).
 *
 * Every function here runs with qp->lock held, unless it says otherwise.
 */
#include <linux/delay.h>
#include "shca.h"
#include "shca_engine.h"
#include "shca_fault.h"
#include "shca_hdr.h"
#include "shca_icrc.h"
#include "shca_mem.h"
#include "shca_pkt.h"
#include "shca_qpc.h"
#include "shca_resp_tx.h"
#include "shca_rkey.h"
#include "shca_trace.h"
#include "shca_udp_tx.h"
#include "shca_wq.h"

/* how long shca_resp_ack_wait() waits for a deferred ACK to go */
#define SHCA_ACK_WAIT_US	100000

/**
 * shca_resp_state_ok - may the QP answer requests in its state?
 * @qp: QP (caller must hold qp->lock)
 *
 * Return: true in RTR, RTS and SQD.
 */
bool shca_resp_state_ok(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->lock);

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

	lockdep_assert_held(&qp->lock);
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

/**
 * shca_resp_may_send - may this CPU send a response now?
 * @qp: QP (caller must hold qp->lock)
 *
 * On true, one packet is counted: the caller sends it through
 * shca_resp_xmit() (or builds none, which gives the count back).  On
 * false, the destructor that empties the flight schedules the QP, whose
 * transmit stage sends the response then.
 *
 * Return: whether the caller may send.
 */
bool shca_resp_may_send(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->lock);

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
	lockdep_assert(shca_qp_may_tx(qp));

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

/**
 * shca_resp_held_fn - a fault injection hold ends: send the held response
 * @t: the QP's held_timer
 *
 * Softirq context (the timer's).
 *
 * Return: HRTIMER_NORESTART.
 */
enum hrtimer_restart shca_resp_held_fn(struct hrtimer *t)
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
	if (skb)
		trace_shca_ack_send(&qp->sdev->ibdev, qp->qpn, psn, syndrome,
				    msn);
	if (skb && shca_aeth_type(syndrome) == SHCA_AETH_ACK)
		shca_stat_inc(qp->sdev, SHCA_CNT_ACK_SENT);
	shca_resp_xmit(qp, skb, counted);
}

/**
 * shca_resp_send_ack - send an ACKNOWLEDGE packet
 * @qp: QP (caller must hold qp->lock)
 * @psn: PSN it acknowledges
 * @syndrome: its AETH syndrome
 *
 * A positive ACK may be left to the receive path (qp->resp.ack_defer),
 * which builds and sends it after dropping qp->lock: in a ping-pong the
 * process the packet woke posts its answer at once, and its doorbell call
 * waits for this lock.  It still leaves in order: it is counted in the
 * flight, so no other CPU sends a response before it is gone, and this
 * one sends it before any other.  NAKs go at once.  The caller has
 * counted the packet (shca_resp_may_send()).
 */
void shca_resp_send_ack(struct shca_qp *qp, u32 psn, u8 syndrome)
{
	struct shca_ack *ack = qp->resp.ack_defer;

	lockdep_assert_held(&qp->lock);
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
	shca_fault_point(SHCA_HOLD_ACK);
	shca_resp_ack_out(qp, ack->psn, ack->syndrome, ack->msn, true);
	/* pairs with shca_resp_ack_wait() */
	smp_store_release(&qp->resp.ack_out, false);
	/* its full barrier orders the store before the look at the queue */
	if (wq_has_sleeper(&qp->resp.ack_wq))
		wake_up(&qp->resp.ack_wq);
}

/* is a deferred ACK being sent? */
static bool shca_ack_out(struct shca_qp *qp)
{
	/* pairs with the release in shca_resp_ack_send() */
	return smp_load_acquire(&qp->resp.ack_out);
}

/**
 * shca_resp_ack_wait - wait until no ACK is being sent without qp->lock
 * @qp: QP (caller must hold qp->lock, taken with spin_lock_bh() in
 *	process context)
 *
 * Before qp->av or the destination QPN changes, or the QP is reset.  The
 * sender runs in a softirq on another CPU and needs no lock; a new one
 * starts only under qp->lock.  While one is out the lock is dropped and
 * the caller sleeps on qp->resp.ack_wq until the sender wakes it, so the
 * wait neither spins with BHs off nor holds up the receive path.  It
 * returns with the lock held and no sender out, but the QP may have
 * changed meanwhile (the caller checks its state after this).  A sender
 * not finished after SHCA_ACK_WAIT_US (its CPU stopped) is reported and
 * no longer waited for.
 */
void shca_resp_ack_wait(struct shca_qp *qp)
{
	long left = usecs_to_jiffies(SHCA_ACK_WAIT_US);

	lockdep_assert_held(&qp->lock);
	while (shca_ack_out(qp)) {
		if (!left) {
			ibdev_warn_ratelimited(&qp->sdev->ibdev,
					       "QP %u: ACK sender stuck for %d us\n",
					       qp->qpn, SHCA_ACK_WAIT_US);
			return;
		}
		spin_unlock_bh(&qp->lock);
		left = wait_event_timeout(qp->resp.ack_wq, !shca_ack_out(qp),
					  left);
		spin_lock_bh(&qp->lock);
	}
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

/**
 * shca_resp_nak - a sequence or RNR NAK
 * @qp: QP (caller must hold qp->lock)
 * @psn: the PSN it names
 * @syndrome: its AETH syndrome
 *
 * Responses leave in PSN order: while READ/ATOMIC responses for earlier
 * requests are still to be sent (or another CPU's are on their way), the
 * NAK waits behind them (sent ahead, it would tell the requester those
 * responses were lost).  It acknowledges everything before @psn, so no
 * ACK is owed any more.
 */
void shca_resp_nak(struct shca_qp *qp, u32 psn, u8 syndrome)
{
	struct shca_resp *resp = &qp->resp;

	lockdep_assert_held(&qp->lock);
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
u32 shca_resp_nres(struct shca_qp *qp)
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

/**
 * shca_resp_nak_fatal - a NAK that ends the connection
 * @qp: QP (caller must hold qp->lock)
 * @psn: the failed request's PSN
 * @code: invalid request, remote access or remote operational error
 *
 * Responses leave in PSN order: while READ/ATOMIC responses are owed to
 * earlier requests (or one is held by fault injection), the NAK waits
 * behind them (resp->fatal_pending: no request is taken meanwhile, the
 * transmit stage sends them, then the NAK, then moves the QP to error).
 * Sent at once otherwise, even when another CPU's responses may still
 * pass it: the connection ends.
 */
void shca_resp_nak_fatal(struct shca_qp *qp, u32 psn,
			 enum shca_nak_code code)
{
	struct shca_resp *resp = &qp->resp;

	lockdep_assert_held(&qp->lock);
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

/**
 * shca_resp_read_stop - the READ whose responses hold the READ slot stops
 * holding it
 * @qp: QP (caller must hold qp->lock)
 */
void shca_resp_read_stop(struct shca_qp *qp)
{
	struct shca_resp *resp = &qp->resp;

	lockdep_assert_held(&qp->lock);
	shca_rkey_close(qp, resp->rd_slot);
	resp->rd_slot = -1;
	resp->rd_res = NULL;
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

	lockdep_assert_held(&qp->lock);
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
	lockdep_assert_held(&qp->lock);

	return qp->type == IB_QPT_RC && shca_resp_state_ok(qp) &&
	       (qp->resp.res_out || qp->resp.ack_pending ||
		qp->resp.nak_pending || qp->resp.fatal_pending) &&
	       !atomic_read(&qp->resp.flight_wait) && !shca_resp_holding(qp);
}
