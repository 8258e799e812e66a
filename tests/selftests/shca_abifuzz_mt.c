// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_abifuzz_test phase (a): threads.  Each round one thread destroys a
 * set of victim objects (QPs, CQs, an SRQ, MRs, PDs) in random order,
 * objects still in use first when the dice say so (refused, then
 * destroyed properly), while raw users keep writing the victims' rings
 * through mappings of their own and ringing their doorbells by handle,
 * before, during and after the destroy, and churners run the random
 * calls of the single-threaded phase on pools of their own.  Only the
 * destroyer calls libibverbs on the victims, so no thread ever touches
 * freed userspace memory; the kernel sees every interleaving.
 */

#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shca_abifuzz.h"

#define USER_ACTS	60	/* hostile acts per raw user per round */
#define MAX_CHURN	8

struct mt_round {
	struct victim v;
	atomic_bool destroyed;		/* the destroyer is done */
	atomic_ulong calls;
	uint64_t seed;
	struct fz_pool *churn;		/* G.threads - 2 pools */
	uint64_t churn_steps;
};

struct mt_arg {
	struct mt_round *rd;
	int idx;
};

enum { V_QP0, V_QP1, V_QP2, V_AH, V_SRQ, V_CQ0, V_CQ1, V_MR0, V_MR1,
       V_PD0, V_PD1, V_N };

static void **vslot(struct victim *v, int k)
{
	switch (k) {
	case V_QP0: case V_QP1: case V_QP2: return (void **)&v->qp[k - V_QP0];
	case V_AH: return (void **)&v->ah;
	case V_SRQ: return (void **)&v->srq;
	case V_CQ0: case V_CQ1: return (void **)&v->cq[k - V_CQ0];
	case V_MR0: case V_MR1: return (void **)&v->mr[k - V_MR0];
	default: return (void **)&v->pd[k - V_PD0];
	}
}

/* Objects still created on victim object @k */
static int vusers(struct victim *v, int k)
{
	switch (k) {
	case V_SRQ: return !!v->qp[2];
	case V_CQ0: return !!v->qp[0] + !!v->qp[2];
	case V_CQ1: return !!v->qp[1];
	case V_PD0: return !!v->qp[0] + !!v->qp[2] + !!v->srq + !!v->ah +
			   !!v->mr[0];
	case V_PD1: return !!v->qp[1] + !!v->mr[1];
	default: return 0;
	}
}

static int vdestroy(struct victim *v, int k)
{
	void *o = *vslot(v, k);

	switch (k) {
	case V_QP0: case V_QP1: case V_QP2: return ibv_destroy_qp(o);
	case V_AH: return ibv_destroy_ah(o);
	case V_SRQ: return ibv_destroy_srq(o);
	case V_CQ0: case V_CQ1: return ibv_destroy_cq(o);
	case V_MR0: case V_MR1: return ibv_dereg_mr(o);
	default: return ibv_dealloc_pd(o);
	}
}

static void *destroyer(void *arg)
{
	struct mt_round *rd = arg;
	struct fz_rng r = { rd->seed ^ 0xde57ULL };
	struct victim *v = &rd->v;
	int order[V_N], k, j, left = V_N, users, ret, pass;

	for (k = 0; k < V_N; k++)
		order[k] = k;
	for (k = V_N - 1; k > 0; k--) {
		j = (int)rnd(&r, (uint32_t)k + 1);
		ret = order[k];
		order[k] = order[j];
		order[j] = ret;
	}
	usleep(rnd(&r, 3000));
	for (pass = 0; left && pass < V_N + 1; pass++)
		for (k = 0; k < V_N; k++) {
			int o = order[k];

			if (!*vslot(v, o))
				continue;
			if (o <= V_QP2 && chance(&r, 30)) {
				struct ibv_qp_attr a = {
					.qp_state = chance(&r, 50) ?
						    IBV_QPS_ERR : IBV_QPS_RESET,
				};

				fz_doing("mt modify_qp");
				ibv_modify_qp(*vslot(v, o), &a, IBV_QP_STATE);
				rd->calls++;
			}
			users = vusers(v, o);
			fz_doing("mt destroy");
			ret = vdestroy(v, o);
			rd->calls++;
			if (!ret && users)
				fz_bad("threads: destroy of victim %d with %d users succeeded",
				       o, users);
			/*
			 * A raw user's doorbell or notify request names a
			 * victim QP, SRQ or CQ by handle: while that command
			 * runs, the RDMA core refuses to destroy the object
			 * (EBUSY from its uobject lock), and the next pass
			 * tries again.
			 */
			if (ret && !users &&
			    !(o <= V_CQ1 && o != V_AH && ret == EBUSY))
				fz_bad("threads: destroy of unused victim %d failed: %s",
				       o, strerror(ret));
			if (!ret) {
				*vslot(v, o) = NULL;
				left--;
			}
			usleep(rnd(&r, 1000));
		}
	atomic_store(&rd->destroyed, true);
	return NULL;
}

