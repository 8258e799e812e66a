// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_rc_test's building blocks (shca_rc.h): its devices, guarded
 * buffers, QP pairs, posting, completion checks and the common frames of
 * its cases.
 */

#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "shca_rc.h"

/* ------------------------------------------------------------------ */
/* global state and reporting                                          */

struct rc_globals g;
const char *skip_why;
double last_err_ms;

const char *op_str(int op)
{
	switch (op) {
	case IBV_WC_SEND:
		return "SEND";
	case IBV_WC_RDMA_WRITE:
		return "RDMA_WRITE";
	case IBV_WC_RDMA_READ:
		return "RDMA_READ";
	case IBV_WC_COMP_SWAP:
		return "COMP_SWAP";
	case IBV_WC_FETCH_ADD:
		return "FETCH_ADD";
	case IBV_WC_BIND_MW:
		return "BIND_MW";
	case IBV_WC_LOCAL_INV:
		return "LOCAL_INV";
	case IBV_WC_RECV:
		return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM:
		return "RECV_RDMA_WITH_IMM";
	}
	return "?";
}

const char *state_str(int st)
{
	static const char *const names[] = {
		"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"
	};

	if (st >= 0 && st < (int)(ARRAY_SIZE(names)))
		return names[st];
	return "?";
}

/* ------------------------------------------------------------------ */
/* completions                                                          */

bool wait_wcs(struct ibv_cq *cq, struct ibv_wc *wc, int n,
	      const char *what)
{
	int got = poll_wait(cq, wc, n, WAIT_MS);

	if (got < 0)
		return false;
	if (got < n) {
		failf("%s: %d of %d completion(s) within %d s (hang)", what,
		      got, n, WAIT_MS / 1000);
		return false;
	}
	return true;
}

bool wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	return wait_wcs(cq, wc, 1, what);
}

/* Nothing may complete on CQ for MS milliseconds */
bool expect_quiet(struct ibv_cq *cq, int ms, const char *what)
{
	struct ibv_wc wc;
	int got = poll_wait(cq, &wc, 1, ms);

	if (got > 0) {
		failf("%s: unexpected completion wr_id 0x%llx status %s opcode %s byte_len %u",
		      what, (unsigned long long)wc.wr_id, st_str(wc.status),
		      op_str(wc.opcode), wc.byte_len);
		return false;
	}
	return got == 0;
}

/*
 * Check a completion: STATUS, WR_ID and QPN always; OPCODE and LEN (when
 * not ANY) for successful ones (the spec leaves them undefined on error).
 */
bool check_wc(const struct ibv_wc *wc, const char *what,
	      enum ibv_wc_status status, int opcode, uint32_t qpn,
	      uint64_t wr_id, long len)
{
	unsigned int f0 = nfail;

	if (wc->status != status)
		failf("%s: status %s (%d), expected %s (vendor_err 0x%x)",
		      what, st_str(wc->status), wc->status, st_str(status),
		      wc->vendor_err);
	if (wc->wr_id != wr_id)
		failf("%s: wr_id 0x%llx, expected 0x%llx", what,
		      (unsigned long long)wc->wr_id,
		      (unsigned long long)wr_id);
	if (wc->qp_num != qpn)
		failf("%s: qp_num %u, expected %u", what, wc->qp_num, qpn);
	if (wc->status == IBV_WC_SUCCESS && status == IBV_WC_SUCCESS) {
		if (opcode != ANY && (int)wc->opcode != opcode)
			failf("%s: opcode %s (%d), expected %s", what,
			      op_str(wc->opcode), wc->opcode, op_str(opcode));
		if (len >= 0 && wc->byte_len != (uint32_t)len)
			failf("%s: byte_len %u, expected %ld", what,
			      wc->byte_len, len);
	}
	return nfail == f0;
}

/* ------------------------------------------------------------------ */
/* guarded buffers                                                      */

void mbuf_put(struct mbuf *b)
{
	if (b->mr && ibv_dereg_mr(b->mr))
		failf("ibv_dereg_mr failed: %s", strerror(errno));
	free(b->base);
	free(b->exp);
	memset(b, 0, sizeof(*b));
}

