// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_inv_test's race: a large RDMA WRITE or READ by the peer against an
 * invalidation of its target by the owner, each try checked.
 */

#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "shca_inv.h"

/* ------------------------------------------------------------------ */
/* the race                                                             */

/* the target MR: windows need MW_BIND; the plain MR carries the rights */
static int target_access(const struct rig *r)
{
	if (r->tc->tgt == T_MR)
		return IBV_ACCESS_LOCAL_WRITE | REMOTE_RW;
	return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;
}

static bool target_reg(struct rig *r)
{
	r->tmr = ibv_reg_mr(g.dev[OWNER].pd, r->tmem, XFER_LEN + SPARE_LEN,
			    target_access(r));
	if (!r->tmr)
		failf("ibv_reg_mr (target) on %s: %s", g.dev[OWNER].name,
		      strerror(errno));
	if (!r->tmr || r->tc->inv != I_REBIND_OTHER)
		return r->tmr;
	/* the rebind's MR: what the old key reached is there, elsewhere */
	r->amr = ibv_reg_mr_iova(g.dev[OWNER].pd, r->amem, XFER_LEN,
				 (uintptr_t)r->tmem, target_access(r));
	if (!r->amr)
		failf("ibv_reg_mr_iova (alias) on %s: %s", g.dev[OWNER].name,
		      strerror(errno));
	return r->amr;
}

/*
 * Bind the type 1 window through @qp over @len bytes at @off of MR @mr
 * (whose addresses start at tmem).
 */
static bool mw1_bind(struct rig *r, struct ibv_qp *qp, struct ibv_cq *cq,
		     struct ibv_mr *mr, size_t off, size_t len)
{
	struct ibv_mw_bind b = {
		.wr_id = 77,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = {
			.mr = mr,
			.addr = (uintptr_t)r->tmem + off,
			.length = len,
			.mw_access_flags = REMOTE_RW,
		},
	};
	int ret = ibv_bind_mw(qp, r->mw, &b);

	if (ret) {
		failf("ibv_bind_mw: %s", strerror(ret));
		return false;
	}
	return wc_expect(cq, 77, IBV_WC_SUCCESS, "type 1 bind");
}

static bool mw2_bind(struct rig *r)
{
	struct ibv_send_wr wr = {}, *bad;
	uint32_t rkey = ibv_inc_rkey(r->mw->rkey);
	int ret;

	wr.wr_id = 78;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = r->mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = r->tmr;
	wr.bind_mw.bind_info.addr = (uintptr_t)r->tmem;
	wr.bind_mw.bind_info.length = XFER_LEN;
	wr.bind_mw.bind_info.mw_access_flags = REMOTE_RW;
	ret = ibv_post_send(r->a.qp[OWNER], &wr, &bad);
	if (ret) {
		failf("ibv_post_send(BIND_MW): %s", strerror(ret));
		return false;
	}
	if (!wc_expect(r->a.cq[OWNER], 78, IBV_WC_SUCCESS, "type 2 bind"))
		return false;
	r->mw->rkey = rkey;
	return true;
}

/* Give the peer a valid key over the target for the next try. */
bool expose(struct rig *r)
{
	enum ibv_mw_type type = r->tc->tgt == T_MW1 ? IBV_MW_TYPE_1 :
						     IBV_MW_TYPE_2;

	if (!r->tmr && !target_reg(r))
		return false;
	if (r->tc->tgt == T_MR) {
		if (r->tc->inv == I_REREG &&
		    ibv_rereg_mr(r->tmr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
				 NULL, 0, target_access(r))) {
			failf("ibv_rereg_mr (remote rights back): %s",
			      strerror(errno));
			return false;
		}
		r->rkey = r->tmr->rkey;
		return true;
	}
	if (!r->mw) {
		r->mw = ibv_alloc_mw(g.dev[OWNER].pd, type);
		if (!r->mw) {
			failf("ibv_alloc_mw(type %d): %s", type,
			      strerror(errno));
			return false;
		}
	}
	if (r->tc->tgt == T_MW1 &&
	    !mw1_bind(r, r->a.qp[OWNER], r->a.cq[OWNER], r->tmr, 0, XFER_LEN))
		return false;
	if (r->tc->tgt == T_MW2 && !mw2_bind(r))
		return false;
	r->rkey = r->mw->rkey;
	return true;
}

