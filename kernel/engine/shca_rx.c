// SPDX-License-Identifier: GPL-2.0
/*
 * shca receive stage: the engine's one entry point from the wire,
 * shca_rx(), and the drain that takes packets off the receive
 * linked-list queue to their QPs' requester (responses and ACKs),
 * responder (requests) or UD receive.
 *
 * shca_rx() queues a packet on its QP's list of the receive LLQ.  The
 * drain runs in whichever softirq finds it idle (the RX_RUNNING bit), a
 * bounded amount per call; whoever finds the bit set leaves its packet
 * queued for the running drainer, which checks the queue once more after
 * clearing the bit.  shca_rx_target() may move the drain to another CPU's
 * softirq instead (a hand-off, Documentation/architecture.md).
 */
#include <linux/interrupt.h>
#include <linux/workqueue.h>
#include <linux/ip.h>
#include <net/ipv6.h>
#include "shca.h"
#include "shca_hdr.h"
#include "shca_qpc.h"
#include "shca_engine.h"
#include "shca_doorbell.h"
#include "shca_rx.h"
#include "shca_udp_rx.h"
#include "shca_ud.h"
#include "shca_resp.h"
#include "shca_comp.h"
#include "shca_udp_tx.h"
#include "shca_wq.h"
#include "shca_resp_tx.h"
#include "shca_mcrep.h"
#include "shca_func.h"
#include "shca_trace.h"

/* receive processing past a softirq's budget, of every device */
static struct workqueue_struct *shca_wq;

static bool shca_rx_run(struct shca_engine *eng, int budget, bool away);

/*
 * A receive drain moved to this CPU (shca_rx_handoff()), in softirq
 * context; it goes on here while its budget runs out with packets left.
 */
static void shca_rx_tasklet(struct tasklet_struct *t)
{
	struct shca_engine *eng = from_tasklet(eng, t, rx_tasklet);

	if (shca_rx_run(eng, SHCA_RX_BUDGET * 4,
			       smp_processor_id() != eng->tx_cpu))
		tasklet_schedule(&eng->rx_tasklet);
}

/* The hand-off's IPI, on its target CPU: start the drain there. */
static void shca_rx_ipi(void *info)
{
	struct shca_engine *eng = info;

	tasklet_schedule(&eng->rx_tasklet);
	/* shca_engine_destroy() waits for the bit before freeing @eng */
	smp_mb__before_atomic();
	clear_bit(SHCA_ENG_RX_IPI, &eng->flags);
}

/*
 * Move the receive drain to @cpu (another online CPU); the caller owns
 * SHCA_ENG_RX_RUNNING, which the drain releases there.  The IPI schedules
 * the tasklet on @cpu, so the drain runs in its softirq ahead of any
 * task, as a hardware HCA's interrupt steered to that CPU would.  Returns
 * false when the IPI could not be sent: the caller drains instead.
 */
static bool shca_rx_handoff(struct shca_engine *eng, int cpu)
{
	set_bit(SHCA_ENG_RX_IPI, &eng->flags);
	if (smp_call_function_single_async(cpu, &eng->rx_csd)) {
		clear_bit(SHCA_ENG_RX_IPI, &eng->flags);
		return false;
	}
	atomic64_inc(&eng->handoffs);
	return true;
}

/* A softirq drain past its budget goes on in process context. */
static void shca_rx_work(struct work_struct *work)
{
	struct shca_engine *eng = container_of(work, struct shca_engine,
					       rx_work);

	local_bh_disable();
	if (shca_rx_run(eng, SHCA_RX_BUDGET * 4,
			       smp_processor_id() != eng->tx_cpu))
		queue_work(shca_wq, &eng->rx_work);
	local_bh_enable();
}

/* ---- receive ---------------------------------------------------------- */

static void shca_rx_drop(struct shca_dev *sdev, struct sk_buff *skb,
			 enum shca_counter why)
{
	shca_stat_inc(sdev, why);
	kfree_skb(skb);
}

/* Is the packet's destination an IP multicast address? */
static bool shca_rx_mcast_dst(const struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP))
		return ipv4_is_multicast(ip_hdr(skb)->daddr);
	return ipv6_addr_is_multicast(&ipv6_hdr(skb)->daddr);
}

