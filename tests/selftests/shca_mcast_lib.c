// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_mcast_test: sets of UD QPs, attaching them, sending to a group
 * and checking what each QP received.
 */
#include <pthread.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include "shca_mcast.h"

static struct ibv_qp *ud_create(struct mc_qps *s, uint32_t create_flags)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_UD,
		.send_cq = s->scq,
		.recv_cq = s->cq,
		.cap = { .max_send_wr = s->msgs, .max_recv_wr = s->msgs,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 1,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = s->d->pd,
	};

	if (create_flags) {
		ia.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
		ia.create_flags = create_flags;
	}
	return ibv_create_qp_ex(s->d->ctx, &ia);
}

struct ibv_qp *mc_qp_new(struct mc_qps *s)
{
	struct ibv_qp *qp = ud_create(s, 0);

	if (qp && ud_to_rts(qp, MC_QKEY)) {
		ibv_destroy_qp(qp);
		qp = NULL;
	}
	return qp;
}

int mc_qps_create(struct mc_qps *s, const struct test_dev *d, int n,
		  int msgs, uint32_t create_flags)
{
	size_t len = (size_t)(n + 1) * msgs * MC_SLOT;
	int i;

	memset(s, 0, sizeof(*s));
	s->d = d;
	s->n = n;
	s->msgs = msgs;
	s->qp = calloc(n, sizeof(*s->qp));
	s->seen = calloc((size_t)n * msgs, sizeof(*s->seen));
	/* one more slot row: the messages a QP of the set sends */
	s->buf = zalloc(len);
	s->cq = ibv_create_cq(d->ctx, n * msgs + 16, NULL, NULL, 0);
	s->scq = ibv_create_cq(d->ctx, n * msgs + 16, NULL, NULL, 0);
	if (!s->qp || !s->seen || !s->buf || !s->cq || !s->scq) {
		failf("%s: set of %d QPs: memory or CQ", d->name, n);
		return -1;
	}
	s->mr = ibv_reg_mr(d->pd, s->buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!s->mr) {
		failf("%s: reg_mr: %s", d->name, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		s->qp[i] = ud_create(s, create_flags);
		if (!s->qp[i] || ud_to_rts(s->qp[i], MC_QKEY)) {
			failf("%s: UD QP %d of %d: %s", d->name, i, n,
			      strerror(errno));
			return -1;
		}
	}
	return mc_qps_post(s, 0, n);
}

int mc_qps_post(struct mc_qps *s, int from, int to)
{
	int q, m;

	for (q = from; q < to; q++) {
		for (m = 0; m < s->msgs; m++) {
			int k = q * s->msgs + m;
			struct ibv_sge sg = {
				.addr = (uintptr_t)s->buf + (size_t)k * MC_SLOT,
				.length = MC_SLOT, .lkey = s->mr->lkey,
			};

			if (post_recv1(s->qp[q], NULL, k, &sg, 1)) {
				failf("post_recv QP %d slot %d: %s", q, m,
				      strerror(errno));
				return -1;
			}
		}
	}
	return 0;
}

void mc_qps_reset(struct mc_qps *s)
{
	memset(s->seen, 0, (size_t)s->n * s->msgs * sizeof(*s->seen));
	s->bad = 0;
}

void mc_qps_destroy(struct mc_qps *s)
{
	int i;

	for (i = 0; s->qp && i < s->n; i++)
		if (s->qp[i] && ibv_destroy_qp(s->qp[i]))
			failf("destroy QP %d: %s", i, strerror(errno));
	mr_dereg(s->mr);
	if (s->cq && ibv_destroy_cq(s->cq))
		failf("destroy CQ: %s", strerror(errno));
	if (s->scq && ibv_destroy_cq(s->scq))
		failf("destroy CQ: %s", strerror(errno));
	free(s->qp);
	free(s->seen);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

int mc_attach(struct mc_qps *s, const union ibv_gid *gid, int from, int to,
	      bool attach)
{
	int i, ok = 0;

	for (i = from; i < to; i++) {
		int r = attach ? ibv_attach_mcast(s->qp[i], gid, 0) :
				 ibv_detach_mcast(s->qp[i], gid, 0);

		if (!r)
			ok++;
		else if (ok == i - from)
			failf("%s QP %d: %s", attach ? "attach" : "detach", i,
			      strerror(r > 0 ? r : errno));
	}
	return ok;
}

struct ibv_ah *mc_group_ah(struct mc_qps *s, const union ibv_gid *gid,
			   int sgid)
{
	struct ibv_ah_attr aha = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = *gid, .sgid_index = sgid, .hop_limit = 64 },
	};
	struct ibv_ah *ah = ibv_create_ah(s->d->pd, &aha);

	if (!ah)
		failf("create_ah to the group: %s", strerror(errno));
	return ah;
}

