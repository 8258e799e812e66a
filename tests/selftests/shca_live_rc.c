// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_live_test's RC pairs.  Requester A posts a stream of SEND, RDMA
 * WRITE followed by an RDMA READ of the same bytes, FETCH_ADD and
 * COMPARE_SWAP to responder B, up to DEPTH WRs outstanding, and checks
 * every completion: in order, and its data (the READ of what the WRITE
 * put there, the value an atomic found, what B's receive got).
 *
 * A bystander pair must never fail and every check must pass: nobody
 * outside knows its QPNs, PSNs or keys, so every packet the fuzzer sends
 * it is out of sequence or out of reach, and the IBA has the device
 * discard it (or answer it without effect).
 *
 * A victim pair is the fuzzer's target.  A packet with its exact PSN can
 * legitimately place data (SEND, WRITE with the published key), swallow
 * a request (whose retransmission then counts as a duplicate), or
 * complete a READ or atomic with forged data; and it can end the
 * connection (a NAK, an error).  So a victim's data checks classify
 * rather than fail: which of those (foreign bytes, poison left, a
 * message missing, ...).  What must hold regardless: completions come in
 * order, an error completion is followed by the flush of every other WR
 * and the QP in the error state, nothing hangs, and no fuzzer byte ever
 * lands in "sec", memory whose key the fuzzer does not know.  A victim
 * that ended is replaced by a new pair (a new "generation").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "shca_live.h"

enum kind { K_SEND, K_WRITE, K_READ, K_FADD, K_CAS };
static const char *const kind_name[] = {
	"SEND", "WRITE", "READ", "FETCH_ADD", "CMP_SWAP"
};

/* one outstanding send WR of A */
struct wrec {
	uint64_t n;		/* WR number: wr_id, slot n % NSLOT */
	enum kind kind;
	uint64_t m;		/* message (SEND, the READ of a pair) */
	uint32_t len;
	uint64_t cmp, add;	/* atomics: expected old value, operand */
	bool sec;		/* pair / atomic in sec */
};

#define RING	(2 * DEPTH)
/*
 * An operation every 1.5 ms at most: unpaced, the two RC pairs take the
 * CPU the fuzzer needs (and need not be fast to be live).
 */
#define OP_GAP_MS	1.5
#define PAIR_M	(1ULL << 27)	/* WRITE/READ messages: from here */
#define PUB_LEN	(NSLOT * SLOT + 64)
#define SEC_LEN	(NSLOT * SLOT + 64)
#define WORD	(NSLOT * SLOT)	/* the atomic word's offset in pub, sec */

struct rc_link {
	const char *name;
	bool victim;
	struct ibv_pd *pd;
	/* A: NSLOT send sources, NSLOT READ destinations, atomic results */
	uint8_t *abuf, *pub, *sec, *rbuf;
	struct ibv_mr *amr, *pubmr, *secmr, *rmr;
	struct ibv_cq *acq, *bcq;
	struct ibv_qp *qa, *qb;
	uint32_t x;		/* random state */
	uint32_t psn0, next_psn, psn_mask_una;
	struct wrec q[RING];
	unsigned int qh, qt;	/* ring: oldest, next free */
	uint32_t q_psn[RING];	/* first PSN of each */
	uint64_t n;		/* WRs posted (this generation) */
	uint64_t send_m, recv_m, pair_m;
	uint64_t fadd_sum, cas_val;
	bool cas_out;
	int rq_posted;
	/* generation state */
	unsigned int gen;
	bool failing;		/* an error completion came: flushing */
	double fail_at, last_prog;
	int fail_status;
	bool b_failed, tainted, finished, recycling;
	uint64_t acked;		/* A's successful completions this gen */
	/* totals */
	uint64_t ok_ops, verified, recv_ok, dist[C_NCLS], recv_dist[C_NCLS];
	uint64_t gen_ok, gen_err, n_status[32], flush_first;
	double next_post;	/* paced: an operation per OP_GAP_MS */
	double max_gap_ms;
	unsigned int bad;
	char first_bad[512];
};

static void bad(struct rc_link *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void bad(struct rc_link *l, const char *fmt, ...)
{
	char line[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!l->bad++)
		snprintf(l->first_bad, sizeof(l->first_bad), "gen %u: %s",
			 l->gen, line);
	if (l->bad <= 10)
		diag("%s gen %u: %s", l->name, l->gen, line);
}

static uint32_t send_len(uint64_t m)
{
	uint32_t x = (uint32_t)(m * 2654435761U) | 1;

	return pick_len(&x, 1, 3 * LIVE_MTU);
}

static uint8_t *a_src(struct rc_link *l, uint64_t n)
{
	return l->abuf + (n % NSLOT) * SLOT;
}

static uint8_t *a_dst(struct rc_link *l, uint64_t n)
{
	return l->abuf + (NSLOT + n % NSLOT) * SLOT;
}

static uint64_t *a_res(struct rc_link *l, uint64_t n)
{
	return (uint64_t *)(l->abuf + 2 * NSLOT * SLOT) + n % NSLOT;
}

static struct ibv_mr *reg_mr(struct rc_link *l, void *p, size_t len,
			     int access)
{
	struct ibv_mr *mr = ibv_reg_mr(l->pd, p, len, access);

	if (!mr)
		bad(l, "ibv_reg_mr: %s", strerror(errno));
	return mr;
}

static int post_recv_b(struct rc_link *l, unsigned int i)
{
	struct ibv_sge sg = {
		.addr = (uintptr_t)(l->rbuf + i * SLOT), .length = SLOT,
		.lkey = l->rmr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sg, .num_sge = 1 };
	struct ibv_recv_wr *badwr;

	memset(l->rbuf + i * SLOT, POISON, SLOT);
	return ibv_post_recv(l->qb, &wr, &badwr);
}

/* A new pair of QPs (a new generation), connected, receives posted. */
static int rc_connect_new(struct rc_link *l)
{
	struct qp_spec spec = qp_spec_simple(4 * RING, RING);
	struct rc_path p[2];
	struct ibv_qp *qp[2];
	enum ibv_qp_state at;
	int side, i;

	spec.cap.max_recv_wr = RQ_DEPTH;
	l->acq = ibv_create_cq(dev.ctx, 4 * RING, NULL, NULL, 0);
	l->bcq = ibv_create_cq(dev.ctx, 4 * RING, NULL, NULL, 0);
	if (!l->acq || !l->bcq) {
		bad(l, "ibv_create_cq: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < 2; i++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = i ? l->bcq : l->acq,
			.recv_cq = i ? l->bcq : l->acq,
			.qp_type = IBV_QPT_RC, .cap = spec.cap,
			.sq_sig_all = 1,
		};

		qp[i] = ibv_create_qp(l->pd, &ia);
		if (!qp[i]) {
			bad(l, "ibv_create_qp: %s", strerror(errno));
			if (i)
				ibv_destroy_qp(qp[0]);
			return -1;
		}
	}
	l->qa = qp[0];
	l->qb = qp[1];
	memset(p, 0, sizeof(p));
	for (i = 0; i < 2; i++) {
		p[i].access = QP_ACC_ALL;
		p[i].mtu = IBV_MTU_1024;
		p[i].dest_qpn = qp[!i]->qp_num;
		p[i].dgid = dev.gid;
		p[i].sgid_index = dev.gidx;
		p[i].rd_atomic = 4;
		p[i].min_rnr_timer = 1;
		p[i].timeout = l->victim ? 14 : 15;
		p[i].retry_cnt = 7;
		p[i].rnr_retry = l->victim ? 6 : 7;
	}
	/* A sends from psn0, B expects it */
	p[0].sq_psn = l->psn0;
	p[1].rq_psn = l->psn0;
	p[0].rq_psn = (l->psn0 + 0x400000) & 0xffffff;
	p[1].sq_psn = p[0].rq_psn;
	if (rc_connect_pair(qp, p, &side, &at)) {
		bad(l, "connecting QP %d to state %d: %s", side, at,
		    strerror(errno));
		return -1;
	}
	for (i = 0; i < RQ_DEPTH; i++)
		if (post_recv_b(l, i)) {
			bad(l, "ibv_post_recv: %s", strerror(errno));
			return -1;
		}
	l->next_psn = l->psn0;
	l->qh = l->qt = 0;
	l->n = 0;
	l->failing = l->b_failed = l->tainted = false;
	l->acked = 0;
	l->recycling = false;
	l->cas_out = false;
	l->cas_val = *(volatile uint64_t *)(l->pub + WORD);
	l->fadd_sum = *(volatile uint64_t *)(l->sec + WORD);
	l->recv_m = l->send_m;
	l->last_prog = now_ms();
	return 0;
}

static void rc_teardown(struct rc_link *l)
{
	if (l->qa)
		ibv_destroy_qp(l->qa);
	if (l->qb)
		ibv_destroy_qp(l->qb);
	if (l->acq)
		ibv_destroy_cq(l->acq);
	if (l->bcq)
		ibv_destroy_cq(l->bcq);
	l->qa = l->qb = NULL;
	l->acq = l->bcq = NULL;
}

struct rc_link *rc_new(const char *name, bool victim, uint32_t psn0,
		       uint32_t seed)
{
	struct rc_link *l = calloc(1, sizeof(*l));
	int acc = IBV_ACCESS_LOCAL_WRITE | QP_ACC_ALL;

	if (!l)
		return NULL;
	l->name = name;
	l->victim = victim;
	l->psn0 = psn0 & 0xffffff;
	l->x = seed | 1;
	l->pd = ibv_alloc_pd(dev.ctx);
	l->abuf = zalloc(2 * NSLOT * SLOT + NSLOT * 8);
	l->pub = zalloc(PUB_LEN);
	l->sec = zalloc(SEC_LEN);
	l->rbuf = zalloc(RQ_DEPTH * SLOT);
	if (!l->pd || !l->abuf || !l->pub || !l->sec || !l->rbuf) {
		bad(l, "no PD or memory");
		return l;
	}
	memset(l->pub, POISON, WORD);
	memset(l->sec, POISON, WORD);
	l->amr = reg_mr(l, l->abuf, 2 * NSLOT * SLOT + NSLOT * 8,
			IBV_ACCESS_LOCAL_WRITE);
	l->pubmr = reg_mr(l, l->pub, PUB_LEN, acc);
	l->secmr = reg_mr(l, l->sec, SEC_LEN, acc);
	l->rmr = reg_mr(l, l->rbuf, RQ_DEPTH * SLOT, IBV_ACCESS_LOCAL_WRITE);
	if (l->amr && l->pubmr && l->secmr && l->rmr)
		rc_connect_new(l);
	return l;
}

static void q_push(struct rc_link *l, const struct wrec *w, uint32_t npsn)
{
	l->q_psn[l->qt % RING] = l->next_psn;
	l->q[l->qt++ % RING] = *w;
	l->next_psn = (l->next_psn + npsn) & 0xffffff;
	l->n++;
}

static uint32_t npsn_of(uint32_t len)
{
	return len ? (len + LIVE_MTU - 1) / LIVE_MTU : 1;
}

static int post(struct rc_link *l, const struct wrec *w, void *laddr,
		uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sg = {
		.addr = (uintptr_t)laddr, .length = len, .lkey = l->amr->lkey,
	};
	struct send_args a = {
		.wr_id = w->n, .sg = &sg, .nsge = 1,
		.flags = IBV_SEND_SIGNALED, .raddr = raddr, .rkey = rkey,
		.cmp_add = w->kind == K_FADD ? w->add : w->cmp,
		.swap = w->cmp + 1,
	};
	static const enum ibv_wr_opcode op[] = {
		IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_CMP_AND_SWP,
	};
	int ret;

	a.op = op[w->kind];
	ret = post_send1(l->qa, &a);
	if (ret) {
		bad(l, "post of %s: %s", kind_name[w->kind], strerror(ret));
		return -1;
	}
	q_push(l, w, w->kind >= K_FADD ? 1 : npsn_of(len));
	return 0;
}

/* Post one operation (two WRs for a WRITE and its READ) if it fits. */
static void post_one(struct rc_link *l)
{
	unsigned int out = l->qt - l->qh, r = rnd32(&l->x) % 100;
	struct wrec w = { .n = l->n };
	struct ibv_mr *mr;
	uint8_t *tgt;

	if (out + 2 > DEPTH)
		return;
	if (r < 30) {
		w.kind = K_SEND;
		w.m = l->send_m++;
		w.len = send_len(w.m);
		live_fill(a_src(l, w.n), w.m, w.len);
		post(l, &w, a_src(l, w.n), w.len, 0, 0);
	} else if (r < 70) {
		/* WRITE into slot n of pub or sec, then READ it back */
		w.sec = r >= 50;
		mr = w.sec ? l->secmr : l->pubmr;
		tgt = (w.sec ? l->sec : l->pub) + (w.n % NSLOT) * SLOT;
		w.m = PAIR_M + l->pair_m++;
		w.len = pick_len(&l->x, 0, SLOT);
		memset(tgt, POISON, SLOT);
		live_fill(a_src(l, w.n), w.m, w.len);
		w.kind = K_WRITE;
		if (post(l, &w, a_src(l, w.n), w.len, (uintptr_t)tgt,
			 mr->rkey))
			return;
		w.kind = K_READ;
		w.n = l->n;
		memset(a_dst(l, w.n), POISON, SLOT);
		post(l, &w, a_dst(l, w.n), w.len, (uintptr_t)tgt, mr->rkey);
	} else if (r < 85) {
		w.kind = K_FADD;
		w.sec = true;
		w.add = 1 + (rnd32(&l->x) & 0xff);
		*a_res(l, w.n) = 0x5a5a5a5a5a5a5a5aULL;
		post(l, &w, a_res(l, w.n), 8, (uintptr_t)(l->sec + WORD),
		     l->secmr->rkey);
	} else if (!l->cas_out) {
		w.kind = K_CAS;
		w.cmp = l->cas_val;
		*a_res(l, w.n) = 0x5a5a5a5a5a5a5a5aULL;
		if (!post(l, &w, a_res(l, w.n), 8, (uintptr_t)(l->pub + WORD),
			  l->pubmr->rkey))
			l->cas_out = true;
	}
}

/* A data check's outcome: a bystander fails on anything but C_OK. */
static void outcome(struct rc_link *l, enum cls c, const char *what,
		    uint64_t m)
{
	if (c == C_OK) {
		l->verified++;
		return;
	}
	l->dist[c]++;
	if (!l->victim) {
		bad(l, "%s of message %" PRIu64 ": %s", what, m, cls_name[c]);
		return;
	}
	if (!l->tainted)
		diag("%s gen %u: first disturbance: %s of message %" PRIu64
		     " %s", l->name, l->gen, what, m, cls_name[c]);
	l->tainted = true;
}

static void check_a(struct rc_link *l, const struct wrec *w,
		    const struct ibv_wc *wc)
{
	static const enum ibv_wc_opcode wop[] = {
		IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ,
		IBV_WC_FETCH_ADD, IBV_WC_COMP_SWAP,
	};
	uint64_t v;

	if (wc->opcode != wop[w->kind])
		bad(l, "WR %" PRIu64 " (%s) completed as opcode %d", w->n,
		    kind_name[w->kind], wc->opcode);
	l->ok_ops++;
	l->acked++;
	switch (w->kind) {
	case K_SEND:
	case K_WRITE:
		break;
	case K_READ:
		if (wc->byte_len != w->len)
			bad(l, "READ %" PRIu64 ": byte_len %u, want %u", w->n,
			    wc->byte_len, w->len);
		outcome(l, classify(a_dst(l, w->n), w->len, w->m, w->len,
				    NULL, NULL), "READ", w->m);
		break;
	case K_FADD:
		v = *a_res(l, w->n);
		outcome(l, v == l->fadd_sum ? C_OK : C_OTHER, "FETCH_ADD",
			w->n);
		l->fadd_sum = v + w->add;
		break;
	case K_CAS:
		v = *a_res(l, w->n);
		outcome(l, v == w->cmp ? C_OK : C_OTHER, "CMP_SWAP", w->n);
		l->cas_val = v == w->cmp ? w->cmp + 1 : v;
		l->cas_out = false;
		break;
	}
}

static void poll_a(struct rc_link *l, double now)
{
	struct ibv_wc wc[16];
	struct wrec *w;
	int n, i;

	n = ibv_poll_cq(l->acq, 16, wc);
	if (n < 0) {
		bad(l, "ibv_poll_cq: %d", n);
		return;
	}
	for (i = 0; i < n; i++) {
		if (l->qh == l->qt) {
			bad(l, "completion of wr_id %" PRIu64
			    " with nothing outstanding", wc[i].wr_id);
			continue;
		}
		w = &l->q[l->qh % RING];
		if (wc[i].wr_id != w->n)
			bad(l, "completion of wr_id %" PRIu64 ", want %" PRIu64
			    " (%s)", wc[i].wr_id, w->n, kind_name[w->kind]);
		l->qh++;
		if (now - l->last_prog > l->max_gap_ms)
			l->max_gap_ms = now - l->last_prog;
		l->last_prog = now;
		if (wc[i].status == IBV_WC_SUCCESS) {
			if (l->failing)
				bad(l, "%s WR %" PRIu64 " succeeded after an "
				    "error completion", kind_name[w->kind],
				    w->n);
			check_a(l, w, &wc[i]);
			continue;
		}
		if (w->kind == K_CAS)
			l->cas_out = false;
		if (l->failing) {
			if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
				continue;
			if (l->fail_status != IBV_WC_WR_FLUSH_ERR) {
				bad(l, "WR %" PRIu64 " failed with %s after "
				    "%s", w->n, st_str(wc[i].status),
				    st_str(l->fail_status));
				continue;
			}
			/*
			 * The WQE a NAK named fails behind an older READ
			 * or ATOMIC still waiting for its response, which
			 * the error state flushed: FLUSH_ERR means "was
			 * outstanding when the QP entered the error
			 * state", which it was.
			 */
			l->flush_first++;
			l->fail_status = wc[i].status;
			continue;
		}
		l->failing = true;
		l->fail_at = now;
		l->fail_status = wc[i].status;
		if (!l->victim)
			bad(l, "%s WR %" PRIu64 " failed: %s",
			    kind_name[w->kind], w->n, st_str(wc[i].status));
	}
}

static void poll_b(struct rc_link *l)
{
	struct ibv_wc wc[16];
	unsigned int skip = 0;
	enum cls c;
	int n, i;

	n = ibv_poll_cq(l->bcq, 16, wc);
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			if (wc[i].status != IBV_WC_WR_FLUSH_ERR) {
				if (!l->victim)
					bad(l, "B's receive failed: %s",
					    st_str(wc[i].status));
				else if (!l->b_failed)
					diag("%s gen %u: B's receive failed: "
					     "%s", l->name, l->gen,
					     st_str(wc[i].status));
			}
			l->b_failed = true;
			continue;
		}
		if (wc[i].opcode != IBV_WC_RECV ||
		    (wc[i].wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV)))
			c = C_FOREIGN;
		else
			c = classify(l->rbuf + wc[i].wr_id * SLOT,
				     wc[i].byte_len, l->recv_m,
				     send_len(l->recv_m), send_len, &skip);
		if (c == C_OK) {
			l->recv_ok++;
			l->recv_m++;
		} else {
			l->recv_dist[c]++;
			outcome(l, c, "receive", l->recv_m);
			if (c == C_SKIPPED)
				l->recv_m += skip + 1;
		}
		if (post_recv_b(l, wc[i].wr_id) && !l->b_failed && !l->failing)
			diag("%s gen %u: repost of a receive: %s", l->name,
			     l->gen, strerror(errno));
	}
}

