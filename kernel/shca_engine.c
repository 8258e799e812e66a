// SPDX-License-Identifier: GPL-2.0
/*
 * shca engine: receive dispatch, the receive and transmit drains, and the
 * transmit scheduler.
 *
 * The receive drain runs in whichever softirq finds it idle (a RUNNING
 * bit), a bounded amount per call; whoever finds the bit set leaves its
 * packet queued for the running drainer, which checks the queue once more
 * after clearing the bit; shca_rx_target() may move the drain to another
 * CPU's softirq instead (a hand-off).  The transmit stage is one work
 * item on the device's own kernel thread, bound to the device's CPU.
 */
#include <linux/vmalloc.h>
#include <linux/sched/stat.h>
#include "shca.h"
#include "shca_hdr.h"
#include "shca_qp.h"
#include "shca_engine.h"
#include "shca_doorbell.h"

static bool shca_engine_rx_run(struct shca_engine *eng, int budget,
			       bool away);
static bool shca_engine_tx_run(struct shca_engine *eng, int budget);
static void shca_engine_kick_tx(struct shca_engine *eng);
static void shca_engine_poll_later(struct shca_engine *eng, bool fresh);

static void *shca_llq_alloc(struct shca_llq *q, u32 entries, u32 lists,
			    u32 n_index)
{
	struct shca_llq_cfg cfg = {
		.n_entries = entries,
		.n_lists = lists,
		.n_index = n_index,
		.n_funcs = 1,
	};
	size_t size = shca_llq_mem_size(&cfg);
	void *mem;

	if (!size)
		return NULL;
	mem = kvzalloc(size, GFP_KERNEL);
	if (!mem)
		return NULL;
	if (shca_llq_init(q, &cfg, mem)) {
		kvfree(mem);
		return NULL;
	}
	return mem;
}

/*
 * 0 outside a transmit stage; inside one (of any shca device), 1 + the
 * requests and READ or atomic responses (not ACKs) the stage sent from
 * this CPU in its current round.  Read by shca_rx_target() in the
 * softirqs those packets start.  The stage's thread is bound to its CPU,
 * so the count stays on the CPU that set it.
 */
static DEFINE_PER_CPU(unsigned int, shca_tx_round_pkts);

/**
 * shca_engine_count_tx - count a packet sent in a transmit stage's round
 * @op: the packet's BTH opcode
 *
 * Called by shca_pkt_xmit() for every packet sent; any context.  ACKs
 * and a softirq's packets (those answer what the stage sent) do not count.
 */
void shca_engine_count_tx(u8 op)
{
	if (!this_cpu_read(shca_tx_round_pkts) || in_serving_softirq() ||
	    (shca_opcode_info(op)->flags & SHCA_OPF_ACK))
		return;
	this_cpu_inc(shca_tx_round_pkts);
}

/*
 * A receive drain moved to this CPU (shca_rx_handoff()), in softirq
 * context; it goes on here while its budget runs out with packets left.
 */