bool post_rdma(struct rig *r)
{
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_sge sge = {
		.addr = (uintptr_t)r->pmem,
		.length = XFER_LEN,
		.lkey = r->pmr->lkey,
	};
	int ret;

	wr.wr_id = 1;
	wr.opcode = r->tc->op == OP_WRITE ? IBV_WR_RDMA_WRITE :
					    IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)r->tmem;
	wr.wr.rdma.rkey = r->rkey;
	ret = ibv_post_send(r->a.qp[PEER], &wr, &bad);
	if (ret)
		failf("ibv_post_send(RDMA %s): %s", op_name[r->tc->op],
		      strerror(ret));
	return !ret;
}

/* READ_QUEUED: 64 KiB the owner answers first (wr_id 5) */
static bool post_scratch_read(struct rig *r)
{
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_sge sge = {
		.addr = (uintptr_t)r->pmem + XFER_LEN,
		.length = SCRATCH_LEN,
		.lkey = r->pmr->lkey,
	};
	int ret;

	wr.wr_id = 5;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)r->rmem;
	wr.wr.rdma.rkey = r->rmr->rkey;
	ret = ibv_post_send(r->a.qp[PEER], &wr, &bad);
	if (ret)
		failf("ibv_post_send(first RDMA READ): %s", strerror(ret));
	return !ret;
}

static bool post_local_inv(struct rig *r, struct conn *c)
{
	struct ibv_send_wr wr = {}, *bad;
	int ret;

	wr.wr_id = 2;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = r->rkey;
	ret = ibv_post_send(c->qp[OWNER], &wr, &bad);
	if (ret) {
		failf("ibv_post_send(LOCAL_INV): %s", strerror(ret));
		return false;
	}
	return wc_expect(c->cq[OWNER], 2, IBV_WC_SUCCESS, "LOCAL_INV");
}

/* The peer sends SEND_WITH_INV(@rkey) on connection b; OWNER's receive. */
bool send_inv(struct rig *r, uint32_t rkey, enum ibv_wc_status want)
{
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_sge rsge = {
		.addr = (uintptr_t)r->rmem, .length = 64,
		.lkey = r->rmr->lkey,
	};
	struct ibv_wc wc;
	int ret;

	rwr.wr_id = 3;
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	ret = ibv_post_recv(r->b.qp[OWNER], &rwr, &rbad);
	wr.wr_id = 4;
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	if (!ret)
		ret = ibv_post_send(r->b.qp[PEER], &wr, &bad);
	if (ret) {
		failf("posting SEND_WITH_INV: %s", strerror(ret));
		return false;
	}
	if (wc_wait(r->b.cq[OWNER], &wc, WAIT_MS, "SEND_WITH_INV receive") != 1)
		return false;
	if (want == IBV_WC_SUCCESS &&
	    (wc.status != IBV_WC_SUCCESS || !(wc.wc_flags & IBV_WC_WITH_INV) ||
	     wc.invalidated_rkey != rkey)) {
		failf("SEND_WITH_INV receive: status %s flags 0x%x rkey 0x%x, expected success with invalidate 0x%x",
		      ibv_wc_status_str(wc.status), wc.wc_flags,
		      wc.invalidated_rkey, rkey);
		return false;
	}
	return wc_expect(r->b.cq[PEER], 4, want, "SEND_WITH_INV");
}

