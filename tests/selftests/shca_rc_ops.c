// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_rc_test cases: SEND, RDMA WRITE and READ of many sizes and shapes,
 * SQD, completion fields, unsignaled work requests.
 */

#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "shca_rc.h"

/* ------------------------------------------------------------------ */
/* data correctness cases                                               */

void t_send_size(long len)
{
	struct popts o = defaults();
	unsigned long long tx0 = 0, tx1 = 0;
	bool have_ctr;
	struct pair p;
	char w[64];

	if (pair_open(&p, &o))
		return;
	have_ctr = read_counter(0, "tx_pkts", &tx0);
	snprintf(w, sizeof(w), "SEND %ld bytes", len);
	xfer_send(&p, (size_t)len, false, w);
	if (have_ctr && read_counter(0, "tx_pkts", &tx1) && len >= 65536) {
		diag("%s with path MTU 1024: %llu packets sent", w, tx1 - tx0);
		if (tx1 - tx0 < (unsigned long long)len / 1024)
			failf("%s: only %llu packets sent, path MTU 1024 needs at least %ld",
			      w, tx1 - tx0, len / 1024);
	}
	pair_destroy(&p);
}

void t_send_sges(long arg)
{
	static const uint32_t slen[3] = { 17, 1000, 3001 };
	static const size_t soff[3] = { 0, 40, 1100 };
	static const uint32_t rlen[4] = { 5, 2049, 333, 4000 };
	static const size_t roff[4] = { 0, 16, 2100, 2500 };
	struct popts o = defaults();
	struct ibv_sge ssg[3], rsg[4];
	struct mbuf src, dst;
	size_t total = 0, done = 0, at = 0;
	struct ibv_wc wc;
	struct pair p;
	int i;

	(void)arg;
	if (xfer_open(&p, &o, &src, 4200, &dst, 6600, IBV_ACCESS_LOCAL_WRITE))
		return;
	mbuf_fill(&src, 0, 4200, 3);
	for (i = 0; i < 3; i++) {
		sge_set(&ssg[i], &src, soff[i], slen[i]);
		total += slen[i];
	}
	for (i = 0; i < 4; i++)
		sge_set(&rsg[i], &dst, roff[i], rlen[i]);
	if (post_recv(&p.s[1], 1, rsg, 4) ||
	    post_wr(&p.s[0], 2, IBV_WR_SEND, ssg, 3, 0, 0))
		goto out;
	if (wait_wc(p.s[1].rcq, &wc, "receiver"))
		check_wc(&wc, "receiver", IBV_WC_SUCCESS, IBV_WC_RECV,
			 p.s[1].qp->qp_num, 1, (long)total);
	if (wait_wc(p.s[0].scq, &wc, "sender"))
		check_wc(&wc, "sender", IBV_WC_SUCCESS, IBV_WC_SEND,
			 p.s[0].qp->qp_num, 2, ANY);
	/* the gathered stream, scattered over the receive SGEs in order */
	for (i = 0; i < 3; i++) {
		size_t left = slen[i], from = soff[i];

		while (left) {
			size_t room = rlen[at] - done;
			size_t n = left < room ? left : room;

			mbuf_expect(&dst, roff[at] + done, &src, from, n);
			from += n;
			left -= n;
			done += n;
			if (done == rlen[at]) {
				at++;
				done = 0;
			}
		}
	}
	mbuf_verify(&dst, "3 send SGEs (17+1000+3001) into 4 receive SGEs (5+2049+333+4000)");
out:
	xfer_close(&p, &src, &dst);
}

