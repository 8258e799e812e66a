// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_rc_test cases: memory windows of type 1 and 2.
 */

#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "shca_rc.h"

static uint32_t bind_mw2(struct pair *p, struct ibv_mw *mw,
			 const struct mbuf *win, long off, uint64_t len,
			 uint64_t wr_id)
{
	struct ibv_send_wr wr = {}, *bw;
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_wc wc;
	int ret;

	wr.wr_id = wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = win->mr;
	wr.bind_mw.bind_info.addr = raddr(win, off);
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	ret = ibv_post_send(p->s[1].qp, &wr, &bw);
	if (ret) {
		failf("IBV_WR_BIND_MW (type 2): ibv_post_send: %s",
		      strerror(ret));
		return 0;
	}
	if (!wait_wc(p->s[1].scq, &wc, "bind type 2 MW") ||
	    !check_wc(&wc, "bind type 2 MW", IBV_WC_SUCCESS, IBV_WC_BIND_MW,
		      p->s[1].qp->qp_num, wr_id, ANY))
		return 0;
	return rkey;
}

/* Type 2 MW bound with IBV_WR_BIND_MW, used, invalidated by SEND_WITH_INV */
void t_mw2_inv(long arg)
{
	struct popts o = defaults();
	struct ibv_send_wr wr = {}, *bw;
	struct mbuf src, win, msg, rb;
	struct ibv_sge sg, rsg;
	unsigned int f0 = nfail;
	struct ibv_mw *mw;
	uint32_t rkey;
	struct ibv_wc wc;
	struct pair p;
	int ret;

	(void)arg;
	if (pair_open(&p, &o))
		return;
	mw = ibv_alloc_mw(g.dev[1].pd, IBV_MW_TYPE_2);
	if (!mw) {
		if (errno == EOPNOTSUPP || errno == ENOSYS)
			skip_why = "ibv_alloc_mw(IBV_MW_TYPE_2) not supported";
		else
			failf("ibv_alloc_mw(IBV_MW_TYPE_2): %s",
			      strerror(errno));
		goto out_pair;
	}
	if (!mbuf_get(&src, 0, 4096, IBV_ACCESS_LOCAL_WRITE, false))
		goto out_mw;
	if (!mbuf_get(&win, 1, 8192, IBV_ACCESS_LOCAL_WRITE |
		      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND, false))
		goto out_src;
	if (!mbuf_get(&rb, 1, 64, IBV_ACCESS_LOCAL_WRITE, false))
		goto out_win;
	if (!mbuf_get(&msg, 0, 16, IBV_ACCESS_LOCAL_WRITE, false))
		goto out_rb;
	mbuf_fill(&src, 0, 4096, 41);
	mbuf_fill(&win, 0, 8192, 42);

	rkey = bind_mw2(&p, mw, &win, 1000, 4096, 70);
	if (!rkey)
		goto out;

	sge_set(&sg, &src, 0, 4096);
	if (post_wr(&p.s[0], 71, IBV_WR_RDMA_WRITE, &sg, 1, raddr(&win, 1000),
		    rkey))
		goto out;
	if (!wait_wc(p.s[0].scq, &wc, "WRITE through the type 2 MW") ||
	    !check_wc(&wc, "WRITE through the type 2 MW", IBV_WC_SUCCESS,
		      IBV_WC_RDMA_WRITE, p.s[0].qp->qp_num, 71, ANY))
		goto out;
	mbuf_expect(&win, 1000, &src, 0, 4096);
	mbuf_verify(&win, "WRITE through the type 2 MW");

	sge_set(&rsg, &rb, 0, 64);
	sge_set(&sg, &msg, 0, 16);
	if (post_recv(&p.s[1], 72, &rsg, 1))
		goto out;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 73;
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.invalidate_rkey = rkey;
	ret = ibv_post_send(p.s[0].qp, &wr, &bw);
	if (ret) {
		failf("SEND_WITH_INV: ibv_post_send: %s", strerror(ret));
		goto out;
	}
	if (wait_wc(p.s[0].scq, &wc, "SEND_WITH_INV sender"))
		check_wc(&wc, "SEND_WITH_INV sender", IBV_WC_SUCCESS,
			 IBV_WC_SEND, p.s[0].qp->qp_num, 73, ANY);
	if (wait_wc(p.s[1].rcq, &wc, "SEND_WITH_INV receiver")) {
		check_wc(&wc, "SEND_WITH_INV receiver", IBV_WC_SUCCESS,
			 IBV_WC_RECV, p.s[1].qp->qp_num, 72, 16);
		if (!(wc.wc_flags & IBV_WC_WITH_INV) ||
		    wc.invalidated_rkey != rkey)
			failf("SEND_WITH_INV receiver: wc_flags 0x%x invalidated_rkey 0x%x, expected IBV_WC_WITH_INV and 0x%x",
			      wc.wc_flags, wc.invalidated_rkey, rkey);
	}
	if (nfail != f0)
		goto out;

	/* the window is gone: a WRITE through it is a remote access error */
	if (post_wr(&p.s[0], WR_BAD, IBV_WR_RDMA_WRITE, &sg, 1,
		    raddr(&win, 1000), rkey))
		goto out;
	if (wait_wc(p.s[0].scq, &wc, "WRITE through the invalidated MW"))
		check_wc(&wc, "WRITE through the invalidated MW",
			 IBV_WC_REM_ACCESS_ERR, ANY, p.s[0].qp->qp_num,
			 WR_BAD, -1);
	mbuf_verify(&win, "window memory after the WRITE through the invalidated MW");
out:
	/* QPs, then the MW bound through them, then the MR under it */
	pair_destroy(&p);
	if (ibv_dealloc_mw(mw))
		failf("ibv_dealloc_mw: %s", strerror(errno));
	mw = NULL;
	mbuf_put(&msg);
out_rb:
	mbuf_put(&rb);
out_win:
	mbuf_put(&win);
out_src:
	mbuf_put(&src);
out_mw:
	if (mw && ibv_dealloc_mw(mw))
		failf("ibv_dealloc_mw: %s", strerror(errno));
out_pair:
	pair_destroy(&p);
}

