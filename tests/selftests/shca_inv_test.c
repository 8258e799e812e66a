// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_inv_test: an invalidation fences the RDMA in flight (seed 003).
 *
 *   shca_inv_test [-t FILTER[,FILTER...]] [-n TRIES]
 *                 [-m timing|hold|all] [-l] OWNER GIDX PEER GIDX
 *
 * OWNER, an shca device, owns target memory that PEER (shca or rdma_rxe)
 * reads or writes with one large multi-packet RDMA READ or WRITE, through
 * a type 1 window, a type 2 window or a plain MR.  While the transfer
 * runs, OWNER takes the memory back: LOCAL_INV on the QP the transfer
 * uses or on another one, SEND_WITH_INV from the peer on another
 * connection, window deallocation, rebind (through either QP), MR
 * deregistration or re-registration without remote rights.  The moment
 * the invalidation has completed (its completion polled, or the verb
 * returned):
 *   - WRITE: the target is snapshotted; once the WRITE has ended, not
 *     one byte of the target may differ from the snapshot;
 *   - READ: OWNER overwrites the target with the complement of what it
 *     held; not one overwritten byte may reach the reader.
 * The peer's transfer ends with success (then every byte was moved
 * before the invalidation completed) or a remote access error.
 *
 * Mode "timing" invalidates after a random delay within the transfer's
 * measured duration, TRIES times per case.  Mode "hold" uses the
 * driver's fault injection (debugfs shca/fault/) to stop one packet of
 * the transfer between its R_Key slot check and its copy ("copy"), or a
 * built READ response before it leaves ("xmit"), and invalidates while
 * it is held: a "copy" hold must end before the invalidation completes
 * (the fence), an "xmit" hold is still on when an invalidation that does
 * not need the transfer's QP completes.
 *
 * The read_queued cases post a 64 KiB READ of other memory first and
 * hold its last response ("xmit"): the large READ is accepted but none
 * of its responses is built when the invalidation completes, and it must
 * fail with a remote access error.  That is the race rdma_rxe as the
 * reader can take: its completer treats any NAK that arrives after a
 * READ's first response as the end of the READ, completes it as
 * successful with part of its data and WARNs (rxe_comp.c, check_ack()),
 * so with rxe as PEER only the write_ and read_queued cases are run.
 *
 * Last, the refusals: a stale key generation, and remote invalidation of
 * a type 1 window, each moving its counter on OWNER.
 *
 * One process drives both devices.  Prints TAP 13; exits 0 when every
 * case passes, 1 when one fails, 4 when the devices are missing.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "shca_test.h"

#define XFER_LEN	(1024 * 1024)	/* the transfer: 1024 packets */
#define SPARE_LEN	4096		/* where a rebind moves a window */
#define SCRATCH_LEN	(64 * 1024)	/* the READ a queued one waits behind */
#define WAIT_MS		10000
#define SETTLE_MS	30		/* after the transfer ended */
#define HOLD_MS		200
#define HOLD_TRIES	4		/* attempts to land in a hold */
#define CQ_DEPTH	64
#define FAULT_DIR	"/sys/kernel/debug/shca/fault"

#define REMOTE_RW	(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)

enum { OWNER, PEER };

/* READ_QUEUED: the READ waits behind another READ's responses */
enum op { OP_WRITE, OP_READ, OP_READ_QUEUED };
enum tgt { T_MR, T_MW1, T_MW2 };
enum inv {
	I_LINV_SAME,	/* LOCAL_INV on the transfer's QP */
	I_LINV_OTHER,	/* LOCAL_INV on another QP of the PD */
	I_SINV,		/* SEND_WITH_INV from the peer, other connection */
	I_DEALLOC,	/* ibv_dealloc_mw */
	I_REBIND_SAME,	/* type 1 rebind through the transfer's QP */
	I_REBIND_OTHER,	/* type 1 rebind through another QP */
	I_DEREG,	/* ibv_dereg_mr */
	I_REREG,	/* ibv_rereg_mr: remote rights taken away */
};

