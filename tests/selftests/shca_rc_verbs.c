// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_rc_test cases: misuse caught at post or verb time (bad states,
 * too many SGEs or WRs, absurd caps, invalid modifies, busy objects).
 */

#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "shca_rc.h"

/* ------------------------------------------------------------------ */
/* misuse caught at post or verb time                                   */

/* Post @wr on @qp; it must be refused with EINVAL (@what says why). */
static void post_refused(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 const char *what)
{
	struct ibv_send_wr *bad = NULL;
	int ret = ibv_post_send(qp, wr, &bad);

	if (ret != EINVAL)
		failf("post_send %s returned %d (%s), expected EINVAL", what,
		      ret, ret ? strerror(abs(ret)) : "success");
	if (ret && bad != wr)
		failf("post_send %s: bad_wr not set to the WR", what);
}

/*
 * Sends posted before RTS (RESET, INIT, RTR, as rdma_rxe) and with a
 * flag shca does not have (IP_CSUM: no checksum offload; bit 5) are
 * refused and never surface.
 */
void t_post_reset(long arg)
{
	struct popts o = defaults();
	struct ibv_send_wr wr = {};
	struct ibv_qp_attr a;
	struct mbuf src;
	struct ibv_sge sg;
	struct pair p;
	int ret;

	(void)arg;
	if (pair_create(&p, &o))
		return;
	if (!mbuf_get(&src, 0, 64, IBV_ACCESS_LOCAL_WRITE, false))
		goto out_pair;
	sge_set(&sg, &src, 0, 64);
	wr.wr_id = WR_BAD;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	post_refused(p.s[0].qp, &wr, "in RESET");
	init_attr(&a, QP_ACC_ALL);
	if (ibv_modify_qp(p.s[0].qp, &a, QP_INIT_MASK)) {
		failf("modify to INIT failed");
		goto out;
	}
	post_refused(p.s[0].qp, &wr, "in INIT");
	/* connect: the rejected WRs must never surface */
	init_attr(&a, QP_ACC_ALL);
	if (ibv_modify_qp(p.s[1].qp, &a, QP_INIT_MASK)) {
		failf("modify to INIT failed");
		goto out;
	}
	rtr_attr(&a, &o, &p.s[0], &p.s[1]);
	ret = ibv_modify_qp(p.s[0].qp, &a, QP_RTR_MASK);
	if (!ret)
		post_refused(p.s[0].qp, &wr, "in RTR");
	rtr_attr(&a, &o, &p.s[1], &p.s[0]);
	ret = ret ? ret : ibv_modify_qp(p.s[1].qp, &a, QP_RTR_MASK);
	rts_attr(&a, &o, &p.s[0]);
	ret = ret ? ret : ibv_modify_qp(p.s[0].qp, &a, QP_RTS_MASK);
	rts_attr(&a, &o, &p.s[1]);
	ret = ret ? ret : ibv_modify_qp(p.s[1].qp, &a, QP_RTS_MASK);
	if (ret) {
		failf("connecting after the rejected posts: %s", strerror(ret));
		goto out;
	}
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_IP_CSUM;
	post_refused(p.s[0].qp, &wr, "with IBV_SEND_IP_CSUM");
	wr.send_flags = IBV_SEND_SIGNALED | (1 << 5);
	post_refused(p.s[0].qp, &wr, "with send flag bit 5");
	expect_quiet(p.s[0].scq, 50, "send CQ (the rejected WRs must never complete)");
	xfer_send(&p, 64, false, "SEND once connected");
	expect_quiet(p.s[0].scq, 50, "send CQ (the rejected WRs must never complete)");
out:
	mbuf_put(&src);
out_pair:
	pair_destroy(&p);
}

