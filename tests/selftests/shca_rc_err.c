// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_rc_test cases: remote and local errors (each takes the QP to ERR,
 * or must leave it alone), receiver not ready, head-of-line blocking.
 */

#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "shca_rc.h"

/* ------------------------------------------------------------------ */
/* remote and local error cases                                         */

/*
 * Common frame of the error cases: the pair P under test, a bystander pair
 * B (exists throughout), a local source and a remote target buffer.
 */
struct eframe {
	struct pair p, b;
	struct mbuf loc, rem;
	bool have_b;
};

static bool eframe_open(struct eframe *f, const struct popts *o,
			size_t loclen, int locacc, size_t remlen, int remacc,
			bool inner)
{
	struct popts d = defaults();

	memset(f, 0, sizeof(*f));
	if (pair_open(&f->b, &d))
		return false;
	f->have_b = true;
	if (pair_open(&f->p, o))
		goto err_b;
	if (!mbuf_get(&f->loc, 0, loclen, locacc, false))
		goto err_p;
	if (!mbuf_get(&f->rem, 1, remlen, remacc, inner))
		goto err_loc;
	mbuf_fill(&f->loc, 0, loclen, 61);
	mbuf_fill(&f->rem, 0, remlen, 62);
	return true;
err_loc:
	mbuf_put(&f->loc);
err_p:
	pair_destroy(&f->p);
err_b:
	pair_destroy(&f->b);
	return false;
}

/* Tear down P, check B and a fresh pair, free the rest */
static void eframe_close(struct eframe *f)
{
	pair_destroy(&f->p);
	still_works(&f->b);
	pair_destroy(&f->b);
	mbuf_put(&f->loc);
	mbuf_put(&f->rem);
}

static void rdma_wr(struct ibv_send_wr *wr, enum ibv_wr_opcode op,
		    struct ibv_sge *sg, uint64_t remote, uint32_t rkey)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = WR_BAD;
	wr->opcode = op;
	wr->sg_list = sg;
	wr->num_sge = sg ? 1 : 0;
	wr->wr.rdma.remote_addr = remote;
	wr->wr.rdma.rkey = rkey;
}

void t_err_bad_rkey(long arg)
{
	struct popts o = defaults();
	struct ibv_send_wr wr;
	struct ibv_sge sg;
	struct eframe f;

	(void)arg;
	if (!eframe_open(&f, &o, 64, IBV_ACCESS_LOCAL_WRITE, 4096, ACC_ALL,
			 false))
		return;
	if (post_recv0(&f.p.s[1], WR_RESP))
		goto out;
	sge_set(&sg, &f.loc, 0, 64);
	rdma_wr(&wr, IBV_WR_RDMA_WRITE, &sg, raddr(&f.rem, 0),
		stale_key(f.rem.mr->rkey));
	diag("rkey 0x%x, WRITE with 0x%x", f.rem.mr->rkey, wr.wr.rdma.rkey);
	req_error(&f.p, &wr, IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR,
		  "WRITE with a bad rkey");
	resp_flushed(&f.p, "WRITE with a bad rkey");
	mbuf_verify(&f.rem, "target MR");
out:
	eframe_close(&f);
}

/*
 * WRITE beyond the bounds of an 8 KiB MR registered in the middle of its
 * buffer: 0 = 64 bytes across the end, 1 = 3000 bytes (3 packets) across
 * the end, 2 = 64 bytes across the start.
 */
