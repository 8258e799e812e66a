// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_ring_test: a hostile process.  It writes garbage straight into the
 * rings it shares with the kernel (send queue, receive queue, completion
 * queue) and rings the doorbell itself with a raw post_send command.
 * Reserved fields, unused bytes and unknown flag bits of a WQE, and
 * driver input to a verb, are refused, as is a doorbell before RTS.
 * Each ring case must end in error completions or a QP in the error state:
 * never a kernel fault, an access outside the process's registered memory,
 * or harm to another QP (a bystander QP pair moves verified data after
 * every case).
 *
 *   shca_ring_test [-t FILTER] [DEV1 DEV2]
 *   shca_ring_test -i SECONDS [DEV1 DEV2]
 *
 * -i: open a QP pair, move some data, then keep the pair open and idle
 * for SECONDS (doorbell.sh checks that an idle device costs no CPU), and
 * print "idle" on stdout when the idle time begins.
 *
 * DEV1/DEV2 default to shca_ns1/shca_ns2 (two hosts joined by a veth).
 * The rings are found in /proc/self/maps (the uverbs mappings a create
 * call added) and checked against two known posts before any case trusts
 * them.  Prints TAP 13; exits 0 when every case passes, 1 when one
 * fails, 4 when the devices are missing.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "shca_test.h"
#include <rdma/ib_user_verbs.h>
#include <rdma/shca-abi.h>

#define WAIT_MS		SCALED_MS(10000)
#define BUF		65536
#define MAGIC1		0x5eed000000000001ULL
#define MAGIC2		0x5eed000000000002ULL
#define WR_HOSTILE	0xbad00000000000b5ULL

/* a mapped ring as this process sees it */
struct uring {
	uint8_t *base;
	size_t len;
	uint32_t stride;
};

struct ep {
	struct test_dev *d;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct uring cqr, sq, rq;
};

static struct test_dev devs[2] = { { .gidx = -1 }, { .gidx = -1 } };

/* ---- finding the rings ------------------------------------------------ */

static bool maps_has(const struct uverbs_maps *m, uintptr_t lo)
{
	int i;

	for (i = 0; i < m->n; i++)
		if (m->lo[i] == lo)
			return true;
	return false;
}

/* The largest (big) or smallest mapping in AFTER that BEFORE lacks. */
static bool maps_new(const struct uverbs_maps *before,
		     const struct uverbs_maps *after,
		     bool big, struct uring *r)
{
	size_t len;
	int i;

	r->base = NULL;
	r->len = 0;
	for (i = 0; i < after->n; i++) {
		if (maps_has(before, after->lo[i]))
			continue;
		len = after->hi[i] - after->lo[i];
		if (!r->base || (big ? len > r->len : len < r->len)) {
			r->base = (uint8_t *)after->lo[i];
			r->len = len;
		}
	}
	return r->base != NULL;
}

static struct shca_ring_ctrl *ctrl(const struct uring *r)
{
	return (struct shca_ring_ctrl *)r->base;
}

static uint8_t *slot(const struct uring *r, uint32_t idx)
{
	return r->base + SHCA_RING_DATA_OFFSET + (size_t)idx * r->stride;
}

/* Slot stride: distance between the slots holding wr_ids MAGIC1, MAGIC2. */
static bool find_stride(struct uring *r, const char *what)
{
	size_t off, o1 = 0, o2 = 0;
	uint64_t v;

	for (off = SHCA_RING_DATA_OFFSET; off + 8 <= r->len; off += 8) {
		memcpy(&v, r->base + off, 8);
		if (v == MAGIC1 && !o1)
			o1 = off;
		else if (v == MAGIC2 && !o2)
			o2 = off;
	}
	if (o1 != SHCA_RING_DATA_OFFSET || o2 <= o1) {
		failf("%s ring: posted wr_ids not found where the ABI puts them (%zu, %zu)",
		      what, o1, o2);
		return false;
	}
	r->stride = o2 - o1;
	return true;
}

/* ---- set-up ----------------------------------------------------------- */