static const char *const op_name[] = { "write", "read", "read_queued" };
static const char *const tgt_name[] = { "mr", "mw1", "mw2" };
static const char *const inv_name[] = {
	"linv_same", "linv_other", "sinv", "dealloc", "rebind_same",
	"rebind_other", "dereg", "rereg",
};

/* ------------------------------------------------------------------ */
/* devices, connections                                                 */

static struct {
	struct test_dev dev[2];
} g;

/* one RC connection: QP a on OWNER, QP b on PEER */
struct conn {
	struct ibv_cq *cq[2];		/* send and receive CQ of each QP */
	struct ibv_qp *qp[2];
	uint32_t psn[2];
};

/* How SIDE's QP of C reaches the other side's */
static struct rc_path conn_path(const struct conn *c, int side)
{
	struct rc_path path = {
		.access = REMOTE_RW | IBV_ACCESS_REMOTE_ATOMIC,
		.mtu = IBV_MTU_1024,
		.dest_qpn = c->qp[!side]->qp_num,
		.rq_psn = c->psn[!side],
		.sq_psn = c->psn[side],
		.dgid = g.dev[!side].gid,
		.sgid_index = g.dev[side].gidx,
		.rd_atomic = 4,
		.min_rnr_timer = 12,
		/* 537 ms: no retransmission while a packet is held */
		.timeout = 17,
		.retry_cnt = 7,
		.rnr_retry = 7,
	};

	return path;
}

/* RESET -> RTS on both sides, with fresh PSNs. */
static int conn_connect(struct conn *c)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	enum ibv_qp_state at = IBV_QPS_RESET;
	struct rc_path path[2];
	int s, ret = 0;

	for (s = 0; s < 2; s++)
		c->psn[s] = (uint32_t)random() & 0xffffff;
	for (s = 0; s < 2 && !ret; s++)
		ret = ibv_modify_qp(c->qp[s], &a, IBV_QP_STATE);
	if (!ret) {
		path[0] = conn_path(c, 0);
		path[1] = conn_path(c, 1);
		ret = rc_connect_pair(c->qp, path, &s, &at);
	} else {
		s--;
	}
	if (ret)
		failf("ibv_modify_qp(state %d) of QP %u on %s: %s", at,
		      c->qp[s]->qp_num, g.dev[s].name, strerror(ret));
	return ret ? -1 : 0;
}

static void conn_destroy(struct conn *c)
{
	int s;

	for (s = 0; s < 2; s++)
		qp_cqs_destroy(c->qp[s], c->cq[s], NULL, g.dev[s].name);
	memset(c, 0, sizeof(*c));
}

static int conn_open(struct conn *c)
{
	struct qp_spec spec = qp_spec_simple(CQ_DEPTH, 16);

	memset(c, 0, sizeof(*c));
	if (!qp_pair_create(g.dev, &spec, c->qp, c->cq) && !conn_connect(c))
		return 0;
	conn_destroy(c);
	return -1;
}

/*
 * Poll @cq for one completion for at most @ms: 1 with *@wc filled, 0 on
 * timeout (a reason recorded), -1 on a polling error.
 */
static int wc_wait(struct ibv_cq *cq, struct ibv_wc *wc, int ms,
		   const char *what)
{
	int r = poll_wait(cq, wc, 1, ms);

	if (r < 0)
		failf("%s: polling failed", what);
	else if (!r)
		failf("%s: no completion within %d ms", what, ms);
	return r;
}

/* Wait for a completion of @wr_id with @status; any other fails. */
static bool wc_expect(struct ibv_cq *cq, uint64_t wr_id,
		      enum ibv_wc_status status, const char *what)
{
	struct ibv_wc wc;

	if (wc_wait(cq, &wc, WAIT_MS, what) != 1)
		return false;
	if (wc.wr_id == wr_id && wc.status == status)
		return true;
	failf("%s: completion wr_id %llu status %s, expected wr_id %llu %s",
	      what, (unsigned long long)wc.wr_id,
	      ibv_wc_status_str(wc.status), (unsigned long long)wr_id,
	      ibv_wc_status_str(status));
	return false;
}