/*
 * Where the receive stage should run for a packet that finds it idle:
 * -1 for here, or the CPU to move it to (shca_rx()).  On a veth a packet
 * is received in the softirq of the CPU that sent it, so without a move
 * the sender's CPU would also do all of the receiving.
 * - An ACK, while this device's transmit stage runs, goes to @tx_cpu: it
 *   opens the window and completes WQEs of the QPs that stage is sending
 *   for, which is cheaper there than on a CPU that also places data.
 * - A first or middle packet (more of its message follows: a stream of
 *   data or READ responses) goes to @rx_cpu, which places the data while
 *   the CPU it arrived on goes on sending.
 * - So does a last or only packet sent by a transmit stage whose round
 *   has sent SHCA_RX_STREAM_PKTS or more (a stream of small messages):
 *   that CPU is the stage's, which the stream needs.
 * - Anything else (a ping-pong's message, a lone request) is handled
 *   where it arrives: moving it would add an IPI to its latency.
 * Packets that arrive while a run is under way queue behind it in the
 * LLQ, so the per-QP order is kept wherever the run happens.
 */
static int shca_rx_target(struct shca_engine *eng, u8 op)
{
	u32 f = shca_opcode_info(op)->flags;
	int to;

	if (f & SHCA_OPF_ACK) {
		if (!READ_ONCE(eng->tx_active))
			return -1;
		to = eng->tx_cpu;
	} else if (!(f & SHCA_OPF_LAST) ||
		   shca_engine_tx_round() > SHCA_RX_STREAM_PKTS) {
		to = eng->rx_cpu;
	} else {
		return -1;
	}
	return to != smp_processor_id() && cpu_online(to) ? to : -1;
}

/*
 * First receive stage: queue a packet (skb->data at the BTH) on its QP's
 * list of the receive LLQ and start the drain when no other context runs
 * it.  @local: a same-host packet (shca_rx_local()), whose ICRC the drain
 * does not check and whose drain the caller must not run.
 */
static void shca_rx_queue(struct shca_dev *sdev, struct sk_buff *skb,
			  bool local)
{
	struct shca_engine *eng = sdev->eng;
	struct shca_llq_payload p = {
		.w = { (uintptr_t)skb, SHCA_RXD_FN(sdev->fn) |
		       (local ? SHCA_RXD_LOCAL : 0) },
	};
	u32 qpn;
	int ret, cpu;
	u8 op;

	/*
	 * Only the opcode's own headers are made linear: a payload in page
	 * fragments stays there until its one copy into the target MR.
	 */
	if (skb->len < SHCA_BTH_LEN || !pskb_may_pull(skb, SHCA_BTH_LEN))
		return shca_rx_drop(sdev, skb, SHCA_CNT_RX_DROP_BAD_HDR);
	trace_shca_rx(&sdev->ibdev, skb);
	op = shca_bth_opcode(skb->data);
	if (!shca_opcode_valid(op) ||
	    !pskb_may_pull(skb, min_t(u32, skb->len,
				      shca_opcode_info(op)->hdr_len)))
		return shca_rx_drop(sdev, skb, SHCA_CNT_RX_DROP_BAD_HDR);

	qpn = shca_bth_dest_qpn(skb->data);
	/* the multicast QPN goes with a group address, and only with one */
	if (qpn == SHCA_MC_QPN && shca_rx_mcast_dst(skb))
		return shca_mcrep_rx(sdev, skb);
	if (!qpn || qpn >= eng->nqp || shca_rx_mcast_dst(skb))
		return shca_rx_drop(sdev, skb, SHCA_CNT_RX_DROP_NO_QP);

	spin_lock(&eng->rx_lock);
	ret = shca_llq_push(&eng->rx_llq, shca_qp_idx(sdev, qpn), sdev->fn, &p,
			    true);
	spin_unlock(&eng->rx_lock);
	if (ret < 0)
		return shca_rx_drop(sdev, skb, SHCA_CNT_RX_DROP_QUEUE_FULL);

	if (test_and_set_bit(SHCA_ENG_RX_RUNNING, &eng->flags))
		return;
	cpu = shca_rx_target(eng, op);
	if (cpu >= 0 && shca_rx_handoff(eng, cpu))
		return;
	if (local) {
		/* runs when BHs come back on, after the sender's locks */
		tasklet_schedule(&eng->rx_tasklet);
		return;
	}
	if (shca_rx_run(eng, SHCA_RX_BUDGET, false))
		queue_work(shca_wq, &eng->rx_work);
}

