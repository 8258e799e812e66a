// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_fault_test's qps mode: many RC QP pairs, each moving verified data
 * once, a wave at a time.
 */

#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "shca_fault.h"

/* ------------------------------------------------------------------ */
/* many QPs                                                             */

#define Q_SLOT		1024
#define Q_LEN		256
#define Q_SEND		0	/* A: SEND source;   B: its receive buffer */
#define Q_WDST		256	/* A: B's WRITE lands; B: A's WRITE lands */
#define Q_WSRC		512	/* A: WRITE source;  B: WRITE source */

/* Post the receives and sends of pairs [lo, hi). */
static int q_post(struct ibv_qp **qa, struct ibv_qp **qb, uint8_t **area,
		  struct ibv_mr **mr, uint32_t lo, uint32_t hi)
{
	uint32_t i;

	for (i = lo; i < hi; i++) {
		uint8_t *a = area[0] + (size_t)i * Q_SLOT;
		uint8_t *b = area[1] + (size_t)i * Q_SLOT;

		pattern(a + Q_SEND, Q_LEN, 3 * i + 1);
		pattern(a + Q_WSRC, Q_LEN, 3 * i + 2);
		pattern(b + Q_WSRC, Q_LEN, 3 * i + 3);
		if (post_recv(qb[i], NULL, i, b + Q_SEND, Q_LEN, mr[1]->lkey) ||
		    post_recv(qa[i], NULL, i, NULL, 0, 0))
			goto err;
	}
	for (i = lo; i < hi; i++) {
		uint8_t *a = area[0] + (size_t)i * Q_SLOT;
		uint8_t *b = area[1] + (size_t)i * Q_SLOT;

		if (post_send(qa[i], i, IBV_WR_RDMA_WRITE, a + Q_WSRC, Q_LEN,
			      mr[0]->lkey, (uintptr_t)(b + Q_WDST),
			      mr[1]->rkey, false) ||
		    post_send(qa[i], i, IBV_WR_SEND, a + Q_SEND, Q_LEN,
			      mr[0]->lkey, 0, 0, true) ||
		    post_send(qb[i], i, IBV_WR_RDMA_WRITE_WITH_IMM, b + Q_WSRC,
			      Q_LEN, mr[1]->lkey, (uintptr_t)(a + Q_WDST),
			      mr[0]->rkey, true))
			goto err;
	}
	return 0;
err:
	fail("posting on pair %u: %s", i, strerror(errno));
	return -1;
}

static unsigned int q_bad;	/* completions that failed a check */