int mc_post_ah(struct mc_qps *s, int qp, struct ibv_ah *ah, int m,
	       uint32_t seed)
{
	uint8_t *p = s->buf + ((size_t)s->n * s->msgs + m % s->msgs) * MC_SLOT;
	uint32_t seq = htonl(m);
	struct ibv_sge sg = { .addr = (uintptr_t)p, .length = MC_LEN,
			      .lkey = s->mr->lkey };
	struct ibv_send_wr w = {
		.wr_id = m, .sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_SEND,
		.wr.ud = { .ah = ah, .remote_qpn = MC_QPN,
			   .remote_qkey = MC_QKEY },
	}, *bad;

	memcpy(p, &seq, 4);
	pattern(p + 4, MC_LEN - 4, seed + m);
	if (ibv_post_send(s->qp[qp], &w, &bad)) {
		failf("post_send %d: %s", m, strerror(errno));
		return -1;
	}
	return 0;
}

int mc_send(struct mc_qps *s, int qp, const union ibv_gid *gid, int sgid,
	    int msgs, uint32_t seed)
{
	struct ibv_ah *ah = mc_group_ah(s, gid, sgid);
	struct ibv_wc wc;
	int m, done = 0;

	for (m = 0; ah && m < msgs; m++) {
		if (mc_post_ah(s, qp, ah, m, seed))
			break;
		/* one at a time: the slot is reused after msgs sends */
		if (poll_wait(s->scq, &wc, 1, SCALED_MS(5000)) != 1 ||
		    wc.status != IBV_WC_SUCCESS) {
			failf("send %d did not complete", m);
			break;
		}
		done++;
	}
	if (ah)
		ibv_destroy_ah(ah);
	return done == msgs ? 0 : -1;
}

int mc_send_and_go(struct mc_qps *s, int qp, const union ibv_gid *gid,
		   int sgid, int msgs, uint32_t seed)
{
	struct ibv_ah *ah = mc_group_ah(s, gid, sgid);
	int m, r;

	if (!ah)
		return -1;
	for (m = 0; m < msgs && m < s->msgs; m++)
		if (mc_post_ah(s, qp, ah, m, seed))
			break;
	/* no waiting for a completion: the AH and the QP go at once */
	r = ibv_destroy_ah(ah);
	if (r)
		failf("destroy_ah: %s", strerror(r));
	r = ibv_destroy_qp(s->qp[qp]);
	if (r)
		failf("destroy_qp: %s", strerror(r));
	else
		s->qp[qp] = NULL;
	return m == msgs && !s->qp[qp] ? 0 : -1;
}

/* Check one receive completion; record it in @s->seen. */
static void mc_check(struct mc_qps *s, const struct ibv_wc *wc,
		     uint32_t src_qpn, uint32_t seed)
{
	int k = (int)wc->wr_id, q = k / s->msgs;
	uint8_t want[MC_LEN], *p;
	uint32_t seq;

	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV ||
	    k < 0 || q >= s->n || wc->qp_num != s->qp[q]->qp_num ||
	    !(wc->wc_flags & IBV_WC_GRH) || wc->byte_len != MC_SLOT ||
	    wc->src_qp != src_qpn) {
		if (!s->bad++)
			diag("bad completion: status %d op %d wr_id %llu qp %u len %u src %u",
			     wc->status, wc->opcode,
			     (unsigned long long)wc->wr_id, wc->qp_num,
			     wc->byte_len, wc->src_qp);
		return;
	}
	p = s->buf + (size_t)k * MC_SLOT + 40;
	memcpy(&seq, p, 4);
	seq = ntohl(seq);
	if (seq >= (uint32_t)s->msgs) {
		s->bad++;
		return;
	}
	pattern(want, MC_LEN - 4, seed + seq);
	if (memcmp(p + 4, want, MC_LEN - 4)) {
		if (!s->bad++)
			diag("QP %d: message %u: payload differs", q, seq);
		return;
	}
	s->seen[q * s->msgs + seq]++;
}

int mc_collect(struct mc_qps *s, int expect, uint32_t src_qpn, uint32_t seed,
	       int ms)
{
	struct ibv_wc wc[64];
	int got = 0, r, i, want;
	double end = now_ms() + ms;

	for (;;) {
		want = got < expect ? expect - got : 1;
		if (want > 64)
			want = 64;
		/* past the expected count, a short wait for extra copies */
		r = poll_wait(s->cq, wc, want,
			      got < expect ? (int)(end - now_ms()) :
					     SCALED_MS(200));
		if (r <= 0)
			break;
		for (i = 0; i < r; i++)
			mc_check(s, &wc[i], src_qpn, seed);
		got += r;
		if (got < expect && now_ms() > end)
			break;
	}
	return got;
}

unsigned long long mc_ctr(const struct test_dev *d, const char *name)
{
	unsigned long long v = 0;

	counters_next_jiffy();		/* past the RDMA core's cache */
	ctr_read(d->name, name, &v);
	return v;
}