void t_err_past_end(long arg)
{
	static const long off[3] = { 8192 - 32, 8192 - 1000, -16 };
	static const uint32_t len[3] = { 64, 3000, 64 };
	struct popts o = defaults();
	size_t first = 0, last = 0, n;
	struct ibv_send_wr wr;
	struct ibv_sge sg;
	struct eframe f;

	if (!eframe_open(&f, &o, 4096, IBV_ACCESS_LOCAL_WRITE, 8192, ACC_ALL,
			 true))
		return;
	if (post_recv0(&f.p.s[1], WR_RESP))
		goto out;
	sge_set(&sg, &f.loc, 0, len[arg]);
	rdma_wr(&wr, IBV_WR_RDMA_WRITE, &sg, raddr(&f.rem, off[arg]),
		f.rem.mr->rkey);
	req_error(&f.p, &wr, IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR,
		  "WRITE across the MR's bounds");
	resp_flushed(&f.p, "WRITE across the MR's bounds");
	/* outside the MR: nothing may change */
	n = mbuf_diff(&f.rem, 0, GUARD, &first, &last);
	if (n)
		failf("%zu byte(s) written BEFORE the MR (offsets %ld..%ld from the MR start)",
		      n, (long)first - GUARD, (long)last - GUARD);
	n = mbuf_diff(&f.rem, GUARD + 8192, f.rem.total, &first, &last);
	if (n)
		failf("%zu byte(s) written PAST the MR's end (offsets %ld..%ld from the MR start; the MR is 0..8192)",
		      n, (long)first - GUARD, (long)last - GUARD);
	n = mbuf_diff(&f.rem, GUARD, GUARD + 8192, &first, &last);
	if (n)
		diag("note: %zu byte(s) inside the MR written (offsets %ld..%ld) before the error",
		     n, (long)first - GUARD, (long)last - GUARD);
out:
	eframe_close(&f);
}

void t_err_read_noperm(long arg)
{
	struct popts o = defaults();
	struct ibv_send_wr wr;
	struct ibv_sge sg;
	struct eframe f;

	(void)arg;
	if (!eframe_open(&f, &o, 256, IBV_ACCESS_LOCAL_WRITE, 4096,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
			 false))
		return;
	if (post_recv0(&f.p.s[1], WR_RESP))
		goto out;
	sge_set(&sg, &f.loc, 0, 100);
	rdma_wr(&wr, IBV_WR_RDMA_READ, &sg, raddr(&f.rem, 0), f.rem.mr->rkey);
	req_error(&f.p, &wr, IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR,
		  "READ from an MR without REMOTE_READ");
	resp_flushed(&f.p, "READ from an MR without REMOTE_READ");
	mbuf_verify(&f.loc, "local READ destination (must not change)");
out:
	eframe_close(&f);
}

/*
 * An operation the responder QP's qp_access_flags do not allow:
 * 0 = WRITE, 1 = READ, 2 = ATOMIC.
 */
void t_err_qp_access(long arg)
{
	static const unsigned int acc[3] = {
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};
	static const char *const what[3] = {
		"WRITE to a QP without REMOTE_WRITE",
		"READ from a QP without REMOTE_READ",
		"ATOMIC to a QP without REMOTE_ATOMIC",
	};
	struct popts o = defaults();
	struct ibv_send_wr wr;
	struct ibv_sge sg;
	struct eframe f;
	int st;

	o.access[1] = acc[arg];
	if (!eframe_open(&f, &o, 256, IBV_ACCESS_LOCAL_WRITE, 4096, ACC_ALL,
			 false))
		return;
	if (post_recv0(&f.p.s[1], WR_RESP))
		goto out;
	sge_set(&sg, &f.loc, 0, arg == 2 ? 8 : 100);
	rdma_wr(&wr, arg == 0 ? IBV_WR_RDMA_WRITE : arg == 1 ?
		IBV_WR_RDMA_READ : IBV_WR_ATOMIC_FETCH_AND_ADD, &sg,
		raddr(&f.rem, 0), f.rem.mr->rkey);
	if (arg == 2) {
		wr.wr.atomic.remote_addr = raddr(&f.rem, 0);
		wr.wr.atomic.rkey = f.rem.mr->rkey;
		wr.wr.atomic.compare_add = 1;
	}
	st = req_error(&f.p, &wr, IBV_WC_REM_INV_REQ_ERR,
		       IBV_WC_REM_ACCESS_ERR, what[arg]);
	if (st >= 0)
		diag("%s: requester got %s (rxe: REM_INV_REQ_ERR)", what[arg],
		     st_str(st));
	resp_flushed(&f.p, what[arg]);
	mbuf_verify(&f.rem, "target memory");
	mbuf_verify(&f.loc, "local buffer");
out:
	eframe_close(&f);
}