/* Take the memory back; returns when the invalidation has completed. */
static bool invalidate(struct rig *r)
{
	int ret;

	switch (r->tc->inv) {
	case I_LINV_SAME:
		return post_local_inv(r, &r->a);
	case I_LINV_OTHER:
		return post_local_inv(r, &r->b);
	case I_SINV:
		return send_inv(r, r->rkey, IBV_WC_SUCCESS);
	case I_DEALLOC:
		ret = ibv_dealloc_mw(r->mw);
		r->mw = NULL;
		break;
	case I_REBIND_SAME:
		return mw1_bind(r, r->a.qp[OWNER], r->a.cq[OWNER], r->tmr,
				XFER_LEN, SPARE_LEN);
	case I_REBIND_OTHER:
		/* the old key's addresses, in other memory */
		return mw1_bind(r, r->b.qp[OWNER], r->b.cq[OWNER], r->amr, 0,
				XFER_LEN);
	case I_DEREG:
		ret = ibv_dereg_mr(r->tmr);
		r->tmr = NULL;
		break;
	default:
		ret = ibv_rereg_mr(r->tmr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
				   NULL, 0, IBV_ACCESS_LOCAL_WRITE) ? errno : 0;
		break;
	}
	if (ret)
		failf("%s: %s", inv_name[r->tc->inv], strerror(ret));
	return !ret;
}

/* Bytes of @a that differ from @b; the first such offset in *@first. */
static size_t diff(const uint8_t *a, const uint8_t *b, size_t n,
		   size_t *first)
{
	size_t i, bad = 0;

	for (i = 0; i < n; i++)
		if (a[i] != b[i] && !bad++)
			*first = i;
	return bad;
}

/* Bytes i with a[i] == b[i]; the first in *@first. */
static size_t same(const uint8_t *a, const uint8_t *b, size_t n,
		   size_t *first)
{
	size_t i, hit = 0;

	for (i = 0; i < n; i++)
		if (a[i] == b[i] && !hit++)
			*first = i;
	return hit;
}

/*
 * WRITE: @snap is the target when the invalidation completed; the
 * target must still hold it, and hold all the data if the WRITE
 * succeeded.
 */
static void check_write(struct rig *r, const uint8_t *snap,
			enum ibv_wc_status st, const char *try)
{
	size_t first = 0, i, n;

	n = diff(r->tmem, snap, XFER_LEN, &first);
	if (n)
		failf("%s: %zu byte(s) of the target changed after the invalidation completed (first at %zu)",
		      try, n, first);
	for (i = 0, n = 0; i < XFER_LEN; i++)
		if (snap[i] != r->p0[i] && snap[i] != r->p1[i] && !n++)
			first = i;
	if (n)
		failf("%s: %zu byte(s) of the target are neither what it held nor what was written (first at %zu)",
		      try, n, first);
	if (st == IBV_WC_SUCCESS) {
		n = diff(snap, r->p1, XFER_LEN, &first);
		if (n)
			failf("%s: the WRITE succeeded but %zu byte(s) had not landed when the invalidation completed (first at %zu)",
			      try, n, first);
	}
	n = r->amr ? diff(r->amem, r->p2, XFER_LEN, &first) : 0;
	if (n)
		failf("%s: %zu byte(s) written with the old key landed in the memory the window was rebound to (first at %zu)",
		      try, n, first);
}

/*
 * READ: the target was overwritten with p2 right after the invalidation
 * completed; no byte of p2 may reach the reader, and a successful READ
 * returns p0 whole.
 */
static void check_read(struct rig *r, enum ibv_wc_status st,
		       const char *try)
{
	size_t first = 0, n;

	n = same(r->pmem, r->p2, XFER_LEN, &first);
	if (n)
		failf("%s: %zu byte(s) written after the invalidation completed (or of the memory the window was rebound to) reached the reader (first at %zu)",
		      try, n, first);
	if (st == IBV_WC_SUCCESS) {
		n = diff(r->pmem, r->p0, XFER_LEN, &first);
		if (n)
			failf("%s: the READ succeeded but %zu byte(s) differ from the target's (first at %zu)",
			      try, n, first);
	}
}

/*
 * READ: overwrite the target with p2, starting where the bytes still on
 * their way to the reader most likely are: just before the reader's
 * progress (the first page it has not received yet; responses arrive in
 * order), then the rest.
 */