void t_inline(long arg)
{
	struct popts o = defaults();
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_sge ssg[2], rsg;
	struct mbuf dst, ref;
	uint32_t max, n, cut;
	struct ibv_wc wc;
	struct pair p;
	uint8_t *src;
	int ret, k;

	(void)arg;
	o.inline_data = 256;
	if (pair_open(&p, &o))
		return;
	max = p.s[0].cap.max_inline_data;
	diag("max_inline_data requested 256, created QP reports %u", max);
	if (!max) {
		failf("created QP has max_inline_data 0");
		goto out_pair;
	}
	if (!mbuf_get(&dst, 1, max, IBV_ACCESS_LOCAL_WRITE, false))
		goto out_pair;
	if (!mbuf_get(&ref, 0, max, -1, false))
		goto out_dst;
	src = malloc(max);	/* deliberately not registered */
	if (!src) {
		failf("out of memory");
		goto out_ref;
	}
	for (k = 0; k < 2; k++) {
		n = k ? 1 : max;
		memset(dst.base, GUARD_BYTE, dst.total);
		memset(dst.exp, GUARD_BYTE, dst.total);
		mbuf_fill(&ref, 0, n, 99 + k);
		memcpy(src, ref.p, n);
		cut = n / 3;
		ssg[0].addr = (uintptr_t)src;
		ssg[0].length = cut;
		ssg[0].lkey = 0;
		ssg[1].addr = (uintptr_t)src + cut;
		ssg[1].length = n - cut;
		ssg[1].lkey = 0;
		sge_set(&rsg, &dst, 0, max);
		if (post_recv(&p.s[1], 10 + k, &rsg, 1))
			break;
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 20 + k;
		wr.opcode = IBV_WR_SEND;
		wr.sg_list = cut ? ssg : &ssg[1];
		wr.num_sge = cut ? 2 : 1;
		wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
		ret = ibv_post_send(p.s[0].qp, &wr, &bad);
		if (ret) {
			failf("inline SEND of %u bytes: ibv_post_send: %s", n,
			      strerror(ret));
			break;
		}
		/* inline: the buffer is ours again as soon as post returns */
		memset(src, 0x3c, n);
		if (wait_wc(p.s[1].rcq, &wc, "inline receiver"))
			check_wc(&wc, "inline receiver", IBV_WC_SUCCESS,
				 IBV_WC_RECV, p.s[1].qp->qp_num, 10 + k, n);
		if (wait_wc(p.s[0].scq, &wc, "inline sender"))
			check_wc(&wc, "inline sender", IBV_WC_SUCCESS,
				 IBV_WC_SEND, p.s[0].qp->qp_num, 20 + k, ANY);
		mbuf_expect(&dst, 0, &ref, 0, n);
		mbuf_verify(&dst, k ? "inline SEND of 1 byte" :
			    "inline SEND of max_inline_data bytes (2 SGEs)");
	}
	free(src);
out_ref:
	mbuf_put(&ref);
out_dst:
	mbuf_put(&dst);
out_pair:
	pair_destroy(&p);
}

void t_send_imm(long arg)
{
	struct popts o = defaults();
	struct pair p;

	(void)arg;
	if (pair_open(&p, &o))
		return;
	xfer_send(&p, 100, true, "SEND_WITH_IMM 100 bytes");
	xfer_send(&p, 0, true, "SEND_WITH_IMM 0 bytes");
	pair_destroy(&p);
}

/*
 * RDMA WRITE of @sg (@nsge entries) from side 0 into @dst at offset @off,
 * as @wr_id: wait for its completion and verify @dst against what was
 * expected of it.  Returns false when the post failed (reported).
 */
static bool write_verify(struct pair *p, uint64_t wr_id, struct ibv_sge *sg,
			 int nsge, struct mbuf *dst, long off)
{
	struct ibv_wc wc;

	if (post_wr(&p->s[0], wr_id, IBV_WR_RDMA_WRITE, sg, nsge,
		    raddr(dst, off), dst->mr->rkey))
		return false;
	if (wait_wc(p->s[0].scq, &wc, "writer"))
		check_wc(&wc, "writer", IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
			 p->s[0].qp->qp_num, wr_id, ANY);
	mbuf_verify(dst, "remote buffer");
	return true;
}

/* RDMA WRITE of LEN bytes (ANY: 3 local SGEs) at remote offset 3 */
void t_write(long len)
{
	static const uint32_t slen[3] = { 100, 4000, 999 };
	static const size_t soff[3] = { 0, 200, 4300 };
	struct popts o = defaults();
	struct ibv_sge sg[3];
	struct mbuf src, dst;
	size_t total = 0, at = 3;
	struct pair p;
	int i, nsge;

	if (xfer_open(&p, &o, &src, len < 0 ? 5300 : (size_t)len, &dst,
		      len < 0 ? 5200 : (size_t)len + 3, ACC_ALL))
		return;
	mbuf_fill(&src, 0, src.len, 5);
	mbuf_fill(&dst, 0, dst.len, 6);	/* old content around the target */
	if (len < 0) {
		nsge = 3;
		for (i = 0; i < 3; i++) {
			sge_set(&sg[i], &src, soff[i], slen[i]);
			mbuf_expect(&dst, at, &src, soff[i], slen[i]);
			at += slen[i];
			total += slen[i];
		}
	} else {
		nsge = len ? 1 : 0;
		total = (size_t)len;
		sge_set(&sg[0], &src, 0, (uint32_t)len);
		mbuf_expect(&dst, 3, &src, 0, total);
	}
	if (write_verify(&p, 3, sg, nsge, &dst, 3))
		expect_quiet(p.s[1].rcq, 50,
			     "target side (a WRITE completes nothing)");
	xfer_close(&p, &src, &dst);
}