bool mbuf_get(struct mbuf *b, int dev, size_t len, int access,
	      bool inner)
{
	size_t total = (len + 2 * GUARD + 4095) & ~(size_t)4095;

	memset(b, 0, sizeof(*b));
	if (posix_memalign((void **)&b->base, 4096, total)) {
		failf("out of memory (%zu bytes)", total);
		return false;
	}
	b->exp = malloc(total);
	if (!b->exp) {
		free(b->base);
		b->base = NULL;
		failf("out of memory (%zu bytes)", total);
		return false;
	}
	b->total = total;
	b->len = len;
	b->p = b->base + GUARD;
	memset(b->base, GUARD_BYTE, total);
	memset(b->exp, GUARD_BYTE, total);
	if (access < 0)
		return true;
	if (inner)
		b->mr = ibv_reg_mr(g.dev[dev].pd, b->p, len ? len : 1, access);
	else
		b->mr = ibv_reg_mr(g.dev[dev].pd, b->base, total, access);
	if (!b->mr) {
		failf("ibv_reg_mr(%zu bytes, access 0x%x) on %s: %s",
		      inner ? len : total, access, g.dev[dev].name,
		      strerror(errno));
		mbuf_put(b);
		return false;
	}
	return true;
}

/* Fill p[off..off+n) (and its expected image) with a pattern */
void mbuf_fill(struct mbuf *b, size_t off, size_t n, uint32_t seed)
{
	pattern(b->p + off, n, seed);
	memcpy(b->exp + GUARD + off, b->p + off, n);
}

/* What DST should hold at OFF afterwards: N bytes of SRC's image at SOFF */
void mbuf_expect(struct mbuf *dst, size_t off, const struct mbuf *src,
		 size_t soff, size_t n)
{
	memmove(dst->exp + GUARD + off, src->exp + GUARD + soff, n);
}

/* Mismatching bytes between base and exp in [from, to) (area offsets) */
size_t mbuf_diff(const struct mbuf *b, size_t from, size_t to,
		 size_t *first, size_t *last)
{
	size_t i, bad = 0;

	for (i = from; i < to && i < b->total; i++) {
		if (b->base[i] == b->exp[i])
			continue;
		if (!bad)
			*first = i;
		*last = i;
		bad++;
	}
	return bad;
}

bool mbuf_verify(const struct mbuf *b, const char *what)
{
	size_t first = 0, last = 0, bad;

	bad = mbuf_diff(b, 0, b->total, &first, &last);
	if (!bad)
		return true;
	failf("%s: %zu byte(s) wrong at offsets %ld..%ld relative to the buffer start (buffer is 0..%zu, outside it is guard); first: expected 0x%02x got 0x%02x",
	      what, bad, (long)first - GUARD, (long)last - GUARD, b->len,
	      b->exp[first], b->base[first]);
	return false;
}

void sge_set(struct ibv_sge *sg, const struct mbuf *b, size_t off,
	     uint32_t len)
{
	sg->addr = (uintptr_t)(b->p + off);
	sg->length = len;
	sg->lkey = b->mr ? b->mr->lkey : 0;
}

uint64_t raddr(const struct mbuf *b, long off)
{
	return (uintptr_t)b->p + off;
}

/* rkey with the same index and another key byte: a stale key */
uint32_t stale_key(uint32_t key)
{
	return (key & ~0xffU) | ((key + 0x5a) & 0xff);
}

/* ------------------------------------------------------------------ */
/* QP pairs                                                             */

struct popts defaults(void)
{
	struct popts o = {
		.mtu = IBV_MTU_1024,
		.access = { QP_ACC_ALL, QP_ACC_ALL },
		.rnr_retry = 7,
		.min_rnr_timer = 12,	/* 0.64 ms */
		/* 67 ms, stretched on a slow kernel (scaled_timeout()) */
		.timeout = scaled_timeout(14),
		.retry_cnt = 7,
		.rd_atomic = 16,
		.send_wr = 128,
		.recv_wr = 128,
		.send_sge = 8,
		.recv_sge = 8,
	};

	return o;
}

