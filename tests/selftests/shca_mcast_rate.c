// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_mcast_test --rate RXDEV TXDEV NQP MSGS: the delivered multicast
 * message rate, for scripts/bench.sh (a measurement, not a test).  NQP
 * members of one IPv4 group on RXDEV, each with MSGS receives posted; a
 * UD QP of TXDEV sends MSGS messages to the group with up to RATE_WINDOW
 * in flight.  Prints one "# rate:" line: copies delivered per second from
 * the first send to the last receive completion.  Works on any verbs
 * device (rdma_rxe too, once its netdev has joined the group's IP
 * address: rxe does not join it itself).
 */
#include <time.h>
#include "shca_mcast.h"

#define RATE_WINDOW	16		/* sends in flight */
#define RATE_IDLE_S	2.0		/* no receive for this long: done */

static double rate_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Successful completions among @n polled. */
static int rate_ok(const struct ibv_wc *wc, int n, int *bad)
{
	int i, ok = 0;

	for (i = 0; i < n; i++) {
		if (wc[i].status == IBV_WC_SUCCESS)
			ok++;
		else
			(*bad)++;
	}
	return ok;
}

struct rate_run {
	struct mc_qps *rx, *tx;
	struct ibv_ah *ah;
	int msgs, posted, sent, got, bad;
	double t0, tlast;
};

/* One pass: top up the send window, take completions on both sides. */
static int rate_pass(struct rate_run *r)
{
	struct ibv_wc wc[64];
	int n;

	while (r->posted - r->sent < RATE_WINDOW && r->posted < r->msgs) {
		if (mc_post_ah(r->tx, 0, r->ah, r->posted, 900))
			return -1;
		r->posted++;
	}
	n = ibv_poll_cq(r->tx->scq, 64, wc);
	if (n < 0)
		return -1;
	r->sent += n;
	rate_ok(wc, n, &r->bad);
	n = ibv_poll_cq(r->rx->cq, 64, wc);
	if (n < 0)
		return -1;
	if (n > 0) {
		r->got += rate_ok(wc, n, &r->bad);
		r->tlast = rate_now();
	}
	return 0;
}

/**
 * mc_rate - measure the delivered multicast message rate
 * @d: d[0] the members' device, d[1] the sender's
 * @nqp: members
 * @msgs: messages
 *
 * Return: 0 when the run could be made (whatever was delivered), -1 when
 * it could not be set up.
 */
int mc_rate(struct test_dev d[2], int nqp, int msgs)
{
	union ibv_gid g = { .raw = { [10] = 0xff, [11] = 0xff, 239, 1, 4,
				     1 } };
	struct mc_qps rx = {}, tx = {};
	struct rate_run r = { .rx = &rx, .tx = &tx, .msgs = msgs };
	double secs, end;
	int ret = -1;

	if (mc_qps_create(&rx, &d[0], nqp, msgs, 0) ||
	    mc_qps_create(&tx, &d[1], 1, msgs, 0) ||
	    mc_attach(&rx, &g, 0, nqp, true) != nqp)
		goto out;
	r.ah = mc_group_ah(&tx, &g, d[1].gidx);
	if (!r.ah)
		goto out;
	sleep_ms(1000);		/* the joins reach the netdev */
	r.t0 = rate_now();
	r.tlast = r.t0;
	end = r.t0 + SCALED_MS(60000) / 1000.0;
	while (rate_now() < end &&
	       (r.sent < msgs || r.got < nqp * msgs) &&
	       (r.sent < msgs || rate_now() - r.tlast < RATE_IDLE_S))
		if (rate_pass(&r))
			break;
	secs = r.tlast > r.t0 ? r.tlast - r.t0 : 0;
	printf("# rate: %s, %d members, %d of %d messages sent, %d of %d copies delivered in %.3f s: %.0f copies/s, %.0f messages/s (%d errors)\n",
	       d[0].name, nqp, r.sent, msgs, r.got, nqp * msgs, secs,
	       secs > 0 ? r.got / secs : 0.0,
	       secs > 0 ? r.got / secs / nqp : 0.0, r.bad);
	ret = 0;
	ibv_destroy_ah(r.ah);
	mc_attach(&rx, &g, 0, nqp, false);
out:
	mc_qps_destroy(&rx);
	mc_qps_destroy(&tx);
	return ret;
}
