// SPDX-License-Identifier: GPL-2.0
/*
 * shca multicast replication stage.
 *
 * A packet for the multicast QPN is checked once (ICRC, headers), looked
 * up by its destination GID and admitted against the threshold counter
 * (mech/shca_mcast.h); it then waits on the engine's replication queue
 * with a reference on a snapshot of its group's member set.  The
 * replication stage, a work item, pushes one descriptor per member QP
 * onto the multicast LLQ, on that QP's list, each one a reference to the
 * same skb: every copy but the last takes one more reference, the last
 * takes the packet's own.  The credit counter bounds the copies on that
 * queue (its size); when it runs out, replication waits until the stage
 * has delivered copies.  The stage delivers them through the same
 * placement as the receive drain (shca_rx_copy()); each member copies the
 * payload into its own receive buffer only (shca_ud_recv(), which only
 * reads the shared skb).
 *
 * The receive drain runs in softirq, ahead of every task; the
 * replication stage is a thread of its own at nice SHCA_MC_NICE, which
 * the scheduler gives a small share of a busy CPU next to the processes
 * and threads that make unicast traffic, so a multicast flood cannot
 * take the CPU from them (mechanism 002 gives multicast a path of its
 * own for this); on an idle CPU it runs at full speed.
 *
 * The replication queue, the counters and the multicast LLQ are under
 * the engine's rx_lock; the group lookup is RCU.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/kthread.h>
#include <net/ipv6.h>
#include "shca.h"
#include "shca_engine.h"
#include "shca_func.h"
#include "shca_hdr.h"
#include "shca_mcg.h"
#include "shca_mcrep.h"
#include "shca_rx.h"
#include "shca_udp_rx.h"

/**
 * struct shca_mcrep_cb - a queued packet's replication state, in skb->cb
 * @set: the member set it replicates to (a reference)
 * @rep: the cursor over @set
 * @waited: its replication has had to wait for credit
 * @fn: the function it arrived for (its counters)
 */
struct shca_mcrep_cb {
	struct shca_mcg_set *set;
	struct shca_mcast_rep rep;
	bool waited;
	u8 fn;
};

static struct shca_mcrep_cb *shca_mcrep_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct shca_mcrep_cb) >
		     sizeof_field(struct sk_buff, cb));
	return (struct shca_mcrep_cb *)skb->cb;
}

static bool shca_mcrep_drop(struct shca_dev *sdev, struct sk_buff *skb,
			    enum shca_counter c)
{
	shca_stat_inc(sdev, c);
	kfree_skb(skb);
	return false;
}

/* Count on the function a queued packet arrived for, if it is still there. */
static void shca_mcrep_count(struct shca_engine *eng, struct sk_buff *skb,
			     enum shca_counter c)
{
	struct shca_dev *sdev = shca_func_get(eng, shca_mcrep_cb(skb)->fn);

	if (sdev)
		shca_stat_inc(sdev, c);
}

/* The packet's destination address as a GID. */
static void shca_mcrep_dgid(const struct sk_buff *skb, u8 *mgid)
{
	if (skb->protocol == htons(ETH_P_IP))
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)mgid);
	else
		memcpy(mgid, &ipv6_hdr(skb)->daddr, 16);
}

/*
 * Push the copy for member @m.  Returns false when the multicast LLQ
 * refused it (the caller still owns the reference meant for it).
 */
static bool shca_mcrep_push(struct shca_engine *eng, struct sk_buff *skb,
			    const struct shca_mcast_member *m)
{
	struct shca_llq_payload p = {
		.w = { (uintptr_t)skb,
		       SHCA_RXD_MCAST | SHCA_RXD_FN(m->func) |
		       (u64)m->cookie << 32 },
	};

	if (shca_llq_push(&eng->mc_llq, m->qpn, m->func, &p, true) < 0) {
		shca_mcast_consumed(&eng->mcg.flow);
		shca_mcrep_count(eng, skb, SHCA_CNT_MC_DROP_QUEUE);
		return false;
	}
	return true;
}

/*
 * Make the copies of the oldest queued packet while credit lasts.
 * Returns false when it waits for credit, true when it is done; then
 * *kept says whether the packet's own reference is still the caller's
 * (no last copy was queued: it went to nobody, or the LLQ refused the
 * last one).
 */
