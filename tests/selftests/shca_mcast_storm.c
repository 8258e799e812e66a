// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_mcast_test --storm: a multicast flood against a unicast stream.
 *
 * An RC pair streams 64 KiB RDMA WRITEs from TXDEV to RXDEV for 2 s
 * alone, then 2 s while a UD QP of TXDEV floods a group of 256
 * QPs of RXDEV (one receive posted each: later copies are taken off and
 * dropped) at a paced rate (slowed by the time scale with everything
 * else on a debug kernel), more copies than the receive stage can make.
 * (three times in turn).  The stream must keep at least half of its
 * rate, and the flood's excess must show in the replication's drop or
 * stall counters.  The RC pair's ACK timeout stretches with the time
 * scale (scaled_timeout()): on a debug kernel the stream's window of
 * WRITEs takes longer than the stock kernels' 67 ms to be acknowledged.
 */
#include <pthread.h>
#include <stdlib.h>
#include "shca_mcast.h"

#define ST_MEMBERS	256
#define ST_MSG		65536
#define ST_WINDOW	8
#define ST_FLOOD_BURST	16		/* sends per pacing step */
#define ST_FLOOD_STEP	4		/* ms between bursts: 4000 pkt/s,
					 * divided by the time scale */

struct st_rc {
	struct ibv_qp *qp[2];
	struct ibv_cq *cq[2];
	struct ibv_mr *mr[2];
	uint8_t *buf[2];
};

/* The RC pair: side 1 (TXDEV) writes into side 0's buffer. */
static int st_rc_open(struct test_dev d[2], struct st_rc *rc)
{
	struct qp_spec spec = qp_spec_simple(2 * ST_WINDOW, 2 * ST_WINDOW);
	struct rc_path path[2];
	enum ibv_qp_state at;
	int s, side;

	memset(rc, 0, sizeof(*rc));
	if (qp_pair_create(d, &spec, rc->qp, rc->cq))
		return -1;
	for (s = 0; s < 2; s++) {
		rc->buf[s] = zalloc(ST_MSG);
		rc->mr[s] = rc->buf[s] ?
			ibv_reg_mr(d[s].pd, rc->buf[s], ST_MSG,
				   IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE) : NULL;
		if (!rc->mr[s]) {
			failf("%s: reg_mr: %s", d[s].name, strerror(errno));
			return -1;
		}
		path[s] = (struct rc_path){
			.access = IBV_ACCESS_REMOTE_WRITE,
			.mtu = IBV_MTU_1024,
			.dgid = d[!s].gid,
			.sgid_index = d[s].gidx,
			.rd_atomic = 1, .min_rnr_timer = 12,
			.timeout = scaled_timeout(14), .retry_cnt = 7,
			.rnr_retry = 7,
		};
	}
	for (s = 0; s < 2; s++)
		path[s].dest_qpn = rc->qp[!s]->qp_num;
	if (rc_connect_pair(rc->qp, path, &side, &at)) {
		failf("RC pair: state %d refused on side %d", at, side);
		return -1;
	}
	return 0;
}

static void st_rc_close(struct test_dev d[2], struct st_rc *rc)
{
	int s;

	for (s = 0; s < 2; s++) {
		qp_cqs_destroy(rc->qp[s], rc->cq[s], NULL, d[s].name);
		mr_dereg(rc->mr[s]);
		free(rc->buf[s]);
	}
}

/* WRITE for @ms with ST_WINDOW outstanding; MB/s, or -1 on an error. */
static double st_rc_stream(struct st_rc *rc, int ms)
{
	struct ibv_sge sg = { .addr = (uintptr_t)rc->buf[1], .length = ST_MSG,
			      .lkey = rc->mr[1]->lkey };
	struct send_args a = {
		.op = IBV_WR_RDMA_WRITE, .sg = &sg, .nsge = 1,
		.flags = IBV_SEND_SIGNALED,
		.raddr = (uintptr_t)rc->buf[0], .rkey = rc->mr[0]->rkey,
	};
	double t0 = now_ms(), end = t0 + ms;
	int out = 0, i, r;
	uint64_t done = 0;
	struct ibv_wc wc[ST_WINDOW];

	while (now_ms() < end || out) {
		while (out < ST_WINDOW && now_ms() < end) {
			if (post_send1(rc->qp[1], &a)) {
				failf("RC post: %s", strerror(errno));
				return -1;
			}
			out++;
		}
		r = poll_wait(rc->cq[1], wc, 1, SCALED_MS(5000));
		if (r != 1)
			return -1;
		r += ibv_poll_cq(rc->cq[1], ST_WINDOW - 1, wc + 1);
		for (i = 0; i < r; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				failf("RC WRITE status %d", wc[i].status);
				return -1;
			}
			done += ST_MSG;
		}
		out -= r;
	}
	return done / 1e3 / (now_ms() - t0);
}