static void ep_destroy(struct ep *e)
{
	if (e->qp)
		ibv_destroy_qp(e->qp);
	if (e->cq)
		ibv_destroy_cq(e->cq);
	if (e->mr)
		ibv_dereg_mr(e->mr);
	free(e->buf);
	memset(e, 0, sizeof(*e));
}

static bool ep_create(struct ep *e, struct test_dev *d)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 4,
			 .max_send_sge = 2, .max_recv_sge = 2 },
	};
	struct uverbs_maps m0, m1, m2;

	memset(e, 0, sizeof(*e));
	e->d = d;
	e->buf = aligned_alloc(4096, BUF);
	if (!e->buf)
		return false;
	memset(e->buf, 0, BUF);
	e->mr = ibv_reg_mr(d->pd, e->buf, BUF, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	uverbs_maps_read(&m0);
	e->cq = ibv_create_cq(d->ctx, 64, NULL, NULL, 0);
	uverbs_maps_read(&m1);
	if (!e->mr || !e->cq || !maps_new(&m0, &m1, true, &e->cqr)) {
		failf("%s: MR, CQ or its ring: %s", d->name, strerror(errno));
		return false;
	}
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	e->qp = ibv_create_qp(d->pd, &ia);
	uverbs_maps_read(&m2);
	if (!e->qp || !maps_new(&m1, &m2, true, &e->sq) ||
	    !maps_new(&m1, &m2, false, &e->rq) || e->sq.base == e->rq.base) {
		failf("%s: QP or its rings: %s", d->name, strerror(errno));
		return false;
	}
	return true;
}

static bool ep_connect(struct ep *e, const struct ep *peer)
{
	struct rc_path path = {
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		.mtu = IBV_MTU_1024,
		.dest_qpn = peer->qp->qp_num,
		.rq_psn = 100,
		.sq_psn = 100,
		.dgid = peer->d->gid,
		.sgid_index = e->d->gidx,
		.rd_atomic = 1,
		.min_rnr_timer = 1,
		.timeout = 12,
		.retry_cnt = 2,
		.rnr_retry = 2,
	};
	int ret = rc_connect(e->qp, &path, NULL);

	if (ret)
		errno = ret;
	return !ret;
}

static int post_send(struct ep *e, uint64_t wr_id, size_t off, size_t len)
{
	struct ibv_sge sg = {
		.addr = (uintptr_t)e->buf + off, .length = len,
		.lkey = e->mr->lkey,
	};
	struct send_args a = {
		.wr_id = wr_id, .op = IBV_WR_SEND, .sg = &sg, .nsge = 1,
		.flags = IBV_SEND_SIGNALED,
	};

	return post_send1(e->qp, &a);
}

static int post_recv(struct ep *e, uint64_t wr_id, size_t off, size_t len)
{
	struct ibv_sge sg = {
		.addr = (uintptr_t)e->buf + off, .length = len,
		.lkey = e->mr->lkey,
	};

	return post_recv1(e->qp, NULL, wr_id, &sg, 1);
}

/*
 * A connected pair whose rings were found and checked: two SENDs from
 * a to b with wr_ids MAGIC1/2 (b's receives carry the same ids) locate
 * the slots; their data arrives intact.
 */