static int side_create(struct side *s, int dev, const struct popts *o)
{
	struct qp_spec spec = {
		.scq_depth = CQ_DEPTH,
		.rcq_depth = CQ_DEPTH,
		.sig_all = o->sig_all,
		.send_ops = o->send_ops,
		.cap = {
			.max_send_wr = o->send_wr,
			.max_recv_wr = o->recv_wr,
			.max_send_sge = o->send_sge,
			.max_recv_sge = o->recv_sge,
			.max_inline_data = o->inline_data,
		},
	};

	s->dev = dev;
	s->qp = qp_create(&g.dev[dev], &spec, &s->scq, &s->rcq);
	if (!s->qp)
		return -1;
	s->cap = spec.got;
	s->psn = (uint32_t)random() & 0xffffff;
	return 0;
}

static void side_destroy(struct side *s)
{
	qp_cqs_destroy(s->qp, s->scq, s->rcq, g.dev[s->dev].name);
	memset(s, 0, sizeof(*s));
}

void pair_destroy(struct pair *p)
{
	side_destroy(&p->s[0]);
	side_destroy(&p->s[1]);
}

int pair_create(struct pair *p, const struct popts *o)
{
	memset(p, 0, sizeof(*p));
	if (side_create(&p->s[0], 0, o) || side_create(&p->s[1], 1, o)) {
		pair_destroy(p);
		return -1;
	}
	return 0;
}

bool check_state(struct ibv_qp *qp, enum ibv_qp_state want,
		 const char *what)
{
	int st = qp_state(qp);

	if (st == (int)want)
		return true;
	failf("%s: QP %u state %s (%d), expected %s", what, qp->qp_num,
	      state_str(st), st, state_str(want));
	return false;
}

/* ME's path under O to PEER (NULL: the fields RTS takes, no peer) */
static struct rc_path path_of(const struct popts *o, const struct side *me,
			      const struct side *peer)
{
	struct rc_path r = {
		.access = o->access[me->dev],
		.mtu = o->mtu,
		.sq_psn = me->psn,
		.sgid_index = g.dev[me->dev].gidx,
		.rd_atomic = o->rd_atomic,
		.min_rnr_timer = o->min_rnr_timer,
		.timeout = o->timeout,
		.retry_cnt = o->retry_cnt,
		.rnr_retry = o->rnr_retry,
	};

	if (peer) {
		r.dest_qpn = peer->qp->qp_num;
		r.rq_psn = peer->psn;
		r.dgid = g.dev[peer->dev].gid;
	}
	return r;
}

void init_attr(struct ibv_qp_attr *a, unsigned int access)
{
	struct rc_path r = { .access = access };

	rc_attr(a, IBV_QPS_INIT, &r);
}

void rtr_attr(struct ibv_qp_attr *a, const struct popts *o,
	      const struct side *me, const struct side *peer)
{
	struct rc_path r = path_of(o, me, peer);

	rc_attr(a, IBV_QPS_RTR, &r);
}

void rts_attr(struct ibv_qp_attr *a, const struct popts *o,
	      const struct side *me)
{
	struct rc_path r = path_of(o, me, NULL);

	rc_attr(a, IBV_QPS_RTS, &r);
}

int pair_connect(struct pair *p, const struct popts *o)
{
	struct ibv_qp *qp[2] = { p->s[0].qp, p->s[1].qp };
	struct rc_path path[2] = {
		path_of(o, &p->s[0], &p->s[1]),
		path_of(o, &p->s[1], &p->s[0]),
	};
	enum ibv_qp_state at;
	int i, ret;

	ret = rc_connect_pair(qp, path, &i, &at);
	if (ret)
		failf("ibv_modify_qp(%s) of QP %u on %s: %s", state_str(at),
		      qp[i]->qp_num, g.dev[p->s[i].dev].name, strerror(ret));
	return ret ? -1 : 0;
}

int pair_open(struct pair *p, const struct popts *o)
{
	if (pair_create(p, o))
		return -1;
	if (pair_connect(p, o)) {
		pair_destroy(p);
		return -1;
	}
	return 0;
}

