// SPDX-License-Identifier: GPL-2.0
/*
 * shca engine: a netdev's engine (its queues and stages), the transmit
 * scheduler and the transmit stage.  The receive stage is in shca_rx.c;
 * the devices (functions) sharing an engine are in shca_func.c.
 *
 * The transmit stage is one work item on the engine's own kernel thread,
 * bound to the engine's CPU.  It serves the QPs scheduled for transmit
 * round robin and polls the send rings the doorbells watch.  A doorbell
 * call or a receive softirq may send a quiet QP's packets itself
 * (shca_engine_try_inline()).
 */
#include <linux/vmalloc.h>
#include <linux/sched/prio.h>
#include <linux/sched/stat.h>
#include "shca.h"
#include "shca_hdr.h"
#include "shca_qpc.h"
#include "shca_engine.h"
#include "shca_mcrep.h"
#include "shca_doorbell.h"
#include "shca_rx.h"
#include "shca_req.h"
#include "shca_resp_tx.h"
#include "shca_wq.h"
#include "shca_udp_tx.h"
#include "shca_trace.h"

/*
 * Below 0: a process that spins on the stage's CPU (a CQ poller) would
 * otherwise get half of it.  Not -20: the stage would then starve
 * ksoftirqd (nice 0), to which the kernel defers receive processing under
 * load, and a netdev that receives on the sending CPU (veth) overflows
 * its backlog and drops shca's own packets.
 */
static int shca_tx_nice = -10;
module_param_named(tx_nice, shca_tx_nice, int, 0444);
MODULE_PARM_DESC(tx_nice,
		 "Nice value of the transmit stage threads (shca_tx/<netdev>), -20 to 19 (default -10)");

static bool shca_engine_tx_run(struct shca_engine *eng, int budget);
static void shca_engine_poll_later(struct shca_engine *eng, bool fresh);

/*
 * 0 outside a transmit stage; inside one (of any shca device), 1 + the
 * requests and READ or atomic responses (not ACKs) the stage sent from
 * this CPU in its current round.  Read by shca_rx_target() in the
 * softirqs those packets start.  The stage's thread is bound to its CPU,
 * so the count stays on the CPU that set it.
 */
static DEFINE_PER_CPU(unsigned int, shca_tx_round_pkts);

/**
 * shca_engine_tx_round - what a transmit stage's round sent from this CPU
 *
 * Return: 0 outside a transmit stage; inside one, 1 + the requests and
 * READ or atomic responses it sent in its current round.
 */
unsigned int shca_engine_tx_round(void)
{
	return this_cpu_read(shca_tx_round_pkts);
}

/**
 * shca_engine_count_tx - count a packet sent in a transmit stage's round
 * @op: the packet's BTH opcode
 *
 * Called by shca_send_pkt() for every packet sent; any context.  ACKs
 * and a softirq's packets (those answer what the stage sent) do not count.
 */
void shca_engine_count_tx(u8 op)
{
	if (!this_cpu_read(shca_tx_round_pkts) || in_serving_softirq() ||
	    (shca_opcode_info(op)->flags & SHCA_OPF_ACK))
		return;
	this_cpu_inc(shca_tx_round_pkts);
}

