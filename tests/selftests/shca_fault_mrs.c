// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_fault_test's mrs mode: rounds of MRs of assorted sizes, memory
 * windows bound to some of them and WRITEs through each, then teardown.
 */

#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "shca_fault.h"

/* ------------------------------------------------------------------ */
/* MR and MW churn                                                      */

#define M_POOL		(8 * MIB)
#define M_WIN		4096

static const size_t m_sizes[] = {
	PAGE, 3 * PAGE + 100, 65536, 17, MIB, 4 * MIB + 3 * PAGE,
};

/* B writes 64 bytes through @rkey at @addr (in A's pool); A checks them. */
static bool m_write_through(struct ibv_qp *qb, struct ibv_cq *cqb,
			    uint8_t *src, struct ibv_mr *srcmr, uint8_t *dst,
			    uint32_t rkey, uint32_t seed, const char *what)
{
	struct ibv_wc wc;

	pattern(src, 64, seed);
	if (post_send(qb, seed, IBV_WR_RDMA_WRITE, src, 64, srcmr->lkey,
		      (uintptr_t)dst, rkey, true)) {
		fail("%s: ibv_post_send: %s", what, strerror(errno));
		return false;
	}
	if (!wait_one(cqb, &wc, what))
		return false;
	return pattern_ok(dst, 64, seed, what);
}

/* Bind a type 2 window over @mr's first M_WIN bytes with a WR on @qa. */
static struct ibv_mw *m_bind2(struct ibv_qp *qa, struct ibv_cq *cqa,
			      struct ibv_mr *mr, uint32_t *rkey)
{
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_mw *mw;
	struct ibv_wc wc;

	mw = ibv_alloc_mw(dv[0].pd, IBV_MW_TYPE_2);
	if (!mw) {
		fail("ibv_alloc_mw(type 2): %s", strerror(errno));
		return NULL;
	}
	*rkey = ibv_inc_rkey(mw->rkey);
	wr.wr_id = 0xb1d;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = *rkey;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)mr->addr;
	wr.bind_mw.bind_info.length = M_WIN;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_post_send(qa, &wr, &bad) || !wait_one(cqa, &wc, "bind type 2")) {
		fail("IBV_WR_BIND_MW on MR %#x", mr->lkey);
		ibv_dealloc_mw(mw);
		return NULL;
	}
	return mw;
}

static struct ibv_mw *m_bind1(struct ibv_qp *qa, struct ibv_cq *cqa,
			      struct ibv_mr *mr)
{
	struct ibv_mw_bind bind = {};
	struct ibv_mw *mw;
	struct ibv_wc wc;

	mw = ibv_alloc_mw(dv[0].pd, IBV_MW_TYPE_1);
	if (!mw) {
		fail("ibv_alloc_mw(type 1): %s", strerror(errno));
		return NULL;
	}
	bind.wr_id = 0xb1e;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = mr;
	bind.bind_info.addr = (uintptr_t)mr->addr;
	bind.bind_info.length = M_WIN;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_bind_mw(qa, mw, &bind) || !wait_one(cqa, &wc, "bind type 1")) {
		fail("ibv_bind_mw on MR %#x", mr->lkey);
		ibv_dealloc_mw(mw);
		return NULL;
	}
	return mw;
}

/* One round: register N MRs, windows on every 16th, WRITE, tear down. */
static void m_round(unsigned int r, uint8_t *pool, struct ibv_qp **qp,
		    struct ibv_cq **cq, uint8_t *src, struct ibv_mr *srcmr)
{
	unsigned int nw = (opt.n + 15) / 16, k, w = 0;
	struct ibv_mr **mr = calloc(opt.n, sizeof(*mr));
	struct ibv_mw **mw = calloc(2 * nw, sizeof(*mw));
	uint32_t rkey;
	char what[64];