static bool pair_open(struct ep *a, struct ep *b)
{
	struct ibv_wc wc[4];
	int i;

	if (!ep_create(a, &devs[0]) || !ep_create(b, &devs[1]))
		return false;
	if (!ep_connect(a, b) || !ep_connect(b, a)) {
		failf("connect: %s", strerror(errno));
		return false;
	}
	for (i = 0; i < 4096; i++)
		a->buf[i] = (uint8_t)(i * 7 + 3);
	if (post_recv(b, MAGIC1, 0, 4096) || post_recv(b, MAGIC2, 4096, 4096) ||
	    post_send(a, MAGIC1, 0, 2048) || post_send(a, MAGIC2, 2048, 2048)) {
		failf("posting the probe WRs: %s", strerror(errno));
		return false;
	}
	if (poll_wait(a->cq, wc, 2, WAIT_MS) != 2 ||
	    poll_wait(b->cq, wc + 2, 2, WAIT_MS) != 2) {
		failf("probe WRs did not complete");
		return false;
	}
	for (i = 0; i < 4; i++)
		if (wc[i].status != IBV_WC_SUCCESS) {
			failf("probe WR %d: %s", i,
			      ibv_wc_status_str(wc[i].status));
			return false;
		}
	if (memcmp(b->buf, a->buf, 2048) ||
	    memcmp(b->buf + 4096, a->buf + 2048, 2048)) {
		failf("probe data differs");
		return false;
	}
	if (!find_stride(&a->sq, "send") || !find_stride(&b->rq, "receive"))
		return false;
	if (ctrl(&a->sq)->prod != 2 || ctrl(&a->sq)->cons != 2) {
		failf("send ring indices %u/%u after two posts",
		      ctrl(&a->sq)->prod, ctrl(&a->sq)->cons);
		return false;
	}
	return true;
}

static void pair_close(struct ep *a, struct ep *b)
{
	ep_destroy(a);
	ep_destroy(b);
}

/* A raw command with @drv driver bytes after its core part. */
static int raw_cmd(struct ibv_context *ctx, uint32_t cmd, const void *core,
		   size_t core_len, const uint8_t *drv, size_t drv_len,
		   size_t out_words)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		uint8_t body[256];
	} req;
	size_t len = sizeof(req.hdr) + core_len + drv_len;

	memset(&req, 0, sizeof(req));
	req.hdr.command = cmd;
	req.hdr.in_words = len / 4;
	req.hdr.out_words = out_words;
	memcpy(req.body, core, core_len);
	if (drv_len)
		memcpy(req.body + core_len, drv, drv_len);
	if (write(ctx->cmd_fd, &req, len) != (ssize_t)len)
		return -errno;
	return 0;
}

/* The raw doorbell: a post_send command with no work requests. */
static int raw_doorbell(struct ibv_qp *qp)
{
	struct ib_uverbs_post_send_resp resp;
	struct ib_uverbs_post_send cmd = {
		.response = (uintptr_t)&resp,
		.qp_handle = qp->handle,
		.wqe_size = sizeof(struct ib_uverbs_send_wr),
	};

	memset(&resp, 0, sizeof(resp));
	return raw_cmd(qp->context, IB_USER_VERBS_CMD_POST_SEND, &cmd,
		       sizeof(cmd), NULL, 0, sizeof(resp) / 4);
}

static bool wait_state(struct ibv_qp *qp, int want, const char *what)
{
	double end = now_ms() + WAIT_MS;
	int st;

	do {
		st = qp_state(qp);
		if (st == want)
			return true;
		usleep(1000);
	} while (now_ms() < end);
	failf("%s: QP state %d, expected %d", what, st, want);
	return false;
}

/* ---- cases ------------------------------------------------------------- */

/* Write SQE at the next send slot (index 2), publish, ring. */
static void sq_hostile(struct ep *a, const struct shca_sqe *sqe,
		       const void *tail, size_t tail_len)
{
	uint8_t *s = slot(&a->sq, 2);

	memcpy(s, sqe, sizeof(*sqe));
	if (tail_len)
		memcpy(s + sizeof(*sqe), tail, tail_len);
	__atomic_store_n(&ctrl(&a->sq)->prod, 3, __ATOMIC_RELEASE);
	if (raw_doorbell(a->qp))
		failf("raw doorbell: %s", strerror(errno));
}

/* Expect the hostile WR to complete with STATUS and the QP to fail. */
static void expect_error(struct ep *a, struct ep *b,
			 enum ibv_wc_status status,
			 const char *what)
{
	struct ibv_wc wc;

	if (poll_wait(a->cq, &wc, 1, WAIT_MS) != 1) {
		failf("%s: no completion", what);
		return;
	}
	if (wc.wr_id != WR_HOSTILE || wc.status != status)
		failf("%s: completion wr_id %#llx status %s, expected %s",
		      what, (unsigned long long)wc.wr_id,
		      ibv_wc_status_str(wc.status), ibv_wc_status_str(status));
	wait_state(a->qp, IBV_QPS_ERR, what);
	/* nothing reached the peer: its receive buffer stayed untouched */
	if (poll_wait(b->cq, &wc, 1, 100) > 0 && wc.status == IBV_WC_SUCCESS)
		failf("%s: the peer received a message", what);
}