void t_err_atomic_unaligned(long arg)
{
	struct popts o = defaults();
	struct ibv_send_wr wr;
	struct ibv_sge sg;
	struct eframe f;

	(void)arg;
	if (!eframe_open(&f, &o, 64, IBV_ACCESS_LOCAL_WRITE, 64, ACC_ALL,
			 false))
		return;
	if (post_recv0(&f.p.s[1], WR_RESP))
		goto out;
	sge_set(&sg, &f.loc, 0, 8);
	rdma_wr(&wr, IBV_WR_ATOMIC_FETCH_AND_ADD, &sg, 0, 0);
	wr.wr.atomic.remote_addr = raddr(&f.rem, 4);
	wr.wr.atomic.rkey = f.rem.mr->rkey;
	wr.wr.atomic.compare_add = 1;
	if (req_error(&f.p, &wr, IBV_WC_REM_INV_REQ_ERR,
		      IBV_WC_REM_INV_REQ_ERR,
		      "fetch-add at a 4-byte aligned address") != -2)
		resp_flushed(&f.p, "fetch-add at a 4-byte aligned address");
	mbuf_verify(&f.rem, "target memory");
	mbuf_verify(&f.loc, "local result buffer");
out:
	eframe_close(&f);
}

/*
 * SEND longer than the receive buffer: 0 = 200 bytes into 100 (one
 * packet), 1 = 5000 bytes into 2048 (the overflow is in the 3rd packet).
 */
void t_err_send_too_long(long arg)
{
	static const uint32_t slen[2] = { 200, 5000 };
	static const uint32_t rlen[2] = { 100, 2048 };
	struct popts o = defaults();
	struct ibv_send_wr wr;
	struct ibv_sge sg, rsg;
	size_t first = 0, last = 0, n;
	struct ibv_wc wc;
	struct eframe f;
	char w[160];

	if (!eframe_open(&f, &o, 8192, IBV_ACCESS_LOCAL_WRITE, 8192,
			 IBV_ACCESS_LOCAL_WRITE, false))
		return;
	sge_set(&rsg, &f.rem, 0, rlen[arg]);
	if (post_recv(&f.p.s[1], WR_RESP + 1, &rsg, 1) ||
	    post_recv0(&f.p.s[1], WR_RESP))
		goto out;
	sge_set(&sg, &f.loc, 0, slen[arg]);
	rdma_wr(&wr, IBV_WR_SEND, &sg, 0, 0);
	snprintf(w, sizeof(w), "SEND of %u bytes into a %u-byte receive",
		 slen[arg], rlen[arg]);
	req_error(&f.p, &wr, IBV_WC_REM_INV_REQ_ERR, IBV_WC_REM_INV_REQ_ERR,
		  w);
	if (wait_wc(f.p.s[1].rcq, &wc, "responder: the too-short receive"))
		check_wc(&wc, "responder: the too-short receive",
			 IBV_WC_LOC_LEN_ERR, ANY, f.p.s[1].qp->qp_num,
			 WR_RESP + 1, -1);
	resp_flushed(&f.p, w);
	n = mbuf_diff(&f.rem, GUARD + rlen[arg], f.rem.total, &first, &last);
	if (n)
		failf("%zu byte(s) written beyond the %u-byte receive buffer (offsets %ld..%ld)",
		      n, rlen[arg], (long)first - GUARD, (long)last - GUARD);
out:
	eframe_close(&f);
}

/*
 * Local protection errors on the requester: 0 = SEND with a stale lkey,
 * 1 = SEND with an SGE beyond its MR's end, 2 = READ into an MR without
 * LOCAL_WRITE.
 */
