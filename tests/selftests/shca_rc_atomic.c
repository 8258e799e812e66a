// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_rc_test cases: atomic operations, and IBA 1.5's ATOMIC WRITE.
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

/* IB_UVERBS_DEVICE_ATOMIC_WRITE (device_cap_flags_ex) */
#define DEV_ATOMIC_WRITE	(1ULL << 40)

/*
 * Do both devices report ATOMIC WRITE?  A shca device must (on every
 * kernel); when another one (rdma_rxe before Linux 6.2) does not, the
 * case skips.
 */
static bool have_atomic_write(void)
{
	struct ibv_device_attr_ex ax;
	int i;

	for (i = 0; i < 2; i++) {
		memset(&ax, 0, sizeof(ax));
		if (!ibv_query_device_ex(g.dev[i].ctx, NULL, &ax) &&
		    ax.device_cap_flags_ex & DEV_ATOMIC_WRITE)
			continue;
		if (!strncmp(g.dev[i].name, "shca", 4))
			failf("%s does not report ATOMIC WRITE",
			      g.dev[i].name);
		else
			skip_why = "a device does not report ATOMIC WRITE";
		return false;
	}
	return true;
}

/* A connected pair of extended QPs that may post WRITE and ATOMIC WRITE */
static struct popts aw_opts(void)
{
	struct popts o = defaults();

	o.send_ops = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_ATOMIC_WRITE;
	return o;
}

/*
 * A 4 KiB RDMA WRITE, then ATOMIC WRITEs into what it wrote (first,
 * middle and last aligned word): each lands whole, after the WRITE,
 * nothing else changes.
 */
void t_atomic_write(long arg)
{
	static const size_t off[3] = { 0, 2048, 4088 };
	const uint64_t v[3] = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL,
				0x5555aaaa5555aaaaULL };
	struct popts o = aw_opts();
	struct ibv_wc wc[4];
	struct mbuf src, rem;
	struct ibv_sge sg;
	struct pair p;
	int i;

	(void)arg;
	if (!have_atomic_write() ||
	    xfer_open(&p, &o, &src, 4096, &rem, 4096, ACC_ALL))
		return;
	mbuf_fill(&src, 0, 4096, 7);
	sge_set(&sg, &src, 0, 4096);
	if (post_wr(&p.s[0], 1, IBV_WR_RDMA_WRITE, &sg, 1, raddr(&rem, 0),
		    rem.mr->rkey))
		goto out;
	mbuf_expect(&rem, 0, &src, 0, 4096);
	for (i = 0; i < 3; i++) {
		if (post_atomic_write(&p.s[0], 10 + i, raddr(&rem, off[i]),
				      rem.mr->rkey, &v[i]))
			goto out;
		expect_u64(&rem, off[i], v[i]);
	}
	if (!wait_wcs(p.s[0].scq, wc, 4, "WRITE and 3 ATOMIC WRITEs"))
		goto out;
	check_wc(&wc[0], "WRITE", IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
		 p.s[0].qp->qp_num, 1, ANY);
	for (i = 0; i < 3; i++)
		check_wc(&wc[i + 1], "ATOMIC WRITE", IBV_WC_SUCCESS,
			 IBV_WC_ATOMIC_WRITE, p.s[0].qp->qp_num, 10 + i, ANY);
	mbuf_verify(&rem, "target: the WRITE's bytes, 3 words replaced");
	mbuf_verify(&src, "source unchanged");
out:
	xfer_close(&p, &src, &rem);
}

/*
 * ATOMIC WRITE the responder must refuse: 0 = to a 4-byte aligned address
 * (invalid request), 1 = to an MR without REMOTE_WRITE (remote access
 * error).  The requester completes with the error, both QPs end in ERR,
 * the target memory is untouched.
 */
void t_err_atomic_write(long arg)
{
	static const char *const what[2] = {
		"ATOMIC WRITE to a 4-byte aligned address",
		"ATOMIC WRITE to an MR without REMOTE_WRITE",
	};
	const int acc = arg ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ :
			      ACC_ALL;
	const uint64_t v = 0x0badc0de0badc0deULL;
	struct popts o = aw_opts();
	struct mbuf src, rem;
	struct ibv_wc wc;
	struct pair p;
	int i;

	if (!have_atomic_write() ||
	    xfer_open(&p, &o, &src, 64, &rem, 64, acc))
		return;
	if (post_recv0(&p.s[1], WR_RESP) ||
	    post_atomic_write(&p.s[0], WR_BAD, raddr(&rem, arg ? 8 : 4),
			      rem.mr->rkey, &v))
		goto out;
	if (wait_wc(p.s[0].scq, &wc, what[arg]))
		check_wc(&wc, what[arg], arg ? IBV_WC_REM_ACCESS_ERR :
			 IBV_WC_REM_INV_REQ_ERR, ANY, p.s[0].qp->qp_num,
			 WR_BAD, -1);
	/* rdma_rxe moves its QP to ERR just after the completion */
	for (i = 0; i < 100 && qp_state(p.s[0].qp) != IBV_QPS_ERR; i++)
		sleep_ms(10);
	check_state(p.s[0].qp, IBV_QPS_ERR, what[arg]);
	resp_flushed(&p, what[arg]);
	mbuf_verify(&rem, "target memory untouched");
out:
	xfer_close(&p, &src, &rem);
}