static void sqe_send(struct shca_sqe *q, uint16_t num_sge)
{
	memset(q, 0, sizeof(*q));
	q->wr_id = WR_HOSTILE;
	q->opcode = IBV_WR_SEND;
	q->flags = SHCA_SQE_F_SIGNALED;
	q->num_sge = num_sge;
}

static void t_bad_opcode(struct ep *a, struct ep *b)
{
	struct shca_sqe q;

	sqe_send(&q, 0);
	q.opcode = 0x7e;
	post_recv(b, 1, 0, 4096);
	sq_hostile(a, &q, NULL, 0);
	expect_error(a, b, IBV_WC_LOC_QP_OP_ERR, "unknown opcode");
}

static void t_num_sge(struct ep *a, struct ep *b)
{
	struct shca_sqe q;

	sqe_send(&q, 0xffff);
	post_recv(b, 1, 0, 4096);
	sq_hostile(a, &q, NULL, 0);
	expect_error(a, b, IBV_WC_LOC_QP_OP_ERR, "num_sge 65535");
}

static void t_inline_len(struct ep *a, struct ep *b)
{
	struct shca_sqe q;

	sqe_send(&q, 0);
	q.flags |= SHCA_SQE_F_INLINE;
	q.inline_len = 0x7fffffff;
	post_recv(b, 1, 0, 4096);
	sq_hostile(a, &q, NULL, 0);
	expect_error(a, b, IBV_WC_LOC_LEN_ERR, "inline_len 2^31-1");
}

static void t_len_overflow(struct ep *a, struct ep *b)
{
	struct shca_sge sg[2] = {
		{ (uintptr_t)a->buf, 0xfffffff0, a->mr->lkey },
		{ (uintptr_t)a->buf, 0x20, a->mr->lkey },
	};
	struct shca_sqe q;

	sqe_send(&q, 2);
	post_recv(b, 1, 0, 4096);
	sq_hostile(a, &q, sg, sizeof(sg));
	expect_error(a, b, IBV_WC_LOC_LEN_ERR, "SGE lengths wrap 32 bits");
}

static void t_bad_lkey(struct ep *a, struct ep *b)
{
	struct shca_sge sg = { (uintptr_t)a->buf, 64, a->mr->lkey ^ 0x5a5a00 };
	struct shca_sqe q;

	sqe_send(&q, 1);
	post_recv(b, 1, 0, 4096);
	sq_hostile(a, &q, &sg, sizeof(sg));
	expect_error(a, b, IBV_WC_LOC_PROT_ERR, "unknown lkey");
}

static void t_past_mr(struct ep *a, struct ep *b)
{
	struct shca_sge sg = { (uintptr_t)a->buf + BUF - 64, 4096,
			       a->mr->lkey };
	struct shca_sqe q;

	sqe_send(&q, 1);
	post_recv(b, 1, 0, 8192);
	sq_hostile(a, &q, &sg, sizeof(sg));
	expect_error(a, b, IBV_WC_LOC_PROT_ERR, "SGE past the MR's end");
}

static void t_kernel_addr(struct ep *a, struct ep *b)
{
	struct shca_sge sg = { 0xffff888000000000ULL, 64, a->mr->lkey };
	struct shca_sqe q;

	sqe_send(&q, 1);
	post_recv(b, 1, 0, 4096);
	sq_hostile(a, &q, &sg, sizeof(sg));
	expect_error(a, b, IBV_WC_LOC_PROT_ERR, "SGE at a kernel address");
}

