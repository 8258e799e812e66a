// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_stream_test: RC data integrity on a lossy, reordering, duplicating
 * or corrupting network, and what a requester does when the receiver is
 * slow (RNR) or gone.
 *
 *   shca_stream_test [options] DEV1 GIDX1 DEV2 GIDX2
 *
 * Side 0 of the QP pair (the requester) is on DEV1, side 1 (the
 * responder) on DEV2; a GID index of -1 means the first RoCE v2 GID
 * holding an IPv4 address.  One process drives both devices (except in
 * peer mode, where the responder runs in a child process so its device
 * can disappear).  Modes (-m):
 *
 *   stream  (default) move -b MiB with SEND, SEND_WITH_IMM, RDMA WRITE,
 *           RDMA WRITE_WITH_IMM and RDMA READ; message sizes from 0 bytes
 *           to -z bytes (many MTUs), up to -q WRs outstanding.  Every
 *           byte carries a pattern derived from (message number, offset)
 *           and is verified, with guard bytes behind every message; every
 *           completion (send and receive side) must arrive exactly once,
 *           in order, with the right wr_id, status, opcode, byte_len and
 *           immediate data.
 *   atomic  -n fetch-adds and compare-swaps (some of them failing their
 *           compare) on one remote 64-bit word: every returned original
 *           value must be the one in-order execution gives (so each
 *           fetch-add sees a distinct previous value) and the word must
 *           end at the exact sum.
 *   rnr     -n messages (SEND, SEND_WITH_IMM, WRITE_WITH_IMM, 1 byte to 3
 *           MTUs) to a receiver that has -P receives posted and posts one
 *           more every -I ms (0: never).  With rnr_retry (-R) 7 every
 *           message must arrive, verified; with a finite rnr_retry and no
 *           late receives, the first message without a receive must fail
 *           with RNR_RETRY_EXC_ERR and every later WR be flushed.
 *   peer    keep -q RDMA WRITEs and READs outstanding, then make the
 *           peer disappear: kill the responder's process (-k) and/or run
 *           the shell command -x (e.g. delete its device, take its link
 *           down).  The oldest outstanding WR must fail with
 *           RETRY_EXC_ERR within (retry_cnt + 1) x the ACK timeout (plus
 *           -S ms of slack), after at least retry_cnt + 1 timeouts, and
 *           every later WR (and every receive) be flushed, in order.
 *
 * Prints TAP 13 and the device counters that moved; exits 0 when every
 * check passed, 1 when one failed, 4 when the devices are missing.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>

#include "shca_test.h"

#define MIB		(1024 * 1024)
#define GUARD		64	/* poisoned bytes behind every message */
#define POISON		0xa5
#define STALL_MS	30000	/* no completion for this long: a hang */
#define QUIET_MS	100	/* after the end, nothing more may complete */
#define IMM_XOR		0x5ca1ab1eU
#define POLL_BATCH	32

#define MR_ACC_ALL	(IBV_ACCESS_LOCAL_WRITE | QP_ACC_ALL)

/* ------------------------------------------------------------------ */
/* options, reporting                                                   */

enum mode { M_STREAM, M_ATOMIC, M_RNR, M_PEER };

static struct {
	enum mode mode;
	unsigned long long bytes;	/* stream: total payload */
	unsigned int count;		/* atomic: ops; rnr: messages */
	unsigned int depth;		/* WRs outstanding */
	unsigned int max_msg;		/* stream: largest message */
	unsigned int mtu;
	unsigned int timeout, retry_cnt, rnr_retry, min_rnr_timer;
	unsigned int prepost, trickle_ms;	/* rnr */
	unsigned int ops;		/* stream: bit mask of enum sop allowed */
	bool no_zero_rdma;		/* stream: no 0-byte WRITE/READ */
	const char *cmd;		/* peer: makes the peer disappear */
	bool kill_peer;			/* peer: kill its process first */
	unsigned int slack_ms;		/* peer: accepted lateness */
	unsigned int deadline_s;
	uint64_t seed;
} opt = {
	.mode = M_STREAM,
	.bytes = 64ULL * MIB,
	.depth = 64,
	.max_msg = 256 * 1024,
	.mtu = 1024,
	.timeout = 14,
	.retry_cnt = 7,
	.rnr_retry = 7,
	.min_rnr_timer = 12,
	.prepost = 0,
	.trickle_ms = 10,
	.slack_ms = 750,
	.ops = 0x1f,
	.deadline_s = 600,
};

static struct {
	struct test_dev dev[2];
} g;

static unsigned int tap_n, tap_failed;
static double pat_ms;		/* time spent making and checking data */

