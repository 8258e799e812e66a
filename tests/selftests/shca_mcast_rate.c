// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_mcast_test --rate RXDEV TXDEV NQP MSGS: the delivered multicast
 * message rate, for scripts/bench.sh (a measurement, not a test).  NQP
 * members of one IPv4 group on RXDEV, each keeping RATE_DEPTH receives
 * posted (reposted as they complete); a UD QP of TXDEV sends MSGS
 * messages to the group, never more than RATE_WINDOW ahead of what the
 * members have taken (a closed loop: the figure is what the receiving
 * side sustains, not how fast it drops).  A copy that never comes is
 * written off after RATE_LOST_MS without a completion.  Prints one
 * "# rate:" line: copies delivered per second from the first send to the
 * last receive completion.  Works on any verbs device (rdma_rxe too, once
 * its netdev has joined the group's IP address: rxe does not join it
 * itself).
 */
#include "shca_mcast.h"

#define RATE_WINDOW	48	/* messages sent but not yet taken by all */
#define RATE_DEPTH	128	/* receives each member keeps posted */
#define RATE_CLOCK_EVERY 16	/* passes between two clock reads */
#define RATE_LOST_MS	100	/* no completion for this long: lost */
#define RATE_IDLE_MS	2000	/* all sent, no completion this long: done */

struct rate_run {
	struct mc_qps *rx, *tx;
	struct ibv_ah *ah;
	int msgs, posted, sent, got, bad;
	int floor;		/* messages before it were given up as lost */
	unsigned int passes;
	bool took;		/* completions came since the last clock read */
	double t0, tlast, now;
};

/* Repost the receive of a completion (same slot, same member). */
static int rate_repost(struct rate_run *r, const struct ibv_wc *wc)
{
	struct mc_qps *s = r->rx;
	struct ibv_sge sg = {
		.addr = (uintptr_t)s->buf + wc->wr_id * MC_SLOT,
		.length = MC_SLOT, .lkey = s->mr->lkey,
	};

	if (wc->wr_id >= (uint64_t)s->n * s->msgs)
		return -1;
	return post_recv1(s->qp[wc->wr_id / s->msgs], NULL, wc->wr_id, &sg, 1);
}

/* Messages all members have taken, or that were written off. */
static int rate_done_msgs(const struct rate_run *r)
{
	int taken = r->got / r->rx->n;

	return taken > r->floor ? taken : r->floor;
}

/*
 * One pass: top up the send window, take completions on both sides.
 * The clock is read every RATE_CLOCK_EVERY passes (a clock read is a
 * system call where the clocksource has no vDSO, as in a TCG guest on
 * HPET, and would slow the loop itself) and when the last copy came.
 */
static int rate_pass(struct rate_run *r)
{
	struct ibv_wc wc[64];
	int i, n;

	while (r->posted - rate_done_msgs(r) < RATE_WINDOW &&
	       r->posted < r->msgs) {
		if (mc_post_ah(r->tx, 0, r->ah, r->posted, 900))
			return -1;
		r->posted++;
	}
	n = ibv_poll_cq(r->tx->scq, 64, wc);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_SUCCESS)
			r->bad++;
	r->sent += n;
	n = ibv_poll_cq(r->rx->cq, 64, wc);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			r->bad++;
			continue;
		}
		r->got++;
		if (rate_repost(r, &wc[i]))
			return -1;
	}
	if (n > 0)
		r->took = true;
	if (++r->passes % RATE_CLOCK_EVERY && r->got < r->rx->n * r->msgs)
		return 0;
	r->now = now_ms();
	if (r->took)
		r->tlast = r->now;
	else if (r->now - r->tlast > RATE_LOST_MS)
		r->floor = r->posted;
	r->took = false;
	return 0;
}

static void rate_print(const struct rate_run *r, const char *dev)
{
	double secs = r->tlast > r->t0 ? (r->tlast - r->t0) / 1000 : 0;
	int nqp = r->rx->n;

	printf("# rate: %s, %d members, %d of %d messages sent, %d of %d copies delivered in %.3f s: %.0f copies/s, %.0f messages/s (%d errors)\n",
	       dev, nqp, r->sent, r->msgs, r->got, nqp * r->msgs, secs,
	       secs > 0 ? r->got / secs : 0.0,
	       secs > 0 ? r->got / secs / nqp : 0.0, r->bad);
}

/**
 * mc_rate - measure the delivered multicast message rate
 * @d: d[0] the members' device, d[1] the sender's
 * @nqp: members
 * @msgs: messages
 *
 * Return: 0 when the run could be made (whatever was delivered), -1 when
 * it could not be set up or a post failed.
 */
int mc_rate(struct test_dev d[2], int nqp, int msgs)
{
	union ibv_gid g = { .raw = { [10] = 0xff, [11] = 0xff, 239, 1, 4,
				     1 } };
	struct mc_qps rx = {}, tx = {};
	struct rate_run r = { .rx = &rx, .tx = &tx, .msgs = msgs };
	double end;
	int ret = -1;

	if (mc_qps_create(&rx, &d[0], nqp, RATE_DEPTH, 0) ||
	    mc_qps_create(&tx, &d[1], 1, 2 * RATE_WINDOW, 0) ||
	    mc_attach(&rx, &g, 0, nqp, true) != nqp)
		goto out;
	r.ah = mc_group_ah(&tx, &g, d[1].gidx);
	if (!r.ah)
		goto out;
	sleep_ms(1000);		/* the joins reach the netdev */
	r.t0 = now_ms();
	r.tlast = r.t0;
	r.now = r.t0;
	end = r.t0 + SCALED_MS(120000);
	ret = 0;
	while (r.now < end && r.got < nqp * msgs &&
	       (r.sent < msgs || r.now - r.tlast < RATE_IDLE_MS))
		if (rate_pass(&r)) {
			ret = -1;
			break;
		}
	rate_print(&r, d[0].name);
	ibv_destroy_ah(r.ah);
	mc_attach(&rx, &g, 0, nqp, false);
out:
	mc_qps_destroy(&rx);
	mc_qps_destroy(&tx);
	return ret;
}
