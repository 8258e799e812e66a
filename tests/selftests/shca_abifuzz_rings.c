// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_abifuzz_test phase (c): random writes into the rings shared with
 * the kernel (send, receive, SRQ and completion rings, their producer,
 * consumer, flags and arm words), each followed by a raw doorbell, while
 * a bystander RC pair moves verified data after every round.  The victims
 * are destroyed through libibverbs at the end of each round, whatever
 * their rings hold.  Also the bystander pair of the other phases.
 */

#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>
#include <rdma/shca-abi.h>

#include "shca_abifuzz.h"

#define PAIR_WAIT_MS	SCALED_MS(5000)

/* ---- a verified RC pair between the first two devices ---------------- */

bool pair_open(struct fz_pair *pr, size_t len, int sq, int rq)
{
	struct rc_path path[2];
	int i;

	memset(pr, 0, sizeof(*pr));
	pr->len = len;
	for (i = 0; i < 2; i++) {
		struct fz_dev *dv = &G.dev[i % G.ndev];
		struct ibv_qp_init_attr ia = {
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = (uint32_t)sq,
				 .max_recv_wr = (uint32_t)rq,
				 .max_send_sge = 2, .max_recv_sge = 2 },
		};

		pr->buf[i] = zalloc(2 * len);
		pr->pd[i] = ibv_alloc_pd(dv->ctx);
		pr->cq[i] = ibv_create_cq(dv->ctx, sq + rq, NULL, NULL, 0);
		if (!pr->buf[i] || !pr->pd[i] || !pr->cq[i])
			return false;
		pr->mr[i] = ibv_reg_mr(pr->pd[i], pr->buf[i], 2 * len,
				       IBV_ACCESS_LOCAL_WRITE | QP_ACC_ALL);
		ia.send_cq = ia.recv_cq = pr->cq[i];
		pr->qp[i] = ibv_create_qp(pr->pd[i], &ia);
		if (!pr->mr[i] || !pr->qp[i])
			return false;
	}
	for (i = 0; i < 2; i++) {
		const struct fz_dev *peer = &G.dev[(i + 1) % 2 % G.ndev];

		path[i] = (struct rc_path) {
			.access = QP_ACC_ALL, .mtu = IBV_MTU_1024,
			.dest_qpn = pr->qp[1 - i]->qp_num, .rq_psn = 7,
			.sq_psn = 7, .dgid = peer->gid,
			.sgid_index = G.dev[i % G.ndev].gidx, .rd_atomic = 4,
			.min_rnr_timer = 1, .timeout = 14, .retry_cnt = 7,
			.rnr_retry = 7,
		};
	}
	return !rc_connect_pair(pr->qp, path, NULL, NULL);
}

void pair_close(struct fz_pair *pr)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (pr->qp[i])
			ibv_destroy_qp(pr->qp[i]);
		if (pr->cq[i])
			ibv_destroy_cq(pr->cq[i]);
		if (pr->mr[i])
			ibv_dereg_mr(pr->mr[i]);
		if (pr->pd[i])
			ibv_dealloc_pd(pr->pd[i]);
		free(pr->buf[i]);
	}
	memset(pr, 0, sizeof(*pr));
}

static bool pair_wait(struct fz_pair *pr, int side, int n, const char *what)
{
	struct ibv_wc wc[4];
	int got = poll_wait(pr->cq[side], wc, n, PAIR_WAIT_MS), k;

	if (got != n) {
		fz_bad("bystander %s: %d of %d completions", what, got, n);
		return false;
	}
	for (k = 0; k < n; k++)
		if (wc[k].status != IBV_WC_SUCCESS) {
			fz_bad("bystander %s: %s", what,
			       ibv_wc_status_str(wc[k].status));
			return false;
		}
	return true;
}