/**
 * shca_rx - first receive stage: route a validated packet to its QP
 * @sdev: receiving device
 * @skb: packet, skb->data at the BTH, ICRC not yet checked
 *
 * Called in softirq context by the network layer.  Queues the packet on
 * its QP's list of the receive LLQ and drains the queue when no other
 * context is doing so; the drain checks the ICRC first, so that a drain
 * moved to another CPU takes that pass over the payload with it.
 * Consumes @skb.
 */
void shca_rx(struct shca_dev *sdev, struct sk_buff *skb)
{
	shca_rx_queue(sdev, skb, false);
}

/**
 * shca_rx_local - first receive stage for a packet a device of this host
 * sent (same-host delivery, wire/shca_loop.c)
 * @sdev: receiving device
 * @skb: packet, skb->data at the BTH, the room of its ICRC at its end
 *	(not computed: the packet never left memory)
 *
 * Queues the packet like shca_rx(); the drain runs from the engine's
 * tasklet (here, or on the CPU shca_rx_target() picks), never from the
 * caller, which may hold the sending QP's lock: the drain may answer (an
 * ACK to that very QP).  BHs off.  Consumes @skb.
 */
void shca_rx_local(struct shca_dev *sdev, struct sk_buff *skb)
{
	shca_rx_queue(sdev, skb, true);
}

/*
 * Placement stage for one packet.  Caller must hold qp->lock (BH off).
 */
static void shca_qp_rx(struct shca_qp *qp, struct sk_buff *skb)
{
	struct shca_pkt_hdr h;
	const struct shca_opcode_info *oi;
	int hdr_len;

	lockdep_assert_held(&qp->lock);
	hdr_len = shca_hdr_parse(skb->data, skb->len + SHCA_ICRC_LEN, &h);
	if (hdr_len < 0) {
		shca_rx_drop(qp->sdev, skb, SHCA_CNT_RX_DROP_BAD_HDR);
		return;
	}
	oi = shca_opcode_info(h.opcode);
	if (oi->transport == SHCA_TR_CNP) {
		/* congestion notification: no rate control yet, taken quietly */
		kfree_skb(skb);
		return;
	}
	/* the only P_Key is the default, a full member: match its 15 bits */
	if ((h.pkey & 0x7fff) != (SHCA_DEFAULT_PKEY & 0x7fff)) {
		shca_rx_drop(qp->sdev, skb, SHCA_CNT_RX_DROP_BAD_KEY);
		return;
	}

	switch (qp->type) {
	case IB_QPT_RC:
		if (oi->transport != SHCA_TR_RC)
			goto bad_opcode;
		if (!shca_av_is_peer(&qp->av, skb))
			goto not_peer;
		break;
	case IB_QPT_UC:
		if (oi->transport != SHCA_TR_UC)
			goto bad_opcode;
		if (!shca_av_is_peer(&qp->av, skb))
			goto not_peer;
		break;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		if (oi->transport != SHCA_TR_UD)
			goto bad_opcode;
		shca_ud_recv(qp, skb, &h, hdr_len);
		return;
	default:
		goto bad_opcode;
	}

	if (oi->flags & SHCA_OPF_REQ)
		shca_resp_recv(qp, skb, &h, hdr_len);
	else
		shca_req_recv(qp, skb, &h, hdr_len);
	return;

bad_opcode:
	shca_rx_drop(qp->sdev, skb, SHCA_CNT_RX_DROP_OPCODE);
	return;
not_peer:
	shca_rx_drop(qp->sdev, skb, SHCA_CNT_RX_DROP_NOT_PEER);
}

/*
 * A packet counted on the function it arrived for (the first on its
 * netdev) is for a QP of another function on the netdev: it counts there.
 * Its ICRC is gone by now.
 */
static void shca_rx_recount(struct shca_dev *from, struct shca_dev *to,
			    const struct sk_buff *skb)
{
	u64 len = skb->len + SHCA_ICRC_LEN;

	atomic64_dec(&from->stats[SHCA_CNT_RX_PKTS]);
	atomic64_sub(len, &from->stats[SHCA_CNT_RX_BYTES]);
	shca_stat_inc(to, SHCA_CNT_RX_PKTS);
	shca_stat_add(to, SHCA_CNT_RX_BYTES, len);
}

/*
 * The QP at queue index @idx, if a packet for a function on @skb's netdev
 * may reach it: the functions on one netdev share its addresses, but one
 * on a macvlan or ipvlan child has addresses of its own.  Counts a drop.
 */