static void overwrite(struct rig *r)
{
	size_t lo = 0, hi = XFER_LEN / 4096, mid, from;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (r->pmem[mid * 4096] == (uint8_t)(r->p0[mid * 4096] ^ 0x0f))
			hi = mid;
		else
			lo = mid + 1;
	}
	from = lo > 16 ? (lo - 16) * 4096 : 0;
	memcpy(r->tmem + from, r->p2 + from, XFER_LEN - from);
	memcpy(r->tmem, r->p2, from);
}

/*
 * The invalidation of one try and what follows it at once (the WRITE's
 * snapshot, the READ's overwrite).  In a hold try, one thread per CPU
 * waits for the hold to begin and the first to see it acts: the CPU that
 * runs the held packet is busy until the hold ends, so the thread on the
 * other one is the one that lands inside it.  @claimed: 1 by the thread
 * that acted, 2 when the transfer could not be posted.
 */
static bool post_xfer(struct rig *r);

struct act {
	struct rig *r;
	uint8_t *snap;
	long holds0;		/* rkey_holds before the transfer */
	long done0, done1;	/* rkey_holds_done before and after acting */
	int claimed;
	int cpu;		/* where the acting thread ran */
	bool acted;		/* the invalidation completed */
	double t_post;		/* now_ms() when the transfer was posted */
	double t_seen, t_done;	/* the hold seen; the invalidation done */
};

static void act(struct act *a)
{
	if (!invalidate(a->r))
		return;
	if (a->r->tc->op == OP_WRITE)
		memcpy(a->snap, a->r->tmem, XFER_LEN);
	else
		overwrite(a->r);
	a->acted = true;
}

static void *act_on_hold(void *arg)
{
	struct act *a = arg;

	if (hold_claim(&a->claimed, a->holds0, WAIT_MS)) {
		a->t_seen = now_ms();
		a->cpu = sched_getcpu();
		a->done0 = fault_get("rkey_holds_done");
		act(a);
		a->t_done = now_ms();
		a->done1 = fault_get("rkey_holds_done");
	}
	return NULL;
}

/* Post the transfer (act_on_hold() watching); 1 when posted */
static int post_act(void *arg)
{
	struct act *a = arg;

	a->t_post = now_ms();
	if (post_xfer(a->r))
		return 1;
	__atomic_store_n(&a->claimed, 2, __ATOMIC_RELEASE);
	return 0;
}

/* Post the transfer with act_on_hold() watching on every CPU */
static bool post_and_act_when_held(struct act *a)
{
	return run_with_watchers(act_on_hold, post_act, a);
}

/* Post the peer's transfer (READ_QUEUED: a 64 KiB READ first). */
static bool post_xfer(struct rig *r)
{
	if (r->tc->op == OP_READ_QUEUED && !post_scratch_read(r))
		return false;
	return post_rdma(r);
}

/* Fill the buffers for try @n. */
static void try_prepare(struct rig *r, unsigned int n)
{
	size_t i;

	pattern(r->p0, XFER_LEN, 2 * n + 1);
	pattern(r->p1, XFER_LEN, 2 * n + 2);
	for (i = 0; i < XFER_LEN; i++)
		r->p2[i] = ~r->p0[i];
	memcpy(r->tmem, r->p0, XFER_LEN);
	/* a READ through the rebind would return p2: check_read() sees it */
	memcpy(r->amem, r->p2, XFER_LEN);
	if (r->tc->op == OP_WRITE) {
		memcpy(r->pmem, r->p1, XFER_LEN);
		return;
	}
	/* differs from p0 and from p2 in every byte */
	for (i = 0; i < XFER_LEN; i++)
		r->pmem[i] = r->p0[i] ^ 0x0f;
}

static unsigned long long refusals(void)
{
	return ctr(OWNER, "rkey_swept_refused") +
	       ctr(OWNER, "rkey_refused_key") +
	       ctr(OWNER, "rkey_refused_access");
}

