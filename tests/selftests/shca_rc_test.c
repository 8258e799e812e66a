// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_rc_test: RC data path and the error cases a verbs user can cause,
 * between two shca devices (normally in two network namespaces joined by
 * a veth pair, so every packet really crosses the wire).
 *
 *   shca_rc_test [-t FILTER] [-l] [DEV1 GIDX1 DEV2 GIDX2]
 *
 * DEV1/DEV2 default to shca_ns1/shca_ns2; a GID index of -1 (or none
 * given) means the first RoCE v2 GID holding an IPv4 address.  -t runs
 * only the cases whose name contains FILTER, -l lists the cases.  One
 * process drives both devices: side 0 of each QP pair is on DEV1, side 1
 * on DEV2.  Every case builds its own QP pairs and tears them down; every
 * wait for a completion has a deadline.  Prints TAP 13; exits 0 when
 * every case passes, 1 when one fails, 4 when the devices are missing.
 */

#define _GNU_SOURCE
#include <errno.h>
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
#include <infiniband/verbs.h>

#include "shca_test.h"

#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_SKIP	4

#define WAIT_MS		10000	/* deadline of every expected completion */
#define QUIET_MS	300	/* how long "nothing happens" is watched */
#define GUARD		4096	/* guard bytes either side of every buffer */
#define GUARD_BYTE	0xa5
#define CQ_DEPTH	2048
#define MIB		(1024 * 1024)
#define IMM		0x1234abcdU
#define ANY		(-1)
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define WR_BAD		0xbad0ULL
#define WR_FOLLOW	0xf011ULL
#define WR_LATER	0x1a7eULL
#define WR_RQ_LATER	0x1a7f0ULL
#define WR_RESP		900ULL

#define ACC_ALL		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define QP_ACC_ALL	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)

/* ------------------------------------------------------------------ */
/* global state and reporting                                          */

static struct {
	const char *name[2];
	int gidx[2];
	struct ibv_context *ctx[2];
	struct ibv_pd *pd[2];
	union ibv_gid gid[2];
	struct ibv_device_attr attr[2];
} g;

static const char *skip_why;	/* set when the current case skips */

static const char *st_str(int st)
{
	return ibv_wc_status_str((enum ibv_wc_status)st);
}

static const char *op_str(int op)
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

static const char *state_str(int st)
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

/*
 * Poll CQ until N completions arrived or MS milliseconds passed.  Returns
 * the number polled, or -1 when ibv_poll_cq failed.
 */
static int poll_wait(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms)
{
	double end = now_ms() + ms;
	int got = 0, idle = 0;

	while (got < n) {
		int r = ibv_poll_cq(cq, n - got, wc + got);

		if (r < 0) {
			failf("ibv_poll_cq returned %d", r);
			return -1;
		}
		if (r) {
			got += r;
			idle = 0;
			continue;
		}
		if (now_ms() > end)
			break;
		if (++idle > 64) {
			struct timespec ts = { 0, 50000 };

			nanosleep(&ts, NULL);
		}
	}
	return got;
}

static bool wait_wcs(struct ibv_cq *cq, struct ibv_wc *wc, int n,
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

static bool wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	return wait_wcs(cq, wc, 1, what);
}

