// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_abifuzz_test: QPs.  Creation with caps around the device limits
 * and of every type (also through ibv_create_qp_ex), modify_qp with random
 * masks, states and values, checked against the IBA state table and the
 * limits, queries, and a proper connection now and then so that work
 * requests move (shca_abifuzz_wr.c posts them).
 */

#define _GNU_SOURCE
#include <stdlib.h>

#include "shca_abifuzz.h"

static struct ibv_qp *qp_of(struct fz_pool *p, int i)
{
	return p->o[K_QP][i].p;
}

#define FZ_MAX_INLINE	512	/* what shca grants at most (limits.sh) */

void op_create_qp(struct fz_pool *p)
{
	static const enum ibv_qp_type odd_types[] = { IBV_QPT_RAW_PACKET, IBV_QPT_XRC_SEND,
					 IBV_QPT_XRC_RECV, IBV_QPT_DRIVER,
					 (enum ibv_qp_type)0, (enum ibv_qp_type)1,
					 (enum ibv_qp_type)100 };
	struct fz_rng *r = &p->rng;
	int i = pick_free(p, K_QP), cq = pick(p, K_CQ, -1), d, pd, rcq, srq;
	struct ibv_qp_init_attr_ex a = {};
	const struct fz_dev *dv;
	struct ibv_qp_cap want;
	bool must_fail, ex, big;
	struct ibv_qp *qp;
	uint32_t max_wr;

	if (i < 0 || cq < 0)
		return;
	d = p->o[K_CQ][cq].dev;
	dv = &G.dev[d];
	pd = pick(p, K_PD, d);
	if (pd < 0)
		return;
	rcq = chance(r, 50) ? cq : pick(p, K_CQ, d);
	srq = chance(r, 20) ? pick(p, K_SRQ, d) : -1;
	a.qp_type = chance(r, 90) ? (enum ibv_qp_type)
		    (rnd(r, 3) == 0 ? IBV_QPT_RC : rnd(r, 2) ? IBV_QPT_UC :
		     IBV_QPT_UD) : odd_types[rnd(r, ARRAY_SIZE(odd_types))];
	a.send_cq = p->o[K_CQ][cq].p;
	a.recv_cq = p->o[K_CQ][rcq].p;
	a.srq = srq >= 0 ? p->o[K_SRQ][srq].p : NULL;
	a.sq_sig_all = chance(r, 50);
	max_wr = (uint32_t)dv->attr.max_qp_wr;
	a.cap.max_send_wr = boundary(r, max_wr, 64);
	a.cap.max_recv_wr = boundary(r, max_wr, 64);
	a.cap.max_send_sge = boundary(r, (uint32_t)dv->attr.max_sge, 4);
	a.cap.max_recv_sge = boundary(r, (uint32_t)dv->attr.max_sge, 4);
	a.cap.max_inline_data = boundary(r, FZ_MAX_INLINE, 128);
	/* the largest rings cost megabytes: rarely, and gone at once */
	big = a.cap.max_send_wr == max_wr || a.cap.max_recv_wr == max_wr;
	if (big && !chance(r, 10)) {
		a.cap.max_send_wr = a.cap.max_send_wr == max_wr ? 512 :
				    a.cap.max_send_wr;
		a.cap.max_recv_wr = a.cap.max_recv_wr == max_wr ? 512 :
				    a.cap.max_recv_wr;
		big = false;
	}
	want = a.cap;
	must_fail = (a.qp_type != IBV_QPT_RC && a.qp_type != IBV_QPT_UC &&
		     a.qp_type != IBV_QPT_UD) ||
		    want.max_send_wr > max_wr ||
		    (srq < 0 && want.max_recv_wr > max_wr) ||
		    want.max_send_sge > (uint32_t)dv->attr.max_sge ||
		    (srq < 0 && want.max_recv_sge > (uint32_t)dv->attr.max_sge) ||
		    want.max_inline_data > FZ_MAX_INLINE;
	ex = chance(r, 25);
	fz_doing("create_qp");
	if (ex) {
		a.comp_mask = IBV_QP_INIT_ATTR_PD;
		a.pd = p->o[K_PD][pd].p;
		if (chance(r, 50)) {
			a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
			a.send_ops_flags = rnd64(r) &
					   (chance(r, 80) ? 0x7ff : ~0ULL);
		}
		if (chance(r, 10)) {
			a.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
			a.create_flags = (uint32_t)rnd64(r);
			if (a.create_flags)
				must_fail = true;
		}
		qp = ibv_create_qp_ex(dv->ctx, &a);
	} else {
		struct ibv_qp_init_attr b = {
			.send_cq = a.send_cq, .recv_cq = a.recv_cq,
			.srq = a.srq, .cap = a.cap, .qp_type = a.qp_type,
			.sq_sig_all = a.sq_sig_all,
		};

		qp = ibv_create_qp(p->o[K_PD][pd].p, &b);
		a.cap = b.cap;
	}
	p->calls++;
	fz_tr(p, "create_qp%s type %d pd%d cq%d/%d srq%d cap %u/%u/%u/%u/%u -> %s",
	      ex ? "_ex" : "", a.qp_type, pd, cq, rcq, srq, want.max_send_wr,
	      want.max_recv_wr, want.max_send_sge, want.max_recv_sge,
	      want.max_inline_data, qp ? "ok" : strerror(errno));
	if (!qp)
		return;
	if (must_fail)
		fz_bad("create_qp(type %d, cap %u/%u/%u/%u/%u) succeeded",
		       a.qp_type, want.max_send_wr, want.max_recv_wr,
		       want.max_send_sge, want.max_recv_sge,
		       want.max_inline_data);
	if (a.cap.max_send_wr < want.max_send_wr ||
	    a.cap.max_send_sge < want.max_send_sge ||
	    a.cap.max_inline_data < want.max_inline_data ||
	    a.cap.max_send_wr > max_wr ||
	    (srq < 0 && (a.cap.max_recv_wr < want.max_recv_wr ||
		      a.cap.max_recv_sge < want.max_recv_sge)))
		fz_bad("create_qp: asked %u/%u/%u/%u/%u, granted %u/%u/%u/%u/%u",
		       want.max_send_wr, want.max_recv_wr, want.max_send_sge,
		       want.max_recv_sge, want.max_inline_data,
		       a.cap.max_send_wr, a.cap.max_recv_wr,
		       a.cap.max_send_sge, a.cap.max_recv_sge,
		       a.cap.max_inline_data);
	{
		struct fz_obj *o = &p->o[K_QP][i];

		memset(o, 0, sizeof(*o));
		o->p = qp;
		o->dev = d;
		o->pd = pd;
		o->cq = cq;
		o->rcq = rcq;
		o->srq = srq;
		o->ch = o->pd2 = -1;
		o->type = a.qp_type;
		o->cap = a.cap;
	}
	if (big)
		pool_destroy(p, K_QP, i);
}