	if (!mr || !mw) {
		fail("out of memory");
		goto out;
	}
	for (k = 0; k < opt.n && !failed; k++) {
		size_t len = m_sizes[(k + r) % ARRAY_SIZE(m_sizes)];
		size_t off = ((size_t)(k * 7919 + r * 104729) * 64) %
			     (M_POOL - len - 2) + k % 3;
		int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;

		if (k % 2)
			acc |= ACC_REMOTE;
		if (len < M_WIN)
			acc &= ~IBV_ACCESS_MW_BIND;
		mr[k] = ibv_reg_mr(dv[0].pd, pool + off, len, acc);
		if (!mr[k]) {
			fail("ibv_reg_mr(%zu bytes at +%zu): %s", len, off,
			     strerror(errno));
			goto out;
		}
		if (k % 16 || len < M_WIN)
			continue;
		/* a type 2 window, then a type 1, each written through */
		mw[w] = m_bind2(qp[0], cq[0], mr[k], &rkey);
		if (!mw[w])
			goto out;
		snprintf(what, sizeof(what), "round %u MR %u type 2 MW", r, k);
		if (!m_write_through(qp[1], cq[1], src, srcmr, mr[k]->addr,
				     rkey, r * 1000 + k, what))
			goto out;
		/* a window keeps its MR registered */
		errno = 0;
		if (!ibv_dereg_mr(mr[k])) {
			fail("ibv_dereg_mr of an MR with a bound window succeeded");
			mr[k] = NULL;
			goto out;
		}
		w++;
		mw[w] = m_bind1(qp[0], cq[0], mr[k]);
		if (!mw[w])
			goto out;
		snprintf(what, sizeof(what), "round %u MR %u type 1 MW", r, k);
		if (!m_write_through(qp[1], cq[1], src, srcmr,
				     (uint8_t *)mr[k]->addr + 64, mw[w]->rkey,
				     r * 1000 + k + 500, what))
			goto out;
		w++;
	}
out:
	for (k = 0; mw && k < 2 * nw; k++)
		if (mw[k])
			destroy_check(ibv_dealloc_mw(mw[k]), 0,
				      "ibv_dealloc_mw");
	for (k = 0; mr && k < opt.n; k++)
		if (mr[k])
			destroy_check(ibv_dereg_mr(mr[k]), 0, "ibv_dereg_mr");
	free(mr);
	free(mw);
}

int mode_mrs(void)
{
	struct ibv_qp *qp[2] = { NULL, NULL };
	struct ibv_cq *cq[2] = { NULL, NULL };
	struct ibv_mr *srcmr = NULL;
	uint8_t *pool = zalloc(M_POOL), *src = zalloc(PAGE);
	double t0 = now_ms();
	unsigned int r;
	int d;

	if (!opt.n)
		opt.n = 256;
	if (!pool || !src) {
		fail("out of memory");
		goto out;
	}
	for (d = 0; d < 2; d++) {
		cq[d] = ibv_create_cq(dv[d].ctx, 64, NULL, NULL, 0);
		if (!cq[d]) {
			fail("ibv_create_cq: %s", strerror(errno));
			goto out;
		}
		qp[d] = qp_new(d, IBV_QPT_RC, cq[d], cq[d], NULL, 16, 4);
		if (!qp[d])
			goto out;
	}
	if (rc_connect_to(qp[0], 0, qp[1]) ||
	    rc_connect_to(qp[1], 1, qp[0]))
		goto out;
	srcmr = ibv_reg_mr(dv[1].pd, src, PAGE, IBV_ACCESS_LOCAL_WRITE);
	if (!srcmr) {
		fail("ibv_reg_mr: %s", strerror(errno));
		goto out;
	}
	for (r = 0; r < opt.rounds && !failed; r++)
		m_round(r, pool, qp, cq, src, srcmr);
out:
	if (srcmr)
		destroy_check(ibv_dereg_mr(srcmr), 1, "ibv_dereg_mr");
	for (d = 0; d < 2; d++) {
		if (qp[d])
			destroy_check(ibv_destroy_qp(qp[d]), d,
				      "ibv_destroy_qp");
		if (cq[d])
			destroy_check(ibv_destroy_cq(cq[d]), d,
				      "ibv_destroy_cq");
	}
	free(pool);
	free(src);
	if (!failed)
		diag("%u rounds of %u MRs (windows on every 16th) in %.0f ms",
		     opt.rounds, opt.n, now_ms() - t0);
	return failed ? EXIT_FAIL : EXIT_PASS;
}