/* Nothing may complete on CQ for MS milliseconds */
static bool expect_quiet(struct ibv_cq *cq, int ms, const char *what)
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
static bool check_wc(const struct ibv_wc *wc, const char *what,
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

/*
 * A buffer of LEN bytes at p with GUARD bytes of GUARD_BYTE either side;
 * exp is the image the whole area (base..base+total) should hold.
 */
struct mbuf {
	uint8_t *base, *exp, *p;
	size_t total, len;
	struct ibv_mr *mr;
};

static void mbuf_put(struct mbuf *b)
{
	if (b->mr && ibv_dereg_mr(b->mr))
		failf("ibv_dereg_mr failed: %s", strerror(errno));
	free(b->base);
	free(b->exp);
	memset(b, 0, sizeof(*b));
}

/*
 * Allocate a guarded buffer for device DEV; register it with ACCESS
 * unless ACCESS is negative: the whole area, or only p..p+len (INNER).
 */
static bool mbuf_get(struct mbuf *b, int dev, size_t len, int access,
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
		b->mr = ibv_reg_mr(g.pd[dev], b->p, len ? len : 1, access);
	else
		b->mr = ibv_reg_mr(g.pd[dev], b->base, total, access);
	if (!b->mr) {
		failf("ibv_reg_mr(%zu bytes, access 0x%x) on %s: %s",
		      inner ? len : total, access, g.name[dev],
		      strerror(errno));
		mbuf_put(b);
		return false;
	}
	return true;
}

/* Fill p[off..off+n) (and its expected image) with a pattern */
static void mbuf_fill(struct mbuf *b, size_t off, size_t n, uint32_t seed)
{
	pattern(b->p + off, n, seed);
	memcpy(b->exp + GUARD + off, b->p + off, n);
}

/* What DST should hold at OFF afterwards: N bytes of SRC's image at SOFF */
static void mbuf_expect(struct mbuf *dst, size_t off, const struct mbuf *src,
			size_t soff, size_t n)
{
	memmove(dst->exp + GUARD + off, src->exp + GUARD + soff, n);
}

/* Mismatching bytes between base and exp in [from, to) (area offsets) */
static size_t mbuf_diff(const struct mbuf *b, size_t from, size_t to,
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

static bool mbuf_verify(const struct mbuf *b, const char *what)
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

static void sge_set(struct ibv_sge *sg, const struct mbuf *b, size_t off,
		    uint32_t len)
{
	sg->addr = (uintptr_t)(b->p + off);
	sg->length = len;
	sg->lkey = b->mr ? b->mr->lkey : 0;
}

static uint64_t raddr(const struct mbuf *b, long off)
{
	return (uintptr_t)b->p + off;
}

/* rkey with the same index and another key byte: a stale key */
static uint32_t stale_key(uint32_t key)
{
	return (key & ~0xffU) | ((key + 0x5a) & 0xff);
}

/* ------------------------------------------------------------------ */
/* QP pairs                                                             */

struct popts {
	enum ibv_mtu mtu;
	unsigned int access[2];		/* qp_access_flags of each side */
	uint8_t rnr_retry, min_rnr_timer, timeout, retry_cnt, rd_atomic;
	uint32_t send_wr, recv_wr, send_sge, recv_sge, inline_data;
	int sig_all;
};

static struct popts defaults(void)
{
	struct popts o = {
		.mtu = IBV_MTU_1024,
		.access = { QP_ACC_ALL, QP_ACC_ALL },
		.rnr_retry = 7,
		.min_rnr_timer = 12,	/* 0.64 ms */
		.timeout = 14,		/* 67 ms */
		.retry_cnt = 7,
		.rd_atomic = 16,
		.send_wr = 128,
		.recv_wr = 128,
		.send_sge = 8,
		.recv_sge = 8,
	};

	return o;
}

struct side {
	int dev;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_qp_cap cap;		/* as ibv_create_qp returned it */
	uint32_t psn;
};

struct pair {
	struct side s[2];
};

static int side_create(struct side *s, int dev, const struct popts *o)
{
	struct ibv_qp_init_attr ia = {};

	s->dev = dev;
	s->scq = ibv_create_cq(g.ctx[dev], CQ_DEPTH, NULL, NULL, 0);
	s->rcq = ibv_create_cq(g.ctx[dev], CQ_DEPTH, NULL, NULL, 0);
	if (!s->scq || !s->rcq) {
		failf("ibv_create_cq(%d) on %s: %s", CQ_DEPTH, g.name[dev],
		      strerror(errno));
		return -1;
	}
	ia.send_cq = s->scq;
	ia.recv_cq = s->rcq;
	ia.qp_type = IBV_QPT_RC;
	ia.sq_sig_all = o->sig_all;
	ia.cap.max_send_wr = o->send_wr;
	ia.cap.max_recv_wr = o->recv_wr;
	ia.cap.max_send_sge = o->send_sge;
	ia.cap.max_recv_sge = o->recv_sge;
	ia.cap.max_inline_data = o->inline_data;
	s->qp = ibv_create_qp(g.pd[dev], &ia);
	if (!s->qp) {
		failf("ibv_create_qp on %s: %s", g.name[dev], strerror(errno));
		return -1;
	}
	s->cap = ia.cap;
	s->psn = (uint32_t)random() & 0xffffff;
	return 0;
}

static void side_destroy(struct side *s)
{
	qp_cqs_destroy(s->qp, s->scq, s->rcq, g.name[s->dev]);
	memset(s, 0, sizeof(*s));
}

static void pair_destroy(struct pair *p)
{
	side_destroy(&p->s[0]);
	side_destroy(&p->s[1]);
}

static int pair_create(struct pair *p, const struct popts *o)
{
	memset(p, 0, sizeof(*p));
	if (side_create(&p->s[0], 0, o) || side_create(&p->s[1], 1, o)) {
		pair_destroy(p);
		return -1;
	}
	return 0;
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init))
		return -1;
	return attr.qp_state;
}

static bool check_state(struct ibv_qp *qp, enum ibv_qp_state want,
			const char *what)
{
	int st = qp_state(qp);

	if (st == (int)want)
		return true;
	failf("%s: QP %u state %s (%d), expected %s", what, qp->qp_num,
	      state_str(st), st, state_str(want));
	return false;
}

#define INIT_MASK (IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | \
		   IBV_QP_ACCESS_FLAGS)
#define RTR_MASK (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | \
		  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | \
		  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RTS_MASK (IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
		  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)

static void init_attr(struct ibv_qp_attr *a, unsigned int access)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_INIT;
	a->pkey_index = 0;
	a->port_num = 1;
	a->qp_access_flags = access;
}

static void rtr_attr(struct ibv_qp_attr *a, const struct popts *o,
		     const struct side *me, const struct side *peer)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = o->mtu;
	a->dest_qp_num = peer->qp->qp_num;
	a->rq_psn = peer->psn;
	a->max_dest_rd_atomic = o->rd_atomic;
	a->min_rnr_timer = o->min_rnr_timer;
	a->ah_attr.is_global = 1;
	a->ah_attr.grh.dgid = g.gid[peer->dev];
	a->ah_attr.grh.sgid_index = (uint8_t)g.gidx[me->dev];
	a->ah_attr.grh.hop_limit = 64;
	a->ah_attr.port_num = 1;
}

static void rts_attr(struct ibv_qp_attr *a, const struct popts *o,
		     const struct side *me)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTS;
	a->timeout = o->timeout;
	a->retry_cnt = o->retry_cnt;
	a->rnr_retry = o->rnr_retry;
	a->sq_psn = me->psn;
	a->max_rd_atomic = o->rd_atomic;
}

