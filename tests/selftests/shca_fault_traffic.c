// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_fault_test's traffic mode: RC pairs, an SRQ, MRs, memory windows
 * and UD, all moving checked data, while the device is made to fail.
 */

#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "shca_fault.h"

/* ------------------------------------------------------------------ */
/* traffic                                                              */

#define T_MAX		131072
#define T_MSG		64
#define T_NCQ		4	/* send CQs per side */
#define T_IDLE_CQS	8	/* idle CQs per device */
#define T_UD_LEN	256
#define T_UD_RECVS	16
#define T_UD_OUT	4
#define T_MAGIC_REQ	0x52455131U
#define T_MAGIC_REP	0x52455032U

static const uint32_t t_sizes[] = { 64, 1000, 4096, 20000, 65536, T_MAX };

enum {	/* wr_id = kind << 32 | index */
	K_WRITE = 1, K_SEND, K_READ, K_ATOMIC, K_REPLY, K_BRECV, K_SRQ,
	K_UD_SEND, K_UD_RECV, K_BIND,
};

#define WRID(k, i)	((uint64_t)(k) << 32 | (uint32_t)(i))
#define WR_KIND(w)	((unsigned int)((w) >> 32))
#define WR_IDX(w)	((uint32_t)(w))

/*
 * Side A's area: src[T_MAX] rdst[T_MAX] atom[8] ... msg[T_MSG]
 * Side B's area: dst[T_MAX] rsrc[T_MAX + 64] counter[8] recv[] reply[]
 */
#define A_SRC		0
#define A_RDST		T_MAX
#define A_ATOM		(2 * T_MAX)
#define A_MSG		(2 * T_MAX + 64)
#define B_DST		0
#define B_RSRC		T_MAX
#define B_COUNTER	(2 * T_MAX + 128)
#define B_RECV		(2 * T_MAX + 256)
#define B_REPLY		(2 * T_MAX + 512)
#define T_AREA		(2 * T_MAX + PAGE)

struct t_hdr {
	uint32_t magic, pair, round, len, seed;
};

struct tpair {
	struct ibv_qp *qa, *qb;
	struct ibv_mr *mra, *mrb;
	uint8_t *a, *b;
	struct ibv_mw *mw;
	uint32_t mw_rkey;
	uint32_t round;		/* round in progress (or last done) */
	uint32_t len, seed, roff;
	int a_out;		/* A's send completions still due */
	unsigned int a_seen;	/* bit per K_* kind A completed this round */
	bool b_got, a_got, b_out;
	bool busy;		/* a round is in progress */
	bool dead;
	unsigned int done;	/* rounds completed */
};

static struct {
	struct tpair *p;
	struct ibv_cq *acq[T_NCQ], *bcq[T_NCQ], *arcq, *brcq;
	struct ibv_cq *idle[2][T_IDLE_CQS];
	struct ibv_srq *srq;
	struct ibv_mr *srq_mr;
	uint8_t *srq_buf;
	unsigned int srq_n;
	struct ibv_mr **idle_mr;
	uint8_t *idle_buf;
	struct ibv_mw *mw1;
	/* UD */
	struct ibv_cq *ud_cq[2];
	struct ibv_qp *ud[2];
	struct ibv_ah *ah;
	struct ibv_mr *ud_mr[2];
	uint8_t *ud_buf[2];
	unsigned int ud_out, ud_sent, ud_recv;
	uint32_t ud_seq;
	/* QPN -> pair index + 1, per device */
	uint32_t *map[2];
	unsigned int dead;
	unsigned long long bytes;
	double first_err;	/* first error an event must explain */
	unsigned int nerr;
	double progress;	/* last time a round ended (or a pair died) */
} t;

static struct tpair *t_pair_of(int dev, uint32_t qpn)
{
	uint32_t i;

	if (qpn >= MAX_QPN || !t.map[dev][qpn])
		return NULL;
	i = t.map[dev][qpn] - 1;
	return i < opt.n ? &t.p[i] : NULL;
}