static void t_prod_ahead(struct ep *a, struct ep *b)
{
	(void)b;
	__atomic_store_n(&ctrl(&a->sq)->prod, 2 + 0x100000, __ATOMIC_RELEASE);
	if (raw_doorbell(a->qp))
		failf("raw doorbell: %s", strerror(errno));
	wait_state(a->qp, IBV_QPS_ERR, "producer index 1M ahead");
}

static void t_prod_behind(struct ep *a, struct ep *b)
{
	(void)b;
	__atomic_store_n(&ctrl(&a->sq)->prod, 1, __ATOMIC_RELEASE);
	if (raw_doorbell(a->qp))
		failf("raw doorbell: %s", strerror(errno));
	wait_state(a->qp, IBV_QPS_ERR, "producer index behind the consumer");
}

/* Random bytes in 16 slots: whatever they mean, the kernel copes. */
static void t_random(struct ep *a, struct ep *b)
{
	struct ibv_wc wc[32];
	uint32_t i, j;
	int n, st;

	for (i = 0; i < 4; i++)
		post_recv(b, 10 + i, i * 4096, 4096);
	for (i = 2; i < 18; i++)
		for (j = 0; j < a->sq.stride; j++)
			slot(&a->sq, i)[j] = (uint8_t)random();
	__atomic_store_n(&ctrl(&a->sq)->prod, 18, __ATOMIC_RELEASE);
	if (raw_doorbell(a->qp))
		failf("raw doorbell: %s", strerror(errno));
	/* the engine consumes the ring or fails the QP, within the deadline */
	n = poll_wait(a->cq, wc, 16, 2000);
	st = qp_state(a->qp);
	if (n < 16 && st != IBV_QPS_ERR && ctrl(&a->sq)->cons != 18)
		failf("random slots: %d completions, QP state %d, cons %u",
		      n, st, ctrl(&a->sq)->cons);
}

/* A receive WQE claiming 2^32-1 SGEs: the receiver fails, not the kernel. */
static void t_rq_garbage(struct ep *a, struct ep *b)
{
	struct shca_rqe *r = (struct shca_rqe *)slot(&b->rq, 2);
	struct ibv_wc wc;

	r->wr_id = WR_HOSTILE;
	r->num_sge = 0xffffffff;
	__atomic_store_n(&ctrl(&b->rq)->prod, 3, __ATOMIC_RELEASE);
	post_send(a, 1, 0, 64);
	if (poll_wait(b->cq, &wc, 1, WAIT_MS) != 1) {
		failf("receiver: no completion for the bad RQE");
		return;
	}
	if (wc.status == IBV_WC_SUCCESS)
		failf("receiver: bad RQE completed successfully");
	wait_state(b->qp, IBV_QPS_ERR, "receiver with a bad RQE");
	/* the sender learns of it: an error completion, not a hang */
	if (poll_wait(a->cq, &wc, 1, WAIT_MS) != 1 ||
	    wc.status == IBV_WC_SUCCESS)
		failf("sender: expected an error completion");
}

/* CQ consumer index beyond the producer: overflow handling, no fault. */
static void t_cq_cons(struct ep *a, struct ep *b)
{
	struct pollfd pfd = { .fd = a->d->ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	bool got = false;
	double end;

	__atomic_store_n(&ctrl(&a->cqr)->cons, ctrl(&a->cqr)->prod + 1000,
			 __ATOMIC_RELEASE);
	post_recv(b, 1, 0, 4096);
	post_send(a, 1, 0, 64);
	end = now_ms() + WAIT_MS;
	while (!got && now_ms() < end) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (ibv_get_async_event(a->d->ctx, &ev))
			break;
		got = ev.event_type == IBV_EVENT_CQ_ERR;
		ibv_ack_async_event(&ev);
	}
	if (!got)
		failf("no IBV_EVENT_CQ_ERR for a CQ whose consumer ran ahead");
}

/* ---- what the ABI leaves undefined is refused -------------------------- */