/*
 * A connected pair with a source buffer of SLEN bytes on side 0 and a
 * target of DLEN bytes on side 1 registered with DACC.  Returns 0, or -1
 * with nothing held; xfer_close() releases all three.
 */
int xfer_open(struct pair *p, const struct popts *o,
	      struct mbuf *src, size_t slen, struct mbuf *dst,
	      size_t dlen, int dacc)
{
	if (pair_open(p, o))
		return -1;
	if (mbuf_get(src, 0, slen, IBV_ACCESS_LOCAL_WRITE, false)) {
		if (mbuf_get(dst, 1, dlen, dacc, false))
			return 0;
		mbuf_put(src);
	}
	pair_destroy(p);
	return -1;
}

void xfer_close(struct pair *p, struct mbuf *src, struct mbuf *dst)
{
	mbuf_put(dst);
	mbuf_put(src);
	pair_destroy(p);
}

/* ------------------------------------------------------------------ */
/* posting                                                              */

int post_wr(struct side *s, uint64_t wr_id, enum ibv_wr_opcode op,
	    struct ibv_sge *sg, int nsge, uint64_t remote, uint32_t rkey)
{
	struct send_args a = {
		.wr_id = wr_id, .op = op, .sg = sg, .nsge = nsge,
		.flags = IBV_SEND_SIGNALED, .raddr = remote, .rkey = rkey,
		.imm = IMM,
	};
	int ret = post_send1(s->qp, &a);

	if (ret)
		failf("ibv_post_send(wr_id 0x%llx) on QP %u: %s (%d)",
		      (unsigned long long)wr_id, s->qp->qp_num, strerror(ret),
		      ret);
	return ret;
}

int post_atomic(struct side *s, uint64_t wr_id, enum ibv_wr_opcode op,
		struct ibv_sge *sg, uint64_t remote, uint32_t rkey,
		uint64_t cmp_add, uint64_t swap)
{
	struct send_args a = {
		.wr_id = wr_id, .op = op, .sg = sg, .nsge = 1,
		.flags = IBV_SEND_SIGNALED, .raddr = remote, .rkey = rkey,
		.cmp_add = cmp_add, .swap = swap,
	};
	int ret = post_send1(s->qp, &a);

	if (ret)
		failf("ibv_post_send(atomic) on QP %u: %s", s->qp->qp_num,
		      strerror(ret));
	return ret;
}

int post_atomic_write(struct side *s, uint64_t wr_id, uint64_t remote,
		      uint32_t rkey, const void *value)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(s->qp);
	int ret;

	if (!qpx) {
		failf("QP %u is not an extended QP", s->qp->qp_num);
		return EINVAL;
	}
	ibv_wr_start(qpx);
	qpx->wr_id = wr_id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qpx, rkey, remote, value);
	ret = ibv_wr_complete(qpx);
	if (ret)
		failf("ibv_wr_atomic_write on QP %u: %s", s->qp->qp_num,
		      strerror(ret));
	return ret;
}

int post_recv(struct side *s, uint64_t wr_id, struct ibv_sge *sg, int nsge)
{
	int ret = post_recv1(s->qp, NULL, wr_id, sg, nsge);

	if (ret)
		failf("ibv_post_recv on QP %u: %s (%d)", s->qp->qp_num,
		      strerror(ret), ret);
	return ret;
}

/* ------------------------------------------------------------------ */
/* building blocks                                                      */

void ctr_snap(struct ctrs c[2])
{
	ctrs_read(g.dev[0].name, &c[0]);
	ctrs_read(g.dev[1].name, &c[1]);
}

void ctr_diag(const struct ctrs before[2])
{
	ctrs_diag(g.dev[0].name, &before[0]);
	ctrs_diag(g.dev[1].name, &before[1]);
}

bool read_counter(int dev, const char *name, unsigned long long *v)
{
	counters_next_jiffy();
	return ctr_read(g.dev[dev].name, name, v);
}

/*
 * SEND LEN bytes (with immediate data when IMMED) from side 0 to
 * side 1 of P and check both completions and every byte of the receive
 * buffer and its guards.
 */