/*
 * An error only a device or port event explains (a failed post, an error
 * completion, EIO from a doorbell): t_run() fails unless an async event
 * arrives within GRACE_MS of the first one.  The event may trail the
 * error: the RDMA core fails commands before it queues DEVICE_FATAL.
 */
static void t_lost(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void t_lost(const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	if (!t.first_err)
		t.first_err = now_ms();
	if (t.nerr++ >= 4)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	diag("%s", buf);
}

static void t_kill_pair(struct tpair *p, const char *why, const char *what)
{
	if (p->dead)
		return;
	p->dead = true;
	p->busy = false;
	t.dead++;
	t.progress = now_ms();
	t_lost("pair %ld: %s: %s", (long)(p - t.p), why, what);
}

static int t_start_round(struct tpair *p)
{
	uint32_t i = (uint32_t)(p - t.p);
	struct t_hdr *h = (struct t_hdr *)(p->a + A_MSG);
	uint8_t *b = p->b;
	int ret;

	p->len = t_sizes[(p->round + i) % ARRAY_SIZE(t_sizes)];
	p->seed = i * 7919U + p->round * 104729U + 1;
	p->roff = p->round % 64;
	pattern(p->a + A_SRC, p->len, p->seed);
	memset(p->a + A_RDST, 0, p->len / 2 + 1);
	h->magic = T_MAGIC_REQ;
	h->pair = i;
	h->round = p->round;
	h->len = p->len;
	h->seed = p->seed;
	p->a_out = 4;
	p->a_seen = 0;
	p->a_got = p->b_got = p->b_out = false;
	p->busy = true;

	ret = post_send(p->qa, WRID(K_WRITE, i), IBV_WR_RDMA_WRITE,
			p->a + A_SRC, p->len, p->mra->lkey,
			(uintptr_t)(b + B_DST), p->mw_rkey, true);
	if (!ret)
		ret = post_send(p->qa, WRID(K_SEND, i), IBV_WR_SEND,
				p->a + A_MSG, T_MSG, p->mra->lkey, 0, 0, true);
	if (!ret)
		ret = post_send(p->qa, WRID(K_READ, i), IBV_WR_RDMA_READ,
				p->a + A_RDST, p->len / 2 + 1, p->mra->lkey,
				(uintptr_t)(b + B_RSRC + p->roff),
				p->mrb->rkey, true);
	if (!ret)
		ret = post_send(p->qa, WRID(K_ATOMIC, i),
				IBV_WR_ATOMIC_FETCH_AND_ADD, p->a + A_ATOM, 8,
				p->mra->lkey, (uintptr_t)(b + B_COUNTER),
				p->mrb->rkey, true);
	if (ret)
		t_kill_pair(p, "ibv_post_send", strerror(ret));
	return ret;
}

/* The READ of pair @i brought B's source (pattern(i + 1)) from roff on. */
static void t_read_check(struct tpair *p, uint32_t i)
{
	uint32_t n = p->len / 2 + 1;
	uint8_t *exp = malloc(n + p->roff);

	if (!exp) {
		fail("out of memory");
		return;
	}
	pattern(exp, n + p->roff, i + 1);
	if (memcmp(exp + p->roff, p->a + A_RDST, n))
		fail("pair %u round %u READ: the %u bytes differ from the remote source",
		     i, p->round, n);
	free(exp);
}

/* A's round is over once every part of it completed: check A's data. */
static void t_round_check(struct tpair *p)
{
	uint32_t i = (uint32_t)(p - t.p);
	uint64_t orig;

	if (!p->busy || p->a_out || !p->a_got || !p->b_got || p->b_out)
		return;
	t_read_check(p, i);
	memcpy(&orig, p->a + A_ATOM, 8);
	if (orig != p->round)
		fail("pair %u round %u FETCH_ADD returned %llu", i, p->round,
		     (unsigned long long)orig);
	t.bytes += p->len + p->len / 2 + 1 + 2 * T_MSG + 8;
	t.progress = now_ms();
	p->busy = false;
	p->done++;
	p->round++;
}

static void t_b_recv(struct tpair *p, const struct ibv_wc *wc)
{
	uint32_t i = (uint32_t)(p - t.p);
	struct t_hdr h;
	char what[64];
	int ret;

	memcpy(&h, p->b + B_RECV, sizeof(h));
	if (wc->byte_len != T_MSG || h.magic != T_MAGIC_REQ || h.pair != i ||
	    h.round != p->round || h.len != p->len || !p->busy) {
		fail("pair %u: B received %u bytes (magic %#x pair %u round %u), expected round %u",
		     i, wc->byte_len, h.magic, h.pair, h.round, p->round);
		return;
	}
	snprintf(what, sizeof(what), "pair %u round %u WRITE", i, p->round);
	pattern_ok(p->b + B_DST, h.len, h.seed, what);
	p->b_got = true;
	ret = post_recv(p->qb, NULL, WRID(K_BRECV, i), p->b + B_RECV, T_MSG,
			p->mrb->lkey);
	if (!ret) {
		h.magic = T_MAGIC_REP;
		memcpy(p->b + B_REPLY, &h, sizeof(h));
		ret = post_send(p->qb, WRID(K_REPLY, i), IBV_WR_SEND,
				p->b + B_REPLY, T_MSG, p->mrb->lkey, 0, 0,
				true);
		p->b_out = !ret;
	}
	if (ret)
		t_kill_pair(p, "B post", strerror(ret));
}

static void t_a_reply(const struct ibv_wc *wc)
{
	uint32_t k = WR_IDX(wc->wr_id);
	uint8_t *buf = t.srq_buf + (size_t)k * T_MSG;
	struct tpair *p = t_pair_of(0, wc->qp_num);
	struct t_hdr h;

	memcpy(&h, buf, sizeof(h));
	if (!p || wc->byte_len != T_MSG || h.magic != T_MAGIC_REP ||
	    h.pair != (uint32_t)(p - t.p) || h.round != p->round)
		fail("SRQ receive on QP %u: %u bytes, magic %#x pair %u round %u",
		     wc->qp_num, wc->byte_len, h.magic, h.pair, h.round);
	else
		p->a_got = true;
	if (post_recv(NULL, t.srq, WRID(K_SRQ, k), buf, T_MSG,
		      t.srq_mr->lkey))
		t_lost("ibv_post_srq_recv failed");
}

static void t_ud_recv(const struct ibv_wc *wc)
{
	uint32_t k = WR_IDX(wc->wr_id);
	uint8_t *buf = t.ud_buf[1] + (size_t)k * (40 + T_UD_LEN);
	uint32_t seq;

	if (wc->byte_len != 40 + T_UD_LEN) {
		fail("UD receive of %u bytes, expected %u", wc->byte_len,
		     40 + T_UD_LEN);
	} else {
		memcpy(&seq, buf + 40, 4);
		pattern_ok(buf + 44, T_UD_LEN - 4, seq, "UD payload");
		t.ud_recv++;
	}
	if (post_recv(t.ud[1], NULL, WRID(K_UD_RECV, k), buf, 40 + T_UD_LEN,
		      t.ud_mr[1]->lkey))
		t_lost("UD ibv_post_recv failed");
}

static void t_ud_send(void)
{
	uint8_t *buf;
	struct ibv_sge sg;
	struct ibv_send_wr wr = {}, *bad;
	uint32_t seq;

	if (!t.ud[0] || t.ud_out >= T_UD_OUT)
		return;
	seq = ++t.ud_seq;
	buf = t.ud_buf[0] + (size_t)(seq % T_UD_OUT) * T_UD_LEN;
	memcpy(buf, &seq, 4);
	pattern(buf + 4, T_UD_LEN - 4, seq);
	sg.addr = (uintptr_t)buf;
	sg.length = T_UD_LEN;
	sg.lkey = t.ud_mr[0]->lkey;
	wr.wr_id = WRID(K_UD_SEND, seq);
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = t.ah;
	wr.wr.ud.remote_qpn = t.ud[1]->qp_num;
	wr.wr.ud.remote_qkey = QKEY;
	if (ibv_post_send(t.ud[0], &wr, &bad)) {
		t_lost("UD ibv_post_send failed");
		t.ud_out = T_UD_OUT;	/* stop sending */
		return;
	}
	t.ud_out++;
	t.ud_sent++;
}

/* Handle one completion of device @dev. */
static void t_wc(int dev, const struct ibv_wc *wc)
{
	unsigned int kind = WR_KIND(wc->wr_id);
	struct tpair *p = NULL;

	if (kind == K_UD_SEND) {
		t.ud_out--;
		if (wc->status != IBV_WC_SUCCESS)
			t_lost("UD send: %s", ibv_wc_status_str(wc->status));
		return;
	}
	if (kind == K_UD_RECV) {
		if (wc->status == IBV_WC_SUCCESS)
			t_ud_recv(wc);
		else
			t_lost("UD receive: %s",
			       ibv_wc_status_str(wc->status));
		return;
	}
	if (kind == K_SRQ) {
		if (wc->status == IBV_WC_SUCCESS) {
			t_a_reply(wc);
			p = t_pair_of(0, wc->qp_num);
		} else {
			p = t_pair_of(0, wc->qp_num);
			if (p)
				t_kill_pair(p, "SRQ receive",
					    ibv_wc_status_str(wc->status));
		}
		if (p)
			t_round_check(p);
		return;
	}
	if (WR_IDX(wc->wr_id) >= opt.n) {
		fail("completion with unknown wr_id %#llx",
		     (unsigned long long)wc->wr_id);
		return;
	}
	p = &t.p[WR_IDX(wc->wr_id)];
	if (wc->status != IBV_WC_SUCCESS) {
		t_kill_pair(p, dev ? "B completion" : "A completion",
			    ibv_wc_status_str(wc->status));
		return;
	}
	if (p->dead)
		return;
	switch (kind) {
	case K_WRITE:
	case K_SEND:
	case K_READ:
	case K_ATOMIC:
		p->a_out--;
		p->a_seen |= 1U << kind;
		break;
	case K_BRECV:
		t_b_recv(p, wc);
		break;
	case K_REPLY:
		p->b_out = false;
		break;
	default:
		fail("completion of unknown kind %u", kind);
		return;
	}
	t_round_check(p);
}

static int t_poll_cq(int dev, struct ibv_cq *cq)
{
	struct ibv_wc wc[32];
	int n, i;

	if (!cq)
		return 0;
	n = ibv_poll_cq(cq, ARRAY_SIZE(wc), wc);
	if (n < 0) {
		t_lost("ibv_poll_cq on %s: %d", dv[dev].name, n);
		return 0;
	}
	for (i = 0; i < n; i++)
		t_wc(dev, &wc[i]);
	return n;
}

static int t_poll_all(void)
{
	int n = 0, i;

	for (i = 0; i < T_NCQ; i++) {
		n += t_poll_cq(0, t.acq[i]);
		n += t_poll_cq(1, t.bcq[i]);
	}
	n += t_poll_cq(0, t.arcq);
	n += t_poll_cq(1, t.brcq);
	n += t_poll_cq(0, t.ud_cq[0]);
	n += t_poll_cq(1, t.ud_cq[1]);
	return n;
}

static int t_setup_cqs(void)
{
	int cqe = 8 * (int)opt.n + 64, i, d;

	for (i = 0; i < T_NCQ; i++) {
		t.acq[i] = ibv_create_cq(dv[0].ctx, cqe, NULL, NULL, 0);
		t.bcq[i] = ibv_create_cq(dv[1].ctx, cqe, NULL, NULL, 0);
		if (!t.acq[i] || !t.bcq[i])
			goto err;
	}
	t.arcq = ibv_create_cq(dv[0].ctx, cqe, NULL, NULL, 0);
	t.brcq = ibv_create_cq(dv[1].ctx, cqe, NULL, NULL, 0);
	if (!t.arcq || !t.brcq)
		goto err;
	for (d = 0; d < 2; d++) {
		for (i = 0; i < T_IDLE_CQS; i++) {
			t.idle[d][i] = ibv_create_cq(dv[d].ctx, 16 << i, NULL,
						     NULL, 0);
			if (!t.idle[d][i])
				goto err;
		}
	}
	return 0;
err:
	fail("ibv_create_cq: %s", strerror(errno));
	return -1;
}

static int t_setup_srq(void)
{
	struct ibv_srq_init_attr sa = {};
	unsigned int k;

	t.srq_n = 2 * opt.n + 16;
	sa.attr.max_wr = t.srq_n;
	sa.attr.max_sge = 1;
	t.srq = ibv_create_srq(dv[0].pd, &sa);
	t.srq_buf = zalloc((size_t)t.srq_n * T_MSG);
	if (!t.srq || !t.srq_buf) {
		fail("ibv_create_srq(%u): %s", t.srq_n, strerror(errno));
		return -1;
	}
	t.srq_mr = ibv_reg_mr(dv[0].pd, t.srq_buf, (size_t)t.srq_n * T_MSG,
			      IBV_ACCESS_LOCAL_WRITE);
	if (!t.srq_mr) {
		fail("ibv_reg_mr(SRQ buffers): %s", strerror(errno));
		return -1;
	}
	for (k = 0; k < t.srq_n; k++) {
		if (post_recv(NULL, t.srq, WRID(K_SRQ, k),
			      t.srq_buf + (size_t)k * T_MSG, T_MSG,
			      t.srq_mr->lkey)) {
			fail("ibv_post_srq_recv: %s", strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* MRS idle MRs alternating between the devices, assorted sizes. */
static int t_setup_idle_mrs(void)
{
	static const size_t sz[] = { PAGE, 3 * PAGE + 100, 65536, MIB };
	unsigned int k;

	if (!opt.mrs)
		return 0;
	t.idle_mr = calloc(opt.mrs, sizeof(*t.idle_mr));
	t.idle_buf = zalloc(2 * MIB);
	if (!t.idle_mr || !t.idle_buf) {
		fail("out of memory");
		return -1;
	}
	for (k = 0; k < opt.mrs; k++) {
		size_t len = sz[k % ARRAY_SIZE(sz)];
		size_t off = (k * 4096 + (k & 1) * 100) % MIB;

		t.idle_mr[k] = ibv_reg_mr(dv[k & 1].pd, t.idle_buf + off, len,
					  IBV_ACCESS_LOCAL_WRITE |
					  (k % 3 ? ACC_REMOTE : 0));
		if (!t.idle_mr[k]) {
			fail("ibv_reg_mr(idle %u, %zu bytes): %s", k, len,
			     strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int t_bind_mw2(struct tpair *p, uint32_t i)
{
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_wc wc;
	int ret;

	p->mw = ibv_alloc_mw(dv[1].pd, IBV_MW_TYPE_2);
	if (!p->mw) {
		fail("ibv_alloc_mw(type 2): %s", strerror(errno));
		return -1;
	}
	p->mw_rkey = ibv_inc_rkey(p->mw->rkey);
	wr.wr_id = WRID(K_BIND, i);
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = p->mw;
	wr.bind_mw.rkey = p->mw_rkey;
	wr.bind_mw.bind_info.mr = p->mrb;
	wr.bind_mw.bind_info.addr = (uintptr_t)(p->b + B_DST);
	wr.bind_mw.bind_info.length = T_MAX;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	ret = ibv_post_send(p->qb, &wr, &bad);
	if (ret) {
		fail("IBV_WR_BIND_MW: %s", strerror(ret));
		return -1;
	}
	return wait_one(t.bcq[i % T_NCQ], &wc, "BIND_MW type 2") ? 0 : -1;
}

static int t_setup_pair(uint32_t i)
{
	struct tpair *p = &t.p[i];

	p->a = zalloc(T_AREA);
	p->b = zalloc(T_AREA);
	if (!p->a || !p->b) {
		fail("out of memory");
		return -1;
	}
	pattern(p->b + B_RSRC, T_MAX + 64, i + 1);
	p->mra = ibv_reg_mr(dv[0].pd, p->a, T_AREA, IBV_ACCESS_LOCAL_WRITE);
	p->mrb = ibv_reg_mr(dv[1].pd, p->b, T_AREA, IBV_ACCESS_LOCAL_WRITE |
			    ACC_REMOTE | IBV_ACCESS_MW_BIND);
	if (!p->mra || !p->mrb) {
		fail("ibv_reg_mr(pair %u): %s", i, strerror(errno));
		return -1;
	}
	p->qa = qp_new(0, IBV_QPT_RC, t.acq[i % T_NCQ], t.arcq, t.srq, 8, 0);
	p->qb = qp_new(1, IBV_QPT_RC, t.bcq[i % T_NCQ], t.brcq, NULL, 8, 4);
	if (!p->qa || !p->qb)
		return -1;
	if (p->qa->qp_num >= MAX_QPN || p->qb->qp_num >= MAX_QPN) {
		fail("QPN beyond %u", MAX_QPN);
		return -1;
	}
	t.map[0][p->qa->qp_num] = i + 1;
	t.map[1][p->qb->qp_num] = i + 1;
	if (rc_connect_to(p->qa, 0, p->qb) || rc_connect_to(p->qb, 1, p->qa))
		return -1;
	if (post_recv(p->qb, NULL, WRID(K_BRECV, i), p->b + B_RECV, T_MSG,
		      p->mrb->lkey)) {
		fail("ibv_post_recv: %s", strerror(errno));
		return -1;
	}
	return t_bind_mw2(p, i);
}

static int t_setup_ud(void)
{
	struct ibv_ah_attr ah = {};
	unsigned int k, d;
	size_t len[2] = { T_UD_OUT * T_UD_LEN, T_UD_RECVS * (40 + T_UD_LEN) };

	for (d = 0; d < 2; d++) {
		t.ud_cq[d] = ibv_create_cq(dv[d].ctx, 64, NULL, NULL, 0);
		if (!t.ud_cq[d]) {
			fail("ibv_create_cq: %s", strerror(errno));
			return -1;
		}
		t.ud[d] = qp_new(d, IBV_QPT_UD, t.ud_cq[d], t.ud_cq[d], NULL,
				 T_UD_OUT, T_UD_RECVS);
		t.ud_buf[d] = zalloc(len[d]);
		if (!t.ud[d] || !t.ud_buf[d] || ud_connect(t.ud[d], d))
			return -1;
		t.ud_mr[d] = ibv_reg_mr(dv[d].pd, t.ud_buf[d], len[d],
					IBV_ACCESS_LOCAL_WRITE);
		if (!t.ud_mr[d]) {
			fail("ibv_reg_mr(UD): %s", strerror(errno));
			return -1;
		}
	}
	for (k = 0; k < T_UD_RECVS; k++) {
		if (post_recv(t.ud[1], NULL, WRID(K_UD_RECV, k),
			      t.ud_buf[1] + (size_t)k * (40 + T_UD_LEN),
			      40 + T_UD_LEN, t.ud_mr[1]->lkey)) {
			fail("UD ibv_post_recv: %s", strerror(errno));
			return -1;
		}
	}
	ah.is_global = 1;
	ah.grh.dgid = dv[1].gid;
	ah.grh.sgid_index = (uint8_t)dv[0].gidx;
	ah.grh.hop_limit = 64;
	ah.port_num = 1;
	t.ah = ibv_create_ah(dv[0].pd, &ah);
	if (!t.ah) {
		fail("ibv_create_ah: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* A type 1 window on B, bound over pair 0's destination. */
static int t_setup_mw1(void)
{
	struct ibv_mw_bind bind = {};
	struct ibv_wc wc;

	t.mw1 = ibv_alloc_mw(dv[1].pd, IBV_MW_TYPE_1);
	if (!t.mw1) {
		fail("ibv_alloc_mw(type 1): %s", strerror(errno));
		return -1;
	}
	bind.wr_id = WRID(K_BIND, 0);
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = t.p[0].mrb;
	bind.bind_info.addr = (uintptr_t)t.p[0].b;
	bind.bind_info.length = PAGE;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	if (ibv_bind_mw(t.p[0].qb, t.mw1, &bind)) {
		fail("ibv_bind_mw(type 1): %s", strerror(errno));
		return -1;
	}
	return wait_one(t.bcq[0], &wc, "bind type 1") ? 0 : -1;
}

static int t_setup(void)
{
	uint32_t i;

	t.p = calloc(opt.n, sizeof(*t.p));
	t.map[0] = calloc(MAX_QPN, sizeof(uint32_t));
	t.map[1] = calloc(MAX_QPN, sizeof(uint32_t));
	if (!t.p || !t.map[0] || !t.map[1]) {
		fail("out of memory");
		return -1;
	}
	if (t_setup_cqs() || t_setup_srq() || t_setup_idle_mrs())
		return -1;
	for (i = 0; i < opt.n; i++)
		if (t_setup_pair(i))
			return -1;
	if (t_setup_mw1() || t_setup_ud())
		return -1;
	return 0;
}

static void t_teardown(void)
{
	unsigned int i, d;

	if (t.mw1)
		destroy_check(ibv_dealloc_mw(t.mw1), 1, "ibv_dealloc_mw");
	for (i = 0; t.p && i < opt.n; i++) {
		struct tpair *p = &t.p[i];

		if (p->mw)
			destroy_check(ibv_dealloc_mw(p->mw), 1,
				      "ibv_dealloc_mw");
		if (p->qa)
			destroy_check(ibv_destroy_qp(p->qa), 0,
				      "ibv_destroy_qp");
		if (p->qb)
			destroy_check(ibv_destroy_qp(p->qb), 1,
				      "ibv_destroy_qp");
		if (p->mra)
			destroy_check(ibv_dereg_mr(p->mra), 0, "ibv_dereg_mr");
		if (p->mrb)
			destroy_check(ibv_dereg_mr(p->mrb), 1, "ibv_dereg_mr");
		free(p->a);
		free(p->b);
	}
	if (t.ah)
		destroy_check(ibv_destroy_ah(t.ah), 0, "ibv_destroy_ah");
	for (d = 0; d < 2; d++) {
		if (t.ud[d])
			destroy_check(ibv_destroy_qp(t.ud[d]), d,
				      "ibv_destroy_qp(UD)");
		if (t.ud_mr[d])
			destroy_check(ibv_dereg_mr(t.ud_mr[d]), d,
				      "ibv_dereg_mr");
		if (t.ud_cq[d])
			destroy_check(ibv_destroy_cq(t.ud_cq[d]), d,
				      "ibv_destroy_cq");
		free(t.ud_buf[d]);
		for (i = 0; i < T_IDLE_CQS; i++)
			if (t.idle[d][i])
				destroy_check(ibv_destroy_cq(t.idle[d][i]), d,
					      "ibv_destroy_cq");
	}
	for (i = 0; t.idle_mr && i < opt.mrs; i++)
		if (t.idle_mr[i])
			destroy_check(ibv_dereg_mr(t.idle_mr[i]), i & 1,
				      "ibv_dereg_mr");
	if (t.srq)
		destroy_check(ibv_destroy_srq(t.srq), 0, "ibv_destroy_srq");
	if (t.srq_mr)
		destroy_check(ibv_dereg_mr(t.srq_mr), 0, "ibv_dereg_mr");
	for (i = 0; i < T_NCQ; i++) {
		if (t.acq[i])
			destroy_check(ibv_destroy_cq(t.acq[i]), 0,
				      "ibv_destroy_cq");
		if (t.bcq[i])
			destroy_check(ibv_destroy_cq(t.bcq[i]), 1,
				      "ibv_destroy_cq");
	}
	if (t.arcq)
		destroy_check(ibv_destroy_cq(t.arcq), 0, "ibv_destroy_cq");
	if (t.brcq)
		destroy_check(ibv_destroy_cq(t.brcq), 1, "ibv_destroy_cq");
	free(t.idle_buf);
	free(t.idle_mr);
	free(t.srq_buf);
	free(t.map[0]);
	free(t.map[1]);
	free(t.p);
}

static bool t_all_idle(void)
{
	unsigned int i;

	for (i = 0; i < opt.n; i++)
		if (t.p[i].busy && !t.p[i].dead)
			return false;
	return true;
}

/* Show where the pairs that did not finish their round are stuck. */
static void t_dump_stuck(void)
{
	unsigned int i, shown = 0;

	for (i = 0; i < opt.n && shown < 8; i++) {
		struct tpair *p = &t.p[i];

		if (!p->busy || p->dead)
			continue;
		diag("pair %u (QPs %u/%u) round %u len %u: A sends due %d (missing:%s%s%s%s), reply %s, B %s, B reply %s",
		     i, p->qa->qp_num, p->qb->qp_num, p->round, p->len,
		     p->a_out,
		     p->a_seen & (1U << K_WRITE) ? "" : " WRITE",
		     p->a_seen & (1U << K_SEND) ? "" : " SEND",
		     p->a_seen & (1U << K_READ) ? "" : " READ",
		     p->a_seen & (1U << K_ATOMIC) ? "" : " ATOMIC",
		     p->a_got ? "in" : "missing",
		     p->b_got ? "received" : "nothing received",
		     p->b_out ? "due" : "done");
		shown++;
	}
}

/*
 * Run rounds until the deadline, a fatal event, or every pair failed.
 * Returns the exit status.
 */
static int t_run(void)
{
	double start = now_ms(), end;
	bool ready = false, stopping = false;
	unsigned int i;

	end = opt.secs < 0 ? -1 : start + opt.secs * 1e3;
	t.progress = start;
	for (i = 0; i < opt.n; i++)
		if (t_start_round(&t.p[i]))
			break;
	for (;;) {
		int n;

		events_poll();
		if (any_fatal())
			return EXIT_FATAL;
		n = t_poll_all();
		if (!stopping)
			t_ud_send();
		if (!ready) {
			for (i = 0; i < opt.n && t.p[i].done; i++)
				;
			if (i == opt.n) {
				ready = true;
				diag("ready: %u pairs completed a round in %.0f ms",
				     opt.n, now_ms() - start);
			}
		}
		if (end >= 0 && now_ms() > end)
			stopping = true;
		for (i = 0; !stopping && i < opt.n; i++)
			if (!t.p[i].busy && !t.p[i].dead)
				t_start_round(&t.p[i]);
		if (t.first_err && !any_event() &&
		    now_ms() - t.first_err > GRACE_MS) {
			fail("errors (%u of %u pairs failed, the first %.0f ms into the run) and no async event within %d s",
			     t.dead, opt.n, t.first_err - start, GRACE_MS / 1000);
			return EXIT_FAIL;
		}
		if (t.dead == opt.n && any_event())
			return EXIT_PORT;
		if (failed)
			return EXIT_FAIL;
		if (stopping && t_all_idle())
			break;
		if (now_ms() - t.progress > STALL_MS) {
			fail("no round ended for %d s (%u of %u pairs failed)%s",
			     STALL_MS / 1000, t.dead, opt.n,
			     any_event() ? " after a port error" : "");
			t_dump_stuck();
			return EXIT_FAIL;
		}
		if (!n)
			nap();
	}
	if (t.first_err) {
		fail("%u error(s), %u pair(s) failed, and the run ended",
		     t.nerr, t.dead);
		return EXIT_FAIL;
	}
	if (!t.ud_recv)
		fail("no UD datagram arrived (%u sent)", t.ud_sent);
	diag("%u pairs: %llu bytes verified in %.1f s; UD %u of %u received",
	     opt.n, t.bytes, (now_ms() - start) / 1e3, t.ud_recv, t.ud_sent);
	return failed ? EXIT_FAIL : EXIT_PASS;
}

int mode_traffic(void)
{
	double t0 = now_ms();
	int rc;

	if (!opt.n)
		opt.n = 16;
	if (t_setup()) {
		events_poll();
		rc = any_fatal() ? EXIT_FATAL : EXIT_FAIL;
	} else {
		diag("set up %u RC pairs, SRQ, %u MRs, UD + AH, MWs in %.0f ms",
		     opt.n, opt.mrs, now_ms() - t0);
		rc = t_run();
	}
	t_teardown();
	return rc;
}