/* Every byte of sec's slots is live data or poison. */
static void check_sec(struct rc_link *l)
{
	uint32_t i;

	for (i = 0; i < WORD; i++)
		if (l->sec[i] >= FOREIGN_MIN) {
			bad(l, "sec byte %u is 0x%02x: a fuzzer byte in "
			    "memory it has no key to", i, l->sec[i]);
			return;
		}
}

/* The generation ended (error completions flushed): a new one. */
static void rc_next_gen(struct rc_link *l, double now)
{
	int st = qp_state(l->qa);

	if (st != IBV_QPS_ERR)
		bad(l, "A's QP in state %d after its error completion", st);
	l->gen_err++;
	l->n_status[l->fail_status & 31]++;
	check_sec(l);
	if (l->gen < 20 || l->gen % 20 == 0)
		diag("%s gen %u: ended by %s after %" PRIu64 " WRs (%.0f ms "
		     "after the error)%s", l->name, l->gen,
		     st_str(l->fail_status), l->acked, now - l->fail_at,
		     l->tainted ? ", disturbed" : "");
	rc_teardown(l);
	l->gen++;
	l->psn0 = (l->psn0 + 0x10000 + (rnd32(&l->x) & 0xfff)) & 0xffffff;
	if (!l->victim || stopping || rc_connect_new(l))
		l->finished = true;
}