static struct shca_qp *shca_rx_qp(struct shca_engine *eng,
				  struct shca_dev *sdev, u32 idx,
				  struct sk_buff *skb)
{
	struct shca_qp *qp = shca_qp_get_idx(eng, idx);

	if (qp && qp->sdev->ndev != skb->dev) {
		shca_qp_put(qp);
		qp = NULL;
	}
	if (!qp)
		shca_rx_drop(sdev, skb, SHCA_CNT_RX_DROP_NO_QP);
	return qp;
}

/*
 * One received packet, for queue index @qpn, its ICRC not yet checked (a
 * bad one is dropped before the QP is looked at), or a multicast copy
 * (@tag: SHCA_RXD_MCAST and the member's cookie), checked before
 * replication.  @tag also names the function the packet arrived for; a
 * packet of a function that is gone is dropped.  The ACKs and NAKs its handling
 * sends go to the IP stack only after qp->lock is dropped: in a ping-pong,
 * the process that the data just placed has woken posts its answer at once,
 * and its doorbell call (on another CPU) waits for this lock.  A positive
 * ACK is even built after that (shca_resp_send_ack()).  Nothing else
 * holds them back: an acknowledgement that a later one overtakes is
 * stale when it arrives, and the requester ignores it (shca_req_aeth()).
 * READ responses and ATOMIC acknowledgements must stay in order, and
 * the transmit stage may send the QP's next ones as soon as the lock is
 * free; when the packet made the QP send any, the held packets go at
 * once, under the lock.
 */
static void shca_rx_one(struct shca_engine *eng, u32 qpn, struct sk_buff *skb,
			u64 tag, bool last_of_burst, bool away)
{
	struct shca_ack ack = {};
	struct shca_tx_hold hold;
	enum shca_db_next next;
	struct shca_dev *sdev;
	struct shca_qp *qp;
	bool held, ring;
	u32 rsp_sent;

	sdev = shca_func_get(eng, SHCA_RXD_FUNC(tag));
	if (!sdev) {
		kfree_skb(skb);
		return;
	}
	/*
	 * A multicast copy was checked once, before replication; a same-host
	 * packet never left memory: its ICRC was not computed.
	 */
	if (tag & SHCA_RXD_LOCAL) {
		if (!shca_net_rx_strip(sdev, skb))
			return;
	} else if (!(tag & SHCA_RXD_MCAST) && !shca_net_rx_verify(sdev, skb)) {
		return;
	}
	qp = shca_rx_qp(eng, sdev, qpn, skb);
	if (!qp)
		return;
	if (qp->sdev != sdev && !(tag & SHCA_RXD_MCAST))
		shca_rx_recount(sdev, qp->sdev, skb);
	if (tag & SHCA_RXD_MCAST) {
		/* replicated for a QP that had this number before */
		if ((u32)qp->serial != SHCA_RXD_COOKIE(tag)) {
			shca_qp_put(qp);
			shca_rx_drop(sdev, skb, SHCA_CNT_RX_DROP_NO_QP);
			return;
		}
		shca_stat_inc(sdev, SHCA_CNT_MC_COPIES);
		trace_shca_mc_copy(&qp->sdev->ibdev, qp->qpn,
				   shca_bth_psn(skb->data));
	}
	trace_shca_rx_handle(&qp->sdev->ibdev, qp->qpn, skb);
	spin_lock(&qp->lock);
	rsp_sent = qp->resp.rsp_sent;
	qp->resp.ack_defer = &ack;
	shca_tx_hold(&hold);
	shca_db_heard(qp, shca_bth_opcode(skb->data));
	shca_qp_rx(qp, skb);
	/*
	 * New posts in a watched send ring come without a doorbell call; in
	 * an idle one, the process rings for them and its call sends them,
	 * on its own CPU (unless the call left them owed).
	 */
	ring = shca_db_engine_reads(qp);
	/*
	 * The QP's burst is over: owed ACKs go out now (coalescing), but not
	 * from a drain @away from the transmit CPU: READ and ATOMIC
	 * responses leave from there, and an ACK sent from another CPU may
	 * overtake them on a netdev that queues per CPU (veth), which the
	 * requester would take for their loss.  The stage sends it instead.
	 */
	if (last_of_burst && !away && shca_resp_has_work(qp))
		shca_resp_transmit(qp, SHCA_TX_BUDGET);
	qp->resp.ack_defer = NULL;
	held = shca_tx_unhold(&hold);
	if (held && qp->resp.rsp_sent != rsp_sent) {
		shca_tx_flush(&hold);
		held = false;
	}
	/* the process may have posted its answer already */
	if (last_of_burst && ring) {
		shca_db_taken(qp);
		shca_engine_try_inline(qp);
	}
	next = shca_engine_leftover(qp, ring);
	spin_unlock(&qp->lock);
	if (held) {
		shca_stat_add(qp->sdev, SHCA_CNT_RX_HELD,
			      skb_queue_len(&hold.q));
		shca_tx_flush(&hold);
	}
	if (ack.valid) {
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_HELD);
		shca_stat_inc(qp->sdev, SHCA_CNT_ACK_DEFERRED);
		shca_resp_ack_send(qp, &ack);
	}
	shca_engine_follow(qp, next);
	shca_qp_put(qp);
}