/* The IBA state table, without the attributes */
static bool transition_ok(int cur, int next)
{
	if (next == IBV_QPS_RESET || next == IBV_QPS_ERR)
		return true;
	switch (cur) {
	case IBV_QPS_RESET: return next == IBV_QPS_INIT;
	case IBV_QPS_INIT: return next == IBV_QPS_INIT || next == IBV_QPS_RTR;
	case IBV_QPS_RTR: return next == IBV_QPS_RTS;
	case IBV_QPS_RTS: return next == IBV_QPS_RTS || next == IBV_QPS_SQD;
	case IBV_QPS_SQD: return next == IBV_QPS_SQD || next == IBV_QPS_RTS;
	case IBV_QPS_SQE: return next == IBV_QPS_RTS;
	default: return false;
	}
}

static int cur_state(struct fz_pool *p, int i)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;

	p->calls++;
	if (ibv_query_qp(qp_of(p, i), &qa, IBV_QP_STATE, &ia))
		return -1;
	return qa.qp_state;
}

static void fill_av(struct fz_rng *r, struct ibv_ah_attr *ah, int dev,
		    bool good)
{
	const struct fz_dev *dv = &G.dev[dev];

	ah->is_global = good || chance(r, 90);
	ah->port_num = good || chance(r, 90) ? 1 : (uint8_t)rnd(r, 256);
	ah->grh.sgid_index = good || chance(r, 80) ? (uint8_t)dv->gidx :
			     (uint8_t)boundary(r, (uint32_t)dv->port.gid_tbl_len,
					       4);
	ah->grh.hop_limit = good ? 64 : (uint8_t)rnd(r, 256);
	ah->grh.dgid = G.dev[rnd(r, G.ndev)].gid;
	if (!good && chance(r, 10))
		memset(&ah->grh.dgid, 0, sizeof(ah->grh.dgid));
	ah->sl = good ? 0 : (uint8_t)rnd(r, 16);
}