/* More SGEs than max_send_sge / max_recv_sge: 0 = max + 1, 1 = 1000 */
void t_post_sges(long arg)
{
	struct popts o = defaults();
	struct ibv_send_wr wr[3], *bad;
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_sge *sg = NULL, good, rsg;
	struct mbuf src, dst;
	uint32_t i, n, nr;
	unsigned int f0 = nfail;
	struct ibv_wc wc;
	struct pair p;
	int ret;

	o.send_sge = 4;
	o.recv_sge = 4;
	if (pair_open(&p, &o))
		return;
	n = arg ? 1000 : p.s[0].cap.max_send_sge + 1;
	nr = arg ? 1000 : p.s[1].cap.max_recv_sge + 1;
	diag("created with max_send_sge %u, max_recv_sge %u; posting %u and %u",
	     p.s[0].cap.max_send_sge, p.s[1].cap.max_recv_sge, n, nr);
	if (!mbuf_get(&src, 0, 8 * (n > nr ? n : nr), IBV_ACCESS_LOCAL_WRITE,
		      false))
		goto out_pair;
	if (!mbuf_get(&dst, 1, 8192, IBV_ACCESS_LOCAL_WRITE, false))
		goto out_src;
	sg = calloc(n > nr ? n : nr, sizeof(*sg));
	if (!sg) {
		failf("out of memory");
		goto out;
	}
	mbuf_fill(&src, 0, src.len, 81);
	for (i = 0; i < (n > nr ? n : nr); i++)
		sge_set(&sg[i], &src, 8 * i, 8);
	sge_set(&rsg, &dst, 0, 8192);
	if (post_recv(&p.s[1], 1, &rsg, 1) || post_recv(&p.s[1], 2, &rsg, 1))
		goto out;

	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = WR_BAD;
	wr[0].opcode = IBV_WR_SEND;
	wr[0].sg_list = sg;
	wr[0].num_sge = (int)n;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	bad = NULL;
	ret = ibv_post_send(p.s[0].qp, &wr[0], &bad);
	if (!ret)
		failf("post_send with %u SGEs (max_send_sge %u) accepted", n,
		      p.s[0].cap.max_send_sge);
	else if (bad != &wr[0])
		failf("post_send with %u SGEs: bad_wr not set to the WR", n);
	else
		diag("post_send with %u SGEs: %s", n, strerror(ret));
	expect_quiet(p.s[1].rcq, QUIET_MS, "receiver after the rejected post");
	expect_quiet(p.s[0].scq, 10, "sender after the rejected post");

	/* chain good, bad, good: only the first goes */
	sge_set(&good, &src, 0, 32);
	wr[1] = wr[0];
	wr[0].wr_id = 1;
	wr[0].sg_list = &good;
	wr[0].num_sge = 1;
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
	wr[2] = wr[0];
	wr[2].wr_id = 3;
	wr[2].next = NULL;
	ret = ibv_post_send(p.s[0].qp, &wr[0], &bad);
	if (!ret || bad != &wr[1])
		failf("chain good/too many SGEs/good: returned %d, bad_wr is WR %ld (expected an error at WR 1)",
		      ret, bad ? (long)(bad - wr) : -1L);
	if (wait_wc(p.s[1].rcq, &wc, "receiver of the chain's first WR"))
		check_wc(&wc, "receiver of the chain's first WR",
			 IBV_WC_SUCCESS, IBV_WC_RECV, p.s[1].qp->qp_num, 1,
			 32);
	if (wait_wc(p.s[0].scq, &wc, "sender of the chain's first WR"))
		check_wc(&wc, "sender of the chain's first WR",
			 IBV_WC_SUCCESS, IBV_WC_SEND, p.s[0].qp->qp_num, 1,
			 ANY);
	expect_quiet(p.s[1].rcq, QUIET_MS,
		     "receiver (nothing after the rejected WR may go)");
	expect_quiet(p.s[0].scq, 10, "sender (nothing after the rejected WR)");
	/* receive 2 is still there: a 0-byte SEND must land in it */
	if (nfail == f0 && !post_wr(&p.s[0], 4, IBV_WR_SEND, NULL, 0, 0, 0)) {
		if (wait_wc(p.s[1].rcq, &wc, "receiver of a later SEND"))
			check_wc(&wc, "receiver of a later SEND",
				 IBV_WC_SUCCESS, IBV_WC_RECV,
				 p.s[1].qp->qp_num, 2, 0);
		if (wait_wc(p.s[0].scq, &wc, "sender of a later SEND"))
			check_wc(&wc, "sender of a later SEND", IBV_WC_SUCCESS,
				 IBV_WC_SEND, p.s[0].qp->qp_num, 4, ANY);
	}

	/* receive side */
	rwr.wr_id = WR_BAD;
	rwr.sg_list = sg;
	rwr.num_sge = (int)nr;
	rbad = NULL;
	ret = ibv_post_recv(p.s[1].qp, &rwr, &rbad);
	if (!ret)
		failf("post_recv with %u SGEs (max_recv_sge %u) accepted", nr,
		      p.s[1].cap.max_recv_sge);
	else if (rbad != &rwr)
		failf("post_recv with %u SGEs: bad_wr not set", nr);
	if (nfail == f0) {
		check_state(p.s[0].qp, IBV_QPS_RTS, "sender");
		xfer_send(&p, 64, false, "a good SEND afterwards");
	}
out:
	free(sg);
	mbuf_put(&dst);
out_src:
	mbuf_put(&src);
out_pair:
	pair_destroy(&p);
}