void t_err_lkey(long arg)
{
	static const char *const what[3] = {
		"SEND with a bad lkey",
		"SEND with an SGE past its MR's end",
		"READ into an MR without LOCAL_WRITE",
	};
	struct popts o = defaults();
	struct ibv_send_wr wr;
	struct ibv_sge sg;
	struct eframe f;
	struct mbuf ro;

	if (!eframe_open(&f, &o, 4096, IBV_ACCESS_LOCAL_WRITE, 4096, ACC_ALL,
			 false))
		return;
	memset(&ro, 0, sizeof(ro));
	if (post_recv0(&f.p.s[1], WR_RESP))
		goto out;
	sge_set(&sg, &f.loc, 0, 100);
	if (arg == 0) {
		sg.lkey = stale_key(sg.lkey);
	} else if (arg == 1) {
		/* the MR covers the 4 KiB guard, the buffer and the guard */
		sg.addr = (uintptr_t)f.loc.base + f.loc.total - 50;
	} else {
		if (!mbuf_get(&ro, 0, 100, 0, false))
			goto out;
		sge_set(&sg, &ro, 0, 100);
	}
	rdma_wr(&wr, arg == 2 ? IBV_WR_RDMA_READ : IBV_WR_SEND, &sg,
		raddr(&f.rem, 0), f.rem.mr->rkey);
	req_error(&f.p, &wr, IBV_WC_LOC_PROT_ERR, IBV_WC_LOC_PROT_ERR,
		  what[arg]);
	if (arg == 2) {
		struct ibv_wc wc;

		/*
		 * The READ itself was fine for the responder, and the SEND
		 * behind it may have reached it before the response failed
		 * locally: its receive may complete, but only successfully.
		 */
		mbuf_verify(&ro, "the read-only READ destination");
		if (poll_wait(f.p.s[1].rcq, &wc, 1, QUIET_MS) == 1)
			check_wc(&wc, "responder: the SEND behind the READ",
				 IBV_WC_SUCCESS, IBV_WC_RECV,
				 f.p.s[1].qp->qp_num, WR_RESP, 0);
		check_state(f.p.s[1].qp, IBV_QPS_RTS,
			    "responder (must be unaffected)");
	} else {
		resp_untouched(&f.p, what[arg]);
	}
out:
	if (ro.base)
		mbuf_put(&ro);
	eframe_close(&f);
}

/* A receive WR with a bad lkey meets an incoming SEND */
void t_err_recv_lkey(long arg)
{
	struct popts o = defaults();
	struct ibv_send_wr wr;
	struct ibv_sge sg, rsg;
	struct ibv_wc wc;
	struct eframe f;
	int st;

	(void)arg;
	if (!eframe_open(&f, &o, 4096, IBV_ACCESS_LOCAL_WRITE, 4096, ACC_ALL,
			 false))
		return;
	sge_set(&rsg, &f.rem, 0, 4096);
	rsg.lkey = stale_key(rsg.lkey);
	if (post_recv(&f.p.s[1], WR_RESP + 1, &rsg, 1) ||
	    post_recv0(&f.p.s[1], WR_RESP))
		goto out;
	sge_set(&sg, &f.loc, 0, 100);
	rdma_wr(&wr, IBV_WR_SEND, &sg, 0, 0);
	st = req_error(&f.p, &wr, IBV_WC_REM_OP_ERR, IBV_WC_REM_ACCESS_ERR,
		       "SEND into a receive WR with a bad lkey");
	if (st >= 0)
		diag("requester got %s (rxe: REM_OP_ERR)", st_str(st));
	if (wait_wc(f.p.s[1].rcq, &wc, "responder: the bad receive WR")) {
		if (wc.status != IBV_WC_LOC_PROT_ERR &&
		    wc.status != IBV_WC_LOC_QP_OP_ERR)
			failf("responder: the bad receive WR completed with %s, expected LOC_PROT_ERR (or rxe's LOC_QP_OP_ERR)",
			      st_str(wc.status));
		else
			diag("responder got %s", st_str(wc.status));
		if (wc.wr_id != WR_RESP + 1)
			failf("responder: wr_id 0x%llx, expected 0x%llx",
			      (unsigned long long)wc.wr_id, WR_RESP + 1);
	}
	resp_flushed(&f.p, "SEND into a receive WR with a bad lkey");
	mbuf_verify(&f.rem, "memory behind the bad receive WR");
out:
	eframe_close(&f);
}