static uint8_t small(struct fz_rng *r, uint8_t max)
{
	return chance(r, 85) ? (uint8_t)rnd(r, max + 1U) : (uint8_t)rnd(r, 256);
}

/* The attributes IBA requires for @cur -> @next on a QP of @type */
static int required_mask(int type, int cur, int next)
{
	if (cur == IBV_QPS_RESET && next == IBV_QPS_INIT)
		return IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		       (type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
	if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR) {
		if (type == IBV_QPT_UD)
			return 0;
		return IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		       IBV_QP_RQ_PSN | (type == IBV_QPT_RC ?
		       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0);
	}
	if (cur == IBV_QPS_RTR && next == IBV_QPS_RTS)
		return IBV_QP_SQ_PSN | (type == IBV_QPT_RC ? IBV_QP_TIMEOUT |
		       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		       IBV_QP_MAX_QP_RD_ATOMIC : 0);
	return 0;
}

/*
 * A mask shaped like a real transition: what @cur (the actual state or,
 * now and then, a claimed one in cur_qp_state) to @next requires, with a
 * few optional bits.  Random masks hardly ever pass the core's table.
 */
static int shaped_mask(struct fz_rng *r, struct ibv_qp_attr *a, int type,
		       int actual)
{
	static const int opt[] = { IBV_QP_CUR_STATE, IBV_QP_ACCESS_FLAGS,
				   IBV_QP_MIN_RNR_TIMER, IBV_QP_PKEY_INDEX,
				   IBV_QP_QKEY, IBV_QP_EN_SQD_ASYNC_NOTIFY,
				   IBV_QP_PATH_MTU, IBV_QP_AV };
	int cur = actual, mask = IBV_QP_STATE, k;

	if (actual < 0 || chance(r, 30)) {
		cur = (int)rnd(r, 7);
		a->cur_qp_state = (enum ibv_qp_state)cur;
		mask |= IBV_QP_CUR_STATE;
	}
	/* mostly the next state of the IBA path, else anything */
	switch (chance(r, 70) ? cur : -1) {
	case IBV_QPS_RESET: a->qp_state = IBV_QPS_INIT; break;
	case IBV_QPS_INIT: a->qp_state = IBV_QPS_RTR; break;
	case IBV_QPS_RTR: case IBV_QPS_SQD: case IBV_QPS_SQE:
		a->qp_state = IBV_QPS_RTS; break;
	case IBV_QPS_RTS: a->qp_state = chance(r, 50) ? IBV_QPS_SQD :
					 IBV_QPS_RTS; break;
	default: a->qp_state = (enum ibv_qp_state)rnd(r, 7); break;
	}
	mask |= required_mask(type, cur, a->qp_state);
	for (k = 0; k < 2; k++)
		if (chance(r, 20))
			mask |= opt[rnd(r, ARRAY_SIZE(opt))];
	return mask;
}