static bool shca_mcrep_one(struct shca_engine *eng, struct sk_buff *skb,
			   bool *kept)
{
	struct shca_mcrep_cb *cb = shca_mcrep_cb(skb);
	bool last = false;
	int idx;

	*kept = true;
	while (!last) {
		idx = shca_mcast_rep_next(&eng->mcg.flow, &cb->rep, &last);
		if (idx == SHCA_MC_EAGAIN) {
			if (!cb->waited)
				shca_mcrep_count(eng, skb,
						 SHCA_CNT_MC_CREDIT_STALLS);
			cb->waited = true;
			return false;
		}
		if (idx < 0)
			return true;	/* nobody (else) wants it */
		/* the last copy takes the packet's own reference */
		if (!last)
			skb_get(skb);
		if (shca_mcrep_push(eng, skb, &cb->set->m[idx]))
			*kept = !last;
		else if (!last)
			kfree_skb(skb);
	}
	return true;
}

/*
 * shca_mcrep_resume - replicate queued packets while credit lasts
 * @eng: engine
 *
 * Caller holds eng->rx_lock.  A packet whose copies are all made leaves
 * the queue; one whose last copy was not queued is freed.
 */
static void shca_mcrep_resume(struct shca_engine *eng)
{
	struct shca_mcg_table *t = &eng->mcg;
	struct shca_mcrep_cb *cb;
	struct sk_buff *skb;
	bool kept;

	lockdep_assert_held(&eng->rx_lock);
	while ((skb = skb_peek(&t->pending))) {
		if (!shca_mcrep_one(eng, skb, &kept))
			break;
		cb = shca_mcrep_cb(skb);
		__skb_unlink(skb, &t->pending);
		shca_mcast_rep_end(&t->flow);
		shca_mcg_set_put(cb->set);
		/* otherwise the skb belongs to its copies now */
		if (kept)
			consume_skb(skb);
	}
}

/* Checks and lookup; the set of members to replicate to, or NULL. */
static struct shca_mcg_set *shca_mcrep_check(struct shca_dev *sdev,
					     struct sk_buff *skb,
					     struct shca_mcast_src *src)
{
	struct shca_engine *eng = sdev->eng;
	struct shca_mcg_set *set;
	struct shca_pkt_hdr h;
	u8 mgid[16];

	if (!shca_net_rx_verify(sdev, skb))
		return NULL;
	if (shca_hdr_parse(skb->data, skb->len + SHCA_ICRC_LEN, &h) < 0) {
		shca_mcrep_drop(sdev, skb, SHCA_CNT_RX_DROP_BAD_HDR);
		return NULL;
	}
	if (h.opcode != SHCA_UD_SEND_ONLY &&
	    h.opcode != SHCA_UD_SEND_ONLY_WITH_IMMEDIATE) {
		shca_mcrep_drop(sdev, skb, SHCA_CNT_RX_DROP_OPCODE);
		return NULL;
	}
	shca_mcrep_dgid(skb, mgid);
	/* a copy of a packet a QP of this device sent (shca_udp_tx.c) */
	src->local = skb->pkt_type == PACKET_LOOPBACK;
	set = shca_mcg_lookup(eng, mgid);
	if (!set) {
		if (src->local)
			consume_skb(skb);	/* its group went meanwhile */
		else
			shca_mcrep_drop(sdev, skb, SHCA_CNT_MC_DROP_NO_GROUP);
		return NULL;
	}
	src->func = sdev->fn;
	src->qpn = h.deth.src_qpn;
	/* a copy of the packet arrives on every netdev that joined */
	src->skip_funcs = shca_func_skip(eng, skb->dev);
	return set;
}

/**
 * shca_mcrep_rx - a packet for the multicast QPN
 * @sdev: the function it arrived for (the first on its netdev)
 * @skb: the packet (skb->data at the BTH, ICRC not yet checked), consumed
 *
 * Softirq context, under rcu_read_lock() (shca_rx()).  The packet is
 * checked, admitted against the threshold and queued for the
 * replication stage, which copies it to the members of the functions on
 * the netdev it arrived on.
 */
