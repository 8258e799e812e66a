// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_stream_test's stream mode (every byte and completion of a long
 * mixed stream checked) and rnr mode (a receiver that is not ready).
 */

#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "shca_stream.h"

/* ------------------------------------------------------------------ */
/* stream mode                                                          */

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

void run_stream(void)
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

void run_rnr(void)
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