void t_post_inline_big(long arg)
{
	struct popts o = defaults();
	struct ibv_send_wr wr = {}, *bad = NULL;
	struct ibv_sge sg;
	struct pair p;
	unsigned int f0 = nfail;
	uint8_t *buf;
	uint32_t max;
	int ret;

	(void)arg;
	o.inline_data = 64;
	if (pair_open(&p, &o))
		return;
	max = p.s[0].cap.max_inline_data;
	buf = calloc(1, 65536);
	if (!buf) {
		failf("out of memory");
		goto out;
	}
	sg.addr = (uintptr_t)buf;
	sg.length = max + 1;
	sg.lkey = 0;
	wr.wr_id = WR_BAD;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	if (post_recv0(&p.s[1], 1))
		goto out;
	ret = ibv_post_send(p.s[0].qp, &wr, &bad);
	if (!ret)
		failf("inline SEND of %u bytes (max_inline_data %u) accepted",
		      max + 1, max);
	else
		diag("inline SEND of %u bytes (max_inline_data %u): %s",
		     max + 1, max, strerror(ret));
	sg.length = 65536;
	ret = ibv_post_send(p.s[0].qp, &wr, &bad);
	if (!ret)
		failf("inline SEND of 65536 bytes accepted");
	expect_quiet(p.s[1].rcq, QUIET_MS, "receiver after the rejected posts");
	expect_quiet(p.s[0].scq, 10, "sender after the rejected posts");
	if (nfail == f0) {
		struct ibv_wc wc;

		/* receive 1 (0 bytes) is posted: a 0-byte SEND must work */
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.num_sge = 0;
		wr.wr_id = 2;
		ret = ibv_post_send(p.s[0].qp, &wr, &bad);
		if (ret)
			failf("a good SEND afterwards: %s", strerror(ret));
		else if (wait_wc(p.s[1].rcq, &wc, "a good SEND afterwards"))
			check_wc(&wc, "a good SEND afterwards", IBV_WC_SUCCESS,
				 IBV_WC_RECV, p.s[1].qp->qp_num, 1, 0);
	}
out:
	free(buf);
	pair_destroy(&p);
}

