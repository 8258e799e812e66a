// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_mcast.c - libFuzzer harness of kernel/mech/shca_mcast.c.
 *
 * The input picks a set capacity (1..24 members), a threshold (1..4
 * packets) and a credit (1..8 descriptors), then is read as operations,
 * one opcode byte and its argument bytes each: add and remove members
 * (4 functions x 8 QPNs, flags a little past the valid ones, a cookie
 * each), find, admit a packet (from a remote host or a local QP,
 * replicated from a snapshot of the set as it is then), step a packet's
 * replication, consume a descriptor from anywhere in the pipeline
 * (queues of different QPs drain in any order), end a finished packet,
 * and the calls that must refuse (end or consume with nothing to end).
 *
 * A model kept here (membership and flags per function and QPN, every
 * packet's snapshot, cursor and copies, the descriptors in the pipeline
 * and each payload's reference count, started at 1, one more per copy
 * not marked last, one less per consumed copy) predicts every return
 * code, member index and last mark from the contract in shca_mcast.h.
 * After every operation the set and flow checks must pass and the
 * counters agree with the model; the payload count must never reach 0
 * while copies are still to be made or consumed, and a finished packet
 * must have given exactly one copy to each member of its snapshot that
 * wants it.  Any disagreement traps.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "shca_mcast.h"
#include "fuzz_util.h"

#define M_FUNCS		4
#define M_QPNS		8
#define M_CAP		24
#define M_PKTS		4
#define M_CREDIT	8
#define M_SLOTS		(M_PKTS + M_CREDIT)	/* ended packets may
						 * still have copies out */
#define MAX_OPS		2048

struct m_pkt {
	bool active;		/* admitted, not ended */
	bool done;		/* rep_next said no copy is left */
	struct shca_mcast_rep r;
	struct shca_mcast_member snap[M_CAP];
	u32 n;
	u32 mnext;		/* the model's cursor */
	u32 got[M_CAP];		/* copies per snapshot member */
	int prc;		/* payload reference count */
	u32 in_pipe;		/* its descriptors not yet consumed */
};

struct m_desc {
	u32 pkt;
	bool last;
};

static struct shca_mcast_member set[M_CAP];
static u32 set_n, cap;
static bool member[M_FUNCS][M_QPNS];
static u16 mflags[M_FUNCS][M_QPNS];
static u32 mcookie[M_FUNCS][M_QPNS];
static struct shca_mcast_flow f;
static struct m_pkt pkts[M_SLOTS];
static struct m_desc pipe[M_CREDIT];
static u32 pipe_n;
static struct shca_mcast_flow mf;	/* the model's counters */

static u32 m_set_n(void)
{
	u32 i, j, n = 0;

	for (i = 0; i < M_FUNCS; i++)
		for (j = 0; j < M_QPNS; j++)
			n += member[i][j];
	return n;
}

static bool m_wants(const struct shca_mcast_member *m,
		    const struct shca_mcast_src *src)
{
	if (m->func < 32 && (src->skip_funcs & (1u << m->func)))
		return false;
	return !(src->local && (m->flags & SHCA_MC_BLOCK_SELF) &&
		 m->func == src->func && m->qpn == src->qpn);
}

static void op_add(struct fuzz_in *in)
{
	struct shca_mcast_member out[M_CAP], m;
	u32 ocap = fuzz_pick(in, M_CAP + 1);
	int ret, exp;

	m.func = fuzz_pick(in, M_FUNCS);
	m.qpn = fuzz_pick(in, M_QPNS);
	m.flags = fuzz_pick(in, 3);	/* 2 is not a valid flag */
	m.cookie = fuzz_u8(in);
	if (ocap > cap)
		ocap = cap;
	ret = shca_mcast_add(set, set_n, &m, out, ocap);
	if (m.flags & ~SHCA_MC_FLAGS)
		exp = SHCA_MC_EINVAL;
	else if (member[m.func][m.qpn])
		exp = SHCA_MC_EEXIST;
	else if (set_n + 1 > ocap)
		exp = SHCA_MC_ENOSPC;
	else
		exp = (int)set_n + 1;
	FUZZ_ASSERT(ret == exp);
	if (ret < 0)
		return;
	/* the old set must be untouched: a packet may replicate from it */
	FUZZ_ASSERT(shca_mcast_check_set(set, set_n) == 0);
	memcpy(set, out, ret * sizeof(*out));
	set_n = ret;
	member[m.func][m.qpn] = true;
	mflags[m.func][m.qpn] = m.flags;
	mcookie[m.func][m.qpn] = m.cookie;
}