/* Move QP to STATE with IBV_QP_STATE alone (RTS <-> SQD). */
static bool to_state(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr a = { .qp_state = state };

	if (!ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return true;
	failf("ibv_modify_qp to %s: %s", state_str(state), strerror(errno));
	return false;
}

/*
 * SQD stops new messages, not the one in flight: a 1 MiB WRITE (1024
 * packets, eight windows) whose first bytes have landed finishes while
 * the QP sits in SQD; a WRITE posted in SQD waits for RTS.
 */
void t_sqd(long arg)
{
	struct popts o = defaults();
	struct mbuf src, dst;
	struct ibv_sge sg[2];
	struct ibv_wc wc;
	struct pair p;
	int i;

	(void)arg;
	if (xfer_open(&p, &o, &src, MIB + 64, &dst, MIB + 64, ACC_ALL))
		return;
	mbuf_fill(&src, 0, src.len, 7);
	mbuf_fill(&dst, 0, dst.len, 8);
	sge_set(&sg[0], &src, 0, MIB);
	sge_set(&sg[1], &src, MIB, 64);
	if (post_wr(&p.s[0], 1, IBV_WR_RDMA_WRITE, &sg[0], 1, raddr(&dst, 0),
		    dst.mr->rkey))
		goto out;
	/* started: its first packet has been placed */
	for (i = 0; i < 5000 && memcmp(dst.p, src.p, 1024); i++)
		usleep(1000);
	if (!to_state(p.s[0].qp, IBV_QPS_SQD))
		goto out;
	if (post_wr(&p.s[0], 2, IBV_WR_RDMA_WRITE, &sg[1], 1,
		    raddr(&dst, MIB), dst.mr->rkey))
		goto out;
	mbuf_expect(&dst, 0, &src, 0, MIB);
	if (wait_wc(p.s[0].scq, &wc, "WRITE in flight at SQD"))
		check_wc(&wc, "WRITE in flight at SQD", IBV_WC_SUCCESS,
			 IBV_WC_RDMA_WRITE, p.s[0].qp->qp_num, 1, ANY);
	check_state(p.s[0].qp, IBV_QPS_SQD, "after the WRITE in flight");
	if (!expect_quiet(p.s[0].scq, 200, "WRITE posted in SQD"))
		goto out;
	mbuf_verify(&dst, "remote buffer in SQD");
	if (!to_state(p.s[0].qp, IBV_QPS_RTS))
		goto out;
	mbuf_expect(&dst, MIB, &src, MIB, 64);
	if (wait_wc(p.s[0].scq, &wc, "WRITE posted in SQD, back in RTS"))
		check_wc(&wc, "WRITE posted in SQD", IBV_WC_SUCCESS,
			 IBV_WC_RDMA_WRITE, p.s[0].qp->qp_num, 2, ANY);
	mbuf_verify(&dst, "remote buffer");
out:
	xfer_close(&p, &src, &dst);
}

/*
 * RDMA WRITE gathered from N small SGEs that do not touch each other: a
 * 1024-byte packet needs more page fragments than an skb holds, so the
 * device must fall back to copying it (and still deliver every byte).
 */
void t_write_scatter(long n)
{
	const uint32_t slen = 40, stride = 100;
	struct popts o = defaults();
	struct ibv_sge sg[32];
	struct mbuf src, dst;
	struct pair p;
	size_t at = 5;
	long i;

	if (n > (long)ARRAY_SIZE(sg))
		n = ARRAY_SIZE(sg);
	o.send_sge = n;
	if (xfer_open(&p, &o, &src, n * stride, &dst, n * slen + 5, ACC_ALL))
		return;
	mbuf_fill(&src, 0, src.len, 12);
	mbuf_fill(&dst, 0, dst.len, 13);
	for (i = 0; i < n; i++) {
		sge_set(&sg[i], &src, i * stride + 7, slen);
		mbuf_expect(&dst, at, &src, i * stride + 7, slen);
		at += slen;
	}
	write_verify(&p, 4, sg, n, &dst, 5);
	xfer_close(&p, &src, &dst);
}

void t_write_imm(long arg)
{
	struct popts o = defaults();
	struct mbuf src, dst, rbuf;
	struct ibv_sge sg, rsg;
	struct ibv_wc wc;
	struct pair p;
	const size_t len = 5000;

	(void)arg;
	if (xfer_open(&p, &o, &src, len, &dst, len + 7, ACC_ALL))
		return;
	if (!mbuf_get(&rbuf, 1, 64, IBV_ACCESS_LOCAL_WRITE, false))
		goto out_xfer;
	mbuf_fill(&src, 0, len, 8);
	sge_set(&sg, &src, 0, len);
	sge_set(&rsg, &rbuf, 0, 64);
	if (post_recv(&p.s[1], 40, &rsg, 1) ||
	    post_wr(&p.s[0], 41, IBV_WR_RDMA_WRITE_WITH_IMM, &sg, 1,
		    raddr(&dst, 7), dst.mr->rkey))
		goto out;
	if (wait_wc(p.s[1].rcq, &wc, "target")) {
		check_wc(&wc, "target", IBV_WC_SUCCESS,
			 IBV_WC_RECV_RDMA_WITH_IMM, p.s[1].qp->qp_num, 40,
			 (long)len);
		if (!(wc.wc_flags & IBV_WC_WITH_IMM) ||
		    wc.imm_data != htonl(IMM))
			failf("target: wc_flags 0x%x imm_data 0x%x, expected IBV_WC_WITH_IMM and 0x%x",
			      wc.wc_flags, ntohl(wc.imm_data), IMM);
	}
	if (wait_wc(p.s[0].scq, &wc, "writer"))
		check_wc(&wc, "writer", IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
			 p.s[0].qp->qp_num, 41, ANY);
	mbuf_expect(&dst, 7, &src, 0, len);
	mbuf_verify(&dst, "remote buffer");
	mbuf_verify(&rbuf, "the receive buffer the WRITE_WITH_IMM consumed (must stay untouched)");
out:
	mbuf_put(&rbuf);
out_xfer:
	xfer_close(&p, &src, &dst);
}

/* RDMA READ of LEN bytes (ANY: 5000 bytes into 3 local SGEs) */
void t_read(long len)
{
	static const uint32_t dlen[3] = { 7, 3000, 1993 };
	static const size_t doff[3] = { 1, 100, 3200 };
	struct popts o = defaults();
	struct mbuf rem, loc;
	struct ibv_sge sg[3];
	size_t total, at = 1;
	struct ibv_wc wc;
	struct pair p;
	int i, nsge;

	total = len < 0 ? 5000 : (size_t)len;
	if (pair_open(&p, &o))
		return;
	if (!mbuf_get(&rem, 1, total + 1, ACC_ALL, false))
		goto out_pair;
	if (!mbuf_get(&loc, 0, len < 0 ? 5300 : total, IBV_ACCESS_LOCAL_WRITE,
		      false))
		goto out_rem;
	mbuf_fill(&rem, 0, total + 1, 11);
	if (len < 0) {
		nsge = 3;
		for (i = 0; i < 3; i++) {
			sge_set(&sg[i], &loc, doff[i], dlen[i]);
			mbuf_expect(&loc, doff[i], &rem, at, dlen[i]);
			at += dlen[i];
		}
	} else {
		nsge = 1;
		sge_set(&sg[0], &loc, 0, (uint32_t)total);
		mbuf_expect(&loc, 0, &rem, 1, total);
	}
	if (post_wr(&p.s[0], 50, IBV_WR_RDMA_READ, sg, nsge, raddr(&rem, 1),
		    rem.mr->rkey))
		goto out;
	if (wait_wc(p.s[0].scq, &wc, "reader"))
		check_wc(&wc, "reader", IBV_WC_SUCCESS, IBV_WC_RDMA_READ,
			 p.s[0].qp->qp_num, 50, (long)total);
	mbuf_verify(&loc, "local buffer");
	mbuf_verify(&rem, "remote buffer (must not change)");
out:
	mbuf_put(&loc);
out_rem:
	mbuf_put(&rem);
out_pair:
	pair_destroy(&p);
}

/* Every opcode in one chain: completion fields on both sides */
void t_wc_fields(long arg)
{
	static const struct {
		enum ibv_wr_opcode op;
		int wc_op;
		uint32_t len;
	} ops[] = {
		{ IBV_WR_SEND, IBV_WC_SEND, 10 },
		{ IBV_WR_RDMA_WRITE, IBV_WC_RDMA_WRITE, 20 },
		{ IBV_WR_RDMA_READ, IBV_WC_RDMA_READ, 30 },
		{ IBV_WR_SEND_WITH_IMM, IBV_WC_SEND, 40 },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WC_RDMA_WRITE, 50 },
		{ IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WC_FETCH_ADD, 8 },
		{ IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WC_COMP_SWAP, 8 },
	};
	struct ibv_send_wr wr[7], *bad;
	struct popts o = defaults();
	struct ibv_sge sg[7], rsg[3];
	struct mbuf loc, rem;
	struct ibv_wc wc[8];
	struct pair p;
	char w[64];
	int i, ret;

	(void)arg;
	if (pair_open(&p, &o))
		return;
	if (!mbuf_get(&loc, 0, 1024, IBV_ACCESS_LOCAL_WRITE, false))
		goto out_pair;
	if (!mbuf_get(&rem, 1, 1024, ACC_ALL, false))
		goto out_loc;
	mbuf_fill(&loc, 0, 1024, 21);
	mbuf_fill(&rem, 0, 1024, 22);
	for (i = 0; i < 3; i++)
		sge_set(&rsg[i], &rem, 512 + i * 64, 64);
	for (i = 0; i < 3; i++)
		if (post_recv(&p.s[1], 200 + i, &rsg[i], 1))
			goto out;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 7; i++) {
		sge_set(&sg[i], &loc, i * 64, ops[i].len);
		wr[i].wr_id = 100 + i;
		wr[i].opcode = ops[i].op;
		wr[i].sg_list = &sg[i];
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i < 6 ? &wr[i + 1] : NULL;
		wr[i].imm_data = htonl(IMM + i);
		if (ops[i].op == IBV_WR_ATOMIC_FETCH_AND_ADD ||
		    ops[i].op == IBV_WR_ATOMIC_CMP_AND_SWP) {
			wr[i].wr.atomic.remote_addr = raddr(&rem, 8 * i);
			wr[i].wr.atomic.rkey = rem.mr->rkey;
			wr[i].wr.atomic.compare_add = 1;
		} else {
			wr[i].wr.rdma.remote_addr = raddr(&rem, 64 * i);
			wr[i].wr.rdma.rkey = rem.mr->rkey;
		}
	}
	ret = ibv_post_send(p.s[0].qp, wr, &bad);
	if (ret) {
		failf("ibv_post_send of a 7-WR chain: %s", strerror(ret));
		goto out;
	}
	if (wait_wcs(p.s[0].scq, wc, 7, "requester"))
		for (i = 0; i < 7; i++) {
			snprintf(w, sizeof(w), "requester completion %d", i);
			check_wc(&wc[i], w, IBV_WC_SUCCESS, ops[i].wc_op,
				 p.s[0].qp->qp_num, 100 + i,
				 ops[i].wc_op == IBV_WC_RDMA_READ ||
				 ops[i].wc_op == IBV_WC_FETCH_ADD ||
				 ops[i].wc_op == IBV_WC_COMP_SWAP ?
				 (long)ops[i].len : ANY);
		}
	if (wait_wcs(p.s[1].rcq, wc, 3, "responder")) {
		check_wc(&wc[0], "responder: SEND", IBV_WC_SUCCESS,
			 IBV_WC_RECV, p.s[1].qp->qp_num, 200, 10);
		check_wc(&wc[1], "responder: SEND_WITH_IMM", IBV_WC_SUCCESS,
			 IBV_WC_RECV, p.s[1].qp->qp_num, 201, 40);
		check_wc(&wc[2], "responder: RDMA_WRITE_WITH_IMM",
			 IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM,
			 p.s[1].qp->qp_num, 202, 50);
		if (wc[0].wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV))
			failf("responder: SEND has wc_flags 0x%x",
			      wc[0].wc_flags);
		for (i = 1; i < 3; i++)
			if (!(wc[i].wc_flags & IBV_WC_WITH_IMM) ||
			    ntohl(wc[i].imm_data) != IMM + 3 + (i - 1))
				failf("responder completion %d: wc_flags 0x%x imm 0x%x, expected WITH_IMM 0x%x",
				      i, wc[i].wc_flags, ntohl(wc[i].imm_data),
				      IMM + 3 + (i - 1));
	}
	expect_quiet(p.s[1].rcq, 50, "responder (only 3 receives)");