/* A SEND of 64 bytes with one thing set the ABI does not define. */
static void sq_unclean(struct ep *a, struct ep *b, struct shca_sqe *q,
		       const char *what)
{
	struct shca_sge sg = { (uintptr_t)a->buf, 64, a->mr->lkey };

	post_recv(b, 1, 0, 4096);
	sq_hostile(a, q, &sg, sizeof(sg));
	expect_error(a, b, IBV_WC_LOC_QP_OP_ERR, what);
}

static void t_unknown_flag(struct ep *a, struct ep *b)
{
	struct shca_sqe q;

	sqe_send(&q, 1);
	q.flags |= 0x80;
	sq_unclean(a, b, &q, "flag bit 7");
}

/* no checksum offload: the bit is refused like an unknown one */
static void t_ip_csum(struct ep *a, struct ep *b)
{
	struct shca_sqe q;

	sqe_send(&q, 1);
	q.flags |= SHCA_SQE_F_IP_CSUM;
	sq_unclean(a, b, &q, "IP_CSUM flag");
}

static void t_rsvd(struct ep *a, struct ep *b)
{
	struct shca_sqe q;

	sqe_send(&q, 1);
	q.rsvd = 1;
	sq_unclean(a, b, &q, "rsvd");
}

static void t_rsvd1(struct ep *a, struct ep *b)
{
	struct shca_sqe q;

	sqe_send(&q, 1);
	q.rsvd1 = 1ULL << 63;
	sq_unclean(a, b, &q, "rsvd1");
}

/* the last byte of the union, which no RC SEND field covers */
static void t_send_union(struct ep *a, struct ep *b)
{
	struct shca_sqe q;

	sqe_send(&q, 1);
	q.u.raw[sizeof(q.u.raw) - 1] = 1;
	sq_unclean(a, b, &q, "SEND with a byte in the union");
}

static void t_write_rsvd(struct ep *a, struct ep *b)
{
	struct shca_sqe q;

	sqe_send(&q, 1);
	q.opcode = IBV_WR_RDMA_WRITE;
	q.u.rdma.remote_addr = (uintptr_t)b->buf + 8192;
	q.u.rdma.rkey = b->mr->rkey;
	q.u.rdma.rsvd = 1;
	sq_unclean(a, b, &q, "WRITE with u.rdma.rsvd");
	if (b->buf[8192])
		failf("WRITE with u.rdma.rsvd: its bytes landed at the peer");
}

/* immediate data on an opcode that carries none */
static void t_send_ex(struct ep *a, struct ep *b)
{
	struct shca_sqe q;

	sqe_send(&q, 1);
	q.ex = 0x12345678;
	sq_unclean(a, b, &q, "SEND with ex");
}

static void t_inline_len_no_flag(struct ep *a, struct ep *b)
{
	struct shca_sqe q;

	sqe_send(&q, 1);
	q.inline_len = 4;
	sq_unclean(a, b, &q, "inline_len without the inline flag");
}

/* An RQE whose reserved word is set fails the receiver, as a bad count. */
static void t_rqe_rsvd(struct ep *a, struct ep *b)
{
	struct shca_rqe *r = (struct shca_rqe *)slot(&b->rq, 2);
	struct shca_sge *sg = (struct shca_sge *)(r + 1);
	struct ibv_wc wc;

	sg->addr = (uintptr_t)b->buf;
	sg->length = 4096;
	sg->lkey = b->mr->lkey;
	r->wr_id = WR_HOSTILE;
	r->num_sge = 1;
	r->rsvd = 1;
	__atomic_store_n(&ctrl(&b->rq)->prod, 3, __ATOMIC_RELEASE);
	post_send(a, 1, 0, 64);
	if (poll_wait(b->cq, &wc, 1, WAIT_MS) != 1) {
		failf("receiver: no completion for the RQE with rsvd set");
		return;
	}
	if (wc.wr_id != WR_HOSTILE || wc.status == IBV_WC_SUCCESS)
		failf("receiver: RQE with rsvd set: wr_id %#llx status %s, expected an error",
		      (unsigned long long)wc.wr_id,
		      ibv_wc_status_str(wc.status));
	wait_state(b->qp, IBV_QPS_ERR, "receiver with rsvd set in an RQE");
}