static void shca_rx_tasklet(struct tasklet_struct *t)
{
	struct shca_engine *eng = from_tasklet(eng, t, rx_tasklet);

	if (shca_engine_rx_run(eng, SHCA_RX_BUDGET * 4,
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
	shca_stat_inc(eng->sdev, SHCA_CNT_RX_HANDOFFS);
	return true;
}

/* A softirq drain past its budget goes on in process context. */
static void shca_rx_work(struct work_struct *work)
{
	struct shca_engine *eng = container_of(work, struct shca_engine,
					       rx_work);

	local_bh_disable();
	if (shca_engine_rx_run(eng, SHCA_RX_BUDGET * 4,
			       smp_processor_id() != eng->tx_cpu))
		queue_work(shca_wq, &eng->rx_work);
	local_bh_enable();
}

/*
 * The transmit stage: serve the scheduled QPs, then look at the watched
 * send rings (shca_doorbell.c).  While a watched QP lingers in its idle
 * window, the stage spins on the rings for SHCA_TX_SPIN_NS after the last
 * post it found or window it opened, if nothing else wants this CPU (and
 * queues itself again after SHCA_TX_SPIN_NS of one run, so the CPU is not
 * held).  Otherwise it leaves the CPU and polls again from a timer whose
 * period backs off from SHCA_POLL_TICK_NS, until the windows run out.
 */
static void shca_tx_work(struct kthread_work *work)
{
	struct shca_engine *eng = container_of(work, struct shca_engine,
					       tx_work);
	u64 now = ktime_get_ns(), stop = now + SHCA_TX_SPIN_NS;
	bool again = false;
	unsigned int poll;

	WRITE_ONCE(eng->tx_active, true);
	for (;;) {
		this_cpu_write(shca_tx_round_pkts, 1);
		if (shca_engine_tx_run(eng, SHCA_TX_ROUND_BUDGET)) {
			again = true;
			break;
		}
		poll = shca_db_poll(eng);
		if (!(poll & SHCA_DB_POLL_LINGER)) {
			WRITE_ONCE(eng->timer_polling, false);
			break;
		}
		now = ktime_get_ns();
		if (poll & SHCA_DB_POLL_FRESH)
			eng->spin_until = now + SHCA_TX_SPIN_NS;
		if (now >= eng->spin_until || !single_task_running() ||
		    need_resched()) {
			WRITE_ONCE(eng->timer_polling, true);
			shca_engine_poll_later(eng, poll & SHCA_DB_POLL_FRESH);
			break;
		}
		WRITE_ONCE(eng->timer_polling, false);
		if (now > stop) {
			again = true;
			break;
		}
		cpu_relax();
	}
	this_cpu_write(shca_tx_round_pkts, 0);
	if (again)
		shca_engine_kick_tx(eng);
	else
		WRITE_ONCE(eng->tx_active, false);
}

/*
 * Poll the watched rings again from the timer: soon after a find, then
 * backing off.  Transmit stage context only (owns @poll_tick).
 */
static void shca_engine_poll_later(struct shca_engine *eng, bool fresh)
{
	if (fresh || !eng->poll_tick)
		eng->poll_tick = SHCA_POLL_TICK_NS;
	else
		eng->poll_tick = min_t(u64, eng->poll_tick * 2,
				       SHCA_POLL_TICK_MAX_NS);
	hrtimer_start(&eng->poll_timer, ns_to_ktime(eng->poll_tick),
		      HRTIMER_MODE_REL);
}

static enum hrtimer_restart shca_poll_timer_fn(struct hrtimer *t)
{
	struct shca_engine *eng = container_of(t, struct shca_engine,
					       poll_timer);

	shca_engine_kick_tx(eng);
	return HRTIMER_NORESTART;
}

/**
 * shca_engine_create - allocate a device's engine and its queues
 * @sdev: device
 *
 * Return: 0, -ENOMEM, or the error of creating the stage's thread.
 */
int shca_engine_create(struct shca_dev *sdev)
{
	struct shca_engine *eng;
	int ret;

	eng = kzalloc(sizeof(*eng), GFP_KERNEL);
	if (!eng)
		return -ENOMEM;
	eng->sdev = sdev;
	spin_lock_init(&eng->rx_lock);
	spin_lock_init(&eng->tx_lock);
	spin_lock_init(&eng->sched_lock);
	INIT_LIST_HEAD(&eng->sched);
	spin_lock_init(&eng->poll_lock);
	INIT_LIST_HEAD(&eng->poll);
	INIT_WORK(&eng->rx_work, shca_rx_work);
	kthread_init_work(&eng->tx_work, shca_tx_work);
	tasklet_setup(&eng->rx_tasklet, shca_rx_tasklet);
	INIT_CSD(&eng->rx_csd, shca_rx_ipi, eng);
	hrtimer_init(&eng->poll_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	eng->poll_timer.function = shca_poll_timer_fn;
	eng->tx_cpu = cpumask_local_spread(sdev->ndev->ifindex,
					   dev_to_node(&sdev->ndev->dev));
	eng->rx_cpu = cpumask_local_spread(sdev->ndev->ifindex + 1,
					   dev_to_node(&sdev->ndev->dev));

	/* every QP may be on the transmit LLQ at once, one entry each */
	eng->rx_mem = shca_llq_alloc(&eng->rx_llq, SHCA_RX_LLQ_ENTRIES,
				     SHCA_RX_LLQ_ENTRIES, shca_max_qp);
	eng->tx_mem = shca_llq_alloc(&eng->tx_llq,
				     max_t(u32, SHCA_TX_LLQ_ENTRIES,
					   shca_max_qp),
				     shca_max_qp, shca_max_qp);
	ret = -ENOMEM;
	if (!eng->rx_mem || !eng->tx_mem)
		goto err_free;
	eng->tx_worker = kthread_create_worker_on_cpu(eng->tx_cpu, 0,
						      "shca_tx/%s",
						      netdev_name(sdev->ndev));
	if (IS_ERR(eng->tx_worker)) {
		ret = PTR_ERR(eng->tx_worker);
		goto err_free;
	}
	set_user_nice(eng->tx_worker->task, shca_tx_nice);
	sdev->eng = eng;
	return 0;

err_free:
	kvfree(eng->rx_mem);
	kvfree(eng->tx_mem);
	kfree(eng);
	return ret;
}

static void shca_free_skb_payload(void *ctx, u32 index, u32 func,
				  const struct shca_llq_payload *p)
{
	kfree_skb((struct sk_buff *)(uintptr_t)p->w[0]);
}

/**
 * shca_engine_destroy - free the engine (every QP is gone)
 * @sdev: device
 */
void shca_engine_destroy(struct shca_dev *sdev)
{
	struct shca_engine *eng = sdev->eng;

	if (!eng)
		return;
	cancel_work_sync(&eng->rx_work);
	while (test_bit(SHCA_ENG_RX_IPI, &eng->flags))
		cpu_relax();
	tasklet_kill(&eng->rx_tasklet);
	/* no QP is left to linger: the work does not start the timer again */
	hrtimer_cancel(&eng->poll_timer);
	kthread_cancel_work_sync(&eng->tx_work);
	hrtimer_cancel(&eng->poll_timer);
	kthread_destroy_worker(eng->tx_worker);
	spin_lock_bh(&eng->rx_lock);
	shca_llq_reclaim_all(&eng->rx_llq, shca_free_skb_payload, NULL);
	spin_unlock_bh(&eng->rx_lock);
	kvfree(eng->rx_mem);
	kvfree(eng->tx_mem);
	kfree(eng);
	sdev->eng = NULL;
}

/**
 * shca_engine_flush_tx - wait until the transmit stage has handled what
 * was scheduled before the call
 * @sdev: device
 *
 * Process context (sleeps).
 */
void shca_engine_flush_tx(struct shca_dev *sdev)
{
	if (sdev->eng)
		kthread_flush_work(&sdev->eng->tx_work);
}

/**
 * shca_engine_drop_qp - discard a dying QP's received packets
 * @eng: engine
 * @qpn: the QP
 */
void shca_engine_drop_qp(struct shca_engine *eng, u32 qpn)
{
	spin_lock_bh(&eng->rx_lock);
	shca_llq_reclaim(&eng->rx_llq, qpn, shca_free_skb_payload, NULL);
	spin_unlock_bh(&eng->rx_lock);
}

/**
 * shca_engine_update_stats - copy LLQ occupancy into the device counters
 * @eng: engine
 */
void shca_engine_update_stats(struct shca_engine *eng)
{
	struct shca_dev *sdev = eng->sdev;
	const struct shca_llq_stats *rx, *tx;
	u64 refused, hwm, rx_used, tx_used, lists;

	spin_lock_bh(&eng->rx_lock);
	spin_lock(&eng->tx_lock);
	rx = shca_llq_stats(&eng->rx_llq);
	tx = shca_llq_stats(&eng->tx_llq);
	refused = rx->refused[SHCA_LLQ_REFUSE_ENTRY] +
		  rx->refused[SHCA_LLQ_REFUSE_LIST] +
		  rx->refused[SHCA_LLQ_REFUSE_CREDIT] +
		  tx->refused[SHCA_LLQ_REFUSE_ENTRY] +
		  tx->refused[SHCA_LLQ_REFUSE_LIST] +
		  tx->refused[SHCA_LLQ_REFUSE_CREDIT];
	hwm = max(rx->entries_hw, tx->entries_hw);
	rx_used = rx->entries_used;
	tx_used = tx->entries_used;
	lists = rx->lists_used + tx->lists_used;
	spin_unlock(&eng->tx_lock);
	spin_unlock_bh(&eng->rx_lock);
	atomic64_set(&sdev->stats[SHCA_CNT_LLQ_REFUSED], refused);
	atomic64_set(&sdev->stats[SHCA_CNT_LLQ_ENTRIES_HWM], hwm);
	atomic64_set(&sdev->stats[SHCA_CNT_LLQ_RX_ENTRIES], rx_used);
	atomic64_set(&sdev->stats[SHCA_CNT_LLQ_TX_ENTRIES], tx_used);
	atomic64_set(&sdev->stats[SHCA_CNT_LLQ_LISTS], lists);
}

/* ---- receive ---------------------------------------------------------- */

static void shca_rx_drop(struct shca_dev *sdev, struct sk_buff *skb,
			 enum shca_counter why)
{
	shca_stat_inc(sdev, why);
	kfree_skb(skb);
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
		   this_cpu_read(shca_tx_round_pkts) > SHCA_RX_STREAM_PKTS) {
		to = eng->rx_cpu;
	} else {
		return -1;
	}
	return to != smp_processor_id() && cpu_online(to) ? to : -1;
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
	struct shca_engine *eng = sdev->eng;
	struct shca_llq_payload p = { .w = { (uintptr_t)skb, 0 } };
	u32 qpn;
	int ret, cpu;
	u8 op;

	/*
	 * Only the opcode's own headers are made linear: a payload in page
	 * fragments stays there until its one copy into the target MR.
	 */
	if (skb->len < SHCA_BTH_LEN || !pskb_may_pull(skb, SHCA_BTH_LEN))
		return shca_rx_drop(sdev, skb, SHCA_CNT_RX_DROP_BAD_HDR);
	op = shca_bth_opcode(skb->data);
	if (!shca_opcode_valid(op) ||
	    !pskb_may_pull(skb, min_t(u32, skb->len,
				      shca_opcode_info(op)->hdr_len)))
		return shca_rx_drop(sdev, skb, SHCA_CNT_RX_DROP_BAD_HDR);

	qpn = shca_bth_dest_qpn(skb->data);
	if (!qpn || qpn >= shca_max_qp)
		return shca_rx_drop(sdev, skb, SHCA_CNT_RX_DROP_NO_QP);

	spin_lock(&eng->rx_lock);
	ret = shca_llq_push(&eng->rx_llq, qpn, 0, &p, true);
	spin_unlock(&eng->rx_lock);
	if (ret < 0)
		return shca_rx_drop(sdev, skb, SHCA_CNT_RX_DROP_QUEUE_FULL);

	if (test_and_set_bit(SHCA_ENG_RX_RUNNING, &eng->flags))
		return;
	cpu = shca_rx_target(eng, op);
	if (cpu >= 0 && shca_rx_handoff(eng, cpu))
		return;
	if (shca_engine_rx_run(eng, SHCA_RX_BUDGET, false))
		queue_work(shca_wq, &eng->rx_work);
}

/*
 * Placement stage for one packet.  Caller must hold qp->lock (BH off).
 */
static void shca_qp_rx(struct shca_qp *qp, struct sk_buff *skb)
{
	struct shca_pkt_hdr h;
	const struct shca_opcode_info *oi;
	int hdr_len;

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
		break;
	case IB_QPT_UC:
		if (oi->transport != SHCA_TR_UC)
			goto bad_opcode;
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
}

/**
 * shca_engine_try_inline - send a quiet QP's new requests from here
 * @qp: QP (caller must hold qp->lock, BH off)
 *
 * Used by a doorbell call and by the receive softirq that just handled
 * the QP (whose process may have posted its answer already): the hand-off
 * to the transmit stage (a wake-up, then a wait for a CPU) dominates a
 * lone message's latency.  Only a QP with nothing in flight and nothing
 * queued for the transmit stage qualifies, so its packets cannot overtake
 * earlier ones leaving from the stage's CPU.  Sends at most
 * SHCA_TX_INLINE_BUDGET packets; the rest is left for the stage.
 */
static void shca_engine_try_inline(struct shca_qp *qp)
{
	if (READ_ONCE(qp->scheduled) || !shca_req_quiet(qp) ||
	    shca_resp_has_work(qp) || !shca_req_has_work(qp))
		return;
	shca_req_transmit(qp, SHCA_TX_INLINE_BUDGET);
	shca_stat_inc(qp->sdev, SHCA_CNT_TX_INLINE);
}

/*
 * What a QP needs after a turn outside the transmit stage: a turn of the
 * stage for what is left to send, or, with nothing outstanding, whatever
 * its doorbell state asks (shca_db_settle()).  WQEs still in the send ring
 * count only when @ring.  Caller must hold qp->lock and passes the result
 * to shca_engine_follow() after dropping it.
 */
static enum shca_db_settle shca_engine_leftover(struct shca_qp *qp,
						 bool ring)
{
	if (shca_resp_has_work(qp))
		return SHCA_DB_NEW_WORK;
	if (ring ? shca_req_has_work(qp) : shca_req_has_fetched_work(qp))
		return SHCA_DB_NEW_WORK;
	return shca_db_settle(qp);
}

static void shca_engine_follow(struct shca_qp *qp, enum shca_db_settle next)
{
	if (next == SHCA_DB_NEW_WORK)
		shca_engine_schedule(qp);
	else if (next == SHCA_DB_WAKE_POLLER)
		shca_engine_kick_tx(qp->sdev->eng);
}

/*
 * One received packet, for QP @qpn, its ICRC not yet checked (a bad one
 * is dropped before the QP is looked at).  The ACKs and NAKs its handling
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
			bool last_of_burst, bool away)
{
	struct shca_ack ack = {};
	struct shca_tx_hold hold;
	enum shca_db_settle next;
	struct shca_qp *qp;
	bool held, ring;
	u32 rsp_sent;

	if (!shca_net_rx_verify(eng->sdev, skb))
		return;
	qp = shca_qp_get(eng->sdev, qpn);
	if (!qp) {
		shca_rx_drop(eng->sdev, skb, SHCA_CNT_RX_DROP_NO_QP);
		return;
	}
	spin_lock(&qp->lock);
	rsp_sent = qp->resp.rsp_sent;
	qp->resp.ack_defer = &ack;
	shca_tx_hold(&hold);
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
		shca_stat_add(eng->sdev, SHCA_CNT_RX_HELD,
			      skb_queue_len(&hold.q));
		shca_tx_flush(&hold);
	}
	if (ack.valid) {
		shca_stat_inc(eng->sdev, SHCA_CNT_RX_HELD);
		shca_stat_inc(eng->sdev, SHCA_CNT_ACK_DEFERRED);
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
static bool shca_engine_rx_run(struct shca_engine *eng, int budget,
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
			last = ret == 0 && shca_llq_len(&eng->rx_llq, qpn) <= 0;
			spin_unlock(&eng->rx_lock);
			if (ret)
				break;
			shca_rx_one(eng, qpn, (struct sk_buff *)(uintptr_t)p.w[0],
				    last, away);
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

/* ---- transmit --------------------------------------------------------- */

static void shca_engine_kick_tx(struct shca_engine *eng)
{
	kthread_queue_work(eng->tx_worker, &eng->tx_work);
}

/**
 * shca_engine_schedule - put a QP on the transmit scheduler
 * @qp: QP with something to send (new WQEs, responses, a retry)
 *
 * Any context.  The scheduler holds a QP reference while it is listed.
 */
void shca_engine_schedule(struct shca_qp *qp)
{
	struct shca_engine *eng = qp->sdev->eng;
	unsigned long flags;
	bool added = false;

	spin_lock_irqsave(&eng->sched_lock, flags);
	if (!qp->scheduled) {
		refcount_inc(&qp->ref);
		qp->scheduled = true;
		list_add_tail(&qp->sched_node, &eng->sched);
		added = true;
	}
	spin_unlock_irqrestore(&eng->sched_lock, flags);
	if (added)
		shca_engine_kick_tx(eng);
}

/**
 * shca_engine_unschedule - take a dying QP off the transmit scheduler
 * @qp: QP
 */
void shca_engine_unschedule(struct shca_qp *qp)
{
	struct shca_engine *eng = qp->sdev->eng;
	bool listed;

	spin_lock_irq(&eng->sched_lock);
	listed = qp->scheduled;
	if (listed) {
		list_del_init(&qp->sched_node);
		qp->scheduled = false;
	}
	spin_unlock_irq(&eng->sched_lock);
	if (listed)
		shca_qp_put(qp);
}

static struct shca_qp *shca_sched_next(struct shca_engine *eng)
{
	struct shca_qp *qp;

	spin_lock_irq(&eng->sched_lock);
	qp = list_first_entry_or_null(&eng->sched, struct shca_qp, sched_node);
	if (qp) {
		list_del_init(&qp->sched_node);
		qp->scheduled = false;
	}
	spin_unlock_irq(&eng->sched_lock);
	return qp;
}

/* Serve one QP for one turn.  Returns the packets sent. */
static int shca_tx_serve(struct shca_qp *qp)
{
	bool more;
	int n;

	spin_lock_bh(&qp->lock);
	n = shca_resp_transmit(qp, SHCA_TX_BUDGET);
	n += shca_req_transmit(qp, SHCA_TX_BUDGET);
	more = shca_resp_has_work(qp) || shca_req_has_work(qp);
	spin_unlock_bh(&qp->lock);
	if (more)
		shca_engine_schedule(qp);
	return n;
}

/**
 * shca_engine_post - a user QP's send doorbell rang: transmit its new
 * work now, in the posting context, or leave it to the transmit stage
 * @qp: user QP (caller must not hold qp->lock)
 *
 * Counts the doorbell (shca_db_ring()), under the same hold of qp->lock;
 * a QP in error has the new WQEs flushed instead.  A quiet QP sends from
 * the caller's context (shca_engine_try_inline()); what is left goes to
 * the transmit stage.  The packets sent here are held (shca_tx_hold())
 * until qp->lock is dropped, so that the peer's receive path, which a
 * transmission on a veth-like netdev runs in this CPU's softirq, starts
 * at once instead of after this function's bookkeeping; qp->req.held
 * keeps every other context from sending after them meanwhile.  Process
 * context (the doorbell system call).
 */
void shca_engine_post(struct shca_qp *qp)
{
	struct shca_tx_hold hold;
	enum shca_db_settle next;

	spin_lock_bh(&qp->lock);
	if (qp->state == IB_QPS_ERR) {
		shca_qp_flush(qp);
	} else {
		shca_db_ring(qp);
		shca_tx_hold(&hold);
		shca_engine_try_inline(qp);
		if (shca_tx_unhold(&hold)) {
			qp->req.held = true;
			spin_unlock_bh(&qp->lock);
			shca_stat_add(qp->sdev, SHCA_CNT_TX_HELD,
				      skb_queue_len(&hold.q));
			shca_tx_flush(&hold);
			spin_lock_bh(&qp->lock);
			qp->req.held = false;
		}
	}
	shca_db_rung(qp);
	next = shca_engine_leftover(qp, true);
	spin_unlock_bh(&qp->lock);
	shca_engine_follow(qp, next);
}

/*
 * Serve scheduled QPs round robin; runs only as tx_work, which never runs
 * concurrently with itself, and shca_engine_schedule() queues it again
 * after listing a QP, so no QP is left behind.  Returns true when the
 * budget ran out with QPs left.
 */
static bool shca_engine_tx_run(struct shca_engine *eng, int budget)
{
	struct shca_qp *qp;

	while (budget > 0) {
		qp = shca_sched_next(eng);
		if (!qp)
			return false;
		budget -= max(1, shca_tx_serve(qp));
		shca_qp_put(qp);
	}
	return true;
}