void t_err_rnr0(long arg)
{
	struct popts o = defaults();
	struct ibv_send_wr wr;
	struct ibv_sge sg;
	struct eframe f;

	(void)arg;
	o.rnr_retry = 0;
	if (!eframe_open(&f, &o, 256, IBV_ACCESS_LOCAL_WRITE, 64, ACC_ALL,
			 false))
		return;
	sge_set(&sg, &f.loc, 0, 100);
	rdma_wr(&wr, IBV_WR_SEND, &sg, 0, 0);
	req_error(&f.p, &wr, IBV_WC_RNR_RETRY_EXC_ERR,
		  IBV_WC_RNR_RETRY_EXC_ERR, "SEND, no receive, rnr_retry 0");
	diag("RNR_RETRY_EXC_ERR after %.1f ms", last_err_ms);
	resp_untouched(&f.p, "SEND, no receive, rnr_retry 0");
	eframe_close(&f);
}

/*
 * rnr_retry 7, the receives posted 200 ms late: 0 = one 1000-byte SEND,
 * 1 = one 3000-byte SEND (3 packets), 2 = 8 pipelined 1000-byte SENDs.
 */
void t_rnr7_late(long arg)
{
	static const uint32_t cnt[3] = { 1, 1, 8 }, len[3] = { 1000, 3000, 1000 };
	struct popts o = defaults();
	uint32_t n = cnt[arg], l = len[arg], i;
	struct ibv_sge sg, rsg;
	struct mbuf src, dst;
	struct ibv_wc wc[8];
	struct pair p;
	double t0;

	if (xfer_open(&p, &o, &src, n * l, &dst, n * l, IBV_ACCESS_LOCAL_WRITE))
		return;
	mbuf_fill(&src, 0, n * l, 71);
	t0 = now_ms();
	for (i = 0; i < n; i++) {
		sge_set(&sg, &src, i * l, l);
		if (post_wr(&p.s[0], 90 + i, IBV_WR_SEND, &sg, 1, 0, 0))
			goto out;
	}
	if (poll_wait(p.s[0].scq, wc, 1, 200) > 0) {
		failf("sender, while no receive is posted (rnr_retry 7): WR %llu completed with %s after %.1f ms, expected to wait",
		      (unsigned long long)wc[0].wr_id - 90,
		      st_str(wc[0].status), now_ms() - t0);
		goto out;
	}
	for (i = 0; i < n; i++) {
		sge_set(&rsg, &dst, i * l, l);
		if (post_recv(&p.s[1], 190 + i, &rsg, 1))
			goto out;
	}
	if (wait_wcs(p.s[0].scq, wc, (int)n, "sender"))
		for (i = 0; i < n; i++)
			check_wc(&wc[i], "sender", IBV_WC_SUCCESS, IBV_WC_SEND,
				 p.s[0].qp->qp_num, 90 + i, ANY);
	diag("%u SEND(s) of %u bytes completed %.0f ms after posting (receives posted at 200 ms)",
	     n, l, now_ms() - t0);
	if (wait_wcs(p.s[1].rcq, wc, (int)n, "receiver"))
		for (i = 0; i < n; i++)
			check_wc(&wc[i], "receiver", IBV_WC_SUCCESS,
				 IBV_WC_RECV, p.s[1].qp->qp_num, 190 + i, l);
	mbuf_expect(&dst, 0, &src, 0, n * l);
	mbuf_verify(&dst, "received data");
out:
	xfer_close(&p, &src, &dst);
	still_works(NULL);
}