/* Throw away whatever completions a CQ holds (flushes after an error). */
static void cq_drain(struct ibv_cq *cq)
{
	struct ibv_wc wc[8];

	while (ibv_poll_cq(cq, 8, wc) > 0)
		;
}

/* ------------------------------------------------------------------ */
/* counters and fault injection                                        */

static unsigned long long ctr(int dev, const char *name)
{
	unsigned long long v = 0;

	if (!ctr_read(g.dev[dev].name, name, &v))
		v = 0;
	return v;
}

static long fault_get(const char *name)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), FAULT_DIR "/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static bool fault_set(const char *name, long v)
{
	char path[128];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), FAULT_DIR "/%s", name);
	f = fopen(path, "w");
	if (!f)
		return false;
	ok = fprintf(f, "%ld\n", v) > 0;
	return fclose(f) == 0 && ok;
}

static bool fault_available(void)
{
	return fault_get("rkey_holds") >= 0;
}

/* ------------------------------------------------------------------ */
/* the race                                                             */

enum hold { H_NONE, H_COPY, H_XMIT };

struct tcase {
	char name[48];
	enum op op;
	enum tgt tgt;
	enum inv inv;
};

/* what a case works with, kept across its tries */
struct rig {
	const struct tcase *tc;
	struct conn a, b;	/* a: the transfer's; b: the other QPs */
	uint8_t *tmem;		/* OWNER: target + spare page */
	struct ibv_mr *tmr;	/* registered over tmem */
	struct ibv_mw *mw;
	uint32_t rkey;		/* what the peer uses */
	uint8_t *p0, *p1, *p2;	/* patterns: target before, written, after */
	uint8_t *pmem;		/* PEER: source or destination */
	struct ibv_mr *pmr;
	uint8_t *rmem;		/* OWNER: receive buffer for SEND_WITH_INV, */
	struct ibv_mr *rmr;	/* then what READ_QUEUED's first READ reads */
	double xfer_ms;		/* an uninterrupted transfer took this */
	unsigned int cut, whole, missed;
};

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
	return r->tmr;
}