int find_v6_gid(struct ibv_context *ctx)
{
	static const uint8_t pfx[4] = { 0x20, 0x01, 0x0d, 0xb8 };

	return find_gid_prefix(ctx, pfx, sizeof(pfx));
}

/* ---- attach, detach and destroy racing delivery ------------------------ */

struct mc_flood {
	struct mc_qps *tx;
	const union ibv_gid *gid;
	int sgid, msgs;
	volatile int sent, stop;
};

/* Post @f->msgs sends to the group, a window of them at a time. */
static void *mc_flood_run(void *arg)
{
	struct mc_flood *f = arg;
	struct ibv_ah *ah = mc_group_ah(f->tx, f->gid, f->sgid);
	int out = 0, r, i, m = 0;
	struct ibv_wc wc[16];

	while (ah && !f->stop && (m < f->msgs || out)) {
		while (m < f->msgs && out < f->tx->msgs) {
			if (mc_post_ah(f->tx, 0, ah, m, 0))
				goto done;
			m++;
			out++;
		}
		r = ibv_poll_cq(f->tx->scq, 16, wc);
		for (i = 0; i < r; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				failf("flood: send status %d", wc[i].status);
				goto done;
			}
			f->sent++;
		}
		out -= r > 0 ? r : 0;
	}
done:
	if (ah)
		ibv_destroy_ah(ah);
	return NULL;
}

/*
 * Random attach, detach, destroy and re-create of @rx's QPs for @ms
 * while @tx floods @gid with @msgs messages.  Returns 0 when every call
 * that had to succeed did and the flood completed.
 */
int mc_race(struct mc_qps *rx, struct mc_qps *tx, const union ibv_gid *gid,
	    int sgid, int msgs, int ms)
{
	struct mc_flood f = { .tx = tx, .gid = gid, .sgid = sgid,
			      .msgs = msgs };
	unsigned int nq = rx->n > 0 ? (unsigned int)rx->n : 0;
	bool *in = calloc(nq, sizeof(*in));
	double end = now_ms() + ms;
	unsigned int seed = 1, ops = 0, bad = 0;
	pthread_t th;
	int q;

	if (!in || pthread_create(&th, NULL, mc_flood_run, &f)) {
		free(in);
		return -1;
	}
	while (now_ms() < end && f.sent < msgs) {
		q = rand_r(&seed) % rx->n;
		switch (rand_r(&seed) % 4) {
		case 0:
		case 1:		/* join or leave */
			if (mc_attach(rx, gid, q, q + 1, !in[q]) == 1)
				in[q] = !in[q];
			else
				bad++;
			break;
		case 2:		/* leave and go at once, a new QP in its place */
			if (in[q] && mc_attach(rx, gid, q, q + 1, false) != 1)
				bad++;
			in[q] = false;
			if (ibv_destroy_qp(rx->qp[q]))
				bad++;
			rx->qp[q] = mc_qp_new(rx);
			if (!rx->qp[q] || mc_qps_post(rx, q, q + 1))
				bad++;
			break;
		default:	/* everybody leaves: the group goes */
			for (q = 0; q < rx->n; q++)
				if (in[q] && mc_attach(rx, gid, q, q + 1,
						       false) != 1)
					bad++;
			memset(in, 0, nq * sizeof(*in));
			break;
		}
		ops++;
		if (bad)
			break;
	}
	f.stop = bad != 0;
	pthread_join(th, NULL);
	for (q = 0; q < rx->n; q++)
		if (in[q] && mc_attach(rx, gid, q, q + 1, false) != 1)
			bad++;
	diag("race: %u membership operations, %d of %d messages sent",
	     ops, f.sent, msgs);
	free(in);
	return bad || f.sent != msgs ? -1 : 0;
}

bool mc_all_once(const struct mc_qps *s, int from, int to)
{
	int q, m;

	for (q = 0; q < s->n; q++) {
		for (m = 0; m < s->msgs; m++) {
			int want = q >= from && q < to;

			if (mc_seen(s, q, m) != want) {
				diag("%s QP %d message %d: %d copies, want %d",
				     s->d->name, q, m, mc_seen(s, q, m), want);
				return false;
			}
		}
	}
	return !s->bad;
}

bool mc_round_trip(struct mc_qps *tx, int qp, int sgid,
		   const union ibv_gid *g, struct mc_qps *rx, int from,
		   int to, uint32_t seed)
{
	int expect = (to - from) * rx->msgs, got;

	if (mc_send(tx, qp, g, sgid, rx->msgs, seed))
		return false;
	got = mc_collect(rx, expect, tx->qp[qp]->qp_num, seed,
			 SCALED_MS(10000));
	if (got != expect)
		diag("%d receive completions, want %d", got, expect);
	return got == expect && mc_all_once(rx, from, to);
}