/*
 * Drain the receive LLQ: pop ready packets round robin between QPs.
 * Caller owns the RX_RUNNING bit and has BH disabled; @away: it is a
 * hand-off's tasklet or the work item, on a CPU other than the transmit
 * stage's (owed ACKs are left to the stage).  Returns true when the
 * budget ran out with work left (the bit stays set: the caller must run
 * the drain again later).
 */
static bool shca_rx_run(struct shca_engine *eng, int budget,
			bool away)
{
	struct shca_llq_payload p;
	bool last;
	u32 qpn;
	int ret;

	for (;;) {
		while (budget > 0) {
			spin_lock(&eng->rx_lock);
			ret = shca_llq_pop_ready(&eng->rx_llq, &qpn, &p);
			last = !ret && shca_llq_len(&eng->rx_llq, qpn) <= 0;
			spin_unlock(&eng->rx_lock);
			if (ret)
				break;
			shca_rx_one(eng, qpn, (struct sk_buff *)(uintptr_t)p.w[0],
				    p.w[1], last, away);
			budget--;
		}
		if (budget <= 0)
			return true;
		clear_bit(SHCA_ENG_RX_RUNNING, &eng->flags);
		/* pairs with the push in shca_rx(): recheck after clearing */
		smp_mb__after_atomic();
		spin_lock(&eng->rx_lock);
		ret = shca_llq_has_ready(&eng->rx_llq);
		spin_unlock(&eng->rx_lock);
		if (!ret || test_and_set_bit(SHCA_ENG_RX_RUNNING, &eng->flags))
			return false;
	}
}

/**
 * shca_rx_copy - deliver one multicast copy to its member QP
 * @eng: engine
 * @qpn: the member
 * @skb: the copy (shared with the packet's other copies), consumed
 * @tag: its receive LLQ payload word 1 (SHCA_RXD_MCAST and the cookie)
 *
 * For the replication work (shca_mcrep.c), BHs off.
 */
void shca_rx_copy(struct shca_engine *eng, u32 qpn, struct sk_buff *skb,
		  u64 tag)
{
	shca_rx_one(eng, qpn, skb, tag, true, true);
}

/**
 * shca_rx_stage_init - set up an engine's receive stage (device creation)
 * @eng: the engine
 */
void shca_rx_stage_init(struct shca_engine *eng)
{
	INIT_WORK(&eng->rx_work, shca_rx_work);
	tasklet_setup(&eng->rx_tasklet, shca_rx_tasklet);
	INIT_CSD(&eng->rx_csd, shca_rx_ipi, eng);
}

/**
 * shca_rx_stage_stop - wait until an engine's receive stage is idle for
 * good (the device is detached from the network: nothing more arrives)
 * @eng: the engine
 */
void shca_rx_stage_stop(struct shca_engine *eng)
{
	cancel_work_sync(&eng->rx_work);
	while (test_bit(SHCA_ENG_RX_IPI, &eng->flags))
		cpu_relax();
	tasklet_kill(&eng->rx_tasklet);
}

/**
 * shca_rx_init - create the workqueue of receive drains past a softirq's
 * budget (module load)
 *
 * Return: 0 or -ENOMEM.
 */
int shca_rx_init(void)
{
	shca_wq = alloc_workqueue("shca", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	return shca_wq ? 0 : -ENOMEM;
}

/**
 * shca_rx_exit - module unload, every device gone
 */
void shca_rx_exit(void)
{
	destroy_workqueue(shca_wq);
}
