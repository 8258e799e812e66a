// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_stream_test's building blocks (shca_stream.h): TAP results, the
 * data pattern, devices, QPs, posting and completion checks.
 */

#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "shca_stream.h"

struct stream_globals g;
unsigned int tap_n, tap_failed;
double pat_ms;

/* Record one TAP result: failed when failf() was called since the last. */
bool tap_result(const char *fmt, ...)
{
	bool ok = !why[0];
	va_list ap;

	printf("%sok %u - ", ok ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	why_flush();
	if (!ok)
		tap_failed++;
	fflush(stdout);
	return ok;
}

/*
 * Called once per polling round that found nothing: after a few such
 * rounds, sleep a little, so a waiting process leaves the CPUs to the
 * kernel's transmit and receive work (a TCG guest has two).
 */
void idle(unsigned int *rounds)
{
	struct timespec ts = { 0, 20000 };

	if (++*rounds > 16)
		nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------ */
/* the data pattern                                                     */

uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* The 8 bytes at offset 8 * W of message M. */
static uint64_t pat_word(uint64_t mkey, uint64_t w)
{
	return mix64(mkey ^ (w * 0xd6e8feb86659fd93ULL));
}

static uint64_t msg_key(uint64_t m)
{
	return mix64(opt.seed ^ (m << 20) ^ 0x51ed);
}

/* Fill P with the LEN bytes of message M, then GUARD poison bytes. */
void pat_fill(uint8_t *p, uint64_t m, size_t len)
{
	uint64_t key = msg_key(m), w;
	size_t i, words = len / 8;
	double t0 = now_ms();

	for (i = 0; i < words; i++) {
		w = pat_word(key, i);
		memcpy(p + 8 * i, &w, 8);
	}
	if (len % 8) {
		w = pat_word(key, words);
		memcpy(p + 8 * words, &w, len % 8);
	}
	memset(p + len, POISON, GUARD);
	pat_ms += now_ms() - t0;
}

/*
 * Check that P holds the LEN bytes of message M followed by GUARD poison
 * bytes; describe the damage with failf() when not.
 */
bool pat_check(const uint8_t *p, uint64_t m, size_t len,
	       const char *what)
{
	uint64_t key = msg_key(m), w;
	size_t i, bad = 0, first = 0, last = 0;
	uint8_t exp_first = 0, got_first = 0;
	double t0 = now_ms();

	for (i = 0; i < len + GUARD; i++) {
		uint8_t e;

		if (i < len) {
			if (i % 8 == 0) {
				w = pat_word(key, i / 8);
				if (i + 8 <= len && !memcmp(p + i, &w, 8)) {
					i += 7;
					continue;
				}
			}
			e = (uint8_t)(pat_word(key, i / 8) >> (8 * (i % 8)));
		} else {
			e = POISON;
		}
		if (p[i] == e)
			continue;
		if (!bad++) {
			first = i;
			exp_first = e;
			got_first = p[i];
		}
		last = i;
	}
	pat_ms += now_ms() - t0;
	if (!bad)
		return true;
	failf("%s: message %llu (%zu bytes): %zu byte(s) wrong at offsets %zu..%zu%s; first: expected 0x%02x got 0x%02x",
	      what, (unsigned long long)m, len, bad, first, last,
	      last >= len ? " (past its end: guard)" : "", exp_first,
	      got_first);
	return false;
}

/* ------------------------------------------------------------------ */
/* devices, QPs                                                         */

int ep_create(struct ep *e, int dev, unsigned int swr,
	      unsigned int rwr)
{
	struct qp_spec spec = {
		.scq_depth = (int)swr + 8,
		.rcq_depth = (int)rwr + 8,
		.sig_all = 1,
		.cap = {
			.max_send_wr = swr, .max_recv_wr = rwr,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
	};

	memset(e, 0, sizeof(*e));
	e->dev = dev;
	e->qp = qp_create(&g.dev[dev], &spec, &e->scq, &e->rcq);
	if (!e->qp)
		return -1;
	e->psn = (uint32_t)random() & 0xffffff;
	return 0;
}

void ep_destroy(struct ep *e)
{
	qp_cqs_destroy(e->qp, e->scq, e->rcq, g.dev[e->dev].name);
	memset(e, 0, sizeof(*e));
}

static enum ibv_mtu mtu_enum(unsigned int mtu)
{
	switch (mtu) {
	case 256:
		return IBV_MTU_256;
	case 512:
		return IBV_MTU_512;
	case 2048:
		return IBV_MTU_2048;
	case 4096:
		return IBV_MTU_4096;
	default:
		return IBV_MTU_1024;
	}
}

void conn_of(const struct ep *e, struct conn *c)
{
	memset(c, 0, sizeof(*c));
	c->qpn = e->qp->qp_num;
	c->psn = e->psn;
	c->gid = g.dev[e->dev].gid;
}

/* Take E's QP to RTS, connected to PEER. */
int ep_connect(struct ep *e, const struct conn *peer)
{
	struct rc_path path = {
		.access = QP_ACC_ALL,
		.mtu = mtu_enum(opt.mtu),
		.dest_qpn = peer->qpn,
		.rq_psn = peer->psn,
		.sq_psn = e->psn,
		.dgid = peer->gid,
		.sgid_index = g.dev[e->dev].gidx,
		.rd_atomic = 16,
		.min_rnr_timer = (uint8_t)opt.min_rnr_timer,
		.timeout = (uint8_t)opt.timeout,
		.retry_cnt = (uint8_t)opt.retry_cnt,
		.rnr_retry = (uint8_t)opt.rnr_retry,
	};
	enum ibv_qp_state at;
	int ret = rc_connect(e->qp, &path, &at);

	if (ret)
		failf("ibv_modify_qp to state %d on %s: %s", at,
		      g.dev[e->dev].name, strerror(ret));
	return ret ? -1 : 0;
}

struct ibv_mr *reg(int dev, void *p, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(g.dev[dev].pd, p, len, access);

	if (!mr)
		failf("ibv_reg_mr(%zu bytes) on %s: %s", len, g.dev[dev].name,
		      strerror(errno));
	return mr;
}

int post_send(struct ep *e, uint64_t wr_id, enum ibv_wr_opcode op,
	      void *addr, uint32_t len, uint32_t lkey, uint64_t raddr,
	      uint32_t rkey, uint32_t imm)
{
	struct ibv_sge sg = {
		.addr = (uintptr_t)addr, .length = len, .lkey = lkey,
	};
	struct send_args a = {
		.wr_id = wr_id, .op = op, .sg = &sg, .nsge = 1,
		.flags = IBV_SEND_SIGNALED, .raddr = raddr, .rkey = rkey,
		.imm = imm,
	};
	int ret = post_send1(e->qp, &a);

	if (ret)
		failf("ibv_post_send(wr_id %llu) on %s: %s",
		      (unsigned long long)wr_id, g.dev[e->dev].name,
		      strerror(ret));
	return ret;
}

int post_atomic(struct ep *e, uint64_t wr_id, enum ibv_wr_opcode op,
		void *res, uint32_t lkey, uint64_t raddr,
		uint32_t rkey, uint64_t cmp_add, uint64_t swap)
{
	struct ibv_sge sg = {
		.addr = (uintptr_t)res, .length = 8, .lkey = lkey,
	};
	struct send_args a = {
		.wr_id = wr_id, .op = op, .sg = &sg, .nsge = 1,
		.flags = IBV_SEND_SIGNALED, .raddr = raddr, .rkey = rkey,
		.cmp_add = cmp_add, .swap = swap,
	};
	int ret = post_send1(e->qp, &a);

	if (ret)
		failf("ibv_post_send(atomic %llu): %s",
		      (unsigned long long)wr_id, strerror(ret));
	return ret;
}

int post_recv(struct ep *e, uint64_t wr_id, void *addr, uint32_t len,
	      uint32_t lkey)
{
	struct ibv_sge sg = {
		.addr = (uintptr_t)addr, .length = len, .lkey = lkey,
	};
	int ret = post_recv1(e->qp, NULL, wr_id, &sg, 1);

	if (ret)
		failf("ibv_post_recv(wr_id %llu) on %s: %s",
		      (unsigned long long)wr_id, g.dev[e->dev].name,
		      strerror(ret));
	return ret;
}

int cq_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	int r = ibv_poll_cq(cq, n, wc);

	if (r < 0)
		failf("ibv_poll_cq: %d", r);
	return r;
}

/* Wait up to MS for one completion on CQ: 1, 0 (none) or -1. */
int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, double ms)
{
	double end = now_ms() + ms;
	unsigned int rounds = 0;
	int r;

	do {
		r = cq_poll(cq, wc, 1);
		if (r)
			return r;
		idle(&rounds);
	} while (now_ms() < end);
	return 0;
}

/* Nothing more may complete on CQ within QUIET_MS. */
void expect_quiet(struct ibv_cq *cq, const char *what)
{
	struct ibv_wc wc;

	if (poll_one(cq, &wc, QUIET_MS) > 0)
		failf("%s: stray completion wr_id %llu status %s opcode %d",
		      what, (unsigned long long)wc.wr_id, st_str(wc.status),
		      wc.opcode);
}

/*
 * The common part of a completion check: wr_id, status, QP number.
 * WHAT names the queue.
 */
bool wc_ok(const struct ibv_wc *wc, const char *what, uint64_t wr_id,
	   enum ibv_wc_status st, const struct ibv_qp *qp)
{
	if (wc->wr_id != wr_id) {
		failf("%s: completion wr_id %llu (status %s), expected %llu: out of order, duplicated or lost",
		      what, (unsigned long long)wc->wr_id, st_str(wc->status),
		      (unsigned long long)wr_id);
		return false;
	}
	if (wc->status != st) {
		failf("%s: wr_id %llu completed with %s (vendor_err 0x%x), expected %s",
		      what, (unsigned long long)wr_id, st_str(wc->status),
		      wc->vendor_err, st_str(st));
		return false;
	}
	if (wc->qp_num != qp->qp_num) {
		failf("%s: wr_id %llu: qp_num %u, expected %u", what,
		      (unsigned long long)wr_id, wc->qp_num, qp->qp_num);
		return false;
	}
	return true;
}