static void *raw_user(void *arg)
{
	struct mt_arg *a = arg;
	struct fz_rng r = { a->rd->seed ^ (0x05e7ULL << 8) ^ (uint64_t)a->idx };
	int k;

	/* some acts before, during and after the destroys */
	for (k = 0; k < USER_ACTS || !atomic_load(&a->rd->destroyed); k++) {
		a->rd->calls += (unsigned long)hostile(&r, &a->rd->v, true);
		if (k > 20 * USER_ACTS)
			break;
	}
	return NULL;
}

static void *churner(void *arg)
{
	struct mt_arg *a = arg;
	struct fz_pool *p = &a->rd->churn[a->idx];
	uint64_t end = p->calls + a->rd->churn_steps;

	while (p->calls < end && !p->broken)
		pool_step(p);
	return NULL;
}

uint64_t phase_threads(uint64_t calls)
{
	unsigned int nuser = (G.threads - 1) / 2, nchurn = G.threads - 1 - nuser;
	struct fz_pool churn[MAX_CHURN];
	pthread_t th[2 * MAX_CHURN + 1];
	struct mt_arg args[2 * MAX_CHURN + 1];
	struct mt_round rd;
	uint64_t total = 0;
	uint8_t *vbuf = zalloc(1 << 16);
	unsigned int i, nth;
	int round = 0, rounds = (int)(calls / 1000) + 2, k;

	if (nchurn > MAX_CHURN)
		nchurn = MAX_CHURN;
	if (nuser > MAX_CHURN)
		nuser = MAX_CHURN;
	for (i = 0; i < nchurn; i++) {
		char *tag = malloc(16);

		snprintf(tag, 16, "churn%u", i);
		pool_init(&churn[i], G.seed ^ (0xc4u + i) << 20, tag,
			  i * (FZ_ARENA / MAX_CHURN), FZ_ARENA / MAX_CHURN);
		churn[i].mt = true;
	}
	while (vbuf && round < rounds) {
		memset(&rd, 0, sizeof(rd));
		rd.seed = G.seed + (uint64_t)round * 7919;
		rd.churn = churn;
		rd.churn_steps = 150;
		fz_doing("mt victims");
		if (!victim_open(&rd.v, vbuf, 1 << 16) || rd.v.nring < 8) {
			fz_bad("threads: victims: %s", strerror(errno));
			victim_close(&rd.v);
			break;
		}
		victim_connect(&rd.v);
		/* the users write through their own mappings */
		for (k = 0; k < rd.v.nring; k++)
			if (!ring_alias(G.dev[rd.v.rdev[k] % G.ndev].ctx,
					&rd.v.ring[k], &rd.v.ring[k]))
				fz_bad("threads: a second mapping of a ring: %s",
				       strerror(errno));
		nth = 0;
		pthread_create(&th[nth++], NULL, destroyer, &rd);
		for (i = 0; i < nuser; i++) {
			args[nth] = (struct mt_arg){ &rd, (int)i };
			pthread_create(&th[nth], NULL, raw_user, &args[nth]);
			nth++;
		}
		for (i = 0; i < nchurn; i++) {
			args[nth] = (struct mt_arg){ &rd, (int)i };
			pthread_create(&th[nth], NULL, churner, &args[nth]);
			nth++;
		}
		for (i = 0; i < nth; i++)
			pthread_join(th[i], NULL);
		victim_close(&rd.v);
		for (k = 0; k < rd.v.nring; k++)
			munmap(rd.v.ring[k].base, rd.v.ring[k].len);
		total += rd.calls + 20;
		round++;
	}
	for (i = 0; i < nchurn; i++) {
		pool_drain(&churn[i]);
		total += churn[i].calls;
	}
	fz_async_drain();
	printf("# threads: %d rounds, 1 destroyer, %u raw users, %u churners\n",
	       round, nuser, nchurn);
	free(vbuf);
	return total;
}