/* The peer's completion(s) and the data, once the invalidation is done. */
static void try_check(struct rig *r, struct act *a, unsigned long long ref0,
		      const char *try)
{
	const struct tcase *tc = r->tc;
	enum ibv_wc_status st;
	struct ibv_wc wc;

	if (tc->op == OP_READ_QUEUED &&
	    !wc_expect(r->a.cq[PEER], 5, IBV_WC_SUCCESS, "the first READ"))
		return;
	if (wc_wait(r->a.cq[PEER], &wc, WAIT_MS, try) != 1)
		return;
	st = wc.status;
	if (st != IBV_WC_SUCCESS && st != IBV_WC_REM_ACCESS_ERR)
		failf("%s: the peer's RDMA %s ended with %s, expected success or a remote access error",
		      try, op_name[tc->op], ibv_wc_status_str(st));
	if (tc->op == OP_READ_QUEUED && st == IBV_WC_SUCCESS)
		failf("%s: the READ queued behind another succeeded", try);
	sleep_ms(SETTLE_MS);
	if (tc->op == OP_WRITE)
		check_write(r, a->snap, st, try);
	else
		check_read(r, st, try);
	if (st == IBV_WC_SUCCESS)
		r->whole++;
	else
		r->cut++;
	if (st != IBV_WC_SUCCESS && refusals() == ref0)
		failf("%s: the transfer was refused but no refusal counter moved",
		      try);
}

/* Record how a hold was missed (the test's diagnostics). */
static void miss_note(struct rig *r, const struct act *a)
{
	if (a->claimed != 1) {
		snprintf(r->miss, sizeof(r->miss), "no thread saw the hold");
		return;
	}
	snprintf(r->miss, sizeof(r->miss),
		 "hold %u ms, seen on CPU %d %.1f ms after the post; rkey_holds_done %ld before, %ld when seen, %ld after the invalidation (%.1f ms)",
		 r->hold_ms, a->cpu, a->t_seen - a->t_post, a->holds0,
		 a->done0, a->done1,
		 a->t_done - a->t_seen);
}

/*
 * One try.  Returns false when a hold was asked for and the
 * invalidation did not land in it (try again); true otherwise, with
 * the try's failures recorded.
 */
bool one_try(struct rig *r, enum hold h, unsigned int n)
{
	const struct tcase *tc = r->tc;
	struct act a = { .r = r };
	unsigned long long ref0;
	bool landed = true;
	char try[80];
	double until;

	snprintf(try, sizeof(try), "%s try %u%s", tc->name, n,
		 h == H_COPY ? " (hold copy)" : h == H_XMIT ? " (hold xmit)" :
		 "");
	try_prepare(r, n);
	a.snap = malloc(XFER_LEN);
	if (!a.snap) {
		failf("out of memory");
		return true;
	}
	if (!expose(r))
		goto out;
	ref0 = refusals();
	if (h != H_NONE) {
		a.holds0 = fault_get("rkey_holds");
		if (!fault_arm(h == H_COPY ? 0 : 1, tc->op == OP_READ_QUEUED ?
			       SCRATCH_LEN / 1024 - 1 : XFER_LEN / 1024 / 4,
			       r->hold_ms ? r->hold_ms : HOLD_MS)) {
			failf("%s: cannot arm the hold (%s)", try, FAULT_DIR);
			goto out;
		}
	}
	if (h == H_NONE) {
		until = now_ms() + r->xfer_ms * (random() % 1000) / 900.0;
		if (!post_xfer(r))
			goto out;
		while (now_ms() < until)
			;
		act(&a);
	} else {
		if (!post_and_act_when_held(&a))
			goto out;
		if (a.claimed != 1)
			failf("%s: the armed hold never began", try);
		landed = a.claimed == 1 && a.done0 == a.holds0;
	}
	if (!a.acted)
		goto out;
	try_check(r, &a, ref0, try);
	if (h == H_COPY && landed && a.done1 == a.done0)
		failf("%s: the invalidation completed while a packet that had passed its key check was held before its copy (no fence)",
		      try);
	if (h == H_XMIT && landed && a.done1 != a.done0)
		landed = false;	/* the hold ended first: not in the window */
out:
	if (h != H_NONE && !landed)
		miss_note(r, &a);
	if (h != H_NONE)
		fault_set("rkey_hold_arm", 0);
	free(a.snap);
	return landed;
}