/* More WRs than max_send_wr / max_recv_wr outstanding */
void t_post_overflow(long arg)
{
	struct popts o = defaults();
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_wc wc[64];
	uint32_t n = 0, cap, lim, i;
	struct pair p;
	int ret = 0, got;

	(void)arg;
	o.send_wr = 16;
	o.recv_wr = 256;
	if (pair_open(&p, &o))
		return;
	/* side 1 has no receive: the SEND at the head keeps getting RNR */
	cap = p.s[0].cap.max_send_wr;
	lim = 2 * cap + 16;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	for (n = 0; n < lim; n++) {
		wr.wr_id = n;
		ret = ibv_post_send(p.s[0].qp, &wr, &bad);
		if (ret)
			break;
	}
	diag("send queue: max_send_wr %u, %u posts accepted, then %s", cap,
	     n, ret ? strerror(ret) : "none refused");
	if (n < cap)
		failf("only %u of max_send_wr %u SENDs could be posted", n,
		      cap);
	else if (!ret)
		failf("%u SENDs posted to a send queue of %u, none refused",
		      n, cap);
	else if (ret != ENOMEM)
		failf("overflowing post_send returned %s, expected ENOMEM",
		      strerror(ret));
	if (n > p.s[1].cap.max_recv_wr) {
		failf("cannot post %u receives", n);
		goto out;
	}
	for (i = 0; i < n; i++)
		if (post_recv0(&p.s[1], i))
			goto out;
	for (i = 0; i < n; i += got) {
		got = poll_wait(p.s[0].scq, wc, n - i < 64 ? n - i : 64,
				WAIT_MS);
		if (got <= 0) {
			failf("%u of %u SENDs completed within %d s", i, n,
			      WAIT_MS / 1000);
			goto out;
		}
		for (int k = 0; k < got; k++)
			if (!check_wc(&wc[k], "queued SEND", IBV_WC_SUCCESS,
				      IBV_WC_SEND, p.s[0].qp->qp_num, i + k,
				      ANY))
				goto out;
	}

	/* receive queue of side 0: nothing ever arrives there */
	cap = p.s[0].cap.max_recv_wr;
	lim = 2 * cap + 16;
	for (n = 0; n < lim; n++) {
		rwr.wr_id = n;
		ret = ibv_post_recv(p.s[0].qp, &rwr, &rbad);
		if (ret)
			break;
	}
	diag("receive queue: max_recv_wr %u, %u posts accepted, then %s",
	     cap, n, ret ? strerror(ret) : "none refused");
	if (n < cap)
		failf("only %u of max_recv_wr %u receives could be posted", n,
		      cap);
	else if (!ret)
		failf("%u receives posted to a receive queue of %u, none refused",
		      n, cap);
	else if (ret != ENOMEM)
		failf("overflowing post_recv returned %s, expected ENOMEM",
		      strerror(ret));
out:
	pair_destroy(&p);
}

void t_create_absurd(long arg)
{
	static const struct {
		const char *what;
		struct ibv_qp_cap cap;
	} bad[] = {
		{ "max_send_wr 1<<30", { 1U << 30, 16, 1, 1, 0 } },
		{ "max_recv_wr 1<<30", { 16, 1U << 30, 1, 1, 0 } },
		{ "max_send_sge 1000", { 16, 16, 1000, 1, 0 } },
		{ "max_recv_sge 1000", { 16, 16, 1, 1000, 0 } },
		{ "max_inline_data 1<<20", { 16, 16, 1, 1, 1U << 20 } },
		{ "max_send_wr 0xffffffff", { 0xffffffffU, 16, 1, 1, 0 } },
	};
	struct ibv_qp_init_attr ia;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	unsigned int i;

	(void)arg;
	cq = ibv_create_cq(g.dev[0].ctx, 64, NULL, NULL, 0);
	if (!cq) {
		failf("ibv_create_cq: %s", strerror(errno));
		return;
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = cq;
		ia.recv_cq = cq;
		ia.qp_type = IBV_QPT_RC;
		ia.cap = bad[i].cap;
		errno = 0;
		qp = ibv_create_qp(g.dev[0].pd, &ia);
		if (qp) {
			failf("ibv_create_qp with %s succeeded (cap %u/%u/%u/%u/%u)",
			      bad[i].what, ia.cap.max_send_wr,
			      ia.cap.max_recv_wr, ia.cap.max_send_sge,
			      ia.cap.max_recv_sge, ia.cap.max_inline_data);
			ibv_destroy_qp(qp);
		} else if (!errno) {
			failf("ibv_create_qp with %s failed with errno 0",
			      bad[i].what);
		} else {
			diag("%s: %s", bad[i].what, strerror(errno));
		}
	}
	/* the device still creates normal QPs */
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap = (struct ibv_qp_cap){ 16, 16, 1, 1, 0 };
	qp = ibv_create_qp(g.dev[0].pd, &ia);
	if (!qp)
		failf("a normal ibv_create_qp afterwards: %s", strerror(errno));
	else if (ibv_destroy_qp(qp))
		failf("ibv_destroy_qp: %s", strerror(errno));
	if (ibv_destroy_cq(cq))
		failf("ibv_destroy_cq: %s", strerror(errno));
	still_works(NULL);
}