static void raw_destroy_cq(struct ibv_context *ctx, uint32_t handle)
{
	struct ib_uverbs_destroy_cq_resp resp;
	struct ib_uverbs_destroy_cq d = {
		.response = (uintptr_t)&resp, .cq_handle = handle,
	};
	int ret = raw_cmd(ctx, IB_USER_VERBS_CMD_DESTROY_CQ, &d, sizeof(d),
			  NULL, 0, sizeof(resp) / 4);

	if (ret)
		failf("raw destroy_cq %u: %s", handle, strerror(-ret));
}

static void raw_dealloc_pd(struct ibv_context *ctx, uint32_t handle)
{
	struct ib_uverbs_dealloc_pd d = { .pd_handle = handle };
	int ret = raw_cmd(ctx, IB_USER_VERBS_CMD_DEALLOC_PD, &d, sizeof(d),
			  NULL, 0, 0);

	if (ret)
		failf("raw dealloc_pd %u: %s", handle, strerror(-ret));
}

/*
 * Driver input to create_cq and alloc_pd: zeros (a later provider's
 * request of fields this kernel lacks, left clear) are accepted, any
 * other byte is refused with EINVAL.
 */
static void t_udata(struct ep *a, struct ep *b)
{
	struct ibv_context *ctx = a->d->ctx;
	struct ib_uverbs_create_cq_resp cq_resp;
	struct ib_uverbs_alloc_pd_resp pd_resp;
	struct ib_uverbs_create_cq cq = {
		.response = (uintptr_t)&cq_resp, .cqe = 16,
		.comp_channel = -1,
	};
	struct ib_uverbs_alloc_pd pd = { .response = (uintptr_t)&pd_resp };
	uint8_t drv[16] = { 0 };
	int ret;

	(void)b;
	ret = raw_cmd(ctx, IB_USER_VERBS_CMD_CREATE_CQ, &cq, sizeof(cq), drv,
		      sizeof(drv), sizeof(cq_resp) / 4);
	if (ret)
		failf("create_cq with 16 zero driver bytes: %s", strerror(-ret));
	else
		raw_destroy_cq(ctx, cq_resp.cq_handle);
	drv[13] = 1;
	ret = raw_cmd(ctx, IB_USER_VERBS_CMD_CREATE_CQ, &cq, sizeof(cq), drv,
		      sizeof(drv), sizeof(cq_resp) / 4);
	if (ret != -EINVAL)
		failf("create_cq with a driver byte set: %s, expected EINVAL",
		      ret ? strerror(-ret) : "created");
	if (!ret)
		raw_destroy_cq(ctx, cq_resp.cq_handle);
	ret = raw_cmd(ctx, IB_USER_VERBS_CMD_ALLOC_PD, &pd, sizeof(pd), drv,
		      sizeof(drv), sizeof(pd_resp) / 4);
	if (ret != -EINVAL)
		failf("alloc_pd with a driver byte set: %s, expected EINVAL",
		      ret ? strerror(-ret) : "allocated");
	if (!ret)
		raw_dealloc_pd(ctx, pd_resp.pd_handle);
}

/* A doorbell before RTS is refused (rdma_rxe refuses posts there). */
static void t_doorbell_early(struct ep *a, struct ep *b)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC, .send_cq = a->cq, .recv_cq = a->cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr at = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	struct ibv_qp *qp = ibv_create_qp(a->d->pd, &ia);
	int ret;

	(void)b;
	if (!qp) {
		failf("ibv_create_qp: %s", strerror(errno));
		return;
	}
	if (raw_doorbell(qp) != -EINVAL)
		failf("doorbell in RESET accepted");
	if (ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
		failf("RESET -> INIT: %s", strerror(errno));
		goto out;
	}
	ret = raw_doorbell(qp);
	if (ret != -EINVAL)
		failf("doorbell in INIT: %s, expected EINVAL",
		      ret ? strerror(-ret) : "accepted");
out:
	ibv_destroy_qp(qp);
}