out:
	mbuf_put(&rem);
out_loc:
	mbuf_put(&loc);
out_pair:
	pair_destroy(&p);
}

/* sq_sig_all = 0: unsignaled SENDs, each batch closed by a signaled one */
void t_unsignaled(long arg)
{
	struct popts o = defaults();
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_wc wc[256];
	struct ibv_sge sg, rsg;
	struct mbuf src, dst;
	uint32_t n, i, round;
	struct pair p;
	int ret;

	(void)arg;
	o.send_wr = 32;
	o.recv_wr = 256;
	if (pair_open(&p, &o))
		return;
	n = p.s[0].cap.max_send_wr;
	if (n > 256 || n > p.s[1].cap.max_recv_wr) {
		failf("max_send_wr %u / max_recv_wr %u unexpected", n,
		      p.s[1].cap.max_recv_wr);
		goto out_pair;
	}
	if (!mbuf_get(&src, 0, 64 * n, IBV_ACCESS_LOCAL_WRITE, false))
		goto out_pair;
	if (!mbuf_get(&dst, 1, 64 * n, IBV_ACCESS_LOCAL_WRITE, false))
		goto out_src;
	for (round = 0; round < 4; round++) {
		mbuf_fill(&src, 0, 64 * n, 31 + round);
		for (i = 0; i < n; i++) {
			sge_set(&rsg, &dst, 64 * i, 64);
			if (post_recv(&p.s[1], 1000 * round + i, &rsg, 1))
				goto out;
		}
		for (i = 0; i < n; i++) {
			sge_set(&sg, &src, 64 * i, 64);
			wr.wr_id = 1000 * round + i;
			wr.opcode = IBV_WR_SEND;
			wr.sg_list = &sg;
			wr.num_sge = 1;
			wr.send_flags = i == n - 1 ? IBV_SEND_SIGNALED : 0;
			ret = ibv_post_send(p.s[0].qp, &wr, &bad);
			if (ret) {
				failf("round %u: SEND %u of %u (unsignaled, SQ depth %u): ibv_post_send: %s",
				      round, i, n, n, strerror(ret));
				goto out;
			}
		}
		if (!wait_wcs(p.s[1].rcq, wc, (int)n, "receiver"))
			goto out;
		for (i = 0; i < n; i++)
			if (!check_wc(&wc[i], "receiver", IBV_WC_SUCCESS,
				      IBV_WC_RECV, p.s[1].qp->qp_num,
				      1000 * round + i, 64))
				goto out;
		if (!wait_wc(p.s[0].scq, wc, "sender") ||
		    !check_wc(wc, "sender: only the signaled SEND completes",
			      IBV_WC_SUCCESS, IBV_WC_SEND, p.s[0].qp->qp_num,
			      1000 * round + n - 1, ANY))
			goto out;
		if (!expect_quiet(p.s[0].scq, 50,
				  "sender (unsignaled SENDs must not complete)"))
			goto out;
		mbuf_expect(&dst, 0, &src, 0, 64 * n);
		if (!mbuf_verify(&dst, "received data"))
			goto out;
	}
	diag("4 rounds of %u SENDs (%u unsignaled + 1 signaled), SQ depth %u",
	     n, n - 1, n);
out:
	mbuf_put(&dst);
out_src:
	mbuf_put(&src);
out_pair:
	pair_destroy(&p);
}

/*
 * Bind type 2 MW @mw over @len bytes of @win from @off through side 1 of
 * @p (remote write), with a new key; wait for the bind's completion.
 * Returns the key, or 0 after failf().
 */