/* modify_qp(QP, A, MASK) must fail with EINVAL and leave the state as is */
static void bad_modify2(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
			int alt, const char *what)
{
	int before = qp_state(qp), after, ret;

	ret = ibv_modify_qp(qp, a, mask);
	after = qp_state(qp);
	if (!ret)
		failf("%s: accepted (QP now %s)", what, state_str(after));
	else if (ret != EINVAL && ret != alt)
		failf("%s: returned %s (%d), expected EINVAL", what,
		      strerror(abs(ret)), ret);
	else if (ret != EINVAL)
		diag("%s: %s", what, strerror(ret));
	if (after != before)
		failf("%s: state changed from %s to %s", what,
		      state_str(before), state_str(after));
}

static void bad_modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		       const char *what)
{
	bad_modify2(qp, a, mask, EINVAL, what);
}

void t_modify_invalid(long arg)
{
	struct popts o = defaults();
	unsigned int f0 = nfail;
	struct ibv_qp_attr a;
	struct side *s;
	struct pair p;

	(void)arg;
	if (pair_create(&p, &o))
		return;
	s = &p.s[0];
	rts_attr(&a, &o, s);
	bad_modify(s->qp, &a, QP_RTS_MASK, "RESET -> RTS");
	rtr_attr(&a, &o, s, &p.s[1]);
	bad_modify(s->qp, &a, QP_RTR_MASK, "RESET -> RTR");
	init_attr(&a, QP_ACC_ALL);
	a.port_num = 2;
	bad_modify(s->qp, &a, QP_INIT_MASK, "RESET -> INIT with port_num 2");
	init_attr(&a, QP_ACC_ALL);
	a.port_num = 0;
	bad_modify(s->qp, &a, QP_INIT_MASK, "RESET -> INIT with port_num 0");
	init_attr(&a, QP_ACC_ALL);
	a.pkey_index = 1000;
	bad_modify(s->qp, &a, QP_INIT_MASK,
		   "RESET -> INIT with pkey_index 1000");
	init_attr(&a, QP_ACC_ALL);
	a.qp_state = (enum ibv_qp_state)42;
	bad_modify(s->qp, &a, QP_INIT_MASK, "qp_state 42");
	init_attr(&a, QP_ACC_ALL);
	bad_modify(s->qp, &a, IBV_QP_STATE,
		   "RESET -> INIT without the required attributes");
	/* SQD -> RTS requires nothing: a false cur_qp_state skipped states */
	a.qp_state = IBV_QPS_RTS;
	a.cur_qp_state = IBV_QPS_SQD;
	bad_modify(s->qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE,
		   "RESET -> RTS claiming cur_qp_state SQD");

	init_attr(&a, QP_ACC_ALL);
	if (ibv_modify_qp(s->qp, &a, QP_INIT_MASK) ||
	    ibv_modify_qp(p.s[1].qp, &a, QP_INIT_MASK)) {
		failf("RESET -> INIT failed");
		goto out;
	}
	rts_attr(&a, &o, s);
	bad_modify(s->qp, &a, QP_RTS_MASK, "INIT -> RTS (RTS before RTR)");
	a.cur_qp_state = IBV_QPS_SQE;
	bad_modify(s->qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE,
		   "INIT -> RTS claiming cur_qp_state SQE");
	rtr_attr(&a, &o, s, &p.s[1]);
	a.path_mtu = (enum ibv_mtu)7;
	bad_modify(s->qp, &a, QP_RTR_MASK, "INIT -> RTR with path_mtu 7");
	rtr_attr(&a, &o, s, &p.s[1]);
	a.path_mtu = (enum ibv_mtu)0;
	bad_modify(s->qp, &a, QP_RTR_MASK, "INIT -> RTR with path_mtu 0");
	rtr_attr(&a, &o, s, &p.s[1]);
	a.max_dest_rd_atomic = 255;
	bad_modify(s->qp, &a, QP_RTR_MASK,
		   "INIT -> RTR with max_dest_rd_atomic 255 (> max_qp_rd_atom)");
	rtr_attr(&a, &o, s, &p.s[1]);
	a.ah_attr.grh.sgid_index = 250;
	/* the RDMA core looks the GID up first: ENODATA */
	bad_modify2(s->qp, &a, QP_RTR_MASK, ENODATA,
		    "INIT -> RTR with sgid_index 250");
	rtr_attr(&a, &o, s, &p.s[1]);
	bad_modify(s->qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU,
		   "INIT -> RTR without AV/dest QPN/PSN");

	rtr_attr(&a, &o, s, &p.s[1]);
	if (ibv_modify_qp(s->qp, &a, QP_RTR_MASK)) {
		failf("INIT -> RTR failed");
		goto out;
	}
	rts_attr(&a, &o, s);
	a.max_rd_atomic = 255;
	bad_modify(s->qp, &a, QP_RTS_MASK,
		   "RTR -> RTS with max_rd_atomic 255 (> max_qp_init_rd_atom)");
	rts_attr(&a, &o, s);
	init_attr(&a, QP_ACC_ALL);
	bad_modify(s->qp, &a, QP_INIT_MASK, "RTR -> INIT");

	/* the QP is still good: finish and use it */
	rtr_attr(&a, &o, &p.s[1], s);
	if (ibv_modify_qp(p.s[1].qp, &a, QP_RTR_MASK)) {
		failf("peer INIT -> RTR failed");
		goto out;
	}
	rts_attr(&a, &o, s);
	a.cur_qp_state = IBV_QPS_SQD;
	bad_modify(s->qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE,
		   "RTR -> RTS without its attributes, claiming SQD");
	/* a true cur_qp_state is fine */
	a.cur_qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(s->qp, &a, QP_RTS_MASK | IBV_QP_CUR_STATE)) {
		failf("RTR -> RTS (with cur_qp_state RTR) after the rejected modifies failed");
		goto out;
	}
	rts_attr(&a, &o, &p.s[1]);
	if (ibv_modify_qp(p.s[1].qp, &a, QP_RTS_MASK)) {
		failf("peer RTR -> RTS failed");
		goto out;
	}
	if (nfail == f0)
		xfer_send(&p, 4096, false, "SEND after the rejected modifies");