void rc_step(struct rc_link *l, double now)
{
	if (l->finished || !l->qa)
		return;
	poll_a(l, now);
	poll_b(l);
	if (l->failing) {
		if (l->qh == l->qt) {
			rc_next_gen(l, now);
		} else if (now - l->fail_at > FLUSH_MS) {
			bad(l, "%u WRs not flushed %d ms after the error",
			    l->qt - l->qh, FLUSH_MS);
			l->finished = true;
		}
		return;
	}
	if (l->qh != l->qt && now - l->last_prog > STALL_MS) {
		bad(l, "no completion for %d ms with %u WRs outstanding "
		    "(oldest %s WR %" PRIu64 ", PSN 0x%06x)", STALL_MS,
		    l->qt - l->qh, kind_name[l->q[l->qh % RING].kind],
		    l->q[l->qh % RING].n, l->q_psn[l->qh % RING]);
		l->finished = true;
		return;
	}
	if (l->recycling && l->qh == l->qt) {
		/* drained: a stream completed; a new generation */
		l->recycling = false;
		l->gen_ok++;
		check_sec(l);
		diag("%s gen %u: recycled after %" PRIu64 " WRs", l->name,
		     l->gen, l->acked);
		rc_teardown(l);
		l->gen++;
		if (rc_connect_new(l))
			l->finished = true;
		return;
	}
	if (stopping || l->recycling || now < l->next_post)
		return;
	post_one(l);
	l->next_post = now + OP_GAP_MS;
}