struct st_flood {
	struct mc_qps *tx;
	struct ibv_ah *ah;
	volatile int stop;
	int sent, err;
};

/* Take the flood's send completions; how many there were. */
static int st_flood_reap(struct st_flood *f)
{
	struct ibv_wc wc[ST_FLOOD_BURST];
	int i, r, n = 0;

	while ((r = ibv_poll_cq(f->tx->scq, ST_FLOOD_BURST, wc)) > 0) {
		for (i = 0; i < r; i++)
			f->err |= wc[i].status != IBV_WC_SUCCESS;
		n += r;
	}
	f->sent += n;
	return n;
}

/* ST_FLOOD_BURST sends every ST_FLOOD_STEP ms until told to stop. */
static void *st_flood_run(void *arg)
{
	struct st_flood *f = arg;
	int i, out = 0;

	while (!f->stop && !f->err) {
		for (i = 0; i < ST_FLOOD_BURST && out < f->tx->msgs; i++) {
			if (mc_post_ah(f->tx, 0, f->ah, f->sent + i, 0)) {
				f->err = 1;
				break;
			}
			out++;
		}
		sleep_ms(SCALED_MS(ST_FLOOD_STEP));
		out -= st_flood_reap(f);
	}
	/* the next round starts with an empty send queue */
	for (i = 0; out > 0 && i < 1000 && !f->err; i++) {
		sleep_ms(1);
		out -= st_flood_reap(f);
	}
	f->err |= out > 0;
	return NULL;
}

int mc_storm(struct test_dev d[2])
{
	union ibv_gid g = { .raw = { [10] = 0xff, [11] = 0xff, 239, 1, 4, 1 } };
	unsigned long long drop0, stall0, drops, stalls;
	struct mc_qps members = {}, tx = {};
	struct st_flood f = {};
	struct st_rc rc;
	double alone = 0, storm = 0, r;
	int ms = SCALED_MS(2000), i;
	pthread_t th;
	bool ok;

	ok = !st_rc_open(d, &rc) &&
	     !mc_qps_create(&members, &d[0], ST_MEMBERS, 1, 0) &&
	     mc_attach(&members, &g, 0, ST_MEMBERS, true) == ST_MEMBERS &&
	     !mc_qps_create(&tx, &d[1], 1, 64, 0);
	f.tx = &tx;
	f.ah = ok ? mc_group_ah(&tx, &g, d[1].gidx) : NULL;
	ok = ok && f.ah;
	/* alone and flooded in turn, three times: TCG's pace drifts */
	drop0 = mc_ctr(&d[0], "mcast_drop_threshold");
	stall0 = mc_ctr(&d[0], "mcast_credit_stalls");
	for (i = 0; ok && i < 3; i++) {
		r = st_rc_stream(&rc, ms);
		ok = r > 0 && !pthread_create(&th, NULL, st_flood_run, &f);
		alone += r;
		r = ok ? st_rc_stream(&rc, ms) : -1;
		f.stop = 1;
		if (ok)
			pthread_join(th, NULL);
		f.stop = 0;
		ok = ok && r > 0;
		storm += r;
		sleep_ms(SCALED_MS(1000));	/* the backlog drains */
	}
	drops = mc_ctr(&d[0], "mcast_drop_threshold") - drop0;
	stalls = mc_ctr(&d[0], "mcast_credit_stalls") - stall0;
	diag("RC WRITE 64 KiB: %.1f MB/s alone, %.1f MB/s under a flood of %d packets to %d members (%.0f%%); replication: %llu threshold drops, %llu packets waited for credit",
	     alone / 3, storm / 3, f.sent, ST_MEMBERS,
	     alone > 0 ? 100 * storm / alone : 0, drops, stalls);
	ok = ok && !f.err && storm >= alone / 2 && drops + stalls > 0;
	case_result(ok, "a multicast flood to 256 members leaves an RC stream at least half its rate; the excess shows in the replication counters");
	if (f.ah)
		ibv_destroy_ah(f.ah);
	mc_attach(&members, &g, 0, ST_MEMBERS, false);
	mc_qps_destroy(&members);
	mc_qps_destroy(&tx);
	st_rc_close(d, &rc);
	return ok ? 0 : -1;
}