/* A bystander pair keeps working. */
static void bystander(void)
{
	struct ep a, b;

	if (!pair_open(&a, &b))
		failf("bystander pair failed after the case");
	pair_close(&a, &b);
}

static const struct {
	const char *name;
	void (*fn)(struct ep *a, struct ep *b);
} cases[] = {
	{ "sq: unknown opcode", t_bad_opcode },
	{ "sq: num_sge beyond the slot", t_num_sge },
	{ "sq: inline length beyond the slot", t_inline_len },
	{ "sq: SGE lengths wrap 32 bits", t_len_overflow },
	{ "sq: unknown lkey", t_bad_lkey },
	{ "sq: SGE past the MR's end", t_past_mr },
	{ "sq: SGE at a kernel address", t_kernel_addr },
	{ "sq: producer index 1M ahead", t_prod_ahead },
	{ "sq: producer index behind the consumer", t_prod_behind },
	{ "sq: random bytes in 16 slots", t_random },
	{ "rq: RQE with 2^32-1 SGEs", t_rq_garbage },
	{ "cq: consumer index ahead of the producer", t_cq_cons },
	{ "sq: unknown flag bit", t_unknown_flag },
	{ "sq: IP_CSUM flag (no checksum offload)", t_ip_csum },
	{ "sq: rsvd set", t_rsvd },
	{ "sq: rsvd1 set", t_rsvd1 },
	{ "sq: SEND with a byte in the unused union", t_send_union },
	{ "sq: RDMA WRITE with u.rdma.rsvd set", t_write_rsvd },
	{ "sq: immediate data on a plain SEND", t_send_ex },
	{ "sq: inline length without the inline flag", t_inline_len_no_flag },
	{ "rq: RQE with rsvd set", t_rqe_rsvd },
	{ "verbs: driver input to create_cq and alloc_pd", t_udata },
	{ "verbs: doorbell before RTS", t_doorbell_early },
};

/* -i: an idle process holding a QP pair that was busy a moment ago */
static int idle_pair(int seconds)
{
	struct ep a, b;
	int ok;

	ok = pair_open(&a, &b);
	if (ok) {
		printf("idle\n");
		sleep(seconds);
	} else {
		why_flush();
	}
	pair_close(&a, &b);
	return ok ? 0 : KSFT_FAIL;
}

int main(int argc, char **argv)
{
	const char *filter = NULL;
	int idle = 0;
	unsigned int i, n = 0, nfailed = 0, f0;
	int opt, rc;

	devs[0].name = "shca_ns1";
	devs[1].name = "shca_ns2";
	while ((opt = getopt(argc, argv, "t:i:")) != -1) {
		if (opt == 't') {
			filter = optarg;
		} else if (opt == 'i') {
			idle = atoi(optarg);
		} else {
			fprintf(stderr, "usage: %s [-t FILTER | -i SECONDS] [DEV1 DEV2]\n",
				argv[0]);
			return 2;
		}
	}
	if (argc - optind == 2) {
		devs[0].name = argv[optind];
		devs[1].name = argv[optind + 1];
	}
	srandom((unsigned int)time(NULL) ^ (unsigned int)getpid());
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (idle) {
		rc = tdev_open_pair(devs);
		return rc ? rc : idle_pair(idle);
	}
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		if (!filter || strstr(cases[i].name, filter))
			n++;
	printf("TAP version 13\n1..%u\n", n);
	rc = tdev_open_pair(devs);
	if (rc)
		return tap_skip_all(n, rc, devs);
	n = 0;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct ep a, b;

		if (filter && !strstr(cases[i].name, filter))
			continue;
		n++;
		why[0] = '\0';
		f0 = nfail;
		if (pair_open(&a, &b))
			cases[i].fn(&a, &b);
		pair_close(&a, &b);
		bystander();
		printf("%sok %u - %s\n", nfail != f0 ? "not " : "", n,
		       cases[i].name);
		if (nfail != f0)
			nfailed++;
		why_flush();
	}
	printf("# %u of %u cases failed\n", nfailed, n);
	return nfailed ? KSFT_FAIL : 0;
}