/*
 * A type 2 MW outlives the QP it was bound to: the QPs created after it
 * (which the allocator tends to place where the old ones were) must not
 * be able to use it.
 */
void t_mw2_stale(long arg)
{
	struct popts o = defaults();
	struct mbuf src, win;
	struct ibv_mw *mw = NULL;
	struct ibv_sge sg;
	struct ibv_wc wc;
	struct pair p;
	uint32_t rkey;
	int round;

	(void)arg;
	if (!mbuf_get(&src, 0, 4096, IBV_ACCESS_LOCAL_WRITE, false))
		return;
	if (!mbuf_get(&win, 1, 8192, IBV_ACCESS_LOCAL_WRITE |
		      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND, false))
		goto out_src;
	mbuf_fill(&src, 0, 4096, 51);
	mbuf_fill(&win, 0, 8192, 52);
	if (pair_open(&p, &o))
		goto out_win;
	mw = ibv_alloc_mw(g.dev[1].pd, IBV_MW_TYPE_2);
	if (!mw) {
		failf("ibv_alloc_mw(IBV_MW_TYPE_2): %s", strerror(errno));
		goto out_pair;
	}
	rkey = bind_mw2(&p, mw, &win, 0, 8192, 80);
	if (!rkey)
		goto out_pair;

	sge_set(&sg, &src, 0, 4096);
	for (round = 1; round <= 4; round++) {
		pair_destroy(&p);
		if (pair_open(&p, &o))
			goto out_mw;
		if (post_wr(&p.s[0], WR_BAD, IBV_WR_RDMA_WRITE, &sg, 1,
			    raddr(&win, 0), rkey))
			break;
		if (!wait_wc(p.s[0].scq, &wc, "WRITE through the stale MW") ||
		    !check_wc(&wc, "WRITE through a type 2 MW whose QP is gone",
			      IBV_WC_REM_ACCESS_ERR, ANY, p.s[0].qp->qp_num,
			      WR_BAD, -1))
			break;
	}
	mbuf_verify(&win, "window memory after WRITEs through the stale MW");
out_pair:
	pair_destroy(&p);
out_mw:
	if (mw && ibv_dealloc_mw(mw))
		failf("ibv_dealloc_mw: %s", strerror(errno));
out_win:
	mbuf_put(&win);
out_src:
	mbuf_put(&src);
}