void t_err_peer_gone(long arg)
{
	struct popts o = defaults();
	unsigned long long d0 = 0, d1 = 0;
	struct ibv_send_wr wr;
	struct ibv_sge sg;
	struct eframe f;
	double expect_ms;
	int ret;

	(void)arg;
	o.timeout = 10;
	o.retry_cnt = 2;
	expect_ms = (o.retry_cnt + 1) * 4.096e-3 * (1 << o.timeout);
	if (!eframe_open(&f, &o, 256, IBV_ACCESS_LOCAL_WRITE, 64, ACC_ALL,
			 false))
		return;
	read_counter(1, "rx_drop_no_qp", &d0);
	ret = ibv_destroy_qp(f.p.s[1].qp);
	f.p.s[1].qp = NULL;
	if (ret) {
		failf("ibv_destroy_qp: %s", strerror(ret));
		goto out;
	}
	sge_set(&sg, &f.loc, 0, 100);
	rdma_wr(&wr, IBV_WR_SEND, &sg, 0, 0);
	req_error(&f.p, &wr, IBV_WC_RETRY_EXC_ERR, IBV_WC_RETRY_EXC_ERR,
		  "SEND to a destroyed QP, timeout 10, retry_cnt 2");
	read_counter(1, "rx_drop_no_qp", &d1);
	diag("RETRY_EXC_ERR after %.1f ms (3 x 4.19 ms = %.1f ms expected); peer rx_drop_no_qp +%llu",
	     last_err_ms, expect_ms, d1 - d0);
	if (last_err_ms < expect_ms / 3 || last_err_ms > 2000)
		failf("RETRY_EXC_ERR after %.1f ms, expected about %.1f ms (accepted %.1f..2000)",
		      last_err_ms, expect_ms, expect_ms / 3);
out:
	eframe_close(&f);
}

/* ------------------------------------------------------------------ */
/* head-of-line blocking                                                */

/* N 64-byte round trips on B; returns the time taken, or -1 */
static double pingpong(struct pair *b, int n, struct mbuf *m0,
		       struct mbuf *m1)
{
	struct ibv_sge sg0, sg1, rsg0, rsg1;
	struct ibv_wc wc;
	double t0 = now_ms();
	int i;

	sge_set(&sg0, m0, 0, 64);
	sge_set(&rsg0, m0, 64, 64);
	sge_set(&sg1, m1, 0, 64);
	sge_set(&rsg1, m1, 64, 64);
	for (i = 0; i < n; i++) {
		m0->p[0] = (uint8_t)i;
		if (post_recv(&b->s[1], i, &rsg1, 1) ||
		    post_recv(&b->s[0], i, &rsg0, 1) ||
		    post_wr(&b->s[0], i, IBV_WR_SEND, &sg0, 1, 0, 0))
			return -1;
		if (!wait_wc(b->s[1].rcq, &wc, "B: ping") ||
		    !check_wc(&wc, "B: ping", IBV_WC_SUCCESS, IBV_WC_RECV,
			      b->s[1].qp->qp_num, i, 64))
			return -1;
		m1->p[0] = m1->p[64];
		if (post_wr(&b->s[1], i, IBV_WR_SEND, &sg1, 1, 0, 0))
			return -1;
		if (!wait_wc(b->s[0].rcq, &wc, "B: pong") ||
		    !check_wc(&wc, "B: pong", IBV_WC_SUCCESS, IBV_WC_RECV,
			      b->s[0].qp->qp_num, i, 64))
			return -1;
		if (m0->p[64] != (uint8_t)i) {
			failf("B: round trip %d returned 0x%02x", i,
			      m0->p[64]);
			return -1;
		}
		if (!wait_wc(b->s[0].scq, &wc, "B: ping sender") ||
		    !wait_wc(b->s[1].scq, &wc, "B: pong sender"))
			return -1;
	}
	return now_ms() - t0;
}