void rc_recycle(struct rc_link *l)
{
	l->recycling = true;
}

bool rc_drained(struct rc_link *l, double now)
{
	rc_step(l, now);
	if (l->finished || !l->qa)
		return true;
	if (l->qh != l->qt)
		return false;
	/* the last generation ended well: its stream is complete */
	l->gen_ok++;
	check_sec(l);
	l->finished = true;
	return true;
}

int rc_state(const struct rc_link *l, char *buf, size_t len)
{
	uint32_t una = l->qh == l->qt ? l->next_psn : l->q_psn[l->qh % RING];

	if (!l->qa || !l->pubmr)
		return snprintf(buf, len, "\"gen\": %u", l->gen);
	return snprintf(buf, len,
			"\"gen\": %u, \"req_qpn\": %u, \"resp_qpn\": %u, "
			"\"next_psn\": %u, \"una_psn\": %u, \"acked\": %"
			PRIu64 ", \"rkey\": %u, \"va\": %" PRIu64 ", "
			"\"len\": %u, \"word\": %u",
			l->gen, l->qa->qp_num, l->qb->qp_num, l->next_psn, una,
			l->acked, l->pubmr->rkey, (uint64_t)(uintptr_t)l->pub,
			(unsigned int)PUB_LEN, (unsigned int)WORD);
}