/* Back to a clean connection after a try that errored it. */
bool rig_recover(struct rig *r)
{
	int s;

	for (s = 0; s < 2; s++) {
		cq_drain(r->a.cq[s]);
		cq_drain(r->b.cq[s]);
	}
	return !conn_connect(&r->a);
}

void rig_close(struct rig *r)
{
	if (r->mw && ibv_dealloc_mw(r->mw))
		failf("ibv_dealloc_mw: %s", strerror(errno));
	if (r->tmr && ibv_dereg_mr(r->tmr))
		failf("ibv_dereg_mr (target): %s", strerror(errno));
	if (r->amr && ibv_dereg_mr(r->amr))
		failf("ibv_dereg_mr (alias): %s", strerror(errno));
	if (r->pmr && ibv_dereg_mr(r->pmr))
		failf("ibv_dereg_mr (peer): %s", strerror(errno));
	if (r->rmr && ibv_dereg_mr(r->rmr))
		failf("ibv_dereg_mr (receive): %s", strerror(errno));
	conn_destroy(&r->a);
	conn_destroy(&r->b);
	free(r->tmem);
	free(r->amem);
	free(r->pmem);
	free(r->rmem);
	free(r->p0);
	free(r->p1);
	free(r->p2);
	memset(r, 0, sizeof(*r));
}

bool rig_open(struct rig *r, const struct tcase *tc)
{
	memset(r, 0, sizeof(*r));
	r->tc = tc;
	if (posix_memalign((void **)&r->tmem, 4096, XFER_LEN + SPARE_LEN) ||
	    posix_memalign((void **)&r->amem, 4096, XFER_LEN) ||
	    posix_memalign((void **)&r->pmem, 4096, XFER_LEN + SCRATCH_LEN) ||
	    posix_memalign((void **)&r->rmem, 4096, SCRATCH_LEN) ||
	    !(r->p0 = malloc(XFER_LEN)) || !(r->p1 = malloc(XFER_LEN)) ||
	    !(r->p2 = malloc(XFER_LEN))) {
		failf("out of memory");
		return false;
	}
	if (conn_open(&r->a) || conn_open(&r->b))
		return false;
	r->pmr = ibv_reg_mr(g.dev[PEER].pd, r->pmem, XFER_LEN + SCRATCH_LEN,
			    IBV_ACCESS_LOCAL_WRITE);
	r->rmr = ibv_reg_mr(g.dev[OWNER].pd, r->rmem, SCRATCH_LEN,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!r->pmr || !r->rmr) {
		failf("ibv_reg_mr: %s", strerror(errno));
		return false;
	}
	return true;
}

/* One uninterrupted transfer: it works, and how long it takes. */
bool rig_measure(struct rig *r)
{
	double t0;

	uint8_t *src = r->tc->op == OP_WRITE ? r->pmem : r->tmem;
	uint8_t *dst = r->tc->op == OP_WRITE ? r->tmem : r->pmem;

	pattern(src, XFER_LEN, 99);
	memset(dst, 0, XFER_LEN);
	if (!expose(r))
		return false;
	t0 = now_ms();
	if (!post_rdma(r) ||
	    !wc_expect(r->a.cq[PEER], 1, IBV_WC_SUCCESS, "uninterrupted transfer"))
		return false;
	r->xfer_ms = now_ms() - t0;
	if (memcmp(r->tmem, r->pmem, XFER_LEN)) {
		failf("uninterrupted transfer: data differs");
		return false;
	}
	/* the next try exposes afresh: take this exposure back */
	return invalidate(r);
}