/* Type 1 MW with ibv_bind_mw, a WRITE through it, one beyond its end */
void t_mw1(long arg)
{
	struct popts o = defaults();
	struct ibv_mw_bind bind = {};
	struct ibv_send_wr wr = {};
	struct mbuf src, win;
	struct ibv_sge sg;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	struct pair p;
	int ret;

	(void)arg;
	if (pair_open(&p, &o))
		return;
	mw = ibv_alloc_mw(g.dev[1].pd, IBV_MW_TYPE_1);
	if (!mw) {
		if (errno == EOPNOTSUPP || errno == ENOSYS)
			skip_why = "ibv_alloc_mw(IBV_MW_TYPE_1) not supported";
		else
			failf("ibv_alloc_mw(IBV_MW_TYPE_1): %s",
			      strerror(errno));
		goto out_pair;
	}
	if (!mbuf_get(&src, 0, 4096, IBV_ACCESS_LOCAL_WRITE, false))
		goto out_mw;
	if (!mbuf_get(&win, 1, 8192, IBV_ACCESS_LOCAL_WRITE |
		      IBV_ACCESS_MW_BIND, false))
		goto out_src;
	mbuf_fill(&src, 0, 4096, 51);
	mbuf_fill(&win, 0, 8192, 52);
	bind.wr_id = 80;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = win.mr;
	bind.bind_info.addr = raddr(&win, 512);
	bind.bind_info.length = 2048;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	ret = ibv_bind_mw(p.s[1].qp, mw, &bind);
	if (ret) {
		failf("ibv_bind_mw (type 1): %s", strerror(ret));
		goto out;
	}
	if (!wait_wc(p.s[1].scq, &wc, "bind type 1 MW") ||
	    !check_wc(&wc, "bind type 1 MW", IBV_WC_SUCCESS, IBV_WC_BIND_MW,
		      p.s[1].qp->qp_num, 80, ANY))
		goto out;
	diag("MR rkey 0x%x (no remote access), MW rkey 0x%x", win.mr->rkey,
	     mw->rkey);

	sge_set(&sg, &src, 0, 2048);
	if (post_wr(&p.s[0], 81, IBV_WR_RDMA_WRITE, &sg, 1, raddr(&win, 512),
		    mw->rkey))
		goto out;
	if (!wait_wc(p.s[0].scq, &wc, "WRITE of the whole window") ||
	    !check_wc(&wc, "WRITE of the whole window", IBV_WC_SUCCESS,
		      IBV_WC_RDMA_WRITE, p.s[0].qp->qp_num, 81, ANY))
		goto out;
	mbuf_expect(&win, 512, &src, 0, 2048);
	mbuf_verify(&win, "WRITE of the whole window");

	/* 16 bytes straddling the window's end */
	sge_set(&sg, &src, 100, 16);
	wr.wr_id = WR_BAD;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = raddr(&win, 512 + 2048 - 8);
	wr.wr.rdma.rkey = mw->rkey;
	req_error(&p, &wr, IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR,
		  "WRITE across the window's end");
	mbuf_verify(&win, "memory after the WRITE across the window's end");
out:
	/* the MW before the MR it is bound to */
	pair_destroy(&p);
	if (ibv_dealloc_mw(mw))
		failf("ibv_dealloc_mw: %s", strerror(errno));
	mw = NULL;
	mbuf_put(&win);
out_src:
	mbuf_put(&src);
out_mw:
	if (mw && ibv_dealloc_mw(mw))
		failf("ibv_dealloc_mw: %s", strerror(errno));
out_pair:
	pair_destroy(&p);
}