void t_hol(long arg)
{
	const int na = 1, nb = 200;
	struct popts oa = defaults(), ob = defaults();
	struct mbuf m0, m1, asrc, adst;
	struct ibv_sge sg, rsg;
	struct ibv_wc wc[8];
	unsigned long long r0 = 0, r1 = 0, q0 = 0;
	double alone, with_a, t0, ta;
	struct pair a, b;
	int i;

	(void)arg;
	oa.min_rnr_timer = 1;	/* 0.01 ms: A's sender retries hard */
	if (pair_open(&b, &ob))
		return;
	if (pair_open(&a, &oa))
		goto out_b;
	if (!mbuf_get(&m0, 0, 128, IBV_ACCESS_LOCAL_WRITE, false))
		goto out_a;
	if (!mbuf_get(&m1, 1, 128, IBV_ACCESS_LOCAL_WRITE, false))
		goto out_m0;
	if (!mbuf_get(&asrc, 0, 1000 * na, IBV_ACCESS_LOCAL_WRITE, false))
		goto out_m1;
	if (!mbuf_get(&adst, 1, 1000 * na, IBV_ACCESS_LOCAL_WRITE, false))
		goto out_asrc;
	mbuf_fill(&asrc, 0, 1000 * na, 91);

	alone = pingpong(&b, nb, &m0, &m1);
	if (alone < 0)
		goto out;
	read_counter(1, "rnr_nak_sent", &r0);
	ta = now_ms();
	for (i = 0; i < na; i++) {
		sge_set(&sg, &asrc, 1000 * i, 1000);
		if (post_wr(&a.s[0], i, IBV_WR_SEND, &sg, 1, 0, 0))
			goto out;
	}
	sleep_ms(20);
	/* shca's engine holds A's WQEs in its transmit LLQ meanwhile */
	if (!strncmp(g.dev[0].name, "shca", 4) &&
	    (!read_counter(0, "llq_tx_entries", &q0) || q0 < (unsigned)na))
		failf("llq_tx_entries missing or %llu while %d WQEs wait on RNR",
		      q0, na);
	with_a = pingpong(&b, nb, &m0, &m1);
	read_counter(1, "rnr_nak_sent", &r1);
	diag("B: %d round trips alone %.0f ms, while A is RNR-blocked %.0f ms (A's receiver sent %llu RNR NAKs)",
	     nb, alone, with_a, r1 - r0);
	if (with_a < 0)
		goto out;
	if (with_a > 4 * alone + 2000)
		failf("B took %.0f ms while A was RNR-blocked, %.0f ms alone: head-of-line blocking",
		      with_a, alone);
	if (poll_wait(a.s[0].scq, wc, 1, 10) > 0) {
		failf("A's sender (rnr_retry 7 must retry forever): WR %llu completed with %s, some time within %.0f ms of posting",
		      (unsigned long long)wc[0].wr_id, st_str(wc[0].status),
		      now_ms() - ta);
		goto out;
	}
	t0 = now_ms();
	for (i = 0; i < na; i++) {
		sge_set(&rsg, &adst, 1000 * i, 1000);
		if (post_recv(&a.s[1], i, &rsg, 1))
			goto out;
	}
	if (wait_wcs(a.s[0].scq, wc, na, "A's sends once receives are posted"))
		for (i = 0; i < na; i++)
			check_wc(&wc[i], "A's sender", IBV_WC_SUCCESS,
				 IBV_WC_SEND, a.s[0].qp->qp_num, i, ANY);
	diag("A completed %.0f ms after its receives were posted",
	     now_ms() - t0);
	if (wait_wcs(a.s[1].rcq, wc, na, "A's receiver"))
		for (i = 0; i < na; i++)
			check_wc(&wc[i], "A's receiver", IBV_WC_SUCCESS,
				 IBV_WC_RECV, a.s[1].qp->qp_num, i, 1000);
	mbuf_expect(&adst, 0, &asrc, 0, 1000 * na);
	mbuf_verify(&adst, "A's received data");
	t0 = now_ms();
	while (read_counter(0, "llq_tx_entries", &q0) && q0 &&
	       now_ms() - t0 < 2000)
		sleep_ms(10);
	if (q0)
		failf("llq_tx_entries still reads %llu with no work outstanding",
		      q0);
out:
	mbuf_put(&adst);
out_asrc:
	mbuf_put(&asrc);
out_m1:
	mbuf_put(&m1);
out_m0:
	mbuf_put(&m0);
out_a:
	pair_destroy(&a);
out_b:
	pair_destroy(&b);
}