static void op_del(struct fuzz_in *in)
{
	struct shca_mcast_member out[M_CAP];
	u32 ocap = fuzz_pick(in, M_CAP + 1);
	u16 func = fuzz_pick(in, M_FUNCS);
	u32 qpn = fuzz_pick(in, M_QPNS);
	int ret, exp;

	ret = shca_mcast_del(set, set_n, func, qpn, out, ocap);
	if (!member[func][qpn])
		exp = SHCA_MC_ENOENT;
	else if (ocap < set_n - 1)
		exp = SHCA_MC_ENOSPC;
	else
		exp = (int)set_n - 1;
	FUZZ_ASSERT(ret == exp);
	if (ret < 0)
		return;
	memcpy(set, out, ret * sizeof(*out));
	set_n = ret;
	member[func][qpn] = false;
}

static void op_find(struct fuzz_in *in)
{
	u16 func = fuzz_pick(in, M_FUNCS + 1);
	u32 qpn = fuzz_pick(in, M_QPNS + 1);
	int ret = shca_mcast_find(set, set_n, func, qpn);

	if (func < M_FUNCS && qpn < M_QPNS && member[func][qpn]) {
		FUZZ_ASSERT(ret >= 0 && (u32)ret < set_n);
		FUZZ_ASSERT(set[ret].func == func && set[ret].qpn == qpn);
		FUZZ_ASSERT(set[ret].flags == mflags[func][qpn]);
		FUZZ_ASSERT(set[ret].cookie == mcookie[func][qpn]);
	} else {
		FUZZ_ASSERT(ret == SHCA_MC_ENOENT);
	}
}

/* Index of the first snapshot member at or after @i that wants a copy. */
static u32 m_next(const struct m_pkt *p, u32 i)
{
	while (i < p->n && !m_wants(&p->snap[i], &p->r.src))
		i++;
	return i;
}

static void op_admit(struct fuzz_in *in)
{
	struct shca_mcast_src src = {
		.local = fuzz_u8(in) & 1,
		.func = fuzz_pick(in, M_FUNCS),
		.qpn = fuzz_pick(in, M_QPNS),
		.skip_funcs = fuzz_u8(in) & 3 ? 0 : fuzz_u32(in),
	};
	struct m_pkt *p = NULL;
	u32 i;
	int ret;

	ret = shca_mcast_admit(&f);
	if (mf.pkts >= mf.threshold) {
		FUZZ_ASSERT(ret == SHCA_MC_ENOBUFS);
		mf.drop_threshold++;
		return;
	}
	FUZZ_ASSERT(ret == 0);
	mf.pkts++;
	mf.admitted++;
	for (i = 0; i < M_SLOTS && !p; i++)
		if (!pkts[i].active && !pkts[i].in_pipe)
			p = &pkts[i];
	FUZZ_ASSERT(p);
	memset(p, 0, sizeof(*p));
	p->active = true;
	p->prc = 1;
	p->n = set_n;
	memcpy(p->snap, set, set_n * sizeof(*set));
	shca_mcast_rep_start(&p->r, p->snap, p->n, &src);
	p->mnext = m_next(p, 0);
}

static void op_step(struct fuzz_in *in)
{
	struct m_pkt *p = &pkts[fuzz_pick(in, M_SLOTS)];
	u32 exp_i = p->mnext;
	bool last = false;
	int ret;

	if (!p->active)
		return;
	ret = shca_mcast_rep_next(&f, &p->r, &last);
	if (exp_i >= p->n) {
		FUZZ_ASSERT(ret == SHCA_MC_ENOENT);
		p->done = true;
		return;
	}
	if (mf.descs >= mf.credit) {
		FUZZ_ASSERT(ret == SHCA_MC_EAGAIN);
		mf.credit_stalls++;
		return;
	}
	FUZZ_ASSERT(ret >= 0 && (u32)ret == exp_i);
	p->mnext = m_next(p, exp_i + 1);
	FUZZ_ASSERT(last == (p->mnext >= p->n));
	FUZZ_ASSERT(pipe_n < M_CREDIT);
	p->got[ret]++;
	p->in_pipe++;
	if (!last)
		p->prc++;
	pipe[pipe_n].pkt = p - pkts;
	pipe[pipe_n].last = last;
	pipe_n++;
	mf.descs++;
	mf.copies++;
}