int rc_report(struct rc_link *l)
{
	char st[256] = "";
	size_t used = 0;
	int i, ok;

	if (!l->finished && l->qa) {
		bad(l, "%u WRs still outstanding %d ms after the stop",
		    l->qt - l->qh, DRAIN_MS);
	}
	for (i = 0; i < 32; i++)
		if (l->n_status[i] && used < sizeof(st) - 40)
			used += snprintf(st + used, sizeof(st) - used, " %s %"
					 PRIu64, st_str(i), l->n_status[i]);
	diag("%s: %u generation(s): %" PRIu64 " completed the stream, %"
	     PRIu64 " ended by an error completion (%s ); %" PRIu64
	     " WRs successful, %" PRIu64 " data checks passed, %" PRIu64
	     " receives checked; longest wait for a completion %.0f ms",
	     l->name, l->gen + 1, l->gen_ok, l->gen_err,
	     used ? st : " none", l->ok_ops, l->verified, l->recv_ok,
	     l->max_gap_ms);
	if (l->flush_first)
		diag("%s: %" PRIu64 " generation(s) flushed an older READ or "
		     "ATOMIC before the failing WQE's own error", l->name,
		     l->flush_first);
	diag("%s: disturbed checks: foreign %" PRIu64 ", stale %" PRIu64
	     ", short %" PRIu64 ", skipped %" PRIu64 ", other %" PRIu64
	     " (of which receives: %" PRIu64 " %" PRIu64 " %" PRIu64 " %"
	     PRIu64 " %" PRIu64 ")", l->name, l->dist[C_FOREIGN],
	     l->dist[C_STALE], l->dist[C_SHORT], l->dist[C_SKIPPED],
	     l->dist[C_OTHER], l->recv_dist[C_FOREIGN],
	     l->recv_dist[C_STALE], l->recv_dist[C_SHORT],
	     l->recv_dist[C_SKIPPED], l->recv_dist[C_OTHER]);
	if (l->ok_ops == 0)
		bad(l, "no WR completed successfully");
	if (l->victim) {
		ok = !l->bad;
		printf("RESULT %s %d %s: no hang, completions in order, every "
		       "error flushed and the QP in error; sec untouched%s%s\n",
		       l->name, !ok, l->name, ok ? "" : "; first failure: ",
		       ok ? "" : l->first_bad);
	} else {
		ok = !l->bad && l->gen_ok == 1;
		printf("RESULT %s %d %s: the stream completed, every "
		       "completion and byte checked%s%s\n", l->name, !ok,
		       l->name, ok ? "" : "; first failure: ",
		       ok ? "" : l->first_bad);
	}
	rc_teardown(l);
	mr_dereg(l->amr);
	mr_dereg(l->pubmr);
	mr_dereg(l->secmr);
	mr_dereg(l->rmr);
	if (l->pd)
		ibv_dealloc_pd(l->pd);
	free(l->abuf);
	free(l->pub);
	free(l->sec);
	free(l->rbuf);
	free(l);
	return ok ? 0 : 1;
}