bool xfer_send(struct pair *p, size_t len, bool immed,
	       const char *what)
{
	struct side *s = &p->s[0], *r = &p->s[1];
	struct mbuf src, dst;
	struct ibv_sge ssg, rsg;
	unsigned int f0 = nfail;
	struct ibv_wc wc;
	char w[160];

	if (!mbuf_get(&src, 0, len, IBV_ACCESS_LOCAL_WRITE, false))
		return false;
	if (!mbuf_get(&dst, 1, len, IBV_ACCESS_LOCAL_WRITE, false)) {
		mbuf_put(&src);
		return false;
	}
	mbuf_fill(&src, 0, len, (uint32_t)len + 17);
	sge_set(&rsg, &dst, 0, (uint32_t)len);
	sge_set(&ssg, &src, 0, (uint32_t)len);
	if (post_recv(r, 0x7ec0 + len, &rsg, 1))
		goto out;
	if (post_wr(s, 0x5e00 + len, immed ? IBV_WR_SEND_WITH_IMM :
		    IBV_WR_SEND, &ssg, len ? 1 : 0, 0, 0))
		goto out;
	snprintf(w, sizeof(w), "%s: receiver", what);
	if (wait_wc(r->rcq, &wc, w)) {
		check_wc(&wc, w, IBV_WC_SUCCESS, IBV_WC_RECV, r->qp->qp_num,
			 0x7ec0 + len, (long)len);
		if (immed && (!(wc.wc_flags & IBV_WC_WITH_IMM) ||
			      wc.imm_data != htonl(IMM)))
			failf("%s: wc_flags 0x%x imm_data 0x%x, expected IBV_WC_WITH_IMM and 0x%x",
			      w, wc.wc_flags, ntohl(wc.imm_data), IMM);
		if (!immed && (wc.wc_flags & (IBV_WC_WITH_IMM |
					      IBV_WC_WITH_INV)))
			failf("%s: wc_flags 0x%x on a plain SEND", w,
			      wc.wc_flags);
	}
	snprintf(w, sizeof(w), "%s: sender", what);
	if (wait_wc(s->scq, &wc, w))
		check_wc(&wc, w, IBV_WC_SUCCESS, IBV_WC_SEND, s->qp->qp_num,
			 0x5e00 + len, ANY);
	mbuf_expect(&dst, 0, &src, 0, len);
	snprintf(w, sizeof(w), "%s: receive buffer", what);
	mbuf_verify(&dst, w);
	snprintf(w, sizeof(w), "%s: send buffer (must not change)", what);
	mbuf_verify(&src, w);
out:
	mbuf_put(&src);
	mbuf_put(&dst);
	return nfail == f0;
}

/*
 * After an error case: the pair that existed during it (BYSTANDER, may be
 * NULL) and a fresh pair on the same devices must still carry a SEND.
 */
void still_works(struct pair *bystander)
{
	struct popts o = defaults();
	struct pair p;

	if (bystander)
		xfer_send(bystander, 4096, false,
			  "afterwards, the other (pre-existing) QP pair");
	if (pair_open(&p, &o)) {
		failf("afterwards, a fresh QP pair could not be set up");
		return;
	}
	xfer_send(&p, 4096, false, "afterwards, a fresh QP pair");
	pair_destroy(&p);
}

/*
 * Post BAD with a signaled 0-byte SEND behind it on side 0 of P: BAD must
 * complete with ST (or ALT), the SEND behind it with WR_FLUSH_ERR, the QP
 * must be in ERR and a send and a receive posted afterwards must be
 * flushed too.  Returns the status BAD completed with, -1 if none, -2 if
 * the post itself failed.
 */
