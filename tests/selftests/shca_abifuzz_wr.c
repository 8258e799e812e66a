// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_abifuzz_test: what goes through the QPs.  Random send and receive
 * work requests (every opcode, bad keys, SGE counts and inline sizes past
 * the QP's, misaligned atomics), window binds, polls and notifications,
 * and the checks of what they return.
 */

#define _GNU_SOURCE
#include <stdlib.h>

#include "shca_abifuzz.h"

static struct ibv_qp *qp_of(struct fz_pool *p, int i)
{
	return p->o[K_QP][i].p;
}

#define FZ_MAX_NSGE	40

/* ---- work requests ------------------------------------------------------ */

/* A local SGE on device @dev: in an MR mostly, else anything */
static void rnd_sge(struct fz_pool *p, int dev, struct ibv_sge *s, bool inl)
{
	struct fz_rng *r = &p->rng;
	int m = pick(p, K_MR, dev);
	struct ibv_mr *mr = m >= 0 ? p->o[K_MR][m].p : NULL;

	if (inl) {
		/* the provider copies inline data: readable memory only */
		s->length = chance(r, 80) ? rnd(r, 128) : rnd(r, 1024);
		s->addr = (uintptr_t)G.arena + p->arena_off +
			  rnd(r, (uint32_t)(p->arena_len - 1024));
		s->lkey = (uint32_t)rnd64(r);
		return;
	}
	s->lkey = mr && chance(r, 90) ? mr->lkey : (uint32_t)rnd64(r);
	s->addr = mr ? (uintptr_t)mr->addr + rnd(r, (uint32_t)mr->length + 1) :
		  (uintptr_t)G.arena + p->arena_off;
	if (chance(r, 5))
		s->addr = rnd64(r);
	switch (rnd(r, 8)) {
	case 0: s->length = 0; break;
	case 1: s->length = 0x80000000U; break;
	case 2: s->length = 0xffffffffU; break;
	case 3: s->length = mr ? (uint32_t)mr->length : 4096; break;
	default: s->length = rnd(r, 4096); break;
	}
}

/* A remote address and key: an MR or window anywhere, or nothing */
static void rnd_remote(struct fz_pool *p, uint64_t *addr, uint32_t *rkey,
		       bool atomic)
{
	struct fz_rng *r = &p->rng;
	int m = pick(p, K_MR, -1), w = pick(p, K_MW, -1);
	struct ibv_mr *mr = m >= 0 ? p->o[K_MR][m].p : NULL;

	*rkey = mr ? mr->rkey : (uint32_t)rnd64(r);
	if (w >= 0 && chance(r, 20))
		*rkey = ((struct ibv_mw *)p->o[K_MW][w].p)->rkey;
	if (chance(r, 5))
		*rkey = (uint32_t)rnd64(r);
	*addr = mr ? (uintptr_t)mr->addr + rnd(r, (uint32_t)mr->length + 64) :
		rnd64(r);
	if (atomic && chance(r, 70))
		*addr &= ~7ULL;
}

static bool has_data(int op)
{
	return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM ||
	       op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM ||
	       op == IBV_WR_RDMA_READ || op == IBV_WR_SEND_WITH_INV;
}

void op_post_send(struct fz_pool *p)
{
	static const enum ibv_wr_opcode common[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_LOCAL_INV, IBV_WR_SEND_WITH_INV, IBV_WR_BIND_MW,
		IBV_WR_SEND, IBV_WR_RDMA_WRITE,
	};
	struct fz_rng *r = &p->rng;
	struct ibv_sge sg[4][FZ_MAX_NSGE];
	struct ibv_send_wr wr[4], *bad = NULL;
	int i = pick(p, K_QP, -1), n, k, j, ah = -1, ret;
	struct fz_obj *o;

	if (i < 0)
		return;
	o = &p->o[K_QP][i];
	if (o->type == IBV_QPT_UD) {
		ah = pick(p, K_AH, o->dev);
		if (ah < 0)
			return;
	}
	n = 1 + (int)rnd(r, 4);
	memset(wr, 0, sizeof(wr));
	for (k = 0; k < n; k++) {
		struct ibv_send_wr *w = &wr[k];
		bool inl;

		w->wr_id = FZ_WR_ID(p) + (uint64_t)k;
		w->next = k + 1 < n ? &wr[k + 1] : NULL;
		w->opcode = chance(r, 92) ? common[rnd(r, ARRAY_SIZE(common))] :
			    (enum ibv_wr_opcode)rnd(r, 256);
		if (w->opcode == IBV_WR_BIND_MW && chance(r, 50))
			w->opcode = IBV_WR_SEND;
		w->send_flags = chance(r, 90) ? rnd(r, 32) : (unsigned int)rnd64(r);
		inl = w->send_flags & IBV_SEND_INLINE;
		w->num_sge = chance(r, 90) ? (int)rnd(r, o->cap.max_send_sge + 1) :
			     (int)(o->cap.max_send_sge + 1 + rnd(r, 3));
		if (w->num_sge > FZ_MAX_NSGE)
			w->num_sge = FZ_MAX_NSGE;
		w->sg_list = sg[k];
		for (j = 0; j < w->num_sge; j++)
			rnd_sge(p, o->dev, &sg[k][j], inl);
		w->imm_data = (uint32_t)rnd64(r);
		switch (w->opcode) {
		case IBV_WR_RDMA_WRITE:
		case IBV_WR_RDMA_WRITE_WITH_IMM:
		case IBV_WR_RDMA_READ:
			rnd_remote(p, &w->wr.rdma.remote_addr, &w->wr.rdma.rkey,
				   false);
			break;
		case IBV_WR_ATOMIC_CMP_AND_SWP:
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
			rnd_remote(p, &w->wr.atomic.remote_addr,
				   &w->wr.atomic.rkey, true);
			w->wr.atomic.compare_add = rnd64(r);
			w->wr.atomic.swap = rnd64(r);
			if (chance(r, 80)) {
				w->num_sge = 1;
				sg[k][0].length = 8;
			}
			break;
		case IBV_WR_LOCAL_INV:
		case IBV_WR_SEND_WITH_INV:
			rnd_remote(p, &w->wr.rdma.remote_addr,
				   &w->invalidate_rkey, false);
			break;
		case IBV_WR_BIND_MW: {
			int mw = pick(p, K_MW, o->dev), mr = pick(p, K_MR, o->dev);
			struct ibv_mr *m = mr >= 0 ? p->o[K_MR][mr].p : NULL;

			w->bind_mw.mw = mw >= 0 ? p->o[K_MW][mw].p : NULL;
			w->bind_mw.rkey = w->bind_mw.mw ?
				ibv_inc_rkey(w->bind_mw.mw->rkey) :
				(uint32_t)rnd64(r);
			w->bind_mw.bind_info.mr = m;
			w->bind_mw.bind_info.addr = m ? (uintptr_t)m->addr +
				rnd(r, (uint32_t)m->length + 1) : rnd64(r);
			w->bind_mw.bind_info.length = rnd(r, 65536);
			w->bind_mw.bind_info.mw_access_flags = rnd(r, 32);
			break;
		}
		default:
			break;
		}
		if (o->type == IBV_QPT_UD) {
			int q = pick(p, K_QP, -1);

			w->wr.ud.ah = p->o[K_AH][ah].p;
			w->wr.ud.remote_qpn = q >= 0 && chance(r, 80) ?
					      qp_of(p, q)->qp_num :
					      (uint32_t)rnd64(r);
			w->wr.ud.remote_qkey = chance(r, 80) ? 0x11111111 :
					       (uint32_t)rnd64(r);
		}
	}
	fz_doing("post_send");
	ret = ibv_post_send(o->p, wr, &bad);
	p->calls++;
	fz_tr(p, "post_send qp%d (type %d) %d WRs op %d flags %#x nsge %d -> %d",
	      i, o->type, n, wr[0].opcode, wr[0].send_flags, wr[0].num_sge,
	      ret);
	for (k = 0; k < n; k++) {
		struct ibv_send_wr *w = &wr[k];
		uint64_t len = 0;

		if (ret && bad == w)
			break;
		p->n_posted++;
		if (!has_data(w->opcode))
			continue;
		for (j = 0; j < w->num_sge; j++)
			len += sg[k][j].length;
		if (w->send_flags & IBV_SEND_INLINE ?
		    len > o->cap.max_inline_data :
		    (uint32_t)w->num_sge > o->cap.max_send_sge)
			fz_bad("post_send took a WR of %d SGEs, %llu bytes%s (QP max %u SGEs, %u inline)",
			       w->num_sge, (unsigned long long)len,
			       w->send_flags & IBV_SEND_INLINE ? " inline" : "",
			       o->cap.max_send_sge, o->cap.max_inline_data);
	}
}

void op_post_recv(struct fz_pool *p)
{
	struct fz_rng *r = &p->rng;
	struct ibv_sge sg[4][FZ_MAX_NSGE];
	struct ibv_recv_wr wr[4], *bad = NULL;
	int s = chance(r, 30) ? pick(p, K_SRQ, -1) : -1, i = -1, n, k, j, ret;
	uint32_t max;
	int dev;

	if (s < 0) {
		i = pick(p, K_QP, -1);
		if (i < 0)
			return;
		max = p->o[K_QP][i].srq >= 0 ? 0 : p->o[K_QP][i].cap.max_recv_sge;
		dev = p->o[K_QP][i].dev;
	} else {
		max = p->o[K_SRQ][s].srq_sge;
		dev = p->o[K_SRQ][s].dev;
	}
	n = 1 + (int)rnd(r, 4);
	memset(wr, 0, sizeof(wr));
	for (k = 0; k < n; k++) {
		wr[k].wr_id = FZ_WR_ID(p) + (uint64_t)k;
		wr[k].next = k + 1 < n ? &wr[k + 1] : NULL;
		wr[k].num_sge = chance(r, 90) ? (int)rnd(r, max + 1) :
				(int)(max + 1 + rnd(r, 3));
		if (wr[k].num_sge > FZ_MAX_NSGE)
			wr[k].num_sge = FZ_MAX_NSGE;
		wr[k].sg_list = sg[k];
		for (j = 0; j < wr[k].num_sge; j++)
			rnd_sge(p, dev, &sg[k][j], false);
	}
	fz_doing("post_recv");
	ret = s >= 0 ? ibv_post_srq_recv(p->o[K_SRQ][s].p, wr, &bad) :
		       ibv_post_recv(qp_of(p, i), wr, &bad);
	p->calls++;
	fz_tr(p, "post_recv %s%d %d WRs nsge %d -> %d", s >= 0 ? "srq" : "qp",
	      s >= 0 ? s : i, n, wr[0].num_sge, ret);
	if (ret)
		return;
	p->n_posted += (uint64_t)n;
	if (s < 0 && p->o[K_QP][i].srq >= 0)
		fz_bad("post_recv on a QP with an SRQ succeeded");
	for (k = 0; k < n; k++)
		if ((uint32_t)wr[k].num_sge > max)
			fz_bad("post_recv took a WR of %d SGEs (max %u)",
			       wr[k].num_sge, max);
}

void fz_check_wc(struct fz_pool *p, const struct ibv_wc *wc, int n,
		 int ne, bool raw)
{
	int k;

	for (k = 0; k < n && k < ne; k++) {
		p->n_wc++;
		p->n_wc_err += wc[k].status != IBV_WC_SUCCESS;
	}
	if (n > ne)
		fz_bad("poll_cq(%d) returned %d", ne, n);
	if (n < 0 && !raw && !p->tainted)
		fz_bad("poll_cq failed: the completion ring is inconsistent");
	for (k = 0; k < n && k < ne; k++) {
		const struct ibv_wc *w = &wc[k];

		if (w->status > IBV_WC_GENERAL_ERR + 8)
			fz_bad("completion status %d", w->status);
		if (!raw && !p->tainted && w->wr_id >> 48 != FZ_WR_MAGIC)
			fz_bad("completion with a wr_id never posted: %#llx (status %d)",
			       (unsigned long long)w->wr_id, w->status);
		/* past TSO only FLUSH (8) and ATOMIC WRITE, from raw SQEs */
		if (w->status == IBV_WC_SUCCESS && w->opcode > IBV_WC_TSO &&
		    w->opcode != 8 && w->opcode != IBV_WC_ATOMIC_WRITE &&
		    w->opcode != IBV_WC_RECV &&
		    w->opcode != IBV_WC_RECV_RDMA_WITH_IMM)
			fz_bad("successful completion with opcode %d",
			       w->opcode);
	}
}

void op_poll(struct fz_pool *p)
{
	static const int nes[] = { 0, 1, 4, 16, 64 };
	int i = pick(p, K_CQ, -1), ne, n;
	struct ibv_wc wc[64];

	if (i < 0)
		return;
	ne = nes[rnd(&p->rng, ARRAY_SIZE(nes))];
	fz_doing("poll_cq");
	n = ibv_poll_cq(p->o[K_CQ][i].p, ne, wc);
	p->calls++;
	fz_check_wc(p, wc, n, ne, false);
}

void op_notify(struct fz_pool *p)
{
	int i = pick(p, K_CQ, -1), c = pick(p, K_CH, -1), k;
	struct ibv_cq *ecq;
	void *ectx;

	if (i >= 0) {
		fz_doing("req_notify_cq");
		ibv_req_notify_cq(p->o[K_CQ][i].p, (int)rnd(&p->rng, 2));
		p->calls++;
	}
	if (c < 0 || p->no_events)
		return;
	fz_doing("get_cq_event");
	for (k = 0; k < 64; k++) {
		p->calls++;
		if (ibv_get_cq_event(p->o[K_CH][c].p, &ecq, &ectx))
			break;
		ibv_ack_cq_events(ecq, 1);
	}
}

void op_bind_mw(struct fz_pool *p)
{
	struct fz_rng *r = &p->rng;
	int w = pick(p, K_MW, -1), q, m, ret;
	struct ibv_mw_bind b = {};
	struct ibv_mr *mr;
	struct ibv_mw *mw;

	if (w < 0)
		return;
	mw = p->o[K_MW][w].p;
	q = pick(p, K_QP, p->o[K_MW][w].dev);
	m = pick(p, K_MR, p->o[K_MW][w].dev);
	if (q < 0 || m < 0 || mw->type != IBV_MW_TYPE_1)
		return;
	mr = p->o[K_MR][m].p;
	b.wr_id = FZ_WR_ID(p);
	b.send_flags = rnd(r, 16);
	b.bind_info.mr = mr;
	b.bind_info.addr = (uintptr_t)mr->addr + (chance(r, 80) ? 0 :
			   rnd(r, (uint32_t)mr->length + 4096));
	b.bind_info.length = chance(r, 60) ? mr->length : rnd64(r) % 100000;
	b.bind_info.mw_access_flags = chance(r, 80) ?
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ :
		(unsigned int)rnd(r, 256);
	fz_doing("bind_mw");
	ret = ibv_bind_mw(qp_of(p, q), mw, &b);
	p->calls++;
	fz_tr(p, "bind_mw mw%d qp%d mr%d len %#zx acc %#x -> %d", w, q, m,
	      (size_t)b.bind_info.length, b.bind_info.mw_access_flags, ret);
}

void pool_poll_all(struct fz_pool *p)
{
	struct ibv_wc wc[64];
	int i, k, n;

	for (i = 0; i < FZ_POOL; i++) {
		if (!p->o[K_CQ][i].p)
			continue;
		for (k = 0; k < 16; k++) {
			fz_doing("poll_cq");
			n = ibv_poll_cq(p->o[K_CQ][i].p, 64, wc);
			p->calls++;
			fz_check_wc(p, wc, n, 64, false);
			if (n <= 0)
				break;
		}
	}
}