out:
	pair_destroy(&p);
}

/*
 * Fields wider than the wire format allows: rejected with an error, or
 * accepted and stored masked to the field's width (what rxe and hardware
 * do with PSNs); never stored as given.
 */
void t_modify_range(long arg)
{
	enum { F_MIN_RNR, F_RQ_PSN, F_DQPN, F_TIMEOUT, F_RETRY, F_RNR_RETRY,
	       F_SQ_PSN };
	static const struct {
		const char *what;
		int field;
		uint32_t val, mask;
	} rf[] = {
		{ "RTR with min_rnr_timer 32 (5 bits)", F_MIN_RNR, 32, 31 },
		{ "RTR with rq_psn 1<<24 (24 bits)", F_RQ_PSN, 1U << 24,
		  0xffffff },
		{ "RTR with dest_qp_num 1<<24|peer (24 bits)", F_DQPN, 1U << 24,
		  0xffffff },
		{ "RTS with timeout 32 (5 bits)", F_TIMEOUT, 32, 31 },
		{ "RTS with retry_cnt 8 (3 bits)", F_RETRY, 8, 7 },
		{ "RTS with rnr_retry 8 (3 bits)", F_RNR_RETRY, 8, 7 },
		{ "RTS with sq_psn 1<<24 (24 bits)", F_SQ_PSN, 1U << 24,
		  0xffffff },
	};
	struct ibv_qp_init_attr init;
	struct popts o = defaults();
	struct ibv_qp_attr a, q;
	uint32_t stored = 0, val;
	unsigned int i;
	struct pair p;
	bool rts;
	int ret;

	(void)arg;
	for (i = 0; i < ARRAY_SIZE(rf); i++) {
		rts = rf[i].field >= F_TIMEOUT;
		if (pair_create(&p, &o))
			return;
		init_attr(&a, QP_ACC_ALL);
		if (ibv_modify_qp(p.s[0].qp, &a, QP_INIT_MASK)) {
			failf("RESET -> INIT failed");
			goto next;
		}
		rtr_attr(&a, &o, &p.s[0], &p.s[1]);
		if (rts && ibv_modify_qp(p.s[0].qp, &a, QP_RTR_MASK)) {
			failf("INIT -> RTR failed");
			goto next;
		}
		if (rts)
			rts_attr(&a, &o, &p.s[0]);
		val = rf[i].val;
		switch (rf[i].field) {
		case F_MIN_RNR:
			a.min_rnr_timer = (uint8_t)val;
			break;
		case F_RQ_PSN:
			a.rq_psn = val;
			break;
		case F_DQPN:
			val |= p.s[1].qp->qp_num;
			a.dest_qp_num = val;
			break;
		case F_TIMEOUT:
			a.timeout = (uint8_t)val;
			break;
		case F_RETRY:
			a.retry_cnt = (uint8_t)val;
			break;
		case F_RNR_RETRY:
			a.rnr_retry = (uint8_t)val;
			break;
		case F_SQ_PSN:
			a.sq_psn = val;
			break;
		}
		ret = ibv_modify_qp(p.s[0].qp, &a,
				    rts ? QP_RTS_MASK : QP_RTR_MASK);
		if (ret) {
			diag("%s: rejected (%s)", rf[i].what, strerror(ret));
			goto next;
		}
		if (ibv_query_qp(p.s[0].qp, &q, QP_RTR_MASK | QP_RTS_MASK,
				 &init)) {
			failf("%s: accepted, then ibv_query_qp failed",
			      rf[i].what);
			goto next;
		}
		switch (rf[i].field) {
		case F_MIN_RNR:
			stored = q.min_rnr_timer;
			break;
		case F_RQ_PSN:
			stored = q.rq_psn;
			break;
		case F_DQPN:
			stored = q.dest_qp_num;
			break;
		case F_TIMEOUT:
			stored = q.timeout;
			break;
		case F_RETRY:
			stored = q.retry_cnt;
			break;
		case F_RNR_RETRY:
			stored = q.rnr_retry;
			break;
		case F_SQ_PSN:
			stored = q.sq_psn;
			break;
		}
		if (stored == (val & rf[i].mask))
			diag("%s: accepted, stored masked as %u", rf[i].what,
			     stored);
		else
			failf("%s: accepted, ibv_query_qp returns %u (not representable on the wire; expected EINVAL or %u)",
			      rf[i].what, stored, val & rf[i].mask);
next:
		pair_destroy(&p);
	}
}