int req_error(struct pair *p, struct ibv_send_wr *bad,
	      enum ibv_wc_status st, enum ibv_wc_status alt,
	      const char *what)
{
	struct ibv_send_wr follow = {}, later = {}, *bw = NULL;
	struct ibv_recv_wr rlater = {}, *brw = NULL;
	struct side *s = &p->s[0];
	struct ibv_wc wc[2];
	double t0;
	int ret, got, res;
	char w[160];

	follow.wr_id = WR_FOLLOW;
	follow.opcode = IBV_WR_SEND;
	follow.send_flags = IBV_SEND_SIGNALED;
	later = follow;
	later.wr_id = WR_LATER;
	bad->next = &follow;
	bad->send_flags |= IBV_SEND_SIGNALED;
	t0 = now_ms();
	ret = ibv_post_send(s->qp, bad, &bw);
	if (ret) {
		failf("%s: ibv_post_send returned %s (%d), bad_wr %s; expected the post to succeed and the WR to complete with %s",
		      what, strerror(ret), ret, bw == bad ? "= the WR" :
		      bw == &follow ? "= the WR behind it" : "other",
		      st_str(st));
		return -2;
	}
	got = poll_wait(s->scq, wc, 1, WAIT_MS);
	last_err_ms = now_ms() - t0;
	if (got < 1) {
		failf("%s: no completion within %d s (expected %s)", what,
		      WAIT_MS / 1000, st_str(st));
		return -1;
	}
	res = wc[0].status;
	if (wc[0].status != st && wc[0].status != alt)
		failf("%s: completed with %s (%d), expected %s%s%s", what,
		      st_str(wc[0].status), wc[0].status, st_str(st),
		      alt != st ? " or " : "", alt != st ? st_str(alt) : "");
	if (wc[0].wr_id != WR_BAD || wc[0].qp_num != s->qp->qp_num)
		failf("%s: completion wr_id 0x%llx qp_num %u, expected 0x%llx %u",
		      what, (unsigned long long)wc[0].wr_id, wc[0].qp_num,
		      WR_BAD, s->qp->qp_num);
	snprintf(w, sizeof(w), "%s: the WR posted behind it", what);
	if (wait_wc(s->scq, &wc[1], w))
		check_wc(&wc[1], w, IBV_WC_WR_FLUSH_ERR, ANY, s->qp->qp_num,
			 WR_FOLLOW, -1);
	snprintf(w, sizeof(w), "%s: requester", what);
	check_state(s->qp, IBV_QPS_ERR, w);

	ret = ibv_post_send(s->qp, &later, &bw);
	snprintf(w, sizeof(w), "%s: a send posted after the error", what);
	if (ret)
		failf("%s: ibv_post_send returned %s (expected the WR to be flushed)",
		      w, strerror(ret));
	else if (wait_wc(s->scq, wc, w))
		check_wc(wc, w, IBV_WC_WR_FLUSH_ERR, ANY, s->qp->qp_num,
			 WR_LATER, -1);
	rlater.wr_id = WR_RQ_LATER;
	ret = ibv_post_recv(s->qp, &rlater, &brw);
	snprintf(w, sizeof(w), "%s: a receive posted after the error", what);
	if (ret)
		failf("%s: ibv_post_recv returned %s (expected the WR to be flushed)",
		      w, strerror(ret));
	else if (wait_wc(s->rcq, wc, w))
		check_wc(wc, w, IBV_WC_WR_FLUSH_ERR, ANY, s->qp->qp_num,
			 WR_RQ_LATER, -1);
	return res;
}

/* Responder side 1 of P must go to ERR with its receive WR_RESP flushed */
void resp_flushed(struct pair *p, const char *what)
{
	struct side *r = &p->s[1];
	struct ibv_wc wc;
	char w[200];

	snprintf(w, sizeof(w),
		 "%s: responder's posted receive (QP to error, flushed)", what);
	if (wait_wc(r->rcq, &wc, w))
		check_wc(&wc, w, IBV_WC_WR_FLUSH_ERR, ANY, r->qp->qp_num,
			 WR_RESP, -1);
	snprintf(w, sizeof(w), "%s: responder", what);
	check_state(r->qp, IBV_QPS_ERR, w);
}

/* Responder side 1 of P must be unaffected: RTS, nothing completed */
void resp_untouched(struct pair *p, const char *what)
{
	char w[200];

	snprintf(w, sizeof(w), "%s: responder (must be unaffected)", what);
	expect_quiet(p->s[1].rcq, QUIET_MS, w);
	check_state(p->s[1].qp, IBV_QPS_RTS, w);
}

int post_recv0(struct side *s, uint64_t wr_id)
{
	return post_recv(s, wr_id, NULL, 0);
}