static void op_consume(struct fuzz_in *in)
{
	u32 k = fuzz_pick(in, M_CREDIT);
	struct m_pkt *p;
	int ret;

	ret = shca_mcast_consumed(&f);
	if (!pipe_n) {
		FUZZ_ASSERT(ret == SHCA_MC_EINVAL);
		return;
	}
	FUZZ_ASSERT(ret == 0);
	k %= pipe_n;
	p = &pkts[pipe[k].pkt];
	pipe[k] = pipe[--pipe_n];
	mf.descs--;
	p->in_pipe--;
	p->prc--;
	FUZZ_ASSERT(p->prc >= 0);
	/* the payload may go only with its last copy made and consumed */
	if (!p->prc)
		FUZZ_ASSERT(!p->in_pipe && p->mnext >= p->n);
}

static void op_end(struct fuzz_in *in)
{
	struct m_pkt *p = &pkts[fuzz_pick(in, M_SLOTS)];
	u32 i, copies = 0;
	int ret;

	if (!p->active || !p->done) {
		if (!mf.pkts)
			FUZZ_ASSERT(shca_mcast_rep_end(&f) == SHCA_MC_EINVAL);
		return;
	}
	for (i = 0; i < p->n; i++) {
		FUZZ_ASSERT(p->got[i] ==
			    (m_wants(&p->snap[i], &p->r.src) ? 1u : 0u));
		copies += p->got[i];
	}
	FUZZ_ASSERT(p->r.copies == copies);
	if (!copies) {
		/* no copy took the packet's own reference: the caller drops it */
		FUZZ_ASSERT(p->prc == 1);
		p->prc = 0;
	}
	ret = shca_mcast_rep_end(&f);
	FUZZ_ASSERT(ret == 0);
	mf.pkts--;
	p->active = false;
}

static void check(void)
{
	FUZZ_ASSERT(shca_mcast_check_set(set, set_n) == 0);
	FUZZ_ASSERT(set_n == m_set_n());
	FUZZ_ASSERT(shca_mcast_check_flow(&f) == 0);
	FUZZ_ASSERT(f.pkts == mf.pkts && f.descs == mf.descs);
	FUZZ_ASSERT(f.admitted == mf.admitted);
	FUZZ_ASSERT(f.drop_threshold == mf.drop_threshold);
	FUZZ_ASSERT(f.copies == mf.copies);
	FUZZ_ASSERT(f.credit_stalls == mf.credit_stalls);
	FUZZ_ASSERT(f.descs == pipe_n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in;
	u32 threshold, credit;
	int ops = 0;

	fuzz_in_init(&in, data, size);
	memset(member, 0, sizeof(member));
	memset(pkts, 0, sizeof(pkts));
	set_n = 0;
	pipe_n = 0;
	cap = 1 + fuzz_pick(&in, M_CAP);
	threshold = 1 + fuzz_pick(&in, M_PKTS);
	credit = 1 + fuzz_pick(&in, M_CREDIT);
	FUZZ_ASSERT(shca_mcast_flow_init(&f, threshold, 0) == SHCA_MC_EINVAL);
	FUZZ_ASSERT(shca_mcast_flow_init(&f, threshold, credit) == 0);
	shca_mcast_flow_init(&mf, threshold, credit);

	while (!fuzz_in_done(&in) && ops++ < MAX_OPS) {
		switch (fuzz_pick(&in, 7)) {
		case 0:
			op_add(&in);
			break;
		case 1:
			op_del(&in);
			break;
		case 2:
			op_find(&in);
			break;
		case 3:
			op_admit(&in);
			break;
		case 4:
			op_step(&in);
			break;
		case 5:
			op_consume(&in);
			break;
		default:
			op_end(&in);
			break;
		}
		check();
	}
	return 0;
}