/* Record one TAP result: failed when failf() was called since the last. */
static bool tap_result(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static bool tap_result(const char *fmt, ...)
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
static void idle(unsigned int *rounds)
{
	struct timespec ts = { 0, 20000 };

	if (++*rounds > 16)
		nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------ */
/* the data pattern                                                     */

static uint64_t mix64(uint64_t x)
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
static void pat_fill(uint8_t *p, uint64_t m, size_t len)
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
static bool pat_check(const uint8_t *p, uint64_t m, size_t len,
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

/* What one side tells the other to connect (peer mode: over a pipe). */
struct conn {
	uint32_t qpn, psn, rkey;
	uint64_t addr;
	union ibv_gid gid;
};

struct ep {
	int dev;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	uint32_t psn;
};

static int ep_create(struct ep *e, int dev, unsigned int swr,
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

static void ep_destroy(struct ep *e)
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

static void conn_of(const struct ep *e, struct conn *c)
{
	memset(c, 0, sizeof(*c));
	c->qpn = e->qp->qp_num;
	c->psn = e->psn;
	c->gid = g.dev[e->dev].gid;
}

/* Take E's QP to RTS, connected to PEER. */
static int ep_connect(struct ep *e, const struct conn *peer)
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

static struct ibv_mr *reg(int dev, void *p, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(g.dev[dev].pd, p, len, access);

	if (!mr)
		failf("ibv_reg_mr(%zu bytes) on %s: %s", len, g.dev[dev].name,
		      strerror(errno));
	return mr;
}

static int post_send(struct ep *e, uint64_t wr_id, enum ibv_wr_opcode op,
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

static int post_atomic(struct ep *e, uint64_t wr_id, enum ibv_wr_opcode op,
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

static int post_recv(struct ep *e, uint64_t wr_id, void *addr, uint32_t len,
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

static int cq_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	int r = ibv_poll_cq(cq, n, wc);

	if (r < 0)
		failf("ibv_poll_cq: %d", r);
	return r;
}

/* Wait up to MS for one completion on CQ: 1, 0 (none) or -1. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, double ms)
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
static void expect_quiet(struct ibv_cq *cq, const char *what)
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
static bool wc_ok(const struct ibv_wc *wc, const char *what, uint64_t wr_id,
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

/* ------------------------------------------------------------------ */
/* stream mode                                                          */

enum sop { S_SEND, S_SEND_IMM, S_WRITE, S_WRITE_IMM, S_READ, S_NOPS };

static const char *const sop_name[S_NOPS] = {
	"SEND", "SEND_WITH_IMM", "RDMA_WRITE", "RDMA_WRITE_WITH_IMM",
	"RDMA_READ",
};

static const enum ibv_wr_opcode sop_wr[S_NOPS] = {
	IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
	IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
};

static const enum ibv_wc_opcode sop_wc[S_NOPS] = {
	IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE,
	IBV_WC_RDMA_READ,
};

static bool sop_recv(enum sop op)
{
	return op == S_SEND || op == S_SEND_IMM || op == S_WRITE_IMM;
}

static bool sop_imm(enum sop op)
{
	return op == S_SEND_IMM || op == S_WRITE_IMM;
}

struct msg {
	uint8_t op;
	uint32_t len;
};

/*
 * The message plan: a deterministic mix of operations and sizes.  A
 * quarter are small (0 bytes to MTU + 1), the rest from 2 MTUs to
 * max_msg at any byte length.
 */
static void plan_msg(uint64_t m, struct msg *msg)
{
	static const uint8_t ops[10] = {
		S_SEND, S_WRITE, S_READ, S_SEND_IMM, S_WRITE_IMM,
		S_WRITE, S_READ, S_SEND, S_WRITE, S_READ,
	};
	uint64_t r = mix64(opt.seed + 0x9e37 * m + 1);
	uint32_t small[12] = {
		0, 1, 3, 8, 63, 64, 255, 1000, opt.mtu - 1, opt.mtu,
		opt.mtu + 1, 2 * opt.mtu + 7,
	};
	uint32_t lo = 2 * opt.mtu;
	unsigned int k;

	msg->op = ops[(r >> 8) % ARRAY_SIZE(ops)];
	for (k = 0; !(opt.ops & (1u << msg->op)) && k < S_NOPS; k++)
		msg->op = (msg->op + 1) % S_NOPS;
	if ((r & 3) == 0 || opt.max_msg <= lo) {
		msg->len = small[(r >> 16) % ARRAY_SIZE(small)];
		if (msg->len > opt.max_msg)
			msg->len = opt.max_msg;
	} else {
		msg->len = lo + (uint32_t)((r >> 24) % (opt.max_msg - lo + 1));
	}
	if (!msg->len && opt.no_zero_rdma && msg->op != S_SEND &&
	    msg->op != S_SEND_IMM)
		msg->len = 1;
}

struct stream {
	struct ep e[2];
	size_t slot;		/* bytes per buffer slot */
	unsigned int rq;	/* receive WRs (and receive buffer slots) */
	uint8_t *src, *dst, *rbuf;	/* side 0, side 1, side 1 */
	struct ibv_mr *src_mr, *dst_mr, *rbuf_mr;
	struct msg *plan;
	uint64_t nmsg;
	uint64_t posted, done;		/* send WRs */
	uint64_t rposted, rdone;	/* receive WRs */
	uint64_t rmsgs;			/* receive-consuming messages posted */
	uint64_t *rmsg;			/* receive seq -> message, ring of rq */
	uint64_t verified;		/* payload bytes verified */
	bool repost;			/* repost each completed receive */
};

static uint8_t *src_slot(struct stream *s, uint64_t m)
{
	return s->src + (m % opt.depth) * s->slot;
}

static uint8_t *dst_slot(struct stream *s, uint64_t m)
{
	return s->dst + (m % opt.depth) * s->slot;
}

static uint8_t *rbuf_slot(struct stream *s, uint64_t r)
{
	return s->rbuf + (r % s->rq) * s->slot;
}

/* Plan messages until their payload reaches the requested total. */
static int stream_plan(struct stream *s)
{
	unsigned long long total = 0;
	uint64_t cap = 1024, m;

	s->plan = malloc(cap * sizeof(*s->plan));
	for (m = 0; s->plan && total < opt.bytes; m++) {
		if (m == cap) {
			struct msg *np;

			cap *= 2;
			np = realloc(s->plan, cap * sizeof(*s->plan));
			if (!np) {
				free(s->plan);
				s->plan = NULL;
				break;
			}
			s->plan = np;
		}
		plan_msg(m, &s->plan[m]);
		total += s->plan[m].len;
	}
	if (!s->plan) {
		failf("out of memory for the message plan");
		return -1;
	}
	s->nmsg = m;
	return 0;
}

static int stream_post_recv(struct stream *s)
{
	uint8_t *buf = rbuf_slot(s, s->rposted);

	memset(buf, POISON, s->slot);
	if (post_recv(&s->e[1], s->rposted, buf, opt.max_msg,
		      s->rbuf_mr->lkey))
		return -1;
	s->rposted++;
	return 0;
}

/* Post message M (the next one).  Returns 0, or -1 after failf(). */
static int stream_post(struct stream *s)
{
	uint64_t m = s->posted;
	const struct msg *msg = &s->plan[m];
	uint8_t *loc = src_slot(s, m), *rem = dst_slot(s, m);
	uint32_t imm = (uint32_t)m ^ IMM_XOR;

	switch (msg->op) {
	case S_READ:
		pat_fill(rem, m, msg->len);
		memset(loc, POISON, msg->len + GUARD);
		break;
	case S_WRITE:
	case S_WRITE_IMM:
		memset(rem, POISON, msg->len + GUARD);
		/* fall through */
	default:
		pat_fill(loc, m, msg->len);
		break;
	}
	if (sop_recv(msg->op))
		s->rmsg[s->rmsgs++ % s->rq] = m;
	s->posted++;
	return post_send(&s->e[0], m, sop_wr[msg->op], loc, msg->len,
			 s->src_mr->lkey, (uintptr_t)rem, s->dst_mr->rkey,
			 imm);
}

static bool stream_send_wc(struct stream *s, const struct ibv_wc *wc)
{
	uint64_t m = s->done;
	const struct msg *msg = &s->plan[m];
	char what[64];

	if (!wc_ok(wc, "send queue", m, IBV_WC_SUCCESS, s->e[0].qp))
		return false;
	if (wc->opcode != sop_wc[msg->op]) {
		failf("send queue: wr_id %llu (%s): opcode %d, expected %d",
		      (unsigned long long)m, sop_name[msg->op], wc->opcode,
		      sop_wc[msg->op]);
		return false;
	}
	snprintf(what, sizeof(what), "%s data", sop_name[msg->op]);
	if (msg->op == S_READ) {
		if (!pat_check(src_slot(s, m), m, msg->len, what))
			return false;
		s->verified += msg->len;
	} else if (msg->op == S_WRITE || msg->op == S_WRITE_IMM) {
		if (!pat_check(dst_slot(s, m), m, msg->len, what))
			return false;
		s->verified += msg->len;
	}
	s->done++;
	return true;
}

/* The checks of a receive completion of message M. */
static bool stream_recv_fields(struct stream *s, const struct ibv_wc *wc,
			       uint64_t m)
{
	const struct msg *msg = &s->plan[m];
	bool imm = sop_imm(msg->op);
	enum ibv_wc_opcode op = msg->op == S_WRITE_IMM ?
				IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;

	if (wc->opcode != op)
		failf("receive of message %llu (%s): opcode %d, expected %d",
		      (unsigned long long)m, sop_name[msg->op], wc->opcode,
		      op);
	else if (wc->byte_len != msg->len)
		failf("receive of message %llu (%s): byte_len %u, expected %u",
		      (unsigned long long)m, sop_name[msg->op], wc->byte_len,
		      msg->len);
	else if (!!(wc->wc_flags & IBV_WC_WITH_IMM) != imm)
		failf("receive of message %llu (%s): IBV_WC_WITH_IMM %s",
		      (unsigned long long)m, sop_name[msg->op],
		      imm ? "missing" : "set");
	else if (imm && ntohl(wc->imm_data) != ((uint32_t)m ^ IMM_XOR))
		failf("receive of message %llu (%s): immediate 0x%08x, expected 0x%08x",
		      (unsigned long long)m, sop_name[msg->op],
		      ntohl(wc->imm_data), (uint32_t)m ^ IMM_XOR);
	else
		return true;
	return false;
}

static bool stream_recv_wc(struct stream *s, const struct ibv_wc *wc)
{
	uint64_t r = s->rdone, m;
	const struct msg *msg;
	uint8_t *buf = rbuf_slot(s, r);
	static uint8_t poison[GUARD];

	if (!wc_ok(wc, "receive queue", r, IBV_WC_SUCCESS, s->e[1].qp))
		return false;
	if (r >= s->rmsgs) {
		failf("receive queue: completion of receive %llu, but only %llu receive-consuming messages were posted",
		      (unsigned long long)r, (unsigned long long)s->rmsgs);
		return false;
	}
	m = s->rmsg[r % s->rq];
	msg = &s->plan[m];
	if (!stream_recv_fields(s, wc, m))
		return false;
	if (msg->op == S_WRITE_IMM) {
		memset(poison, POISON, sizeof(poison));
		if (memcmp(buf, poison, GUARD)) {
			failf("receive buffer of RDMA_WRITE_WITH_IMM message %llu was written",
			      (unsigned long long)m);
			return false;
		}
	} else {
		if (!pat_check(buf, m, msg->len, sop_name[msg->op]))
			return false;
		s->verified += msg->len;
	}
	s->rdone++;
	return !s->repost || stream_post_recv(s) == 0;
}

/*
 * Buffers, QPs and connection of a stream: RQ receive WRs, NPOST of them
 * posted now.
 */
static int stream_setup(struct stream *s, unsigned int rq, unsigned int npost)
{
	unsigned int i;

	s->slot = ((size_t)opt.max_msg + GUARD + 4095) & ~(size_t)4095;
	s->rq = rq;
	s->rmsg = calloc(s->rq, sizeof(*s->rmsg));
	s->src = zalloc(s->slot * opt.depth);
	s->dst = zalloc(s->slot * opt.depth);
	s->rbuf = zalloc(s->slot * s->rq);
	if (!s->rmsg || !s->src || !s->dst || !s->rbuf)
		return -1;
	s->src_mr = reg(0, s->src, s->slot * opt.depth,
			IBV_ACCESS_LOCAL_WRITE);
	s->dst_mr = reg(1, s->dst, s->slot * opt.depth, MR_ACC_ALL);
	s->rbuf_mr = reg(1, s->rbuf, s->slot * s->rq,
			 IBV_ACCESS_LOCAL_WRITE);
	if (!s->src_mr || !s->dst_mr || !s->rbuf_mr)
		return -1;
	if (ep_create(&s->e[0], 0, opt.depth, 4) ||
	    ep_create(&s->e[1], 1, 1, s->rq))
		return -1;
	for (i = 0; i < 2; i++) {
		struct conn c;

		conn_of(&s->e[!i], &c);
		if (ep_connect(&s->e[i], &c))
			return -1;
	}
	for (i = 0; i < npost; i++)
		if (stream_post_recv(s))
			return -1;
	return 0;
}

static void stream_teardown(struct stream *s)
{
	ep_destroy(&s->e[0]);
	ep_destroy(&s->e[1]);
	if (s->src_mr)
		ibv_dereg_mr(s->src_mr);
	if (s->dst_mr)
		ibv_dereg_mr(s->dst_mr);
	if (s->rbuf_mr)
		ibv_dereg_mr(s->rbuf_mr);
	free(s->src);
	free(s->dst);
	free(s->rbuf);
	free(s->rmsg);
	free(s->plan);
}

/* May the next message be posted (queue depth, a receive for it)? */
static bool stream_may_post(struct stream *s)
{
	if (s->posted >= s->nmsg || s->posted - s->done >= opt.depth)
		return false;
	return !sop_recv(s->plan[s->posted].op) || s->rmsgs < s->rposted;
}

/*
 * One round: post what may be posted, drain both CQs.  Returns the
 * completions handled, -1 when something failed.
 */
static int stream_round(struct stream *s, double *last_progress)
{
	struct ibv_wc wc[POLL_BATCH];
	int n, i, got;

	while (stream_may_post(s))
		if (stream_post(s))
			return -1;
	n = cq_poll(s->e[1].rcq, wc, POLL_BATCH);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++)
		if (!stream_recv_wc(s, &wc[i]))
			return -1;
	got = n;
	n = cq_poll(s->e[0].scq, wc, POLL_BATCH);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++)
		if (!stream_send_wc(s, &wc[i]))
			return -1;
	got += n;
	if (got)
		*last_progress = now_ms();
	return got;
}

static void stream_state(struct stream *s)
{
	failf("state: %llu of %llu messages posted, %llu completed; receives: %llu posted, %llu completed, %llu receive-consuming messages; QP states %d/%d",
	      (unsigned long long)s->posted, (unsigned long long)s->nmsg,
	      (unsigned long long)s->done, (unsigned long long)s->rposted,
	      (unsigned long long)s->rdone, (unsigned long long)s->rmsgs,
	      qp_state(s->e[0].qp), qp_state(s->e[1].qp));
}

static void run_stream(void)
{
	double t_start = now_ms(), t0, last, end;
	struct stream s = {};
	unsigned int rounds = 0;
	bool ok = true;
	int r;

	s.repost = true;
	if (stream_plan(&s) ||
	    stream_setup(&s, opt.depth + 16, opt.depth + 16)) {
		tap_result("stream set-up");
		goto out;
	}
	diag("%llu messages, %llu bytes, up to %u outstanding, MTU %u, largest %u bytes; set up in %.2f s",
	     (unsigned long long)s.nmsg, opt.bytes, opt.depth, opt.mtu,
	     opt.max_msg, (now_ms() - t_start) / 1e3);
	t0 = last = now_ms();
	end = t0 + opt.deadline_s * 1e3;
	while (s.done < s.nmsg || s.rdone < s.rmsgs) {
		r = stream_round(&s, &last);
		if (r < 0) {
			ok = false;
			break;
		}
		if (r)
			rounds = 0;
		else
			idle(&rounds);
		if (now_ms() > end || now_ms() - last > STALL_MS) {
			failf("%s: no completion for %.0f s",
			      now_ms() > end ? "deadline passed" : "stalled",
			      (now_ms() - last) / 1e3);
			ok = false;
			break;
		}
	}
	if (!ok)
		stream_state(&s);
	tap_result("%llu messages (SEND, SEND_WITH_IMM, WRITE, WRITE_WITH_IMM, READ): every completion once, in order, with its fields",
		   (unsigned long long)s.nmsg);
	if (ok) {
		double secs = (now_ms() - t0) / 1e3;

		diag("%llu payload bytes verified in %.2f s (%.2f MiB/s; %.2f s of it making and checking data)",
		     (unsigned long long)s.verified, secs,
		     s.verified / (double)MIB / secs, pat_ms / 1e3);
		if (s.verified < opt.bytes)
			failf("only %llu bytes verified, %llu asked for",
			      (unsigned long long)s.verified, opt.bytes);
	} else {
		failf("not checked: the stream failed");
	}
	tap_result("every byte verified");
	expect_quiet(s.e[0].scq, "send queue");
	expect_quiet(s.e[1].rcq, "receive queue");
	tap_result("no stray completions afterwards");
out:
	stream_teardown(&s);
}

/* ------------------------------------------------------------------ */
/* atomic mode                                                          */

/*
 * Operation K: a fetch-add of 1..1000, or (every fourth) a compare-swap
 * that expects the current value and adds the same way, or (every
 * eighth) a compare-swap whose compare fails: it changes nothing.
 */
static uint64_t atomic_add(uint64_t k)
{
	return 1 + mix64(opt.seed ^ (k * 31 + 7)) % 1000;
}

static int atomic_kind(uint64_t k)
{
	return k % 8 == 7 ? 2 : k % 4 == 3 ? 1 : 0;
}

struct atomics {
	struct ep e[2];
	uint64_t *res, *word;
	struct ibv_mr *res_mr, *word_mr;
	uint64_t *before;	/* value each op finds, in order */
	uint64_t posted, done;
};

static int atomic_post(struct atomics *a)
{
	uint64_t k = a->posted, *res = &a->res[k % opt.depth];
	uint64_t cur = a->before[k];
	int kind = atomic_kind(k);

	*res = ~cur;	/* anything but the expected value */
	a->posted++;
	if (kind == 0)
		return post_atomic(&a->e[0], k, IBV_WR_ATOMIC_FETCH_AND_ADD,
				   res, a->res_mr->lkey, (uintptr_t)a->word,
				   a->word_mr->rkey, atomic_add(k), 0);
	return post_atomic(&a->e[0], k, IBV_WR_ATOMIC_CMP_AND_SWP, res,
			   a->res_mr->lkey, (uintptr_t)a->word,
			   a->word_mr->rkey, kind == 1 ? cur : cur ^ 0x100,
			   cur + atomic_add(k));
}

static bool atomic_wc(struct atomics *a, const struct ibv_wc *wc)
{
	uint64_t k = a->done, got = a->res[k % opt.depth];
	enum ibv_wc_opcode op = atomic_kind(k) ? IBV_WC_COMP_SWAP :
				IBV_WC_FETCH_ADD;

	if (!wc_ok(wc, "send queue", k, IBV_WC_SUCCESS, a->e[0].qp))
		return false;
	if (wc->opcode != op) {
		failf("atomic %llu: opcode %d, expected %d",
		      (unsigned long long)k, wc->opcode, op);
		return false;
	}
	if (got != a->before[k]) {
		failf("atomic %llu (%s): returned 0x%llx, expected 0x%llx (%lld adds off: executed twice or lost?)",
		      (unsigned long long)k,
		      op == IBV_WC_FETCH_ADD ? "fetch-add" : "compare-swap",
		      (unsigned long long)got,
		      (unsigned long long)a->before[k],
		      (long long)(got - a->before[k]));
		return false;
	}
	a->done++;
	return true;
}

static int atomic_setup(struct atomics *a, uint64_t start)
{
	uint64_t k, v = start;
	unsigned int i;

	a->before = malloc((opt.count + 1) * sizeof(*a->before));
	a->res = zalloc(opt.depth * sizeof(*a->res) + 4096);
	a->word = zalloc(4096);
	if (!a->before || !a->res || !a->word)
		return -1;
	for (k = 0; k < opt.count; k++) {
		a->before[k] = v;
		if (atomic_kind(k) != 2)
			v += atomic_add(k);
	}
	a->before[opt.count] = v;
	*a->word = start;
	a->res_mr = reg(0, a->res, opt.depth * sizeof(*a->res),
			IBV_ACCESS_LOCAL_WRITE);
	a->word_mr = reg(1, a->word, 4096, MR_ACC_ALL);
	if (!a->res_mr || !a->word_mr)
		return -1;
	if (ep_create(&a->e[0], 0, opt.depth, 1) ||
	    ep_create(&a->e[1], 1, 1, 1))
		return -1;
	for (i = 0; i < 2; i++) {
		struct conn c;

		conn_of(&a->e[!i], &c);
		if (ep_connect(&a->e[i], &c))
			return -1;
	}
	return 0;
}

static void run_atomic(void)
{
	uint64_t start = mix64(opt.seed ^ 0xa70) >> 4;
	struct ibv_wc wc[POLL_BATCH];
	struct atomics a = {};
	double t0, last, end;
	unsigned int rounds = 0;
	bool ok = true;
	int n, i;

	if (atomic_setup(&a, start)) {
		tap_result("atomic set-up");
		goto out;
	}
	t0 = last = now_ms();
	end = t0 + opt.deadline_s * 1e3;
	while (ok && a.done < opt.count) {
		while (a.posted < opt.count && a.posted - a.done < opt.depth)
			if (atomic_post(&a)) {
				ok = false;
				break;
			}
		n = cq_poll(a.e[0].scq, wc, POLL_BATCH);
		for (i = 0; ok && i < n; i++)
			ok = atomic_wc(&a, &wc[i]);
		if (n > 0) {
			last = now_ms();
			rounds = 0;
		} else {
			idle(&rounds);
		}
		if (n < 0)
			ok = false;
		if (ok && (now_ms() > end || now_ms() - last > STALL_MS)) {
			failf("stalled: %llu of %u atomics completed, QP state %d",
			      (unsigned long long)a.done, opt.count,
			      qp_state(a.e[0].qp));
			ok = false;
		}
	}
	tap_result("%u atomics (fetch-add, compare-swap, failing compare-swap): each returned the value in-order execution gives",
		   opt.count);
	if (ok)
		diag("%u atomics in %.2f s", opt.count, (now_ms() - t0) / 1e3);
	if (*a.word != a.before[opt.count])
		failf("remote word 0x%llx, expected 0x%llx (%lld off)",
		      (unsigned long long)*a.word,
		      (unsigned long long)a.before[opt.count],
		      (long long)(*a.word - a.before[opt.count]));
	tap_result("remote word ends at the exact sum (start 0x%llx + 0x%llx)",
		   (unsigned long long)start,
		   (unsigned long long)(a.before[opt.count] - start));
	expect_quiet(a.e[0].scq, "send queue");
	tap_result("no stray completions afterwards");
out:
	ep_destroy(&a.e[0]);
	ep_destroy(&a.e[1]);
	if (a.res_mr)
		ibv_dereg_mr(a.res_mr);
	if (a.word_mr)
		ibv_dereg_mr(a.word_mr);
	free(a.res);
	free(a.word);
	free(a.before);
}

/* ------------------------------------------------------------------ */
/* rnr mode                                                             */

/*
 * Message K of the RNR plan: SEND, SEND_WITH_IMM or WRITE_WITH_IMM of 1
 * byte to 3 MTUs + 1, so single- and multi-packet messages both meet a
 * missing receive.
 */
static void rnr_msg(uint64_t k, struct msg *msg)
{
	static const uint8_t ops[3] = { S_SEND, S_WRITE_IMM, S_SEND_IMM };
	uint64_t r = mix64(opt.seed ^ (k * 977 + 3));

	msg->op = ops[k % 3];
	msg->len = 1 + (uint32_t)(r % (3 * opt.mtu + 1));
}

/* A send completion of the RNR run; FAIL_AT is the WR that must fail. */
static bool rnr_send_wc(struct stream *s, const struct ibv_wc *wc,
			uint64_t fail_at, double t0)
{
	if (s->done < fail_at)
		return stream_send_wc(s, wc);
	if (!wc_ok(wc, "send queue", s->done, s->done == fail_at ?
		   IBV_WC_RNR_RETRY_EXC_ERR : IBV_WC_WR_FLUSH_ERR, s->e[0].qp))
		return false;
	if (s->done == fail_at)
		diag("message %llu: RNR_RETRY_EXC_ERR %.1f ms after posting",
		     (unsigned long long)s->done, now_ms() - t0);
	s->done++;
	return true;
}

/* Post every message, trickle the receives in, check what completes. */
static bool rnr_loop(struct stream *s, uint64_t fail_at, uint64_t nrecv)
{
	double t0 = now_ms(), last = t0, end = t0 + opt.deadline_s * 1e3;
	double next_recv = t0 + opt.trickle_ms;
	unsigned int rounds = 0;
	struct ibv_wc wc;
	int r, got;

	while (s->posted < s->nmsg)
		if (stream_post(s))
			return false;
	while (s->done < s->nmsg || s->rdone < nrecv) {
		if (opt.trickle_ms && s->rposted < s->rq &&
		    now_ms() >= next_recv) {
			if (stream_post_recv(s))
				return false;
			next_recv += opt.trickle_ms;
		}
		r = cq_poll(s->e[1].rcq, &wc, 1);
		if (r < 0 || (r > 0 && !stream_recv_wc(s, &wc)))
			return false;
		got = r;
		r = cq_poll(s->e[0].scq, &wc, 1);
		if (r < 0 || (r > 0 && !rnr_send_wc(s, &wc, fail_at, t0)))
			return false;
		got += r;
		if (got) {
			last = now_ms();
			rounds = 0;
		} else {
			idle(&rounds);
		}
		if (now_ms() > end || now_ms() - last > STALL_MS) {
			stream_state(s);
			failf("stalled");
			return false;
		}
	}
	diag("%llu messages done %.0f ms after posting; %llu receives (%u posted up front, one more every %u ms)",
	     (unsigned long long)s->nmsg, now_ms() - t0,
	     (unsigned long long)s->rdone, opt.prepost, opt.trickle_ms);
	return true;
}

static void run_rnr(void)
{
	bool finite = opt.rnr_retry != 7;
	uint64_t fail_at = finite ? opt.prepost : UINT64_MAX, k;
	struct stream s = {};

	opt.max_msg = 3 * opt.mtu + 1;
	opt.depth = opt.count;
	s.nmsg = opt.count;
	s.plan = calloc(opt.count, sizeof(*s.plan));
	if (!s.plan || stream_setup(&s, opt.count, opt.prepost)) {
		tap_result("rnr set-up");
		goto out;
	}
	for (k = 0; k < opt.count; k++)
		rnr_msg(k, &s.plan[k]);
	rnr_loop(&s, fail_at, finite ? opt.prepost : opt.count);
	if (finite)
		tap_result("rnr_retry %u: the %u messages with a receive arrive, the next fails with RNR_RETRY_EXC_ERR, the rest flush",
			   opt.rnr_retry, opt.prepost);
	else
		tap_result("rnr_retry 7: %u SEND/WRITE_WITH_IMM messages (1 B to 3 MTUs) all arrive though the receives come late, every byte verified",
			   opt.count);
	if (finite && qp_state(s.e[0].qp) != IBV_QPS_ERR)
		failf("requester QP state %d, expected ERR", qp_state(s.e[0].qp));
	if (qp_state(s.e[1].qp) != IBV_QPS_RTS)
		failf("responder QP state %d, expected RTS", qp_state(s.e[1].qp));
	tap_result("QP states afterwards: requester %s, responder RTS",
		   finite ? "ERR" : "RTS");
	expect_quiet(s.e[0].scq, "send queue");
	expect_quiet(s.e[1].rcq, "receive queue");
	tap_result("no stray completions afterwards");
out:
	stream_teardown(&s);
}

/* ------------------------------------------------------------------ */
/* peer mode                                                            */

#define PEER_MSG	(16 * 1024)
#define PEER_RECVS	4

static int xfer(int fd, void *buf, size_t n, bool wr)
{
	uint8_t *p = buf;

	while (n) {
		ssize_t r = wr ? write(fd, p, n) : read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/*
 * The responder's process: set up its QP and a buffer for the WRITEs and
 * READs, exchange connection details over the pipes, then wait until the
 * parent closes its end (or kills it).
 */
static void __attribute__((noreturn)) peer_child(int rfd, int wfd)
{
	size_t len = (size_t)opt.depth * PEER_MSG;
	struct conn me, them;
	struct ibv_mr *mr;
	struct ep e;
	uint8_t *buf;
	char c = 'R';

	if (tdev_open(&g.dev[1]))
		_exit(1);
	buf = zalloc(len);
	mr = buf ? reg(1, buf, len, MR_ACC_ALL) : NULL;
	if (!mr || ep_create(&e, 1, 1, 1)) {
		fprintf(stderr, "peer: %s\n", why);
		_exit(1);
	}
	conn_of(&e, &me);
	me.addr = (uintptr_t)buf;
	me.rkey = mr->rkey;
	if (xfer(wfd, &me, sizeof(me), true) ||
	    xfer(rfd, &them, sizeof(them), false) || ep_connect(&e, &them) ||
	    xfer(wfd, &c, 1, true)) {
		fprintf(stderr, "peer: set-up failed %s\n", why);
		_exit(1);
	}
	while (read(rfd, &c, 1) > 0)
		;
	ep_destroy(&e);
	ibv_dereg_mr(mr);
	tdev_close(&g.dev[1]);
	_exit(0);
}

struct peer {
	pid_t pid;
	int rfd, wfd;
	struct ep e;
	struct conn them;
	uint8_t *buf;
	struct ibv_mr *mr;
	uint64_t posted, done;
	double t_err;		/* when the error completion was polled */
};

static int peer_start(struct peer *p)
{
	int p2c[2], c2p[2];
	struct conn me;
	unsigned int i;
	char c;

	if (pipe(p2c) || pipe(c2p)) {
		failf("pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	p->pid = fork();
	if (p->pid < 0) {
		failf("fork: %s", strerror(errno));
		return -1;
	}
	if (!p->pid) {
		close(p2c[1]);
		close(c2p[0]);
		peer_child(p2c[0], c2p[1]);
	}
	close(p2c[0]);
	close(c2p[1]);
	p->rfd = c2p[0];
	p->wfd = p2c[1];
	if (tdev_open(&g.dev[0])) {
		failf("cannot open %s", g.dev[0].name);
		return -1;
	}
	p->buf = zalloc((size_t)opt.depth * PEER_MSG);
	if (!p->buf)
		return -1;
	p->mr = reg(0, p->buf, (size_t)opt.depth * PEER_MSG,
		    IBV_ACCESS_LOCAL_WRITE);
	if (!p->mr || ep_create(&p->e, 0, opt.depth + 4, PEER_RECVS))
		return -1;
	if (xfer(p->rfd, &p->them, sizeof(p->them), false)) {
		failf("the peer process failed to set up");
		return -1;
	}
	conn_of(&p->e, &me);
	if (xfer(p->wfd, &me, sizeof(me), true) ||
	    ep_connect(&p->e, &p->them) || xfer(p->rfd, &c, 1, false)) {
		failf("connecting to the peer process failed");
		return -1;
	}
	for (i = 0; i < PEER_RECVS; i++)
		if (post_recv(&p->e, i, p->buf, 64, p->mr->lkey))
			return -1;
	return 0;
}

static void peer_stop(struct peer *p)
{
	int st;

	if (p->wfd > 0)
		close(p->wfd);
	if (p->rfd > 0)
		close(p->rfd);
	if (p->pid > 0)
		waitpid(p->pid, &st, 0);
	ep_destroy(&p->e);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	free(p->buf);
}

/* WRITEs and READs alternate, each with its own 16 KiB slot. */
static int peer_post(struct peer *p)
{
	uint64_t k = p->posted++;
	size_t off = (k % opt.depth) * PEER_MSG;

	return post_send(&p->e, k, k % 2 ? IBV_WR_RDMA_READ :
			 IBV_WR_RDMA_WRITE, p->buf + off, PEER_MSG,
			 p->mr->lkey, p->them.addr + off, p->them.rkey, 0);
}

/* Keep the queue full until WARM WRs completed successfully. */
static bool peer_warm(struct peer *p, uint64_t warm)
{
	double last = now_ms();
	unsigned int rounds = 0;
	struct ibv_wc wc;
	int r;

	while (p->done < warm) {
		while (p->posted - p->done < opt.depth)
			if (peer_post(p))
				return false;
		r = cq_poll(p->e.scq, &wc, 1);
		if (r < 0)
			return false;
		if (r && !wc_ok(&wc, "send queue", p->done, IBV_WC_SUCCESS,
				p->e.qp))
			return false;
		if (r) {
			p->done++;
			last = now_ms();
			rounds = 0;
			continue;
		}
		idle(&rounds);
		if (now_ms() - last > STALL_MS) {
			failf("stalled before the peer went away");
			return false;
		}
	}
	return true;
}

/*
 * One completion while the peer goes away: successes (answered before it
 * went) in order, then RETRY_EXC_ERR for the oldest WR, then every other
 * WR flushed, in order.
 */
static bool peer_wc(struct peer *p, const struct ibv_wc *wc)
{
	enum ibv_wc_status want = IBV_WC_WR_FLUSH_ERR;

	if (!p->t_err)
		want = wc->status == IBV_WC_SUCCESS ? IBV_WC_SUCCESS :
		       IBV_WC_RETRY_EXC_ERR;
	if (!wc_ok(wc, "send queue", p->done, want, p->e.qp))
		return false;
	if (want == IBV_WC_RETRY_EXC_ERR)
		p->t_err = now_ms();
	p->done++;
	return true;
}

/* Start the command that makes the peer disappear; its pid, or 0. */
static pid_t peer_cmd_start(void)
{
	pid_t pid;

	if (!opt.cmd)
		return 0;
	fflush(NULL);
	pid = fork();
	if (!pid) {
		execl("/bin/sh", "sh", "-c", opt.cmd, (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		failf("fork: %s", strerror(errno));
	return pid;
}

/*
 * Make the peer disappear (kill its process, run the command) while the
 * queue stays full, until the error came and every WR completed.  Sets
 * *T0 (start) and *T1 (the peer is gone: process dead, command done).
 */
static bool peer_disappear(struct peer *p, double *t0, double *t1)
{
	double tmo = 4.096e-3 * (1u << opt.timeout), limit = 0;
	unsigned int rounds = 0;
	struct ibv_wc wc;
	pid_t cmd;
	int st, r;

	*t0 = now_ms();
	if (opt.kill_peer) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, &st, 0);
		p->pid = 0;
	}
	cmd = peer_cmd_start();
	if (cmd < 0)
		return false;
	*t1 = cmd ? 0 : now_ms();
	while (!p->t_err || p->done < p->posted) {
		if (cmd && waitpid(cmd, &st, WNOHANG) == cmd) {
			*t1 = now_ms();
			cmd = 0;
			if (!WIFEXITED(st) || WEXITSTATUS(st))
				failf("'%s' failed (status 0x%x)", opt.cmd, st);
		}
		if (*t1 && !limit)
			limit = *t1 + (opt.retry_cnt + 1) * tmo + opt.slack_ms +
				10000;
		/* the queue stays full until the error comes */
		while (!p->t_err && p->posted - p->done < opt.depth)
			if (peer_post(p))
				return false;
		r = cq_poll(p->e.scq, &wc, 1);
		if (r < 0 || (r && !peer_wc(p, &wc)))
			return false;
		if (r)
			rounds = 0;
		else
			idle(&rounds);
		if (!r && (limit ? now_ms() > limit :
			   now_ms() > *t0 + 60000)) {
			failf("%s: %llu of %llu WRs completed, QP state %d",
			      !*t1 ? "the command still runs after 60 s" :
			      p->t_err ? "not every WR flushed 10 s late" :
			      "no RETRY_EXC_ERR 10 s late",
			      (unsigned long long)p->done,
			      (unsigned long long)p->posted, qp_state(p->e.qp));
			return false;
		}
	}
	if (cmd)
		waitpid(cmd, &st, 0);
	if (!*t1)
		*t1 = now_ms();
	return true;
}

/* WRs posted to the QP in error and its receives are flushed. */
static void peer_flushed(struct peer *p)
{
	struct ibv_wc wc;
	uint64_t i;

	for (i = 0; i < 2; i++)
		if (peer_post(p))
			return;
	for (; p->done < p->posted; p->done++)
		if (poll_one(p->e.scq, &wc, 2000) != 1 ||
		    !wc_ok(&wc, "send queue (posted after the error)", p->done,
			   IBV_WC_WR_FLUSH_ERR, p->e.qp))
			return;
	for (i = 0; i < PEER_RECVS; i++)
		if (poll_one(p->e.rcq, &wc, 2000) != 1 ||
		    !wc_ok(&wc, "receive queue", i, IBV_WC_WR_FLUSH_ERR,
			   p->e.qp))
			return;
	if (qp_state(p->e.qp) != IBV_QPS_ERR)
		failf("QP state %d, expected ERR", qp_state(p->e.qp));
}

/* The error arrived in time, after the retries. */
static void peer_timing(struct peer *p, double t0, double t1,
			const struct ctrs *c0)
{
	double tmo = 4.096e-3 * (1u << opt.timeout);
	double hi = (opt.retry_cnt + 1) * tmo + opt.slack_ms;
	double lo = opt.retry_cnt * tmo / 2;
	unsigned long long to;
	struct ctrs c1;

	ctrs_read(g.dev[0].name, &c1);
	to = ctrs_get(&c1, "timeouts") - ctrs_get(c0, "timeouts");
	diag("peer gone in %.0f ms; RETRY_EXC_ERR %.0f ms after it was gone (%.0f ms after it started going); ACK timeout %.1f ms x (retry_cnt %u + 1) = %.0f ms; %llu timeouts; %llu WRs",
	     t1 - t0, p->t_err - t1, p->t_err - t0, tmo, opt.retry_cnt,
	     (opt.retry_cnt + 1) * tmo, to, (unsigned long long)p->posted);
	if (p->t_err - t1 > hi)
		failf("RETRY_EXC_ERR %.0f ms after the peer was gone: later than (retry_cnt + 1) x timeout + %u ms slack = %.0f ms",
		      p->t_err - t1, opt.slack_ms, hi);
	if (p->t_err - t0 < lo)
		failf("RETRY_EXC_ERR %.0f ms after the peer started going: sooner than retry_cnt x timeout / 2 = %.0f ms",
		      p->t_err - t0, lo);
	if (ctrs_get(&c1, "timeouts") && to < opt.retry_cnt + 1)
		failf("%llu ACK timeouts counted, retry_cnt %u needs at least %u",
		      to, opt.retry_cnt, opt.retry_cnt + 1);
}

static void run_peer(void)
{
	struct peer p = {};
	double t0, t1;
	struct ctrs c0;

	if (peer_start(&p) || !peer_warm(&p, 2 * opt.depth)) {
		tap_result("traffic flows before the peer goes away");
		goto out;
	}
	tap_result("traffic flows before the peer goes away (%llu WRITE/READs of %u bytes, %u outstanding)",
		   (unsigned long long)p.done, PEER_MSG, opt.depth);
	ctrs_read(g.dev[0].name, &c0);
	if (peer_disappear(&p, &t0, &t1))
		peer_timing(&p, t0, t1, &c0);
	tap_result("the oldest WR fails with RETRY_EXC_ERR in time, every other outstanding WR is flushed in order");
	peer_flushed(&p);
	tap_result("QP in ERR; WRs posted afterwards and the receives are flushed");
	ctrs_diag(g.dev[0].name, &c0);
out:
	peer_stop(&p);
	tdev_close(&g.dev[0]);
}

/* ------------------------------------------------------------------ */

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-m stream|atomic|rnr|peer] [-b MIB] [-n COUNT] [-q DEPTH]\n"
		"          [-z MAXMSG] [-M MTU] [-T TIMEOUT] [-r RETRY_CNT] [-R RNR_RETRY]\n"
		"          [-t MIN_RNR_TIMER] [-P PREPOST] [-I TRICKLE_MS] [-x CMD] [-k]\n"
		"          [-S SLACK_MS] [-d DEADLINE_S] [-s SEED] [-O OP,...] [-Z]\n"
		"          DEV1 GIDX1 DEV2 GIDX2\n"
		"  OP: send, send_imm, write, write_imm, read (stream mode)\n"
		"  -Z: no zero-byte RDMA WRITE/READ (stream mode)\n",
		prog);
	exit(2);
}

static unsigned long num(const char *s, unsigned long lo, unsigned long hi)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (*s == '\0' || *end || v < lo || v > hi) {
		fprintf(stderr, "bad number '%s' (%lu..%lu)\n", s, lo, hi);
		exit(2);
	}
	return v;
}

/* "send,read,..." -> mask of enum sop; 0 when a name is unknown */
static unsigned int parse_ops(char *list)
{
	static const char *const names[S_NOPS] = {
		"send", "send_imm", "write", "write_imm", "read",
	};
	unsigned int mask = 0, i;
	char *tok, *save = NULL;

	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < S_NOPS && strcmp(tok, names[i]); i++)
			;
		if (i == S_NOPS)
			return 0;
		mask |= 1u << i;
	}
	return mask;
}

static void parse(int argc, char **argv)
{
	int c;

	opt.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	opt.count = 0;
	while ((c = getopt(argc, argv, "m:b:n:q:z:M:T:r:R:t:P:I:x:kS:d:s:O:Z")) !=
	       -1) {
		switch (c) {
		case 'm':
			opt.mode = !strcmp(optarg, "atomic") ? M_ATOMIC :
				   !strcmp(optarg, "rnr") ? M_RNR :
				   !strcmp(optarg, "peer") ? M_PEER :
				   !strcmp(optarg, "stream") ? M_STREAM : 99;
			if (opt.mode == 99)
				usage(argv[0]);
			break;
		case 'b':
			opt.bytes = num(optarg, 1, 4096) * (unsigned long long)MIB;
			break;
		case 'n':
			opt.count = num(optarg, 1, 10000000);
			break;
		case 'q':
			opt.depth = num(optarg, 1, 1024);
			break;
		case 'z':
			opt.max_msg = num(optarg, 1, 16 * MIB);
			break;
		case 'M':
			opt.mtu = num(optarg, 256, 4096);
			break;
		case 'T':
			opt.timeout = num(optarg, 1, 24);
			break;
		case 'r':
			opt.retry_cnt = num(optarg, 0, 7);
			break;
		case 'R':
			opt.rnr_retry = num(optarg, 0, 7);
			break;
		case 't':
			opt.min_rnr_timer = num(optarg, 0, 31);
			break;
		case 'P':
			opt.prepost = num(optarg, 0, 100000);
			break;
		case 'I':
			opt.trickle_ms = num(optarg, 0, 10000);
			break;
		case 'x':
			opt.cmd = optarg;
			break;
		case 'Z':
			opt.no_zero_rdma = true;
			break;
		case 'O':
			opt.ops = parse_ops(optarg);
			if (!opt.ops)
				usage(argv[0]);
			break;
		case 'k':
			opt.kill_peer = true;
			break;
		case 'S':
			opt.slack_ms = num(optarg, 0, 100000);
			break;
		case 'd':
			opt.deadline_s = num(optarg, 1, 100000);
			break;
		case 's':
			opt.seed = num(optarg, 0, ~0UL);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (argc - optind != 4)
		usage(argv[0]);
	g.dev[0].name = argv[optind];
	g.dev[0].gidx = atoi(argv[optind + 1]);
	g.dev[1].name = argv[optind + 2];
	g.dev[1].gidx = atoi(argv[optind + 3]);
	if (!opt.count)
		opt.count = opt.mode == M_RNR ? 24 : 10000;
	if (opt.mode == M_RNR) {
		/* finite retries meet late receives: no defined outcome */
		if (opt.rnr_retry != 7)
			opt.trickle_ms = 0;
		if (opt.prepost > opt.count)
			opt.prepost = opt.count;
	}
	if (opt.mode == M_PEER && !opt.cmd && !opt.kill_peer)
		usage(argv[0]);
}

int main(int argc, char **argv)
{
	struct ctrs c0[2];
	int rc, i;

	parse(argc, argv);
	srandom((unsigned int)opt.seed);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	printf("TAP version 13\n");
	diag("seed %llu", (unsigned long long)opt.seed);
	if (opt.mode == M_PEER) {
		run_peer();
		goto done;
	}
	rc = tdev_open_pair(g.dev);
	if (rc) {
		printf("1..0 # SKIP devices %s/%s not usable\n", g.dev[0].name,
		       g.dev[1].name);
		return rc;
	}
	for (i = 0; i < 2; i++)
		ctrs_read(g.dev[i].name, &c0[i]);
	if (opt.mode == M_STREAM)
		run_stream();
	else if (opt.mode == M_ATOMIC)
		run_atomic();
	else
		run_rnr();
	for (i = 0; i < 2; i++)
		ctrs_diag(g.dev[i].name, &c0[i]);
	tdev_close(&g.dev[0]);
	tdev_close(&g.dev[1]);
done:
	printf("1..%u\n", tap_n);
	return tap_failed ? KSFT_FAIL : KSFT_PASS;
}