bool pair_verify(struct fz_pair *pr, uint32_t seed)
{
	size_t len = pr->len;
	int s;

	fz_doing("bystander");
	for (s = 0; s < 2; s++) {
		int o = 1 - s;
		struct ibv_sge sg = { (uintptr_t)pr->buf[s], (uint32_t)len,
				      pr->mr[s]->lkey };
		struct ibv_sge rg = { (uintptr_t)pr->buf[o] + len, (uint32_t)len,
				      pr->mr[o]->lkey };
		struct send_args send = { .wr_id = 1, .op = IBV_WR_SEND,
					  .sg = &sg, .nsge = 1,
					  .flags = IBV_SEND_SIGNALED };
		struct send_args write = { .wr_id = 2, .op = IBV_WR_RDMA_WRITE,
					   .sg = &sg, .nsge = 1,
					   .flags = IBV_SEND_SIGNALED,
					   .raddr = (uintptr_t)pr->buf[o],
					   .rkey = pr->mr[o]->rkey };

		memset(pr->buf[o], 0, 2 * len);
		pattern(pr->buf[s], len, seed + (uint32_t)s);
		if (post_recv1(pr->qp[o], NULL, 3, &rg, 1) ||
		    post_send1(pr->qp[s], &write) ||
		    post_send1(pr->qp[s], &send)) {
			fz_bad("bystander: post failed: %s", strerror(errno));
			return false;
		}
		if (!pair_wait(pr, s, 2, "sender") ||
		    !pair_wait(pr, o, 1, "receiver"))
			return false;
		if (memcmp(pr->buf[o], pr->buf[s], len) ||
		    memcmp(pr->buf[o] + len, pr->buf[s], len)) {
			fz_bad("bystander: data differs (side %d)", s);
			return false;
		}
	}
	return true;
}

/* ---- victims ---------------------------------------------------------- */

/* Record the mappings a create added, with the slot size we asked for */
static void note_rings(struct victim *v, const struct uverbs_maps *before,
		       const uint32_t *strides, int n, int dev)
{
	struct uverbs_maps after;
	int got, k;

	uverbs_maps_read(&after);
	got = maps_new(before, &after, v->ring + v->nring, n);
	for (k = 0; k < got; k++) {
		v->stride[v->nring + k] = strides[k];
		v->rdev[v->nring + k] = dev;
	}
	v->nring += got;
}

bool victim_open(struct victim *v, uint8_t *buf, size_t len)
{
	static const uint32_t cq_stride[] = { 64 };
	static const uint32_t qp_stride[] = { 128, 64 };
	static const uint32_t srq_stride[] = { 64 };
	struct uverbs_maps m;
	int i;

	memset(v, 0, sizeof(*v));
	for (i = 0; i < 2; i++) {
		struct ibv_context *ctx = G.dev[i % G.ndev].ctx;
		struct ibv_qp_init_attr ia = {
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = VQ_SQ, .max_recv_wr = VQ_RQ,
				 .max_send_sge = 2, .max_recv_sge = 2 },
		};

		v->pd[i] = ibv_alloc_pd(ctx);
		if (!v->pd[i])
			return false;
		v->mr[i] = ibv_reg_mr(v->pd[i], buf + i * len / 2, len / 2,
				      IBV_ACCESS_LOCAL_WRITE | QP_ACC_ALL);
		uverbs_maps_read(&m);
		v->cq[i] = ibv_create_cq(ctx, 128, NULL, NULL, 0);
		if (!v->mr[i] || !v->cq[i])
			return false;
		note_rings(v, &m, cq_stride, 1, i);
		ia.send_cq = ia.recv_cq = v->cq[i];
		uverbs_maps_read(&m);
		v->qp[i] = ibv_create_qp(v->pd[i], &ia);
		if (!v->qp[i])
			return false;
		note_rings(v, &m, qp_stride, 2, i);
	}
	{
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16,
							  .max_sge = 2 } };
		struct ibv_qp_init_attr ia = {
			.qp_type = IBV_QPT_UD, .send_cq = v->cq[0],
			.recv_cq = v->cq[0],
			.cap = { .max_send_wr = VQ_SQ, .max_send_sge = 2 },
		};
		struct ibv_ah_attr aa = {
			.is_global = 1, .port_num = 1,
			.grh = { .dgid = G.dev[0].gid, .hop_limit = 64,
				 .sgid_index = (uint8_t)G.dev[0].gidx },
		};

		uverbs_maps_read(&m);
		v->srq = ibv_create_srq(v->pd[0], &sa);
		if (!v->srq)
			return false;
		note_rings(v, &m, srq_stride, 1, 0);
		ia.srq = v->srq;
		uverbs_maps_read(&m);
		v->qp[2] = ibv_create_qp(v->pd[0], &ia);
		if (!v->qp[2])
			return false;
		note_rings(v, &m, qp_stride, 1, 0);
		v->ah = ibv_create_ah(v->pd[0], &aa);
	}
	/* what the raw users need, kept apart from libibverbs' objects */
	for (i = 0; i < 3; i++) {
		v->qph[i] = v->qp[i]->handle;
		v->qctx[i] = v->qp[i]->context;
	}
	for (i = 0; i < 2; i++) {
		v->cqh[i] = v->cq[i]->handle;
		v->mrc[i] = *v->mr[i];
	}
	v->srqh = v->srq->handle;
	return true;
}