void op_modify_qp(struct fz_pool *p)
{
	struct fz_rng *r = &p->rng;
	int i = pick(p, K_QP, -1), mask, cur, ret, q;
	struct ibv_qp_attr a = {};
	const struct fz_dev *dv;
	struct fz_obj *o;

	if (i < 0)
		return;
	o = &p->o[K_QP][i];
	dv = &G.dev[o->dev];
	mask = (int)(rnd64(r) & ((1 << 21) - 1));
	if (chance(r, 60))
		mask &= IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			IBV_QP_ACCESS_FLAGS | IBV_QP_QKEY | IBV_QP_AV |
			IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	if (chance(r, 70))
		mask |= IBV_QP_STATE;
	a.qp_state = chance(r, 95) ? (enum ibv_qp_state)rnd(r, 7) :
		     (enum ibv_qp_state)rnd(r, 256);
	a.cur_qp_state = (enum ibv_qp_state)rnd(r, 8);
	a.path_mtu = (enum ibv_mtu)(chance(r, 85) ? 1 + rnd(r, 5) : rnd(r, 256));
	a.qkey = (uint32_t)rnd64(r);
	a.rq_psn = (uint32_t)rnd64(r);
	a.sq_psn = (uint32_t)rnd64(r);
	q = pick(p, K_QP, -1);
	a.dest_qp_num = chance(r, 70) && q >= 0 ? qp_of(p, q)->qp_num :
			(uint32_t)rnd64(r);
	a.qp_access_flags = (unsigned int)rnd64(r) & (chance(r, 80) ? 0xf : ~0U);
	fill_av(r, &a.ah_attr, o->dev, false);
	fill_av(r, &a.alt_ah_attr, o->dev, false);
	a.pkey_index = chance(r, 85) ? 0 : (uint16_t)rnd(r, 65536);
	a.alt_pkey_index = (uint16_t)rnd(r, 4);
	a.en_sqd_async_notify = (uint8_t)rnd(r, 2);
	a.max_rd_atomic = chance(r, 80) ? (uint8_t)rnd(r, 17) :
			  (uint8_t)rnd(r, 256);
	a.max_dest_rd_atomic = chance(r, 80) ? (uint8_t)rnd(r, 17) :
			       (uint8_t)rnd(r, 256);
	a.min_rnr_timer = small(r, 31);
	a.port_num = chance(r, 90) ? 1 : (uint8_t)rnd(r, 256);
	a.timeout = small(r, 31);
	/* short timeouts: a QP waiting for an ACK from nobody gives up soon */
	if (a.timeout > 16 && chance(r, 90))
		a.timeout = 8 + rnd(r, 8);
	a.retry_cnt = small(r, 7);
	a.rnr_retry = small(r, 7);
	a.alt_port_num = (uint8_t)rnd(r, 3);
	a.alt_timeout = (uint8_t)rnd(r, 32);
	a.rate_limit = (uint32_t)rnd64(r);
	cur = cur_state(p, i);
	if (chance(r, 50)) {
		mask = shaped_mask(r, &a, o->type, cur);
		if (chance(r, 70))
			fill_av(r, &a.ah_attr, o->dev, true);
	}
	fz_doing("modify_qp");
	ret = ibv_modify_qp(o->p, &a, mask);
	p->calls++;
	fz_tr(p, "modify_qp qp%d (type %d, in %d) mask %#x state %d cur %d mtu %d port %u -> %d",
	      i, o->type, cur, mask, a.qp_state, a.cur_qp_state, a.path_mtu,
	      a.port_num, ret);
	if (ret)
		return;
	if ((mask & IBV_QP_STATE) && cur >= 0 &&
	    !transition_ok(cur, a.qp_state))
		fz_bad("modify_qp of a QP in state %d to %d succeeded (mask %#x, cur_qp_state %d)",
		       cur, a.qp_state, mask, a.cur_qp_state);
	if (((mask & IBV_QP_PORT) && a.port_num != 1) ||
	    ((mask & IBV_QP_PATH_MTU) &&
	     (a.path_mtu < IBV_MTU_256 || a.path_mtu > IBV_MTU_4096)) ||
	    ((mask & IBV_QP_TIMEOUT) && a.timeout > 31) ||
	    ((mask & IBV_QP_RETRY_CNT) && a.retry_cnt > 7) ||
	    ((mask & IBV_QP_RNR_RETRY) && a.rnr_retry > 7) ||
	    ((mask & IBV_QP_MIN_RNR_TIMER) && a.min_rnr_timer > 31) ||
	    ((mask & IBV_QP_MAX_QP_RD_ATOMIC) &&
	     a.max_rd_atomic > dv->attr.max_qp_rd_atom) ||
	    ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
	     a.max_dest_rd_atomic > dv->attr.max_qp_init_rd_atom) ||
	    ((mask & IBV_QP_PKEY_INDEX) && a.pkey_index >= dv->port.pkey_tbl_len) ||
	    ((mask & IBV_QP_AV) &&
	     (a.ah_attr.port_num != 1 ||
	      a.ah_attr.grh.sgid_index >= dv->port.gid_tbl_len)))
		fz_bad("modify_qp with a value past a limit succeeded: mask %#x port %u mtu %d timeout %u retry %u rnr %u/%u rd_atomic %u/%u pkey %u av port %u sgid %u",
		       mask, a.port_num, a.path_mtu, a.timeout, a.retry_cnt,
		       a.rnr_retry, a.min_rnr_timer, a.max_rd_atomic,
		       a.max_dest_rd_atomic, a.pkey_index, a.ah_attr.port_num,
		       a.ah_attr.grh.sgid_index);
	if (mask & IBV_QP_STATE)
		o->state = a.qp_state;
}