void t_destroy_busy(long arg)
{
	struct ibv_qp_init_attr ia = {};
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int ret;

	(void)arg;
	pd = ibv_alloc_pd(g.dev[0].ctx);
	cq = ibv_create_cq(g.dev[0].ctx, 16, NULL, NULL, 0);
	if (!pd || !cq) {
		failf("ibv_alloc_pd/ibv_create_cq: %s", strerror(errno));
		goto out;
	}
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap = (struct ibv_qp_cap){ 4, 4, 1, 1, 0 };
	qp = ibv_create_qp(pd, &ia);
	if (!qp) {
		failf("ibv_create_qp: %s", strerror(errno));
		goto out;
	}
	ret = ibv_destroy_cq(cq);
	if (ret != EBUSY)
		failf("ibv_destroy_cq of a CQ in use returned %d, expected EBUSY",
		      ret);
	if (!ret)
		cq = NULL;
	ret = ibv_dealloc_pd(pd);
	if (ret != EBUSY)
		failf("ibv_dealloc_pd of a PD in use returned %d, expected EBUSY",
		      ret);
	if (!ret)
		pd = NULL;
	if (ibv_destroy_qp(qp))
		failf("ibv_destroy_qp: %s", strerror(errno));
out:
	if (cq && ibv_destroy_cq(cq))
		failf("ibv_destroy_cq afterwards: %s", strerror(errno));
	if (pd && ibv_dealloc_pd(pd))
		failf("ibv_dealloc_pd afterwards: %s", strerror(errno));
}