static int pair_connect(struct pair *p, const struct popts *o)
{
	struct ibv_qp_attr a;
	int i, ret;

	for (i = 0; i < 2; i++) {
		init_attr(&a, o->access[i]);
		ret = ibv_modify_qp(p->s[i].qp, &a, INIT_MASK);
		if (ret)
			goto err;
	}
	for (i = 0; i < 2; i++) {
		rtr_attr(&a, o, &p->s[i], &p->s[!i]);
		ret = ibv_modify_qp(p->s[i].qp, &a, RTR_MASK);
		if (ret)
			goto err;
	}
	for (i = 0; i < 2; i++) {
		rts_attr(&a, o, &p->s[i]);
		ret = ibv_modify_qp(p->s[i].qp, &a, RTS_MASK);
		if (ret)
			goto err;
	}
	return 0;
err:
	failf("ibv_modify_qp(%s) of QP %u on %s: %s", state_str(a.qp_state),
	      p->s[i].qp->qp_num, g.name[p->s[i].dev], strerror(ret));
	return -1;
}

static int pair_open(struct pair *p, const struct popts *o)
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
static int xfer_open(struct pair *p, const struct popts *o,
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

static void xfer_close(struct pair *p, struct mbuf *src, struct mbuf *dst)
{
	mbuf_put(dst);
	mbuf_put(src);
	pair_destroy(p);
}

/* ------------------------------------------------------------------ */
/* posting                                                              */

static int post_wr(struct side *s, uint64_t wr_id, enum ibv_wr_opcode op,
		   struct ibv_sge *sg, int nsge, uint64_t remote,
		   uint32_t rkey)
{
	struct ibv_send_wr wr = {}, *bad = NULL;
	int ret;

	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.sg_list = sg;
	wr.num_sge = nsge;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = remote;
	wr.wr.rdma.rkey = rkey;
	if (op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htonl(IMM);
	ret = ibv_post_send(s->qp, &wr, &bad);
	if (ret)
		failf("ibv_post_send(wr_id 0x%llx) on QP %u: %s (%d)",
		      (unsigned long long)wr_id, s->qp->qp_num, strerror(ret),
		      ret);
	return ret;
}

static int post_atomic(struct side *s, uint64_t wr_id, enum ibv_wr_opcode op,
		       struct ibv_sge *sg, uint64_t remote, uint32_t rkey,
		       uint64_t cmp_add, uint64_t swap)
{
	struct ibv_send_wr wr = {}, *bad = NULL;
	int ret;

	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.sg_list = sg;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = remote;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	ret = ibv_post_send(s->qp, &wr, &bad);
	if (ret)
		failf("ibv_post_send(atomic) on QP %u: %s", s->qp->qp_num,
		      strerror(ret));
	return ret;
}

static int post_recv(struct side *s, uint64_t wr_id, struct ibv_sge *sg,
		     int nsge)
{
	struct ibv_recv_wr wr = {}, *bad = NULL;
	int ret;

	wr.wr_id = wr_id;
	wr.sg_list = sg;
	wr.num_sge = nsge;
	ret = ibv_post_recv(s->qp, &wr, &bad);
	if (ret)
		failf("ibv_post_recv on QP %u: %s (%d)", s->qp->qp_num,
		      strerror(ret), ret);
	return ret;
}

/* ------------------------------------------------------------------ */
/* building blocks                                                      */

#define MAX_CTRS	64

/* Device counters of both devices, to show what a failed case did */
static struct ctr_snap {
	int n[2];
	char name[2][MAX_CTRS][48];
	unsigned long long v[2][MAX_CTRS];
} snap0;

static void ctr_snap(struct ctr_snap *c)
{
	char path[256];
	struct dirent *de;
	int dev, i;
	DIR *d;

	for (dev = 0; dev < 2; dev++) {
		c->n[dev] = 0;
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/1/hw_counters",
			 g.name[dev]);
		d = opendir(path);
		if (!d)
			continue;
		while ((de = readdir(d)) && c->n[dev] < MAX_CTRS) {
			FILE *f;

			if (de->d_name[0] == '.' ||
			    strlen(de->d_name) >= sizeof(c->name[0][0]))
				continue;
			i = c->n[dev];
			snprintf(path, sizeof(path),
				 "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
				 g.name[dev], de->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			if (fscanf(f, "%llu", &c->v[dev][i]) == 1) {
				strcpy(c->name[dev][i], de->d_name);
				c->n[dev]++;
			}
			fclose(f);
		}
		closedir(d);
	}
}

/* Print the counters that changed since BEFORE */
static void ctr_diag(const struct ctr_snap *before)
{
	struct ctr_snap now;
	char line[1024];
	int dev, i, j;
	size_t used;

	ctr_snap(&now);
	for (dev = 0; dev < 2; dev++) {
		used = snprintf(line, sizeof(line), "counters %s:", g.name[dev]);
		for (i = 0; i < now.n[dev]; i++) {
			unsigned long long old = 0;

			if (strstr(now.name[dev][i], "hwm") ||
			    !strcmp(now.name[dev][i], "lifespan"))
				continue;
			for (j = 0; j < before->n[dev]; j++)
				if (!strcmp(before->name[dev][j],
					    now.name[dev][i]))
					old = before->v[dev][j];
			if (now.v[dev][i] != old && used < sizeof(line))
				used += snprintf(line + used,
						 sizeof(line) - used,
						 " %s+%llu", now.name[dev][i],
						 now.v[dev][i] - old);
		}
		printf("# %s\n", line);
	}
}

/* One counter of device DEV, read fresh (counters_next_jiffy()). */
static bool read_counter(int dev, const char *name, unsigned long long *v)
{
	char path[256];
	FILE *f;
	int n;

	counters_next_jiffy();

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		 g.name[dev], name);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fscanf(f, "%llu", v);
	fclose(f);
	return n == 1;
}

/*
 * SEND LEN bytes (with immediate data when IMMED) from side 0 to
 * side 1 of P and check both completions and every byte of the receive
 * buffer and its guards.
 */
static bool xfer_send(struct pair *p, size_t len, bool immed,
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
static void still_works(struct pair *bystander)
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

static double last_err_ms;	/* post to error completion, req_error() */

/*
 * Post BAD with a signaled 0-byte SEND behind it on side 0 of P: BAD must
 * complete with ST (or ALT), the SEND behind it with WR_FLUSH_ERR, the QP
 * must be in ERR and a send and a receive posted afterwards must be
 * flushed too.  Returns the status BAD completed with, -1 if none, -2 if
 * the post itself failed.
 */
static int req_error(struct pair *p, struct ibv_send_wr *bad,
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
static void resp_flushed(struct pair *p, const char *what)
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
static void resp_untouched(struct pair *p, const char *what)
{
	char w[200];

	snprintf(w, sizeof(w), "%s: responder (must be unaffected)", what);
	expect_quiet(p->s[1].rcq, QUIET_MS, w);
	check_state(p->s[1].qp, IBV_QPS_RTS, w);
}

static int post_recv0(struct side *s, uint64_t wr_id)
{
	return post_recv(s, wr_id, NULL, 0);
}

/* ------------------------------------------------------------------ */
/* data correctness cases                                               */

static void t_send_size(long len)
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

static void t_send_sges(long arg)
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

static void t_inline(long arg)
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

static void t_send_imm(long arg)
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
static void t_write(long len)
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
static void t_sqd(long arg)
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
static void t_write_scatter(long n)
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

static void t_write_imm(long arg)
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
static void t_read(long len)
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

static void set_u64(struct mbuf *b, size_t off, uint64_t v)
{
	memcpy(b->p + off, &v, 8);
	memcpy(b->exp + GUARD + off, &v, 8);
}

static void expect_u64(struct mbuf *b, size_t off, uint64_t v)
{
	memcpy(b->exp + GUARD + off, &v, 8);
}

/* One atomic from side 0: OP at rem+8, result into loc+OFF */
static void atomic1(struct pair *p, struct mbuf *rem, struct mbuf *loc,
		    size_t off, enum ibv_wr_opcode op, uint64_t a, uint64_t b,
		    const char *what)
{
	struct ibv_sge sg;
	struct ibv_wc wc;

	sge_set(&sg, loc, off, 8);
	if (post_atomic(&p->s[0], 60 + off, op, &sg, raddr(rem, 8),
			rem->mr->rkey, a, b))
		return;
	if (wait_wc(p->s[0].scq, &wc, what))
		check_wc(&wc, what, IBV_WC_SUCCESS,
			 op == IBV_WR_ATOMIC_FETCH_AND_ADD ? IBV_WC_FETCH_ADD :
			 IBV_WC_COMP_SWAP, p->s[0].qp->qp_num, 60 + off, 8);
}

static void t_atomic(long arg)
{
	const uint64_t v0 = 0x1122334455667788ULL, add = 0x0101010101010101ULL;
	const uint64_t v1 = v0 + add, v2 = 0xfedcba9876543210ULL;
	struct popts o = defaults();
	struct mbuf rem, loc;
	struct pair p;

	(void)arg;
	if (pair_open(&p, &o))
		return;
	if (!mbuf_get(&rem, 1, 24, ACC_ALL, false))
		goto out_pair;
	if (!mbuf_get(&loc, 0, 24, IBV_ACCESS_LOCAL_WRITE, false))
		goto out_rem;
	set_u64(&rem, 8, v0);
	atomic1(&p, &rem, &loc, 0, IBV_WR_ATOMIC_FETCH_AND_ADD, add, 0,
		"fetch-add");
	expect_u64(&loc, 0, v0);
	expect_u64(&rem, 8, v1);
	mbuf_verify(&loc, "fetch-add: returned original value");
	mbuf_verify(&rem, "fetch-add: remote value");

	atomic1(&p, &rem, &loc, 8, IBV_WR_ATOMIC_CMP_AND_SWP, v1, v2,
		"compare-swap (equal)");
	expect_u64(&loc, 8, v1);
	expect_u64(&rem, 8, v2);
	mbuf_verify(&loc, "compare-swap (equal): returned original value");
	mbuf_verify(&rem, "compare-swap (equal): remote value swapped");

	atomic1(&p, &rem, &loc, 16, IBV_WR_ATOMIC_CMP_AND_SWP, v1, v0,
		"compare-swap (not equal)");
	expect_u64(&loc, 16, v2);
	mbuf_verify(&loc, "compare-swap (not equal): returned original value");
	mbuf_verify(&rem, "compare-swap (not equal): remote value unchanged");
	mbuf_put(&loc);
out_rem:
	mbuf_put(&rem);
out_pair:
	pair_destroy(&p);
}

static void t_atomic_many(long arg)
{
	const uint64_t start = 1000000, add = 3;
	const int n = 1000;
	struct popts o = defaults();
	struct ibv_wc wc[64];
	struct mbuf rem, loc;
	int posted = 0, done = 0, i, got;
	struct ibv_sge sg;
	struct pair p;
	double t0;

	(void)arg;
	if (pair_open(&p, &o))
		return;
	if (!mbuf_get(&rem, 1, 16, ACC_ALL, false))
		goto out_pair;
	if (!mbuf_get(&loc, 0, n * 8, IBV_ACCESS_LOCAL_WRITE, false))
		goto out_rem;
	set_u64(&rem, 8, start);
	t0 = now_ms();
	while (done < n) {
		while (posted < n && posted - done < 64) {
			sge_set(&sg, &loc, posted * 8, 8);
			if (post_atomic(&p.s[0], posted, IBV_WR_ATOMIC_FETCH_AND_ADD,
					&sg, raddr(&rem, 8), rem.mr->rkey, add,
					0))
				goto out;
			posted++;
		}
		got = poll_wait(p.s[0].scq, wc, 1, WAIT_MS);
		if (got < 1) {
			failf("fetch-add %d of %d: no completion within %d s",
			      done, n, WAIT_MS / 1000);
			goto out;
		}
		i = ibv_poll_cq(p.s[0].scq, 63, wc + 1);
		if (i > 0)
			got += i;
		for (i = 0; i < got; i++, done++) {
			if (!check_wc(&wc[i], "fetch-add", IBV_WC_SUCCESS,
				      IBV_WC_FETCH_ADD, p.s[0].qp->qp_num,
				      done, 8))
				goto out;
		}
	}
	diag("1000 fetch-adds (16 outstanding reads/atomics) took %.0f ms",
	     now_ms() - t0);
	for (i = 0; i < n; i++)
		expect_u64(&loc, i * 8, start + add * i);
	expect_u64(&rem, 8, start + add * n);
	mbuf_verify(&rem, "remote counter after 1000 fetch-adds of 3");
	mbuf_verify(&loc, "the 1000 returned values (the i-th must be start + 3*i)");
out:
	mbuf_put(&loc);
out_rem:
	mbuf_put(&rem);
out_pair:
	pair_destroy(&p);
}

/* Every opcode in one chain: completion fields on both sides */
static void t_wc_fields(long arg)
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
static void t_unsignaled(long arg)
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
static void t_mw2_inv(long arg)
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
	mw = ibv_alloc_mw(g.pd[1], IBV_MW_TYPE_2);
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
static void t_mw2_stale(long arg)
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
	mw = ibv_alloc_mw(g.pd[1], IBV_MW_TYPE_2);
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
static void t_mw1(long arg)
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
	mw = ibv_alloc_mw(g.pd[1], IBV_MW_TYPE_1);
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

static void t_err_bad_rkey(long arg)
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
static void t_err_past_end(long arg)
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

static void t_err_read_noperm(long arg)
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
static void t_err_qp_access(long arg)
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

static void t_err_atomic_unaligned(long arg)
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
static void t_err_send_too_long(long arg)
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
static void t_err_lkey(long arg)
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
static void t_err_recv_lkey(long arg)
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

static void t_err_rnr0(long arg)
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
static void t_rnr7_late(long arg)
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

static void t_err_peer_gone(long arg)
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
/* misuse caught at post or verb time                                   */

static void t_post_reset(long arg)
{
	struct popts o = defaults();
	struct ibv_send_wr wr = {}, *bad = NULL;
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
	ret = ibv_post_send(p.s[0].qp, &wr, &bad);
	if (ret != EINVAL)
		failf("post_send in RESET returned %d (%s), expected EINVAL",
		      ret, ret ? strerror(abs(ret)) : "success");
	if (ret && bad != &wr)
		failf("post_send in RESET: bad_wr not set to the WR");
	init_attr(&a, QP_ACC_ALL);
	if (ibv_modify_qp(p.s[0].qp, &a, INIT_MASK)) {
		failf("modify to INIT failed");
		goto out;
	}
	/* connect: the rejected WRs must never surface */
	init_attr(&a, QP_ACC_ALL);
	if (ibv_modify_qp(p.s[1].qp, &a, INIT_MASK)) {
		failf("modify to INIT failed");
		goto out;
	}
	rtr_attr(&a, &o, &p.s[0], &p.s[1]);
	ret = ibv_modify_qp(p.s[0].qp, &a, RTR_MASK);
	rtr_attr(&a, &o, &p.s[1], &p.s[0]);
	ret = ret ? ret : ibv_modify_qp(p.s[1].qp, &a, RTR_MASK);
	rts_attr(&a, &o, &p.s[0]);
	ret = ret ? ret : ibv_modify_qp(p.s[0].qp, &a, RTS_MASK);
	rts_attr(&a, &o, &p.s[1]);
	ret = ret ? ret : ibv_modify_qp(p.s[1].qp, &a, RTS_MASK);
	if (ret) {
		failf("connecting after the rejected posts: %s", strerror(ret));
		goto out;
	}
	expect_quiet(p.s[0].scq, 50, "send CQ (the rejected WRs must never complete)");
	xfer_send(&p, 64, false, "SEND once connected");
	expect_quiet(p.s[0].scq, 50, "send CQ (the rejected WRs must never complete)");
out:
	mbuf_put(&src);
out_pair:
	pair_destroy(&p);
}

/* More SGEs than max_send_sge / max_recv_sge: 0 = max + 1, 1 = 1000 */
static void t_post_sges(long arg)
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

static void t_post_inline_big(long arg)
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
static void t_post_overflow(long arg)
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

static void t_create_absurd(long arg)
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
	cq = ibv_create_cq(g.ctx[0], 64, NULL, NULL, 0);
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
		qp = ibv_create_qp(g.pd[0], &ia);
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
	qp = ibv_create_qp(g.pd[0], &ia);
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

static void t_modify_invalid(long arg)
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
	bad_modify(s->qp, &a, RTS_MASK, "RESET -> RTS");
	rtr_attr(&a, &o, s, &p.s[1]);
	bad_modify(s->qp, &a, RTR_MASK, "RESET -> RTR");
	init_attr(&a, QP_ACC_ALL);
	a.port_num = 2;
	bad_modify(s->qp, &a, INIT_MASK, "RESET -> INIT with port_num 2");
	init_attr(&a, QP_ACC_ALL);
	a.port_num = 0;
	bad_modify(s->qp, &a, INIT_MASK, "RESET -> INIT with port_num 0");
	init_attr(&a, QP_ACC_ALL);
	a.pkey_index = 1000;
	bad_modify(s->qp, &a, INIT_MASK, "RESET -> INIT with pkey_index 1000");
	init_attr(&a, QP_ACC_ALL);
	a.qp_state = (enum ibv_qp_state)42;
	bad_modify(s->qp, &a, INIT_MASK, "qp_state 42");
	init_attr(&a, QP_ACC_ALL);
	bad_modify(s->qp, &a, IBV_QP_STATE,
		   "RESET -> INIT without the required attributes");

	init_attr(&a, QP_ACC_ALL);
	if (ibv_modify_qp(s->qp, &a, INIT_MASK) ||
	    ibv_modify_qp(p.s[1].qp, &a, INIT_MASK)) {
		failf("RESET -> INIT failed");
		goto out;
	}
	rts_attr(&a, &o, s);
	bad_modify(s->qp, &a, RTS_MASK, "INIT -> RTS (RTS before RTR)");
	rtr_attr(&a, &o, s, &p.s[1]);
	a.path_mtu = (enum ibv_mtu)7;
	bad_modify(s->qp, &a, RTR_MASK, "INIT -> RTR with path_mtu 7");
	rtr_attr(&a, &o, s, &p.s[1]);
	a.path_mtu = (enum ibv_mtu)0;
	bad_modify(s->qp, &a, RTR_MASK, "INIT -> RTR with path_mtu 0");
	rtr_attr(&a, &o, s, &p.s[1]);
	a.max_dest_rd_atomic = 255;
	bad_modify(s->qp, &a, RTR_MASK,
		   "INIT -> RTR with max_dest_rd_atomic 255 (> max_qp_rd_atom)");
	rtr_attr(&a, &o, s, &p.s[1]);
	a.ah_attr.grh.sgid_index = 250;
	/* the RDMA core looks the GID up first: ENODATA */
	bad_modify2(s->qp, &a, RTR_MASK, ENODATA,
		    "INIT -> RTR with sgid_index 250");
	rtr_attr(&a, &o, s, &p.s[1]);
	bad_modify(s->qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU,
		   "INIT -> RTR without AV/dest QPN/PSN");

	rtr_attr(&a, &o, s, &p.s[1]);
	if (ibv_modify_qp(s->qp, &a, RTR_MASK)) {
		failf("INIT -> RTR failed");
		goto out;
	}
	rts_attr(&a, &o, s);
	a.max_rd_atomic = 255;
	bad_modify(s->qp, &a, RTS_MASK,
		   "RTR -> RTS with max_rd_atomic 255 (> max_qp_init_rd_atom)");
	rts_attr(&a, &o, s);
	init_attr(&a, QP_ACC_ALL);
	bad_modify(s->qp, &a, INIT_MASK, "RTR -> INIT");

	/* the QP is still good: finish and use it */
	rtr_attr(&a, &o, &p.s[1], s);
	if (ibv_modify_qp(p.s[1].qp, &a, RTR_MASK)) {
		failf("peer INIT -> RTR failed");
		goto out;
	}
	rts_attr(&a, &o, s);
	if (ibv_modify_qp(s->qp, &a, RTS_MASK)) {
		failf("RTR -> RTS after the rejected modifies failed");
		goto out;
	}
	rts_attr(&a, &o, &p.s[1]);
	if (ibv_modify_qp(p.s[1].qp, &a, RTS_MASK)) {
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
static void t_modify_range(long arg)
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
		if (ibv_modify_qp(p.s[0].qp, &a, INIT_MASK)) {
			failf("RESET -> INIT failed");
			goto next;
		}
		rtr_attr(&a, &o, &p.s[0], &p.s[1]);
		if (rts && ibv_modify_qp(p.s[0].qp, &a, RTR_MASK)) {
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
		ret = ibv_modify_qp(p.s[0].qp, &a, rts ? RTS_MASK : RTR_MASK);
		if (ret) {
			diag("%s: rejected (%s)", rf[i].what, strerror(ret));
			goto next;
		}
		if (ibv_query_qp(p.s[0].qp, &q, RTR_MASK | RTS_MASK, &init)) {
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

static void t_destroy_busy(long arg)
{
	struct ibv_qp_init_attr ia = {};
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int ret;

	(void)arg;
	pd = ibv_alloc_pd(g.ctx[0]);
	cq = ibv_create_cq(g.ctx[0], 16, NULL, NULL, 0);
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

static void t_hol(long arg)
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
	if (!strncmp(g.name[0], "shca", 4) &&
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

/* ------------------------------------------------------------------ */
/* driver                                                               */

struct tcase {
	const char *name;
	void (*fn)(long arg);
	long arg;
};

static const struct tcase cases[] = {
	{ "send_0: SEND 0 bytes", t_send_size, 0 },
	{ "send_1: SEND 1 byte", t_send_size, 1 },
	{ "send_4095: SEND 4095 bytes, MTU 1024", t_send_size, 4095 },
	{ "send_4096: SEND 4096 bytes, MTU 1024", t_send_size, 4096 },
	{ "send_4097: SEND 4097 bytes, MTU 1024", t_send_size, 4097 },
	{ "send_64k: SEND 65536 bytes, MTU 1024", t_send_size, 65536 },
	{ "send_1m: SEND 1 MiB, MTU 1024", t_send_size, MIB },
	{ "send_sges: 3 send SGEs into 4 receive SGEs", t_send_sges, 0 },
	{ "send_inline: inline SEND of max_inline_data bytes", t_inline, 0 },
	{ "send_imm: SEND_WITH_IMM", t_send_imm, 0 },
	{ "write_0: RDMA WRITE 0 bytes", t_write, 0 },
	{ "write_1: RDMA WRITE 1 byte", t_write, 1 },
	{ "write_1m: RDMA WRITE 1 MiB", t_write, MIB },
	{ "write_sges: RDMA WRITE from 3 SGEs", t_write, -1 },
	{ "write_scatter: RDMA WRITE from 30 scattered 40-byte SGEs", t_write_scatter, 30 },
	{ "write_imm: RDMA_WRITE_WITH_IMM", t_write_imm, 0 },
	{ "sqd: SQD finishes the WRITE in flight, holds the next", t_sqd, 0 },
	{ "read_1: RDMA READ 1 byte", t_read, 1 },
	{ "read_4096: RDMA READ 4096 bytes", t_read, 4096 },
	{ "read_1m: RDMA READ 1 MiB", t_read, MIB },
	{ "read_sges: RDMA READ into 3 SGEs", t_read, -1 },
	{ "atomic: fetch-add and compare-swap", t_atomic, 0 },
	{ "atomic_1000: 1000 fetch-adds end at the exact sum", t_atomic_many, 0 },
	{ "wc_fields: completion fields of every opcode", t_wc_fields, 0 },
	{ "unsignaled: sq_sig_all 0, unsignaled SENDs", t_unsignaled, 0 },
	{ "mw2_inv: type 2 MW, SEND_WITH_INV invalidates it", t_mw2_inv, 0 },
	{ "mw2_stale: type 2 MW unusable by QPs created after its QP", t_mw2_stale, 0 },
	{ "mw1: type 1 MW, WRITE inside and across its end", t_mw1, 0 },
	{ "err_rkey: WRITE with a bad rkey", t_err_bad_rkey, 0 },
	{ "err_past_end: WRITE across the MR's end", t_err_past_end, 0 },
	{ "err_past_end3: 3-packet WRITE across the MR's end", t_err_past_end, 1 },
	{ "err_before_start: WRITE across the MR's start", t_err_past_end, 2 },
	{ "err_read_noperm: READ from an MR without REMOTE_READ", t_err_read_noperm, 0 },
	{ "err_qp_nowrite: WRITE to a QP without REMOTE_WRITE", t_err_qp_access, 0 },
	{ "err_qp_noread: READ from a QP without REMOTE_READ", t_err_qp_access, 1 },
	{ "err_qp_noatomic: ATOMIC to a QP without REMOTE_ATOMIC", t_err_qp_access, 2 },
	{ "err_atomic_unaligned: ATOMIC to an unaligned address", t_err_atomic_unaligned, 0 },
	{ "err_send_long: SEND bigger than the receive buffer", t_err_send_too_long, 0 },
	{ "err_send_long3: 3-packet SEND bigger than the receive buffer", t_err_send_too_long, 1 },
	{ "err_lkey: SEND with a bad lkey", t_err_lkey, 0 },
	{ "err_lkey_range: SEND with an SGE past its MR", t_err_lkey, 1 },
	{ "err_read_ro: READ into an MR without LOCAL_WRITE", t_err_lkey, 2 },
	{ "err_recv_lkey: receive WR with a bad lkey", t_err_recv_lkey, 0 },
	{ "err_rnr0: no receive, rnr_retry 0", t_err_rnr0, 0 },
	{ "rnr7_late: rnr_retry 7, receive posted 200 ms late", t_rnr7_late, 0 },
	{ "rnr7_late3: same, 3-packet SEND", t_rnr7_late, 1 },
	{ "rnr7_late_pipe: same, 8 pipelined SENDs", t_rnr7_late, 2 },
	{ "err_peer_gone: destination QP destroyed, retry_cnt 2", t_err_peer_gone, 0 },
	{ "post_reset: post_send in RESET", t_post_reset, 0 },
	{ "post_sges: more SGEs than max_send_sge/max_recv_sge", t_post_sges, 0 },
	{ "post_sges_1000: 1000 SGEs", t_post_sges, 1 },
	{ "post_inline_big: inline SEND longer than max_inline_data", t_post_inline_big, 0 },
	{ "post_overflow: more WRs than max_send_wr/max_recv_wr", t_post_overflow, 0 },
	{ "create_absurd: ibv_create_qp with absurd caps", t_create_absurd, 0 },
	{ "modify_invalid: invalid transitions and attributes", t_modify_invalid, 0 },
	{ "modify_range: out-of-range fields", t_modify_range, 0 },
	{ "destroy_busy: destroy a CQ/PD in use", t_destroy_busy, 0 },
	{ "hol: an RNR-blocked QP does not block another", t_hol, 0 },
};

#define NUM_CASES ARRAY_SIZE(cases)

static int open_dev(struct ibv_device **list, int i)
{
	struct ibv_device **d;

	for (d = list; d && *d; d++)
		if (!strcmp(ibv_get_device_name(*d), g.name[i]))
			break;
	if (!d || !*d) {
		fprintf(stderr, "device %s not found\n", g.name[i]);
		return KSFT_SKIP;
	}
	g.ctx[i] = ibv_open_device(*d);
	if (!g.ctx[i]) {
		fprintf(stderr, "ibv_open_device(%s): %s\n", g.name[i],
			strerror(errno));
		return KSFT_FAIL;
	}
	if (ibv_query_device(g.ctx[i], &g.attr[i]))
		return KSFT_FAIL;
	/* cases compare counters around transfers of a few ms */
	counters_uncached(g.name[i]);
	if (g.gidx[i] < 0)
		g.gidx[i] = find_v4_gid(g.ctx[i]);
	if (g.gidx[i] < 0 || ibv_query_gid(g.ctx[i], 1, g.gidx[i], &g.gid[i])) {
		fprintf(stderr, "%s: no usable RoCE v2 GID\n", g.name[i]);
		return KSFT_FAIL;
	}
	g.pd[i] = ibv_alloc_pd(g.ctx[i]);
	if (!g.pd[i]) {
		fprintf(stderr, "ibv_alloc_pd(%s): %s\n", g.name[i],
			strerror(errno));
		return KSFT_FAIL;
	}
	return 0;
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-t FILTER] [-l] [DEV1 GIDX1 DEV2 GIDX2]\n",
		prog);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *filter = NULL;
	struct ibv_device **list;
	unsigned int i, n = 0, failed = 0;
	int opt, rc;

	g.name[0] = "shca_ns1";
	g.name[1] = "shca_ns2";
	g.gidx[0] = g.gidx[1] = -1;
	while ((opt = getopt(argc, argv, "t:l")) != -1) {
		switch (opt) {
		case 't':
			filter = optarg;
			break;
		case 'l':
			for (i = 0; i < NUM_CASES; i++)
				printf("%s\n", cases[i].name);
			return 0;
		default:
			usage(argv[0]);
		}
	}
	if (argc - optind == 4) {
		g.name[0] = argv[optind];
		g.gidx[0] = atoi(argv[optind + 1]);
		g.name[1] = argv[optind + 2];
		g.gidx[1] = atoi(argv[optind + 3]);
	} else if (argc != optind) {
		usage(argv[0]);
	}
	srandom((unsigned int)time(NULL) ^ (unsigned int)getpid());
	setvbuf(stdout, NULL, _IOLBF, 0);

	for (i = 0; i < NUM_CASES; i++)
		if (!filter || strstr(cases[i].name, filter))
			n++;
	printf("TAP version 13\n1..%u\n", n);
	list = ibv_get_device_list(NULL);
	rc = open_dev(list, 0);
	if (!rc)
		rc = open_dev(list, 1);
	if (rc) {
		printf("# devices not usable: %s %s\n", g.name[0], g.name[1]);
		for (i = 1; i <= n; i++)
			printf("%s %u - # SKIP devices not usable\n",
			       rc == KSFT_SKIP ? "ok" : "not ok", i);
		return rc;
	}
	diag("%s gid %d, %s gid %d; max_qp_rd_atom %d, max_sge %d",
	     g.name[0], g.gidx[0], g.name[1], g.gidx[1],
	     g.attr[0].max_qp_rd_atom, g.attr[0].max_sge);

	n = 0;
	for (i = 0; i < NUM_CASES; i++) {
		const struct tcase *tc = &cases[i];
		unsigned int f0 = nfail;
		double t0 = now_ms();

		if (filter && !strstr(tc->name, filter))
			continue;
		n++;
		why[0] = '\0';
		skip_why = NULL;
		ctr_snap(&snap0);
		tc->fn(tc->arg);
		if (nfail != f0) {
			char *line, *save = NULL;

			failed++;
			printf("not ok %u - %s\n", n, tc->name);
			for (line = strtok_r(why, "\n", &save); line;
			     line = strtok_r(NULL, "\n", &save))
				printf("# %s\n", line);
			ctr_diag(&snap0);
		} else if (skip_why) {
			printf("ok %u - %s # SKIP %s\n", n, tc->name, skip_why);
		} else {
			printf("ok %u - %s (%.0f ms)\n", n, tc->name,
			       now_ms() - t0);
		}
		fflush(stdout);
	}
	ibv_dealloc_pd(g.pd[0]);
	ibv_dealloc_pd(g.pd[1]);
	ibv_close_device(g.ctx[0]);
	ibv_close_device(g.ctx[1]);
	ibv_free_device_list(list);
	printf("# %u of %u cases failed\n", failed, n);
	return failed ? KSFT_FAIL : KSFT_PASS;
}
