// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_abifuzz_test: the object pools.  A pool holds up to FZ_POOL
 * objects of each kind, each with the indices of the objects it was
 * created on; a step is one random call (shca_abifuzz_ops.c creates,
 * shca_abifuzz_qp.c and shca_abifuzz_wr.c use QPs, shca_abifuzz_raw.c
 * writes raw commands).  A destroy of an object that others still use
 * must be refused, any other destroy must work.
 */

#define _GNU_SOURCE
#include <stdarg.h>
#include <stdlib.h>

#include "shca_abifuzz.h"

static const char *const kind_name[K_NKIND] = {
	"pd", "mr", "mw", "channel", "cq", "srq", "qp", "ah",
};

void fz_tr(const struct fz_pool *p, const char *fmt, ...)
{
	va_list ap;

	if (!G.trace)
		return;
	printf("# %s %llu: ", p->tag, (unsigned long long)p->calls);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void pool_init(struct fz_pool *p, uint64_t seed, const char *tag,
	       size_t arena_off, size_t arena_len)
{
	memset(p, 0, sizeof(*p));
	p->rng.s = seed;
	p->seed = seed;
	p->tag = tag;
	p->arena_off = arena_off;
	p->arena_len = arena_len;
}

/* A random live object of @kind (on device @dev unless -1), or -1. */
int pick(struct fz_pool *p, int kind, int dev)
{
	int i, n = 0, idx[FZ_POOL];

	for (i = 0; i < FZ_POOL; i++)
		if (p->o[kind][i].p && !p->o[kind][i].gone &&
		    (dev < 0 || p->o[kind][i].dev == dev))
			idx[n++] = i;
	return n ? idx[rnd(&p->rng, n)] : -1;
}

int pick_free(struct fz_pool *p, int kind)
{
	int i;

	for (i = 0; i < FZ_POOL; i++)
		if (!p->o[kind][i].p)
			return i;
	return -1;
}

/*
 * A value around a limit: 0, 1, max + 1, huge or small random, and
 * rarely max or max - 1 (the largest queues cost megabytes each).
 */
uint32_t boundary(struct fz_rng *r, uint32_t max, uint32_t typical)
{
	switch (rnd(r, 12)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return chance(r, 5) ? max : 1 + rnd(r, typical);
	case 3: return max + 1;
	case 4: return rnd(r, 2) ? 0xffffffffU : 0x80000000U;
	case 5: return chance(r, 5) ? max - 1 : 1 + rnd(r, typical);
	default: return 1 + rnd(r, typical);
	}
}

/*
 * Objects that were created on object @i of @kind: definitely (*sure)
 * or perhaps (a failed re-registration may have moved an MR).
 */
static void users_of(const struct fz_pool *p, int kind, int i, int *sure,
		     int *maybe)
{
	int k, j;

	*sure = *maybe = 0;
	for (k = 0; k < K_NKIND; k++)
		for (j = 0; j < FZ_POOL; j++) {
			const struct fz_obj *o = &p->o[k][j];

			if (!o->p)
				continue;
			if ((kind == K_PD && o->pd == i) ||
			    (kind == K_CQ && (o->cq == i || o->rcq == i) &&
			     k != K_CH) ||
			    (kind == K_CH && k == K_CQ && o->ch == i) ||
			    (kind == K_SRQ && k == K_QP && o->srq == i))
				(*sure)++;
			if (kind == K_PD && o->pd2 == i)
				(*maybe)++;
		}
}

/*
 * Forget (without a call) what was created on object @i of @kind, and what
 * was created on that: libibverbs' copies may name freed memory now.
 */
static void forget_users(struct fz_pool *p, int kind, int i)
{
	int k, j;

	for (k = 0; k < K_NKIND; k++)
		for (j = 0; j < FZ_POOL; j++) {
			struct fz_obj *o = &p->o[k][j];

			if (!o->p || (k == kind && j == i))
				continue;
			if ((kind == K_PD && (o->pd == i || o->pd2 == i)) ||
			    (kind == K_CQ && (o->cq == i || o->rcq == i) &&
			     k != K_CH) ||
			    (kind == K_CH && k == K_CQ && o->ch == i) ||
			    (kind == K_SRQ && k == K_QP && o->srq == i)) {
				o->p = NULL;
				forget_users(p, k, j);
			}
		}
}

/* ---- destroy ----------------------------------------------------------- */

static int destroy_one(struct fz_pool *p, int kind, int i)
{
	void *o = p->o[kind][i].p;

	fz_doing(kind_name[kind]);
	switch (kind) {
	case K_PD: return ibv_dealloc_pd(o);
	case K_MR: return ibv_dereg_mr(o);
	case K_MW: return ibv_dealloc_mw(o);
	case K_CH: return ibv_destroy_comp_channel(o);
	case K_CQ: return ibv_destroy_cq(o);
	case K_SRQ: return ibv_destroy_srq(o);
	case K_QP: return ibv_destroy_qp(o);
	default: return ibv_destroy_ah(o);
	}
}

/*
 * Destroy object @i of @kind: refused while others use it, otherwise
 * successful for every kind but an MR (a bound window may hold it).
 * Returns true when it went.
 */
bool pool_destroy(struct fz_pool *p, int kind, int i)
{
	int sure, maybe, ret;

	/*
	 * libibverbs' destroy of a QP, SRQ or CQ waits until every async
	 * event the kernel queued for it is acknowledged, read or not.
	 */
	if (kind == K_QP || kind == K_SRQ || kind == K_CQ) {
		if (p->keep_waiting)
			return false;
		pool_async_drain(p);
	}
	users_of(p, kind, i, &sure, &maybe);
	ret = destroy_one(p, kind, i);
	p->calls++;
	fz_tr(p, "destroy %s%d (%d users) -> %d", kind_name[kind], i, sure,
	      ret);
	if (!ret && sure && p->tainted) {
		/* a fork child destroyed its users: forget them */
		forget_users(p, kind, i);
	} else if (!ret && sure) {
		fz_bad("destroy of a %s with %d objects on it succeeded",
		       kind_name[kind], sure);
		/* its users cannot be destroyed safely any more: leave them */
		p->broken = true;
	}
	if (ret && !sure && !maybe && !(kind == K_MR && pick(p, K_MW, -1) >= 0) &&
	    !p->tainted &&
	    !p->o[kind][i].gone)
		fz_bad("destroy of an unused %s failed: %s", kind_name[kind],
		       strerror(ret));
	if (ret)
		return false;
	p->o[kind][i].p = NULL;
	return true;
}

static void op_destroy(struct fz_pool *p)
{
	int kind = (int)rnd(&p->rng, K_NKIND), i = pick(p, kind, -1);

	if (i >= 0)
		pool_destroy(p, kind, i);
}

/* ---- the random step ------------------------------------------------ */

static void op_raw(struct fz_pool *p)
{
	uint32_t live[K_NKIND * FZ_POOL + 1];
	int d = rnd(&p->rng, G.ndev), k, i, n = 0;

	/* the handles of every live object on the device (ours only) */
	for (k = 0; k < K_NKIND; k++) {
		if (k == K_CH)
			continue;
		for (i = 0; i < FZ_POOL; i++) {
			const struct fz_obj *o = &p->o[k][i];

			if (!o->p || o->dev != d)
				continue;
			switch (k) {
			case K_PD: live[n++] = ((struct ibv_pd *)o->p)->handle; break;
			case K_MR: live[n++] = ((struct ibv_mr *)o->p)->handle; break;
			case K_MW: live[n++] = ((struct ibv_mw *)o->p)->handle; break;
			case K_CQ: live[n++] = ((struct ibv_cq *)o->p)->handle; break;
			case K_SRQ: live[n++] = ((struct ibv_srq *)o->p)->handle; break;
			case K_QP: live[n++] = ((struct ibv_qp *)o->p)->handle; break;
			default: live[n++] = ((struct ibv_ah *)o->p)->handle; break;
			}
		}
	}
	fz_doing("raw command");
	raw_fuzz(&p->rng, G.dev[d].ctx, live, n, !p->mt);
	p->calls++;
}

#define OP(fn, w)	{ fn, w, #fn }

static const struct {
	void (*fn)(struct fz_pool *p);
	unsigned int weight;
	const char *name;
} ops[] = {
	OP(op_alloc_pd, 3),
	OP(op_reg_mr, 6),
	OP(op_rereg_mr, 2),
	OP(op_alloc_mw, 3),
	OP(op_create_ch, 1),
	OP(op_create_cq, 5),
	OP(op_resize_cq, 2),
	OP(op_create_srq, 3),
	OP(op_srq_misc, 2),
	OP(op_create_qp, 7),
	OP(op_create_ah, 2),
	OP(op_query, 3),
	OP(op_query_qp, 3),
	OP(op_modify_qp, 10),
	OP(op_connect, 5),
	OP(op_post_send, 14),
	OP(op_post_recv, 10),
	OP(op_poll, 10),
	OP(op_notify, 3),
	OP(op_bind_mw, 3),
	OP(op_destroy, 9),
	OP(op_raw, 4),
};

/* time spent per kind of step (the single-threaded phase only) */
static double op_ms[ARRAY_SIZE(ops)];
static uint64_t op_calls[ARRAY_SIZE(ops)];

void pool_stats(void)
{
	unsigned int i;

	printf("# time per step kind (ms total / calls):");
	for (i = 0; i < ARRAY_SIZE(ops); i++)
		if (op_ms[i] >= 100)
			printf(" %s %.0f/%llu", ops[i].name + 3, op_ms[i],
			       (unsigned long long)op_calls[i]);
	printf("\n");
}

void pool_step(struct fz_pool *p)
{
	unsigned int total = 0, i, x;
	uint64_t c0 = p->calls;
	double t0;

	if (p->broken)
		return;
	p->rng.s = p->seed ^ (++p->step * 0xd1342543de82ef95ULL);
	for (i = 0; i < ARRAY_SIZE(ops); i++)
		total += ops[i].weight;
	x = rnd(&p->rng, total);
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		if (x < ops[i].weight) {
			if (!p->stats) {
				ops[i].fn(p);
				return;
			}
			t0 = now_ms();
			ops[i].fn(p);
			op_ms[i] += now_ms() - t0;
			op_calls[i] += p->calls - c0;
			return;
		}
		x -= ops[i].weight;
	}
}

void pool_drain(struct fz_pool *p)
{
	/* users before what they were created on */
	static const int order[] = { K_QP, K_AH, K_MW, K_MR, K_SRQ, K_CQ,
				     K_CH, K_PD };
	unsigned int k;
	int i;

	if (p->broken)
		return;
	pool_poll_all(p);
	for (k = 0; k < ARRAY_SIZE(order); k++)
		for (i = 0; i < FZ_POOL; i++) {
			if (!p->o[order[k]][i].p)
				continue;
			/* a window may still hold an MR: once more at the end */
			if (!pool_destroy(p, order[k], i) && order[k] == K_MR)
				fz_tr(p, "mr%d refused", i);
		}
	for (i = 0; i < FZ_POOL; i++)
		if (p->o[K_MR][i].p)
			pool_destroy(p, K_MR, i);
	for (i = 0; i < FZ_POOL; i++)
		if (p->o[K_PD][i].p)
			pool_destroy(p, K_PD, i);
}