/* Bind the type 1 window over @len bytes at @off through @qp. */
static bool mw1_bind(struct rig *r, struct ibv_qp *qp, struct ibv_cq *cq,
		     size_t off, size_t len)
{
	struct ibv_mw_bind b = {
		.wr_id = 77,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = {
			.mr = r->tmr,
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
static bool expose(struct rig *r)
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
	    !mw1_bind(r, r->a.qp[OWNER], r->a.cq[OWNER], 0, XFER_LEN))
		return false;
	if (r->tc->tgt == T_MW2 && !mw2_bind(r))
		return false;
	r->rkey = r->mw->rkey;
	return true;
}

static bool post_rdma(struct rig *r)
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
static bool send_inv(struct rig *r, uint32_t rkey, enum ibv_wc_status want)
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
		return mw1_bind(r, r->a.qp[OWNER], r->a.cq[OWNER], XFER_LEN,
				SPARE_LEN);
	case I_REBIND_OTHER:
		return mw1_bind(r, r->b.qp[OWNER], r->b.cq[OWNER], XFER_LEN,
				SPARE_LEN);
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
		failf("%s: %zu byte(s) written after the invalidation completed reached the reader (first at %zu)",
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

static bool hold_arm(enum hold h, long after)
{
	return fault_set("rkey_hold_at", h == H_COPY ? 0 : 1) &&
	       fault_set("rkey_hold_after", after) &&
	       fault_set("rkey_hold_ms", HOLD_MS) &&
	       fault_set("rkey_hold_arm", 1);
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
	bool acted;		/* the invalidation completed */
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
	double end = now_ms() + WAIT_MS;
	int idle = 0;

	while (!__atomic_load_n(&a->claimed, __ATOMIC_ACQUIRE) &&
	       now_ms() < end) {
		if (fault_get("rkey_holds") <= a->holds0)
			continue;
		if (__atomic_compare_exchange_n(&a->claimed, &idle, 1, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			a->done0 = fault_get("rkey_holds_done");
			act(a);
			a->done1 = fault_get("rkey_holds_done");
		}
		break;
	}
	return NULL;
}

/*
 * Start act_on_hold() on every CPU (at most 2), post the transfer, and
 * wait for them.  The threads come first: the post itself may run the
 * held packet (rdma_rxe sends from the posting system call, and a veth
 * delivers in the sender's softirq), and the thread on the other CPU is
 * the one that can act then.
 */
static bool post_and_act_when_held(struct act *a)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 2 : 1;
	bool started[2] = { false, false }, posted;
	pthread_attr_t attr;
	pthread_t t[2];
	cpu_set_t set;
	int c;

	for (c = 0; c < ncpu; c++) {
		pthread_attr_init(&attr);
		CPU_ZERO(&set);
		CPU_SET(c, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		started[c] = !pthread_create(&t[c], &attr, act_on_hold, a);
		pthread_attr_destroy(&attr);
	}
	posted = post_xfer(a->r);
	if (!posted)
		__atomic_store_n(&a->claimed, 2, __ATOMIC_RELEASE);
	for (c = 0; c < ncpu; c++)
		if (started[c])
			pthread_join(t[c], NULL);
	return posted;
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

/*
 * One try.  Returns false when a hold was asked for and the
 * invalidation did not land in it (try again); true otherwise, with
 * the try's failures recorded.
 */
static bool one_try(struct rig *r, enum hold h, unsigned int n)
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
		if (!hold_arm(h, tc->op == OP_READ_QUEUED ?
			      SCRATCH_LEN / 1024 - 1 : XFER_LEN / 1024 / 4)) {
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
	if (h != H_NONE)
		fault_set("rkey_hold_arm", 0);
	free(a.snap);
	return landed;
}

/* Back to a clean connection after a try that errored it. */
static bool rig_recover(struct rig *r)
{
	int s;

	for (s = 0; s < 2; s++) {
		cq_drain(r->a.cq[s]);
		cq_drain(r->b.cq[s]);
	}
	return !conn_connect(&r->a);
}

static void rig_close(struct rig *r)
{
	if (r->mw && ibv_dealloc_mw(r->mw))
		failf("ibv_dealloc_mw: %s", strerror(errno));
	if (r->tmr && ibv_dereg_mr(r->tmr))
		failf("ibv_dereg_mr (target): %s", strerror(errno));
	if (r->pmr && ibv_dereg_mr(r->pmr))
		failf("ibv_dereg_mr (peer): %s", strerror(errno));
	if (r->rmr && ibv_dereg_mr(r->rmr))
		failf("ibv_dereg_mr (receive): %s", strerror(errno));
	conn_destroy(&r->a);
	conn_destroy(&r->b);
	free(r->tmem);
	free(r->pmem);
	free(r->rmem);
	free(r->p0);
	free(r->p1);
	free(r->p2);
	memset(r, 0, sizeof(*r));
}

static bool rig_open(struct rig *r, const struct tcase *tc)
{
	memset(r, 0, sizeof(*r));
	r->tc = tc;
	if (posix_memalign((void **)&r->tmem, 4096, XFER_LEN + SPARE_LEN) ||
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
static bool rig_measure(struct rig *r)
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

/* ------------------------------------------------------------------ */
/* the cases                                                            */

static struct tcase cases[64];
static unsigned int ncases;

static void add_case(enum op op, enum tgt tgt, enum inv inv)
{
	struct tcase *tc = &cases[ncases++];

	tc->op = op;
	tc->tgt = tgt;
	tc->inv = inv;
	snprintf(tc->name, sizeof(tc->name), "%s_%s_%s", op_name[op],
		 tgt_name[tgt], inv_name[inv]);
}

static void build_cases(void)
{
	static const struct { enum tgt t; enum inv i; } combos[] = {
		{ T_MW2, I_LINV_SAME }, { T_MW2, I_LINV_OTHER },
		{ T_MW2, I_SINV }, { T_MW2, I_DEALLOC },
		{ T_MW1, I_REBIND_SAME }, { T_MW1, I_REBIND_OTHER },
		{ T_MW1, I_DEALLOC }, { T_MR, I_DEREG }, { T_MR, I_REREG },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(combos); i++) {
		add_case(OP_WRITE, combos[i].t, combos[i].i);
		add_case(OP_READ, combos[i].t, combos[i].i);
		if (combos[i].i != I_LINV_SAME &&
		    combos[i].i != I_REBIND_SAME)
			add_case(OP_READ_QUEUED, combos[i].t, combos[i].i);
	}
}

/*
 * An "xmit" hold is meaningful when the invalidation needs no lock of
 * QP a (the held response holds it).
 */
static bool xmit_applies(const struct tcase *tc)
{
	return tc->op != OP_WRITE && tc->inv != I_LINV_SAME &&
	       tc->inv != I_REBIND_SAME;
}

/* Hold tries: retried on the other CPU when the hold ran on ours. */
static void hold_tries(struct rig *r, enum hold h, const char *what)
{
	int attempt;

	for (attempt = 0; attempt < HOLD_TRIES; attempt++) {
		bool landed;

		landed = one_try(r, h, 1000 + attempt);
		if (!rig_recover(r))
			return;
		if (landed)
			return;
		r->missed++;
	}
	failf("%s: the invalidation never completed inside the %s hold (%d attempts)",
	      r->tc->name, what, HOLD_TRIES);
}

static void run_case(const struct tcase *tc, unsigned int tries, bool timing,
		     bool hold)
{
	unsigned long long sweeps0 = ctr(OWNER, "rkey_sweeps");
	struct rig r;
	unsigned int i;

	if (!rig_open(&r, tc) || !rig_measure(&r))
		goto out;
	/* a queued READ is raced only in an xmit hold: see the top */
	for (i = 0; timing && tc->op != OP_READ_QUEUED && i < tries; i++) {
		one_try(&r, H_NONE, i);
		if (!rig_recover(&r))
			goto out;
	}
	if (hold && tc->op != OP_READ_QUEUED)
		hold_tries(&r, H_COPY, "copy");
	if (hold && xmit_applies(tc))
		hold_tries(&r, H_XMIT, "xmit");
	diag("%s: transfer %.1f ms; %u cut short, %u completed first, %u holds missed; rkey_sweeps +%llu",
	     tc->name, r.xfer_ms, r.cut, r.whole, r.missed,
	     ctr(OWNER, "rkey_sweeps") - sweeps0);
	if (ctr(OWNER, "rkey_sweeps") == sweeps0)
		failf("%s: rkey_sweeps did not move", tc->name);
out:
	rig_close(&r);
}

/* ------------------------------------------------------------------ */
/* refusals                                                             */

/*
 * A key with a stale generation, and a key used after LOCAL_INV, are
 * refused (rkey_refused_key); SEND_WITH_INV naming a type 1 window is
 * refused (inv_refused) and leaves the window working.
 */
static void run_refusals(void)
{
	static const struct tcase tc = {
		.name = "refusals", .op = OP_WRITE, .tgt = T_MW1,
		.inv = I_REBIND_SAME,
	};
	unsigned long long k0, i0;
	struct ibv_wc wc;
	struct rig r;
	uint32_t good;

	if (!rig_open(&r, &tc) || !rig_measure(&r) || !expose(&r))
		goto out;
	good = r.rkey;
	k0 = ctr(OWNER, "rkey_refused_key");
	r.rkey = (good & ~0xffU) | ((good + 0x33) & 0xff);
	if (post_rdma(&r) && wc_wait(r.a.cq[PEER], &wc, WAIT_MS, "stale") == 1 &&
	    wc.status != IBV_WC_REM_ACCESS_ERR)
		failf("WRITE with a stale key generation: %s, expected a remote access error",
		      ibv_wc_status_str(wc.status));
	sleep_ms(SETTLE_MS);	/* the core caches counters for 10 ms */
	if (ctr(OWNER, "rkey_refused_key") == k0)
		failf("stale key generation: rkey_refused_key did not move");
	if (!rig_recover(&r))
		goto out;

	i0 = ctr(OWNER, "inv_refused");
	send_inv(&r, good, IBV_WC_REM_INV_REQ_ERR);
	sleep_ms(SETTLE_MS);
	if (ctr(OWNER, "inv_refused") == i0)
		failf("SEND_WITH_INV of a type 1 window: inv_refused did not move");
	cq_drain(r.b.cq[OWNER]);
	cq_drain(r.b.cq[PEER]);
	if (conn_connect(&r.b))
		goto out;
	r.rkey = good;
	if (post_rdma(&r))
		wc_expect(r.a.cq[PEER], 1, IBV_WC_SUCCESS,
			  "WRITE through the type 1 window after the refused invalidation");
	diag("refusals: rkey_refused_key +%llu, inv_refused +%llu",
	     ctr(OWNER, "rkey_refused_key") - k0,
	     ctr(OWNER, "inv_refused") - i0);
out:
	rig_close(&r);
}

/* ------------------------------------------------------------------ */

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-t FILTER] [-n TRIES] [-m timing|hold|all] [-l] OWNER GIDX PEER GIDX\n",
		prog);
	exit(2);
}

/* FILTER: comma-separated substrings, any of which selects a case */
static bool selected(const char *name, const char *filter)
{
	char buf[256], *tok, *save = NULL;

	if (!filter)
		return true;
	snprintf(buf, sizeof(buf), "%s", filter);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		if (strstr(name, tok))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	bool timing = true, hold = true;
	unsigned int tries = 8, i, n = 0, k = 0, failed = 0;
	const char *filter = NULL;
	int opt, rc;

	build_cases();
	while ((opt = getopt(argc, argv, "t:n:m:l")) != -1) {
		switch (opt) {
		case 't':
			filter = optarg;
			break;
		case 'n':
			tries = (unsigned int)atoi(optarg);
			break;
		case 'm':
			timing = !strcmp(optarg, "timing") ||
				 !strcmp(optarg, "all");
			hold = !strcmp(optarg, "hold") || !strcmp(optarg, "all");
			break;
		case 'l':
			for (i = 0; i < ncases; i++)
				printf("%s\n", cases[i].name);
			printf("refusals\n");
			return 0;
		default:
			usage(argv[0]);
		}
	}
	if (argc - optind != 4)
		usage(argv[0]);
	g.dev[OWNER].name = argv[optind];
	g.dev[OWNER].gidx = atoi(argv[optind + 1]);
	g.dev[PEER].name = argv[optind + 2];
	g.dev[PEER].gidx = atoi(argv[optind + 3]);
	srandom((unsigned int)time(NULL) ^ (unsigned int)getpid());
	setvbuf(stdout, NULL, _IOLBF, 0);

	for (i = 0; i < ncases; i++)
		n += selected(cases[i].name, filter);
	n += selected("refusals", filter);
	printf("TAP version 13\n1..%u\n", n);
	rc = tdev_open_pair(g.dev);
	if (rc)
		return tap_skip_all(n, rc, g.dev);
	if (hold && !fault_available()) {
		diag("no %s: hold tries skipped", FAULT_DIR);
		hold = false;
	}
	for (i = 0; i <= ncases; i++) {
		const char *name = i < ncases ? cases[i].name : "refusals";
		unsigned int f0 = nfail;

		if (!selected(name, filter))
			continue;
		if (i < ncases)
			run_case(&cases[i], tries, timing, hold);
		else
			run_refusals();
		why_flush();
		printf("%sok %u - %s\n", nfail == f0 ? "" : "not ", ++k, name);
		failed += nfail != f0;
	}
	tdev_close(&g.dev[OWNER]);
	tdev_close(&g.dev[PEER]);
	return failed ? KSFT_FAIL : KSFT_PASS;
}