void op_query_qp(struct fz_pool *p)
{
	int i = pick(p, K_QP, -1), ret;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	struct fz_obj *o;

	if (i < 0)
		return;
	o = &p->o[K_QP][i];
	fz_doing("query_qp");
	ret = ibv_query_qp(o->p, &qa, (int)rnd64(&p->rng) & 0x1fffff, &ia);
	p->calls++;
	if (ret)
		return;
	if (qa.qp_state > IBV_QPS_ERR)
		fz_bad("query_qp: state %d", qa.qp_state);
	if (p->tainted)
		return;
	if (qa.cap.max_send_wr != o->cap.max_send_wr ||
	    qa.cap.max_send_sge != o->cap.max_send_sge ||
	    qa.cap.max_inline_data != o->cap.max_inline_data ||
	    (int)ia.qp_type != o->type)
		fz_bad("query_qp: cap %u/%u/%u type %d, created %u/%u/%u type %d",
		       qa.cap.max_send_wr, qa.cap.max_send_sge,
		       qa.cap.max_inline_data, ia.qp_type, o->cap.max_send_wr,
		       o->cap.max_send_sge, o->cap.max_inline_data, o->type);
}

static int modify(struct fz_pool *p, struct ibv_qp *qp, struct ibv_qp_attr *a,
		  int mask)
{
	p->calls++;
	return ibv_modify_qp(qp, a, mask);
}

/* RESET, then INIT, RTR and RTS with good attributes, towards @peer. */
static int connect_one(struct fz_pool *p, int i, int peer)
{
	struct fz_rng *r = &p->rng;
	struct fz_obj *o = &p->o[K_QP][i];
	struct ibv_qp *qp = o->p;
	struct ibv_qp_attr a = {};
	int ret, m;

	a.qp_state = IBV_QPS_RESET;
	ret = modify(p, qp, &a, IBV_QP_STATE);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	m = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (o->type == IBV_QPT_UD) {
		a.qkey = 0x11111111;
		m |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = QP_ACC_ALL;
		m |= IBV_QP_ACCESS_FLAGS;
	}
	ret = modify(p, qp, &a, m);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	m = IBV_QP_STATE;
	if (o->type != IBV_QPT_UD) {
		fill_av(r, &a.ah_attr, o->dev, true);
		a.ah_attr.grh.dgid = G.dev[p->o[K_QP][peer].dev].gid;
		a.path_mtu = (enum ibv_mtu)(1 + rnd(r, 5));
		a.dest_qp_num = qp_of(p, peer)->qp_num;
		a.rq_psn = (uint32_t)rnd(r, 1 << 24);
		m |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		     IBV_QP_RQ_PSN;
		if (o->type == IBV_QPT_RC) {
			a.max_dest_rd_atomic = (uint8_t)rnd(r, 17);
			a.min_rnr_timer = (uint8_t)rnd(r, 8);
			m |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	ret = modify(p, qp, &a, m);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = (uint32_t)rnd(r, 1 << 24);
	m = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (o->type == IBV_QPT_RC) {
		a.timeout = 8 + rnd(r, 6);
		a.retry_cnt = (uint8_t)rnd(r, 4);
		a.rnr_retry = (uint8_t)rnd(r, 5);
		a.max_rd_atomic = (uint8_t)rnd(r, 17);
		m |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		     IBV_QP_MAX_QP_RD_ATOMIC;
	}
	ret = modify(p, qp, &a, m);
	if (!ret)
		o->state = IBV_QPS_RTS;
	return ret;
}

bool pool_connect(struct fz_pool *p, int a, int b)
{
	int ret;

	fz_doing("connect");
	ret = connect_one(p, a, b);
	if (!ret && b != a)
		ret = connect_one(p, b, a);
	fz_tr(p, "connect qp%d qp%d -> %d", a, b, ret);
	if (!ret)
		p->n_conn++;
	if (ret && !p->tainted && !p->o[K_QP][a].gone && !p->o[K_QP][b].gone)
		fz_bad("connecting QPs %d and %d (type %d) failed: %s", a, b,
		       p->o[K_QP][a].type, strerror(ret));
	return !ret;
}

void op_connect(struct fz_pool *p)
{
	int a = pick(p, K_QP, -1), b, tries;

	if (a < 0)
		return;
	if (p->o[K_QP][a].type == IBV_QPT_UD) {
		pool_connect(p, a, a);
		return;
	}
	for (tries = 0; tries < 8; tries++) {
		b = pick(p, K_QP, -1);
		if (p->o[K_QP][b].type == p->o[K_QP][a].type) {
			pool_connect(p, a, b);
			return;
		}
	}
}