void shca_mcrep_rx(struct shca_dev *sdev, struct sk_buff *skb)
{
	struct shca_engine *eng = sdev->eng;
	struct shca_mcast_src src;
	struct shca_mcg_set *set;
	struct shca_mcrep_cb *cb;

	shca_stat_inc(sdev, SHCA_CNT_MC_RX_PKTS);
	set = shca_mcrep_check(sdev, skb, &src);
	if (!set)
		return;
	spin_lock(&eng->rx_lock);
	if (shca_mcast_admit(&eng->mcg.flow)) {
		spin_unlock(&eng->rx_lock);
		shca_mcg_set_put(set);
		shca_mcrep_drop(sdev, skb, SHCA_CNT_MC_DROP_THRESHOLD);
		return;
	}
	cb = shca_mcrep_cb(skb);
	cb->set = set;
	cb->waited = false;
	cb->fn = sdev->fn;
	shca_mcast_rep_start(&cb->rep, set->m, set->n, &src);
	__skb_queue_tail(&eng->mcg.pending, skb);
	spin_unlock(&eng->rx_lock);
	shca_mcrep_kick(eng);
}

/*
 * One step of the stage under rx_lock: replicate while credit lasts,
 * then take one copy off.  Returns 0 with a copy in *@qpn, *@p, or
 * -EAGAIN when there is none.
 */
static int shca_mcrep_next(struct shca_engine *eng, u32 *qpn,
			   struct shca_llq_payload *p)
{
	int ret;

	spin_lock(&eng->rx_lock);
	shca_mcrep_resume(eng);
	ret = shca_llq_pop_ready(&eng->mc_llq, qpn, p);
	if (!ret)
		shca_mcast_consumed(&eng->mcg.flow);
	spin_unlock(&eng->rx_lock);
	return ret ? -EAGAIN : 0;
}

/*
 * The replication stage: make copies and deliver them, at most
 * SHCA_MC_WORK_BUDGET a turn; another turn is queued while work is left.
 * BHs are off for one copy at a time, so that the receive drain's
 * softirq, which carries unicast traffic, never waits behind a batch.
 */
static void shca_mcrep_work(struct kthread_work *work)
{
	struct shca_engine *eng = container_of(work, struct shca_engine,
					       mc_work);
	struct shca_llq_payload p;
	int n, ret;
	u32 qpn;

	for (n = 0; n < SHCA_MC_WORK_BUDGET; n++) {
		local_bh_disable();
		ret = shca_mcrep_next(eng, &qpn, &p);
		if (!ret)
			shca_rx_copy(eng, qpn,
				     (struct sk_buff *)(uintptr_t)p.w[0],
				     p.w[1]);
		local_bh_enable();
		if (ret)
			break;
		cond_resched();
	}
	if (n == SHCA_MC_WORK_BUDGET)
		shca_mcrep_kick(eng);
}

/**
 * shca_mcrep_kick - run the replication stage (packets or credit came)
 * @eng: engine
 *
 * Any context.
 */
void shca_mcrep_kick(struct shca_engine *eng)
{
	kthread_queue_work(eng->mc_worker, &eng->mc_work);
}

/**
 * shca_mcrep_init - start an engine's replication stage: its thread
 * (shca_mc/<netdev>, any CPU, at nice SHCA_MC_NICE)
 * @eng: engine
 *
 * Return: 0 or the error of creating the thread.
 */
int shca_mcrep_init(struct shca_engine *eng)
{
	kthread_init_work(&eng->mc_work, shca_mcrep_work);
	eng->mc_worker = kthread_create_worker(0, "shca_mc/%s",
					       netdev_name(eng->ndev));
	if (IS_ERR(eng->mc_worker))
		return PTR_ERR(eng->mc_worker);
	set_user_nice(eng->mc_worker->task, SHCA_MC_NICE);
	return 0;
}

/**
 * shca_mcrep_stop - stop the replication stage and drop every packet
 * waiting for it (the engine is going: nothing arrives any more)
 * @eng: engine
 */
void shca_mcrep_stop(struct shca_engine *eng)
{
	struct shca_mcrep_cb *cb;
	struct sk_buff *skb;

	kthread_destroy_worker(eng->mc_worker);
	spin_lock_bh(&eng->rx_lock);
	while ((skb = __skb_dequeue(&eng->mcg.pending))) {
		cb = shca_mcrep_cb(skb);
		shca_mcast_rep_end(&eng->mcg.flow);
		shca_mcg_set_put(cb->set);
		kfree_skb(skb);
	}
	spin_unlock_bh(&eng->rx_lock);
}