static void q_bad_wc(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void q_bad_wc(const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	if (q_bad++ >= 5)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fail("%s", buf);
}

/* Check one completion of side @dev against the pair its wr_id names. */
static void q_check_wc(int dev, const struct ibv_wc *wc, struct ibv_qp **q,
		       unsigned int *seen)
{
	uint32_t i = (uint32_t)wc->wr_id;
	bool recv = wc->opcode & IBV_WC_RECV;
	unsigned int bit = recv ? 1 : 2;

	if (wc->status != IBV_WC_SUCCESS) {
		q_bad_wc("%s pair %u: %s", dv[dev].name, i,
			 ibv_wc_status_str(wc->status));
		return;
	}
	if (i >= opt.n || wc->qp_num != q[i]->qp_num || (seen[i] & bit)) {
		q_bad_wc("%s: completion wr_id %u on QP %u (duplicate or foreign)",
			 dv[dev].name, i, wc->qp_num);
		return;
	}
	seen[i] |= bit;
	if (!recv)
		return;
	if (dev == 1 && (wc->opcode != IBV_WC_RECV || wc->byte_len != Q_LEN))
		q_bad_wc("pair %u: B received opcode %d, %u bytes", i,
			 wc->opcode, wc->byte_len);
	if (dev == 0 && (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
			 !(wc->wc_flags & IBV_WC_WITH_IMM) ||
			 ntohl(wc->imm_data) != i))
		q_bad_wc("pair %u: A received opcode %d imm %#x", i,
			 wc->opcode, ntohl(wc->imm_data));
}

/* Wait for the 2 + 2 completions of each of @n pairs. */
static int q_wait(struct ibv_cq **cq, struct ibv_qp **qa, struct ibv_qp **qb,
		  unsigned int **seen, uint32_t n)
{
	unsigned int want = 2 * n, got[2] = { 0, 0 };
	double end = now_ms() + 60000 + 20.0 * n;
	struct ibv_wc wc[64];
	int d, k, r;

	while (got[0] < want || got[1] < want) {
		int total = 0;

		for (d = 0; d < 2; d++) {
			r = ibv_poll_cq(cq[d], ARRAY_SIZE(wc), wc);
			if (r < 0) {
				fail("ibv_poll_cq: %d", r);
				return -1;
			}
			for (k = 0; k < r; k++)
				q_check_wc(d, &wc[k], d ? qb : qa, seen[d]);
			got[d] += r;
			total += r;
		}
		if (!total && now_ms() > end) {
			fail("%u + %u of %u + %u completions before the deadline",
			     got[0], got[1], want, want);
			return -1;
		}
		if (!total)
			nap();
	}
	if (q_bad)
		fail("%u completion(s) failed their checks", q_bad);
	return failed ? -1 : 0;
}

/* Traffic on every pair, WAVE pairs at a time (0: all at once). */
static int q_traffic(struct ibv_cq **cq, struct ibv_qp **qa,
		     struct ibv_qp **qb, uint8_t **area, struct ibv_mr **mr)
{
	uint32_t wave = opt.wave ? opt.wave : opt.n, lo, hi;
	unsigned int *seen[2];
	int ret = -1;

	seen[0] = calloc(opt.n, sizeof(unsigned int));
	seen[1] = calloc(opt.n, sizeof(unsigned int));
	if (!seen[0] || !seen[1]) {
		fail("out of memory");
		goto out;
	}
	for (lo = 0; lo < opt.n; lo = hi) {
		hi = lo + wave < opt.n ? lo + wave : opt.n;
		if (q_post(qa, qb, area, mr, lo, hi) ||
		    q_wait(cq, qa, qb, seen, hi - lo))
			goto out;
	}
	ret = 0;
out:
	free(seen[0]);
	free(seen[1]);
	return ret;
}

static void q_verify(uint8_t **area)
{
	char what[64];
	uint32_t i;

	for (i = 0; i < opt.n && !failed; i++) {
		uint8_t *a = area[0] + (size_t)i * Q_SLOT;
		uint8_t *b = area[1] + (size_t)i * Q_SLOT;

		snprintf(what, sizeof(what), "pair %u SEND", i);
		pattern_ok(b + Q_SEND, Q_LEN, 3 * i + 1, what);
		snprintf(what, sizeof(what), "pair %u WRITE A->B", i);
		pattern_ok(b + Q_WDST, Q_LEN, 3 * i + 2, what);
		snprintf(what, sizeof(what), "pair %u WRITE B->A", i);
		pattern_ok(a + Q_WDST, Q_LEN, 3 * i + 3, what);
	}
}

int mode_qps(void)
{
	struct ibv_qp **q[2];
	struct ibv_cq *cq[2] = { NULL, NULL };
	struct ibv_mr *mr[2] = { NULL, NULL };
	uint8_t *area[2] = { NULL, NULL };
	double t0 = now_ms(), t1 = 0, t2 = 0, t3 = 0;
	uint32_t i;
	int d;

	if (!opt.n)
		opt.n = 1000;
	q[0] = calloc(opt.n, sizeof(*q[0]));
	q[1] = calloc(opt.n, sizeof(*q[1]));
	if (!q[0] || !q[1]) {
		fail("out of memory");
		goto out;
	}
	for (d = 0; d < 2; d++) {
		cq[d] = ibv_create_cq(dv[d].ctx, 2 * (int)opt.n + 16, NULL,
				      NULL, 0);
		area[d] = zalloc((size_t)opt.n * Q_SLOT);
		if (!cq[d] || !area[d]) {
			fail("CQ / buffer for %u QPs: %s", opt.n,
			     strerror(errno));
			goto out;
		}
		mr[d] = ibv_reg_mr(dv[d].pd, area[d], (size_t)opt.n * Q_SLOT,
				   IBV_ACCESS_LOCAL_WRITE | ACC_REMOTE);
		if (!mr[d]) {
			fail("ibv_reg_mr: %s", strerror(errno));
			goto out;
		}
	}
	for (i = 0; i < opt.n; i++) {
		q[0][i] = qp_new(0, IBV_QPT_RC, cq[0], cq[0], NULL, 4, 2);
		q[1][i] = qp_new(1, IBV_QPT_RC, cq[1], cq[1], NULL, 4, 2);
		if (!q[0][i] || !q[1][i]) {
			diag("created %u of %u pairs", i, opt.n);
			goto out;
		}
	}
	t1 = now_ms();
	for (i = 0; i < opt.n; i++)
		if (rc_connect_to(q[0][i], 0, q[1][i]) ||
		    rc_connect_to(q[1][i], 1, q[0][i]))
			goto out;
	t2 = now_ms();
	if (q_traffic(cq, q[0], q[1], area, mr))
		goto out;
	q_verify(area);
	t3 = now_ms();
out:
	for (d = 0; d < 2; d++) {
		for (i = 0; q[d] && i < opt.n; i++)
			if (q[d][i])
				destroy_check(ibv_destroy_qp(q[d][i]), d,
					      "ibv_destroy_qp");
		if (mr[d])
			destroy_check(ibv_dereg_mr(mr[d]), d, "ibv_dereg_mr");
		if (cq[d])
			destroy_check(ibv_destroy_cq(cq[d]), d,
				      "ibv_destroy_cq");
		free(area[d]);
		free(q[d]);
	}
	if (!failed)
		diag("%u RC QP pairs: create %.0f ms, connect %.0f ms, traffic %.0f ms, destroy %.0f ms",
		     opt.n, t1 - t0, t2 - t1, t3 - t2, now_ms() - t3);
	return failed ? EXIT_FAIL : EXIT_PASS;
}