/* Queue the transmit stage's work on its thread. */
static void shca_engine_kick_tx(struct shca_engine *eng)
{
	kthread_queue_work(eng->tx_worker, &eng->tx_work);
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

/* Every function starts with the whole of each queue. */
static void *shca_llq_alloc(struct shca_llq *q, u32 entries, u32 lists,
			    u32 n_index)
{
	struct shca_llq_cfg cfg = {
		.n_entries = entries,
		.n_lists = lists,
		.n_index = n_index,
		.n_funcs = SHCA_MAX_FUNCS,
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

/* The queues: indices run over the QPNs and the functions' GSI QPs. */
static int shca_engine_alloc_queues(struct shca_engine *eng)
{
	u32 nidx = eng->nqp + SHCA_MAX_FUNCS;

	/* every QP may be on the transmit LLQ at once, one entry each */
	eng->rx_mem = shca_llq_alloc(&eng->rx_llq, SHCA_RX_LLQ_ENTRIES,
				     SHCA_RX_LLQ_ENTRIES, nidx);
	eng->tx_mem = shca_llq_alloc(&eng->tx_llq,
				     max_t(u32, SHCA_TX_LLQ_ENTRIES, nidx),
				     nidx, nidx);
	eng->mc_mem = shca_llq_alloc(&eng->mc_llq, SHCA_MC_CREDIT,
				     SHCA_MC_CREDIT, eng->nqp);
	if (!eng->rx_mem || !eng->tx_mem || !eng->mc_mem)
		return -ENOMEM;
	return 0;
}

static void shca_engine_free_queues(struct shca_engine *eng)
{
	kvfree(eng->rx_mem);
	kvfree(eng->tx_mem);
	kvfree(eng->mc_mem);
}

/**
 * shca_engine_create - allocate the engine of a netdev and its queues
 * @ndev: the netdev (the engine holds a reference)
 * @nqp: QP numbers of the engine (QPNs are below it)
 *
 * The functions on @ndev are added by shca_func.c.  Process context.
 *
 * Return: the engine, or an ERR_PTR(): -ENOMEM, or the error of creating
 * a stage's thread.
 */
struct shca_engine *shca_engine_create(struct net_device *ndev, u32 nqp)
{
	struct shca_engine *eng;
	int ret;

	eng = kzalloc(sizeof(*eng), GFP_KERNEL);
	if (!eng)
		return ERR_PTR(-ENOMEM);
	eng->ndev = ndev;
	eng->nqp = nqp;
	INIT_LIST_HEAD(&eng->node);
	xa_init_flags(&eng->qp_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	eng->qpn_next = SHCA_FIRST_QPN;
	spin_lock_init(&eng->rx_lock);
	spin_lock_init(&eng->tx_lock);
	spin_lock_init(&eng->sched_lock);
	INIT_LIST_HEAD(&eng->sched);
	spin_lock_init(&eng->poll_lock);
	INIT_LIST_HEAD(&eng->poll);
	shca_rx_stage_init(eng);
	kthread_init_work(&eng->tx_work, shca_tx_work);
	hrtimer_init(&eng->poll_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	eng->poll_timer.function = shca_poll_timer_fn;
	eng->tx_cpu = cpumask_local_spread(ndev->ifindex,
					   dev_to_node(&ndev->dev));
	eng->rx_cpu = cpumask_local_spread(ndev->ifindex + 1,
					   dev_to_node(&ndev->dev));

	ret = shca_engine_alloc_queues(eng);
	if (ret)
		goto err_free;
	shca_txc_init(&eng->txc, eng->tx_llq.cfg.n_entries);
	ret = shca_mcg_init(eng);
	if (ret)
		goto err_free;
	ret = shca_mcrep_init(eng);
	if (ret)
		goto err_mcg;
	eng->tx_worker = kthread_create_worker_on_cpu(eng->tx_cpu, 0,
						      "shca_tx/%s",
						      netdev_name(ndev));
	if (IS_ERR(eng->tx_worker)) {
		ret = PTR_ERR(eng->tx_worker);
		goto err_mcrep;
	}
	set_user_nice(eng->tx_worker->task, shca_tx_nice);
	netdev_hold(ndev, &eng->ndev_tracker, GFP_KERNEL);
	return eng;

err_mcrep:
	shca_mcrep_stop(eng);
err_mcg:
	shca_mcg_destroy(eng);
err_free:
	shca_engine_free_queues(eng);
	kfree(eng);
	return ERR_PTR(ret);
}

/* Reclaim of a receive LLQ entry: a multicast copy returns its credit. */
static void shca_free_skb_payload(void *ctx, u32 index, u32 func,
				  const struct shca_llq_payload *p)
{
	struct shca_engine *eng = ctx;

	if (p->w[1] & SHCA_RXD_MCAST)
		shca_mcast_consumed(&eng->mcg.flow);
	kfree_skb((struct sk_buff *)(uintptr_t)p->w[0]);
}

/**
 * shca_engine_destroy - free an engine (its last function is gone, and
 * with it every QP)
 * @eng: engine
 */
void shca_engine_destroy(struct shca_engine *eng)
{
	shca_rx_stage_stop(eng);
	/* no QP is left to linger: the work does not start the timer again */
	hrtimer_cancel(&eng->poll_timer);
	kthread_cancel_work_sync(&eng->tx_work);
	hrtimer_cancel(&eng->poll_timer);
	kthread_destroy_worker(eng->tx_worker);
	shca_mcrep_stop(eng);
	spin_lock_bh(&eng->rx_lock);
	shca_llq_reclaim_all(&eng->rx_llq, shca_free_skb_payload, eng);
	shca_llq_reclaim_all(&eng->mc_llq, shca_free_skb_payload, eng);
	spin_unlock_bh(&eng->rx_lock);
	shca_mcg_destroy(eng);
	WARN_ON_ONCE(!xa_empty(&eng->qp_xa));
	xa_destroy(&eng->qp_xa);
	shca_engine_free_queues(eng);
	netdev_put(eng->ndev, &eng->ndev_tracker);
	kfree(eng);
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
 * @qpn: the QP's queue index (shca_qp.idx)
 */
void shca_engine_drop_qp(struct shca_engine *eng, u32 qpn)
{
	spin_lock_bh(&eng->rx_lock);
	shca_llq_reclaim(&eng->rx_llq, qpn, shca_free_skb_payload, eng);
	shca_llq_reclaim(&eng->mc_llq, qpn, shca_free_skb_payload, eng);
	spin_unlock_bh(&eng->rx_lock);
	/* multicast copies may wait for the credit just returned */
	shca_mcrep_kick(eng);
}

/* A function's entries in use and its refusals, of one queue. */
static void shca_llq_func_add(const struct shca_llq *q, u32 fn, u64 *used,
			      u64 *refused, u64 *credit)
{
	struct shca_llq_func_stats fs;

	if (shca_llq_func_stats(q, fn, &fs))
		return;
	*used += fs.used;
	*refused += fs.refused[SHCA_LLQ_REFUSE_ENTRY] +
		    fs.refused[SHCA_LLQ_REFUSE_LIST] +
		    fs.refused[SHCA_LLQ_REFUSE_CREDIT];
	*credit += fs.refused[SHCA_LLQ_REFUSE_CREDIT];
}

/**
 * shca_engine_update_stats - copy the engine's state into a function's
 * counters
 * @sdev: the function
 *
 * Entries in use and refusals are the function's own; the high-water
 * mark, the lists, the receive hand-offs and the transmit stage's polls
 * belong to the engine, which the functions of a netdev share.
 */
void shca_engine_update_stats(struct shca_dev *sdev)
{
	struct shca_engine *eng = sdev->eng;
	const struct shca_llq_stats *rx, *tx, *mc;
	u64 refused = 0, credit = 0, rx_used = 0, tx_used = 0, hwm, lists;

	spin_lock_bh(&eng->rx_lock);
	spin_lock(&eng->tx_lock);
	rx = shca_llq_stats(&eng->rx_llq);
	tx = shca_llq_stats(&eng->tx_llq);
	mc = shca_llq_stats(&eng->mc_llq);
	hwm = max(rx->entries_hw, tx->entries_hw);
	lists = rx->lists_used + tx->lists_used + mc->lists_used;
	shca_llq_func_add(&eng->rx_llq, sdev->fn, &rx_used, &refused, &credit);
	shca_llq_func_add(&eng->mc_llq, sdev->fn, &rx_used, &refused, &credit);
	shca_llq_func_add(&eng->tx_llq, sdev->fn, &tx_used, &refused, &credit);
	spin_unlock(&eng->tx_lock);
	spin_unlock_bh(&eng->rx_lock);
	atomic64_set(&sdev->stats[SHCA_CNT_LLQ_REFUSED], refused);
	atomic64_set(&sdev->stats[SHCA_CNT_LLQ_CREDIT_REFUSED], credit);
	atomic64_set(&sdev->stats[SHCA_CNT_LLQ_ENTRIES_HWM], hwm);
	atomic64_set(&sdev->stats[SHCA_CNT_LLQ_RX_ENTRIES], rx_used);
	atomic64_set(&sdev->stats[SHCA_CNT_LLQ_TX_ENTRIES], tx_used);
	atomic64_set(&sdev->stats[SHCA_CNT_LLQ_LISTS], lists);
	atomic64_set(&sdev->stats[SHCA_CNT_TX_USER_ENTRIES],
		     atomic_read(&eng->txc.users_used));
	atomic64_set(&sdev->stats[SHCA_CNT_RX_HANDOFFS],
		     atomic64_read(&eng->handoffs));
	atomic64_set(&sdev->stats[SHCA_CNT_DB_POLLS],
		     atomic64_read(&eng->db_polls));
}

/**
 * shca_engine_try_inline - send a quiet QP's new requests from here
 * @qp: QP (caller must hold qp->lock, BH off)
 *
 * Used by a doorbell call and by the receive softirq that just handled
 * the QP (whose process may have posted its answer already): the hand-off
 * to the transmit stage (a wake-up, then a wait for a CPU) dominates a
 * lone message's latency.  Only a QP with nothing in flight
 * (shca_req_off_wire()) and nothing queued for the transmit stage
 * qualifies, so its packets cannot overtake earlier ones leaving from the
 * stage's CPU.  Sends at most SHCA_TX_INLINE_BUDGET packets; the rest is
 * left for the stage.
 */
void shca_engine_try_inline(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->lock);

	if (READ_ONCE(qp->scheduled) || !shca_req_off_wire(qp) ||
	    shca_resp_has_work(qp) || !shca_req_has_work(qp))
		return;
	shca_req_transmit(qp, SHCA_TX_INLINE_BUDGET);
	shca_stat_inc(qp->sdev, SHCA_CNT_TX_INLINE);
}

/**
 * shca_engine_send_posted - send what a process's UD QP has posted (its
 * destruction)
 * @qp: user UD QP, no longer found by its number
 *
 * A process rings its doorbell rarely: the transmit stage finds most
 * posts by watching the ring, a little later.  A hardware HCA, rung for
 * every post, would have sent a datagram posted just before the destroy
 * (mckey's sender posts its messages and goes at once); so does this.
 * At most the ring's entries are sent.  Process context.
 */
void shca_engine_send_posted(struct shca_qp *qp)
{
	u32 i, rounds = qp->sq.entries / SHCA_TX_BUDGET + 1;

	if (!qp->user || qp->type != IB_QPT_UD)
		return;
	spin_lock_bh(&qp->lock);
	for (i = 0; i < rounds && shca_req_has_work(qp); i++)
		if (!shca_req_transmit(qp, SHCA_TX_BUDGET))
			break;
	spin_unlock_bh(&qp->lock);
}

/**
 * shca_engine_leftover - what a QP needs after a turn outside the
 * transmit stage
 * @qp: QP (caller must hold qp->lock)
 * @ring: WQEs still in the send ring count
 *
 * A turn of the stage for what is left to send, or, with nothing
 * outstanding, whatever its doorbell state asks (shca_db_settle()).  The
 * caller passes the result to shca_engine_follow() after dropping the
 * lock.
 *
 * Return: what to do.
 */
enum shca_db_next shca_engine_leftover(struct shca_qp *qp,
				       bool ring)
{
	lockdep_assert_held(&qp->lock);

	if (shca_resp_has_work(qp))
		return SHCA_DB_NEW_WORK;
	if (ring ? shca_req_has_work(qp) : shca_req_has_fetched_work(qp))
		return SHCA_DB_NEW_WORK;
	return shca_db_settle(qp);
}

/**
 * shca_engine_follow - act on shca_engine_leftover()'s verdict
 * @qp: QP (qp->lock not held)
 * @next: the verdict
 */
void shca_engine_follow(struct shca_qp *qp, enum shca_db_next next)
{
	if (next == SHCA_DB_NEW_WORK)
		shca_engine_schedule(qp);
	else if (next == SHCA_DB_WAKE_POLLER)
		shca_engine_kick_tx(qp->sdev->eng);
}

/* ---- transmit --------------------------------------------------------- */

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
	/* a kernel QP's posts in error are flushed here (shca_post_send()) */
	if (qp->state == IB_QPS_ERR)
		shca_qp_flush(qp);
	n = shca_resp_transmit(qp, SHCA_TX_BUDGET);
	n += shca_req_transmit(qp, SHCA_TX_BUDGET);
	more = shca_resp_has_work(qp) || shca_req_has_work(qp);
	spin_unlock_bh(&qp->lock);
	if (more)
		shca_engine_schedule(qp);
	return n;
}

/*
 * shca_engine_try_inline() with the packets held (shca_tx_hold()) until
 * qp->lock is dropped, so that the peer's receive path, which a
 * transmission on a veth-like netdev runs in this CPU's softirq, starts
 * at once instead of after the caller's bookkeeping; qp->req.held keeps
 * every other context from sending after them meanwhile.  Caller holds
 * qp->lock with BH off; it is dropped and taken again when packets were
 * built.
 */
static void shca_engine_send_here(struct shca_qp *qp)
{
	struct shca_tx_hold hold;

	lockdep_assert_held(&qp->lock);
	shca_tx_hold(&hold);
	shca_engine_try_inline(qp);
	if (!shca_tx_unhold(&hold))
		return;
	qp->req.held = true;
	spin_unlock_bh(&qp->lock);
	shca_stat_add(qp->sdev, SHCA_CNT_TX_HELD, skb_queue_len(&hold.q));
	shca_tx_flush(&hold);
	spin_lock_bh(&qp->lock);
	qp->req.held = false;
}

/**
 * shca_engine_post - a user QP's send doorbell rang: transmit its new
 * work now, in the posting context, or leave it to the transmit stage
 * @qp: user QP (caller must not hold qp->lock)
 *
 * Counts the doorbell (shca_db_ring()), under the same hold of qp->lock;
 * a QP in error has the new WQEs flushed instead.  A quiet QP sends from
 * the caller's context (shca_engine_try_inline()); what is left goes to
 * the transmit stage.  The packets leave once qp->lock is dropped
 * (shca_engine_send_here()).  Process context (the doorbell system call).
 */
void shca_engine_post(struct shca_qp *qp)
{
	enum shca_db_next next;

	spin_lock_bh(&qp->lock);
	if (trace_shca_doorbell_enabled())
		trace_shca_doorbell(&qp->sdev->ibdev, qp->qpn,
				    READ_ONCE(qp->sq.ctrl->prod), qp->db.state);
	if (qp->state == IB_QPS_ERR) {
		shca_qp_flush(qp);
	} else {
		shca_db_ring(qp);
		shca_engine_send_here(qp);
	}
	shca_db_rung(qp);
	next = shca_engine_leftover(qp, true);
	spin_unlock_bh(&qp->lock);
	shca_engine_follow(qp, next);
}

/**
 * shca_engine_resume - a QP's requester may start WQEs now: a DRDMA
 * range's producer wrote the last byte a WQE waited on, or a kernel ULP
 * posted (shca_engine_post_kernel())
 * @qp: QP, a reference held by the caller (qp->lock not held)
 *
 * Sent from the caller's context when the QP qualifies
 * (shca_engine_try_inline()), like a doorbell's posts; whatever is left
 * goes to the transmit stage.  A QP in error has its WQEs flushed.
 * Process or softirq context.
 */
void shca_engine_resume(struct shca_qp *qp)
{
	bool more;

	spin_lock_bh(&qp->lock);
	if (qp->state == IB_QPS_ERR)
		shca_qp_flush(qp);
	else
		shca_engine_send_here(qp);
	more = shca_resp_has_work(qp) || shca_req_has_work(qp);
	spin_unlock_bh(&qp->lock);
	if (more)
		shca_engine_schedule(qp);
}

/**
 * shca_engine_post_kernel - a kernel ULP posted send WQEs: send them from
 * the caller, or leave them to the transmit stage
 * @qp: kernel QP (caller must not hold qp->lock)
 * @staged: the QP's choice for this post (shca_kpost_pick()): the stage
 *
 * A lone request (a storage ULP at queue depth 1) leaves from the
 * poster's context (shca_engine_resume()), as a user QP's doorbell call
 * sends it, instead of waking the transmit stage's thread and waiting for
 * it to run.  A poster that runs ahead of its requests gets them sent by
 * the stage, on the stage's CPU, while it goes on posting.  A poster with
 * IRQs off (the MAD layer posts so) or in hardirq always leaves them to
 * the stage: nothing here may take a lock with BHs then.
 */
void shca_engine_post_kernel(struct shca_qp *qp, bool staged)
{
	if (staged || irqs_disabled() || in_hardirq()) {
		shca_stat_inc(qp->sdev, SHCA_CNT_KPOST_STAGED);
		shca_engine_schedule(qp);
		return;
	}
	shca_stat_inc(qp->sdev, SHCA_CNT_KPOST_INLINE);
	shca_engine_resume(qp);
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

/**
 * shca_engine_init - module load: clamp tx_nice to what the scheduler
 * has, set up the receive stage's workqueue
 *
 * Return: 0 or -ENOMEM.
 */
int shca_engine_init(void)
{
	shca_tx_nice = clamp_t(int, shca_tx_nice, MIN_NICE, MAX_NICE);
	return shca_rx_init();
}

/**
 * shca_engine_exit - module unload, every device gone
 */
void shca_engine_exit(void)
{
	shca_rx_exit();
}
