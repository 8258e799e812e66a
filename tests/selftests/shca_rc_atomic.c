// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_rc_test cases: atomic operations.
 */

#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "shca_rc.h"

static void set_u64(struct mbuf *b, size_t off, uint64_t v)
{
	memcpy(b->p + off, &v, 8);
	memcpy(b->exp + GUARD + off, &v, 8);
}

static void expect_u64(struct mbuf *b, size_t off, uint64_t v)
{
	memcpy(b->exp + GUARD + off, &v, 8);
}

/* One atomic from side 0: OP at rem+8, result into loc+OFF */
static void atomic1(struct pair *p, struct mbuf *rem, struct mbuf *loc,
		    size_t off, enum ibv_wr_opcode op, uint64_t a, uint64_t b,
		    const char *what)
{
	struct ibv_sge sg;
	struct ibv_wc wc;

	sge_set(&sg, loc, off, 8);
	if (post_atomic(&p->s[0], 60 + off, op, &sg, raddr(rem, 8),
			rem->mr->rkey, a, b))
		return;
	if (wait_wc(p->s[0].scq, &wc, what))
		check_wc(&wc, what, IBV_WC_SUCCESS,
			 op == IBV_WR_ATOMIC_FETCH_AND_ADD ? IBV_WC_FETCH_ADD :
			 IBV_WC_COMP_SWAP, p->s[0].qp->qp_num, 60 + off, 8);
}

void t_atomic(long arg)
{
	const uint64_t v0 = 0x1122334455667788ULL, add = 0x0101010101010101ULL;
	const uint64_t v1 = v0 + add, v2 = 0xfedcba9876543210ULL;
	struct popts o = defaults();
	struct mbuf rem, loc;
	struct pair p;

	(void)arg;
	if (pair_open(&p, &o))
		return;
	if (!mbuf_get(&rem, 1, 24, ACC_ALL, false))
		goto out_pair;
	if (!mbuf_get(&loc, 0, 24, IBV_ACCESS_LOCAL_WRITE, false))
		goto out_rem;
	set_u64(&rem, 8, v0);
	atomic1(&p, &rem, &loc, 0, IBV_WR_ATOMIC_FETCH_AND_ADD, add, 0,
		"fetch-add");
	expect_u64(&loc, 0, v0);
	expect_u64(&rem, 8, v1);
	mbuf_verify(&loc, "fetch-add: returned original value");
	mbuf_verify(&rem, "fetch-add: remote value");

	atomic1(&p, &rem, &loc, 8, IBV_WR_ATOMIC_CMP_AND_SWP, v1, v2,
		"compare-swap (equal)");
	expect_u64(&loc, 8, v1);
	expect_u64(&rem, 8, v2);
	mbuf_verify(&loc, "compare-swap (equal): returned original value");
	mbuf_verify(&rem, "compare-swap (equal): remote value swapped");

	atomic1(&p, &rem, &loc, 16, IBV_WR_ATOMIC_CMP_AND_SWP, v1, v0,
		"compare-swap (not equal)");
	expect_u64(&loc, 16, v2);
	mbuf_verify(&loc, "compare-swap (not equal): returned original value");
	mbuf_verify(&rem, "compare-swap (not equal): remote value unchanged");
	mbuf_put(&loc);
out_rem:
	mbuf_put(&rem);
out_pair:
	pair_destroy(&p);
}

void t_atomic_many(long arg)
{
	const uint64_t start = 1000000, add = 3;
	const int n = 1000;
	struct popts o = defaults();
	struct ibv_wc wc[64];
	struct mbuf rem, loc;
	int posted = 0, done = 0, i, got;
	struct ibv_sge sg;
	struct pair p;
	double t0;

	(void)arg;
	if (pair_open(&p, &o))
		return;
	if (!mbuf_get(&rem, 1, 16, ACC_ALL, false))
		goto out_pair;
	if (!mbuf_get(&loc, 0, n * 8, IBV_ACCESS_LOCAL_WRITE, false))
		goto out_rem;
	set_u64(&rem, 8, start);
	t0 = now_ms();
	while (done < n) {
		while (posted < n && posted - done < 64) {
			sge_set(&sg, &loc, posted * 8, 8);
			if (post_atomic(&p.s[0], posted, IBV_WR_ATOMIC_FETCH_AND_ADD,
					&sg, raddr(&rem, 8), rem.mr->rkey, add,
					0))
				goto out;
			posted++;
		}
		got = poll_wait(p.s[0].scq, wc, 1, WAIT_MS);
		if (got < 1) {
			failf("fetch-add %d of %d: no completion within %d s",
			      done, n, WAIT_MS / 1000);
			goto out;
		}
		i = ibv_poll_cq(p.s[0].scq, 63, wc + 1);
		if (i > 0)
			got += i;
		for (i = 0; i < got; i++, done++) {
			if (!check_wc(&wc[i], "fetch-add", IBV_WC_SUCCESS,
				      IBV_WC_FETCH_ADD, p.s[0].qp->qp_num,
				      done, 8))
				goto out;
		}
	}
	diag("1000 fetch-adds (16 outstanding reads/atomics) took %.0f ms",
	     now_ms() - t0);
	for (i = 0; i < n; i++)
		expect_u64(&loc, i * 8, start + add * i);
	expect_u64(&rem, 8, start + add * n);
	mbuf_verify(&rem, "remote counter after 1000 fetch-adds of 3");
	mbuf_verify(&loc, "the 1000 returned values (the i-th must be start + 3*i)");
out:
	mbuf_put(&loc);
out_rem:
	mbuf_put(&rem);
out_pair:
	pair_destroy(&p);
}