void victim_close(struct victim *v)
{
	int i;

	fz_doing("destroy victims");
	for (i = 0; i < 3; i++)
		if (v->qp[i] && ibv_destroy_qp(v->qp[i]))
			fz_bad("destroy of a victim QP failed: %s", strerror(errno));
	if (v->ah)
		ibv_destroy_ah(v->ah);
	if (v->srq && ibv_destroy_srq(v->srq))
		fz_bad("destroy of a victim SRQ failed: %s", strerror(errno));
	for (i = 0; i < 2; i++) {
		if (v->cq[i] && ibv_destroy_cq(v->cq[i]))
			fz_bad("destroy of a victim CQ failed: %s", strerror(errno));
		if (v->mr[i])
			ibv_dereg_mr(v->mr[i]);
		if (v->pd[i] && ibv_dealloc_pd(v->pd[i]))
			fz_bad("dealloc of a victim PD failed: %s", strerror(errno));
	}
}

/* A victim QP in RTS: the RC pair connected, the UD QP ready */
void victim_connect(struct victim *v)
{
	struct rc_path path[2];
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = 0x11111111 };
	int i;

	for (i = 0; i < 2; i++)
		path[i] = (struct rc_path) {
			.access = QP_ACC_ALL, .mtu = IBV_MTU_1024,
			.dest_qpn = v->qp[1 - i]->qp_num,
			.dgid = G.dev[(1 - i) % G.ndev].gid,
			.sgid_index = G.dev[i % G.ndev].gidx, .rd_atomic = 2,
			.timeout = 8, .retry_cnt = 1, .rnr_retry = 1,
		};
	rc_connect_pair(v->qp, path, NULL, NULL);
	ibv_modify_qp(v->qp[2], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
		      IBV_QP_PORT | IBV_QP_QKEY);
	a.qp_state = IBV_QPS_RTR;
	ibv_modify_qp(v->qp[2], &a, IBV_QP_STATE);
	a.qp_state = IBV_QPS_RTS;
	ibv_modify_qp(v->qp[2], &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/* A SQE with one field (or more) wrong, or all of it random */
static void sqe_garbage(struct fz_rng *r, uint8_t *slot, uint32_t stride,
			const struct ibv_mr *mr)
{
	struct shca_sqe *q = (struct shca_sqe *)slot;
	struct shca_sge *sg = (struct shca_sge *)(q + 1);
	uint32_t k, nsge = (stride - sizeof(*q)) / sizeof(*sg);

	if (chance(r, 20)) {
		for (k = 0; k < stride; k++)
			slot[k] = (uint8_t)rnd(r, 256);
		return;
	}
	memset(q, 0, sizeof(*q));
	q->wr_id = rnd64(r);
	q->opcode = (uint8_t)(chance(r, 80) ? rnd(r, 16) : rnd(r, 256));
	q->flags = (uint8_t)(chance(r, 80) ? SHCA_SQE_F_SIGNALED | rnd(r, 8) :
			     rnd(r, 256));
	q->num_sge = (uint16_t)(chance(r, 80) ? rnd(r, nsge + 1) :
				rnd(r, 65536));
	q->inline_len = chance(r, 80) ? rnd(r, stride) : (uint32_t)rnd64(r);
	q->ex = (uint32_t)rnd64(r);
	for (k = 0; k < sizeof(q->u.raw); k++)
		q->u.raw[k] = (uint8_t)rnd(r, 256);
	if (chance(r, 60)) {
		q->u.rdma.remote_addr = (uintptr_t)mr->addr + rnd(r, 8192);
		q->u.rdma.rkey = chance(r, 80) ? mr->rkey : (uint32_t)rnd64(r);
	}
	for (k = 0; k < nsge; k++) {
		sg[k].addr = chance(r, 80) ? (uintptr_t)mr->addr +
			     rnd(r, (uint32_t)mr->length) :
			     (chance(r, 50) ? 0xffff888000000000ULL : rnd64(r));
		sg[k].length = chance(r, 80) ? rnd(r, 4096) : (uint32_t)rnd64(r);
		sg[k].lkey = chance(r, 80) ? mr->lkey : (uint32_t)rnd64(r);
	}
}

static void ctrl_garbage(struct fz_rng *r, struct shca_ring_ctrl *c)
{
	uint32_t v;

	switch (rnd(r, 4)) {
	case 0: v = (uint32_t)rnd64(r); break;
	case 1: v = c->cons + rnd(r, 300); break;
	case 2: v = c->prod - rnd(r, 4); break;
	default: v = c->prod + 1 + rnd(r, 8); break;
	}
	switch (rnd(r, 6)) {
	case 0: __atomic_store_n(&c->prod, v, __ATOMIC_RELEASE); break;
	case 1: __atomic_store_n(&c->cons, v, __ATOMIC_RELEASE); break;
	case 2: c->flags = (uint32_t)rnd64(r); break;
	case 3: c->arm = (uint32_t)rnd64(r); break;
	case 4: c->arm_ack = (uint32_t)rnd64(r); break;
	default: c->rsvd0[rnd(r, 15)] = (uint32_t)rnd64(r); break;
	}
}

int hostile(struct fz_rng *r, struct victim *v, bool raw_only)
{
	int ri = (int)rnd(r, (uint32_t)v->nring), q = (int)rnd(r, 3);
	struct fz_ring *ring = &v->ring[ri];
	uint32_t stride = v->stride[ri], slots, idx;
	struct shca_ring_ctrl *c = (struct shca_ring_ctrl *)ring->base;
	struct ibv_context *ctx = v->qctx[q];
	struct ibv_qp_attr a = {};

	slots = (uint32_t)((ring->len - SHCA_RING_DATA_OFFSET) / stride);
	switch (rnd(r, 8)) {
	case 0: case 1: case 2:	/* a bad SQE at the producer index, published */
		idx = c->prod;
		sqe_garbage(r, ring->base + SHCA_RING_DATA_OFFSET +
			    (size_t)(idx % slots) * stride, stride,
			    &v->mrc[q == 1]);
		__atomic_store_n(&c->prod, idx + 1 + rnd(r, 2),
				 __ATOMIC_RELEASE);
		break;
	case 3:			/* random bytes anywhere in a ring */
		idx = rnd(r, (uint32_t)ring->len - 8);
		memcpy(ring->base + idx, &(uint64_t){ rnd64(r) }, 8);
		break;
	case 4:
		ctrl_garbage(r, c);
		break;
	case 5:			/* the state machine under it */
		if (raw_only)
			break;
		a.qp_state = (enum ibv_qp_state)rnd(r, 7);
		fz_doing("victim modify_qp");
		ibv_modify_qp(v->qp[q], &a, IBV_QP_STATE);
		return 1;
	default:
		break;
	}
	fz_doing("victim doorbell");
	switch (rnd(r, 4)) {
	case 0: raw_db_recv(ctx, v->qph[q]); break;
	case 1: raw_db_srq(v->qctx[0], v->srqh); break;
	case 2: raw_req_notify(ctx, v->cqh[q == 1], (int)rnd(r, 2)); break;
	default: raw_db_send(ctx, v->qph[q]); break;
	}
	return 2;
}

uint64_t phase_rings(uint64_t calls)
{
	struct fz_rng r = { G.seed ^ 0x5249e65ULL };
	uint64_t n = 0;
	struct fz_pair by;
	uint8_t *vbuf;
	int round = 0, rounds = (int)(calls / 400) + 2, k;

	vbuf = zalloc(1 << 16);
	if (!vbuf || !pair_open(&by, 4096, 16, 16) || !pair_verify(&by, 1)) {
		fz_bad("rings: the bystander pair does not work to begin with");
		pair_close(&by);
		free(vbuf);
		return 0;
	}
	while (round < rounds) {
		struct victim v;

		fz_doing("victim create");
		if (!victim_open(&v, vbuf, 1 << 16) || v.nring < 8) {
			fz_bad("rings: victims (round %d): %s, %d rings found",
			       round, strerror(errno), v.nring);
			victim_close(&v);
			break;
		}
		victim_connect(&v);
		n += 16;
		for (k = 0; k < 40; k++)
			n += (uint64_t)hostile(&r, &v, false);
		sleep_ms(5);
		victim_close(&v);
		n += 12;
		if (!pair_verify(&by, (uint32_t)round + 2))
			break;
		n += 6;
		round++;
	}
	printf("# rings: %d rounds of 40 hostile writes, bystander verified after each\n",
	       round);
	pair_close(&by);
	free(vbuf);
	return n;
}
