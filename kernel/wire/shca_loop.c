// SPDX-License-Identifier: GPL-2.0
/*
 * shca same-host delivery of multicast packets.  A packet to an address
 * of its own namespace does not go through the IP stack (it would arrive
 * on the loopback device, which owns no shca device): a unicast one goes
 * straight into the receiving device's engine, without an ICRC
 * (shca_net_rcv_local()).  The copy of a multicast packet for the sending
 * device's own members, finished with its ICRC, is queued here and
 * received from a tasklet through the same checks as a packet from the
 * wire (its ICRC checked once, before replication).  Queueing keeps the
 * transmit path from calling the receive path, which may itself transmit
 * from inside.
 *
 * One queue for the module keeps the order packets were sent in, as a
 * wire would; the queue's own lock (irqsave) protects it.  Each queued
 * skb holds a reference on its receiving device's ib_device, so the
 * device cannot finish unregistering (and detach) before its packets are
 * delivered or dropped.
 */
#include <linux/interrupt.h>
#include <linux/skbuff.h>
#include "shca.h"
#include "shca_loop.h"
#include "shca_udp_rx.h"

#define SHCA_LOOP_QLEN		2048	/* queued packets beyond which we drop */
#define SHCA_LOOP_BUDGET	64	/* packets per tasklet run */

struct shca_loop_cb {
	struct shca_dev *to;
};

#define SHCA_LOOP_CB(skb)	((struct shca_loop_cb *)(skb)->cb)

static struct sk_buff_head shca_loop_q;
static struct tasklet_struct shca_loop_tasklet;

/* Deliver queued same-host packets, at most SHCA_LOOP_BUDGET per run. */
static void shca_loop_run(struct tasklet_struct *t)
{
	struct sk_buff *skb;
	struct shca_dev *to;
	unsigned int n;

	for (n = 0; n < SHCA_LOOP_BUDGET; n++) {
		skb = skb_dequeue(&shca_loop_q);
		if (!skb)
			return;
		to = SHCA_LOOP_CB(skb)->to;
		memset(skb->cb, 0, sizeof(skb->cb));
		rcu_read_lock();
		shca_net_rcv(to, skb);
		rcu_read_unlock();
		ib_device_put(&to->ibdev);
	}
	if (!skb_queue_empty_lockless(&shca_loop_q))
		tasklet_schedule(t);
}

/**
 * shca_loop_queue - queue a packet for a device of this host
 * @to: the receiving device; the caller's ib_device reference on it goes
 *	with the packet
 * @skb: the packet exactly as it would arrive from the wire (skb->data at
 *	the UDP header)
 *
 * Any context.  On failure the caller still owns @skb and the reference.
 *
 * Return: 0, or -ENOBUFS when the queue is full.
 */
int shca_loop_queue(struct shca_dev *to, struct sk_buff *skb)
{
	if (skb_queue_len_lockless(&shca_loop_q) >= SHCA_LOOP_QLEN)
		return -ENOBUFS;
	SHCA_LOOP_CB(skb)->to = to;
	/* from process context, the tasklet runs at local_bh_enable() */
	local_bh_disable();
	skb_queue_tail(&shca_loop_q, skb);
	tasklet_schedule(&shca_loop_tasklet);
	local_bh_enable();
	return 0;
}

/**
 * shca_loop_init - set up the queue (module load)
 */
void shca_loop_init(void)
{
	skb_queue_head_init(&shca_loop_q);
	tasklet_setup(&shca_loop_tasklet, shca_loop_run);
}

/**
 * shca_loop_exit - stop delivering and drop whatever is still queued
 * (module unload: no device is left)
 */
void shca_loop_exit(void)
{
	struct sk_buff *skb;

	tasklet_kill(&shca_loop_tasklet);
	WARN_ON(!skb_queue_empty(&shca_loop_q));
	while ((skb = skb_dequeue(&shca_loop_q)) != NULL) {
		ib_device_put(&SHCA_LOOP_CB(skb)->to->ibdev);
		kfree_skb(skb);
	}
}
