// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_drdma_test DMDEV PEERDEV - DRDMA through libshca's direct verbs
 * (shcadv.h): device memory of the shca device DMDEV, an RC peer on
 * PEERDEV (shca or rdma_rxe).  TAP.
 * shca_drdma_test --hold DMDEV PEERDEV N - arm N ranges for a WRITE, post
 * a WRITE from each on one QP, print "holding N" and sleep (a process
 * killed with armed ranges and a waiting WRITE).
 * shca_drdma_test --bench DMDEV PEERDEV - the figures of scripts/bench.sh
 * (shca_drdma_bench.c).
 * shca_drdma_test --flight DMDEV PEERDEV - a range given back while its
 * packets are on the wire (dm.sh delays them): the window is not whole
 * until they are gone.
 *
 * Cases: bad arms and commits are refused and change nothing; a DRDMA
 * WRITE posted before its data waits (no completion, nothing at the
 * peer, the register and the counter show one WQE waiting) while another
 * QP's WRITEs run at the rate they have alone; re-arming the waiting
 * range is EBUSY; the producer writes into the mapped range and commits
 * in pieces (a commit past the total is refused); the last piece's
 * commit sends the WRITE from its own call (tx_inline), the peer holds
 * the data, the sender copied no payload byte and sent the range's bytes
 * by page reference; eight WRITEs from eight ranges queued
 * on one QP wait for their ranges and complete when the ranges are
 * committed in reverse order; a DRDMA READ lands in a range (read_len,
 * both valid flags, the data in the mapping); a QP destroyed while it
 * waits leaves no waiter behind; a WRITE naming another PD's armed range
 * fails as a local protection error instead of waiting on it.
 */
#include <stdlib.h>
#include <unistd.h>

#include <shcadv.h>

#include "shca_drdma.h"

#define LEN		16384
#define PIECE		4096
#define NQ		8
#define QLEN		8192
#define RLEN		20000
#define QUIET_MS	200	/* nothing may complete in this time */
#define HOL_N		40	/* another QP's WRITEs, timed */
#define NCASES		10	/* TAP lines of a run */

struct test_dev d[2];

int rc_open(struct rc *c, enum ibv_mtu mtu)
{
	struct qp_spec spec = qp_spec_simple(32, 16);

	if (qp_pair_create(d, &spec, c->qp, c->cq))
		return -1;
	return rc_pair_connect(d, c->qp, 300, mtu);
}

void rc_close(struct rc *c)
{
	qp_cqs_destroy(c->qp[0], c->cq[0], NULL, d[0].name);
	qp_cqs_destroy(c->qp[1], c->cq[1], NULL, d[1].name);
	memset(c, 0, sizeof(*c));
}

/* dmr_open() with the DM MR in @pd */
static int dmr_open_pd(struct dmr *m, size_t len, struct ibv_pd *pd)
{
	struct ibv_alloc_dm_attr a = { .length = len };

	m->dm = ibv_alloc_dm(d[0].ctx, &a);
	if (!m->dm) {
		failf("ibv_alloc_dm(%zu): %s", len, strerror(errno));
		return -1;
	}
	m->mr = ibv_reg_dm_mr(pd, m->dm, 0, len,
			      IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE);
	m->map = shcadv_dm_map(m->dm, NULL);
	if (!m->mr || !m->map) {
		failf("ibv_reg_dm_mr / shcadv_dm_map: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int dmr_open(struct dmr *m, size_t len)
{
	return dmr_open_pd(m, len, d[0].pd);
}

void dmr_close(struct dmr *m)
{
	mr_dereg(m->mr);
	if (m->dm && ibv_free_dm(m->dm))
		failf("ibv_free_dm: %s", strerror(errno));
	memset(m, 0, sizeof(*m));
}

static unsigned long long ctr(const char *name)
{
	unsigned long long v = 0;

	counters_next_jiffy();
	if (!ctr_read(d[0].name, name, &v))
		failf("counter %s unreadable", name);
	return v;
}

static struct shcadv_dm_regs regs_of(struct ibv_dm *dm)
{
	struct shcadv_dm_regs r = {};
	int ret = shcadv_dm_query(dm, &r);

	if (ret)
		failf("shcadv_dm_query: %s", strerror(ret));
	return r;
}

static int post_write(struct ibv_qp *qp, uint64_t id, uint32_t lkey,
		      uint64_t laddr, uint32_t len, uint64_t raddr,
		      uint32_t rkey)
{
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct send_args a = { .wr_id = id, .op = IBV_WR_RDMA_WRITE,
			       .sg = &sge, .nsge = 1,
			       .flags = IBV_SEND_SIGNALED,
			       .raddr = raddr, .rkey = rkey };
	int ret = post_send1(qp, &a);

	if (ret)
		failf("ibv_post_send: %s", strerror(ret));
	return ret;
}

/* @n completions on @cq within WAIT_MS, all successful: true */
static bool completes(struct ibv_cq *cq, int n)
{
	struct ibv_wc wc[NQ];
	int got = 0, k, i;

	while (got < n) {
		k = poll_wait(cq, wc, n - got > NQ ? NQ : n - got, WAIT_MS);
		if (k <= 0) {
			failf("%d of %d completions", got, n);
			return false;
		}
		for (i = 0; i < k; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				failf("completion %llu: %s",
				      (unsigned long long)wc[i].wr_id,
				      ibv_wc_status_str(wc[i].status));
		got += k;
	}
	return true;
}

static bool nothing_completes(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int k = poll_wait(cq, &wc, 1, QUIET_MS);

	if (k)
		failf("a completion came (%d, status %s)", k,
		      k > 0 ? ibv_wc_status_str(wc.status) : "-");
	return !k;
}

static void case_bad(void)
{
	struct dmr m = {};
	uint32_t count = 77;

	if (!dmr_open(&m, LEN)) {
		if (shcadv_dm_arm(m.dm, 7, 0, 64) != EINVAL)
			failf("direction 7 was not EINVAL");
		if (shcadv_dm_arm(m.dm, SHCADV_DM_WRITE, LEN - 4, 8) != EINVAL)
			failf("a transfer past the allocation was not EINVAL");
		if (shcadv_dm_arm(m.dm, SHCADV_DM_WRITE, 0, 0) != EINVAL)
			failf("an empty transfer was not EINVAL");
		if (shcadv_dm_commit(m.dm, 4, &count) != EINVAL)
			failf("a commit to an unarmed range was not EINVAL");
		if (regs_of(m.dm).dir != SHCADV_DM_NONE)
			failf("a refused arm armed the range");
	}
	dmr_close(&m);
	case_result(!why[0], "bad arms and commits are refused, nothing armed");
}

/*
 * Milliseconds HOL_N 64 KiB WRITEs from @hbuf to @raddr take on @c, one
 * at a time; -1 on a failure.
 */
static double writes_ms(struct rc *c, struct ibv_mr *hmr, uint8_t *hbuf,
			uint8_t *raddr, struct ibv_mr *pmr)
{
	double t0 = now_ms();
	int i;

	for (i = 0; i < HOL_N; i++)
		if (post_write(c->qp[0], 100 + i, hmr->lkey, (uintptr_t)hbuf,
			       65536, (uintptr_t)raddr, pmr->rkey) ||
		    !completes(c->cq[0], 1))
			return -1;
	return now_ms() - t0;
}

/* A DRDMA WRITE of LEN bytes: waits, others flow, then sends by reference */
static void case_write(struct rc *c, struct rc *other, uint8_t *peer,
		       struct ibv_mr *pmr)
{
	unsigned long long copy0, frag0, trig0, wait1, inl0;
	uint8_t *src = malloc(LEN), *hbuf = zalloc(65536);
	struct ibv_mr *hmr = hbuf ? ibv_reg_mr(d[0].pd, hbuf, 65536,
					       IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct shcadv_dm_regs r;
	struct dmr m = {};
	unsigned int before = nfail;
	uint32_t count = 0, off;
	double alone, with;
	int ret;

	if (!src || !hmr || dmr_open(&m, LEN) ||
	    shcadv_dm_arm(m.dm, SHCADV_DM_WRITE, 0, LEN)) {
		failf("setting up the DRDMA WRITE failed");
		case_result(0, "DRDMA WRITE set up");
		goto out;
	}
	pattern(src, LEN, 7);
	alone = writes_ms(other, hmr, hbuf, peer + LEN, pmr);
	memset(peer, 0, LEN);
	copy0 = ctr("payload_copy_bytes");
	frag0 = ctr("dm_tx_frag_bytes");
	trig0 = ctr("dm_drdma_writes");
	post_write(c->qp[0], 1, m.mr->lkey, 0, LEN, (uintptr_t)peer,
		   pmr->rkey);
	nothing_completes(c->cq[0]);
	r = regs_of(m.dm);
	wait1 = ctr("dm_wqes_waiting");
	if (r.waiting != 1 || wait1 != 1 || !(r.flags & SHCADV_DM_BUS_VALID))
		failf("register waiting %u flags %#x, dm_wqes_waiting %llu",
		      r.waiting, r.flags, wait1);
	if (peer[0] || memcmp(peer, peer + 1, LEN - 1))
		failf("the peer got data before the producer wrote it");
	case_result(nfail == before,
		    "a DRDMA WRITE posted before its data waits");

	before = nfail;
	with = writes_ms(other, hmr, hbuf, peer + LEN, pmr);
	diag("another QP: %d 64 KiB WRITEs alone %.0f ms, while a DRDMA WRITE waits %.0f ms",
	     HOL_N, alone, with);
	if (alone >= 0 && with >= 0 && with > 4 * alone + 2000)
		failf("head-of-line blocking: %.0f ms against %.0f ms alone",
		      with, alone);
	case_result(nfail == before,
		    "another QP's WRITEs run at their own rate meanwhile");

	before = nfail;
	ret = shcadv_dm_arm(m.dm, SHCADV_DM_WRITE, 0, LEN);
	if (ret != EBUSY)
		failf("re-arming a range a WQE waits for: %d, not EBUSY", ret);
	case_result(nfail == before, "re-arming the waiting range is EBUSY");

	before = nfail;
	for (off = 0; off < LEN - PIECE; off += PIECE) {
		memcpy(m.map + off, src + off, PIECE);
		ret = shcadv_dm_commit(m.dm, PIECE, &count);
		if (ret || count != off + PIECE)
			failf("commit at %u: %d, count %u", off, ret, count);
	}
	if (shcadv_dm_commit(m.dm, 2 * PIECE, &count) != EINVAL ||
	    regs_of(m.dm).write_count != LEN - PIECE)
		failf("a commit past the total was not refused cleanly");
	nothing_completes(c->cq[0]);
	case_result(nfail == before,
		    "commits in pieces; one past the total is EINVAL; still waiting");

	before = nfail;
	memcpy(m.map + off, src + off, PIECE);
	inl0 = ctr("tx_inline");
	ret = shcadv_dm_commit(m.dm, PIECE, &count);
	if (ret || count != LEN)
		failf("last commit: %d, count %u", ret, count);
	completes(c->cq[0], 1);
	if (memcmp(peer, src, LEN))
		failf("the peer's data differs from what the producer wrote");
	r = regs_of(m.dm);
	if (r.write_count != LEN || r.flags != SHCADV_DM_PKT_VALID ||
	    r.waiting)
		failf("register after: count %u flags %#x waiting %u",
		      r.write_count, r.flags, r.waiting);
	if (ctr("payload_copy_bytes") != copy0)
		failf("the sender copied %llu payload bytes",
		      ctr("payload_copy_bytes") - copy0);
	if (ctr("dm_tx_frag_bytes") - frag0 != LEN)
		failf("dm_tx_frag_bytes moved %llu, not %d",
		      ctr("dm_tx_frag_bytes") - frag0, LEN);
	if (ctr("dm_drdma_writes") - trig0 != 1 || ctr("dm_wqes_waiting"))
		failf("dm_drdma_writes +%llu, dm_wqes_waiting %llu",
		      ctr("dm_drdma_writes") - trig0, ctr("dm_wqes_waiting"));
	if (shcadv_dm_commit(m.dm, 4, NULL) != EINVAL)
		failf("a commit after the transfer was not EINVAL");
	/* the QP had nothing in flight: the commit's own call sent it */
	if (ctr("tx_inline") == inl0)
		failf("tx_inline did not move: the commit left the send to the transmit stage");
	case_result(nfail == before,
		    "the last commit sends it from its call: data at the peer, no byte copied");
out:
	mr_dereg(hmr);
	free(hbuf);
	free(src);
	dmr_close(&m);
}

/* NQ WRITEs from NQ ranges on one QP, ranges committed in reverse order */
static void case_many(struct rc *c, uint8_t *peer, struct ibv_mr *pmr)
{
	struct dmr m[NQ] = {};
	uint8_t src[QLEN];
	unsigned int before = nfail;
	int i;

	memset(peer, 0, NQ * QLEN);
	for (i = 0; i < NQ; i++) {
		if (dmr_open(&m[i], QLEN) ||
		    shcadv_dm_arm(m[i].dm, SHCADV_DM_WRITE, 0, QLEN))
			goto out;
		post_write(c->qp[0], 10 + i, m[i].mr->lkey, 0, QLEN,
			   (uintptr_t)peer + i * QLEN, pmr->rkey);
	}
	for (i = NQ - 1; i >= 1; i--) {
		pattern(src, QLEN, 100 + i);
		memcpy(m[i].map, src, QLEN);
		if (shcadv_dm_commit(m[i].dm, QLEN, NULL))
			failf("commit of range %d failed", i);
	}
	nothing_completes(c->cq[0]);
	pattern(src, QLEN, 100);
	memcpy(m[0].map, src, QLEN);
	if (shcadv_dm_commit(m[0].dm, QLEN, NULL))
		failf("commit of range 0 failed");
	completes(c->cq[0], NQ);
	for (i = 0; i < NQ; i++) {
		pattern(src, QLEN, 100 + i);
		if (memcmp(peer + i * QLEN, src, QLEN))
			failf("WRITE %d: wrong data at the peer", i);
	}
out:
	for (i = 0; i < NQ; i++)
		dmr_close(&m[i]);
	case_result(nfail == before,
		    "8 WRITEs from 8 ranges on one QP: sent once the head's range is committed");
}

/* A DRDMA READ of RLEN bytes into a range */
static void case_read(struct rc *c, uint8_t *peer, struct ibv_mr *pmr)
{
	unsigned long long read0 = ctr("dm_drdma_read_bytes");
	struct ibv_sge sge = { .addr = 64, .length = RLEN };
	struct send_args a = { .wr_id = 30, .op = IBV_WR_RDMA_READ,
			       .sg = &sge, .nsge = 1,
			       .flags = IBV_SEND_SIGNALED,
			       .raddr = (uintptr_t)peer, .rkey = pmr->rkey };
	struct shcadv_dm_regs r;
	struct dmr m = {};
	unsigned int before = nfail;

	pattern(peer, RLEN, 55);
	if (dmr_open(&m, RLEN + 4096) ||
	    shcadv_dm_arm(m.dm, SHCADV_DM_READ, 64, RLEN)) {
		failf("setting up the DRDMA READ failed");
		goto out;
	}
	r = regs_of(m.dm);
	if (r.dir != SHCADV_DM_READ || r.flags || r.read_len)
		failf("armed for READ: dir %u flags %#x read_len %u", r.dir,
		      r.flags, r.read_len);
	sge.lkey = m.mr->lkey;
	if (!post_send1(c->qp[0], &a))
		completes(c->cq[0], 1);
	else
		failf("ibv_post_send of the READ failed");
	r = regs_of(m.dm);
	if (r.read_len != RLEN ||
	    r.flags != (SHCADV_DM_BUS_VALID | SHCADV_DM_PKT_VALID))
		failf("after the READ: read_len %u flags %#x", r.read_len,
		      r.flags);
	if (memcmp(m.map + 64, peer, RLEN))
		failf("the range holds other bytes than the peer's");
	if (ctr("dm_drdma_read_bytes") - read0 != RLEN)
		failf("dm_drdma_read_bytes moved %llu",
		      ctr("dm_drdma_read_bytes") - read0);
out:
	dmr_close(&m);
	case_result(nfail == before,
		    "a DRDMA READ lands in the range: read_len, both valid flags, the data");
}

/*
 * A fresh RC pair @c and a range @m of LEN bytes armed for a WRITE, and
 * a DRDMA WRITE (@id) of the whole range to @peer posted: 0, or -1 with
 * a reason recorded.
 */
static int armed_write(struct rc *c, struct dmr *m, uint64_t id,
		       uint8_t *peer, struct ibv_mr *pmr)
{
	if (rc_open(c, IBV_MTU_1024) || dmr_open(m, LEN) ||
	    shcadv_dm_arm(m->dm, SHCADV_DM_WRITE, 0, LEN) ||
	    post_write(c->qp[0], id, m->mr->lkey, 0, LEN, (uintptr_t)peer,
		       pmr->rkey)) {
		failf("setting up the DRDMA WRITE failed");
		return -1;
	}
	return 0;
}

/* A QP destroyed while its WRITE waits leaves no waiter behind. */
static void case_destroy(uint8_t *peer, struct ibv_mr *pmr)
{
	struct rc c = {};
	struct dmr m = {};
	unsigned int before = nfail;

	if (armed_write(&c, &m, 40, peer, pmr))
		goto out;
	nothing_completes(c.cq[0]);
	if (ctr("dm_wqes_waiting") != 1)
		failf("dm_wqes_waiting is not 1");
	rc_close(&c);
	if (ctr("dm_wqes_waiting") || regs_of(m.dm).waiting)
		failf("a waiter is left after the QP went");
	if (shcadv_dm_arm(m.dm, SHCADV_DM_NONE, 0, 0))
		failf("disarming failed");
out:
	rc_close(&c);
	dmr_close(&m);
	case_result(nfail == before,
		    "a QP destroyed while it waits leaves no waiter");
}

/*
 * A WRITE naming, through its lkey, a range armed in another PD: it does
 * not wait on that range (whose owner could not re-arm it meanwhile) but
 * fails as a local protection error, and nothing reaches the peer.
 */
static void case_foreign(uint8_t *peer, struct ibv_mr *pmr)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(d[0].ctx);
	unsigned int before = nfail;
	struct ibv_wc wc;
	struct rc c = {};
	struct dmr m = {};
	int k;

	memset(peer, 0, LEN);
	if (!pd2 || rc_open(&c, IBV_MTU_1024) || dmr_open_pd(&m, LEN, pd2) ||
	    shcadv_dm_arm(m.dm, SHCADV_DM_WRITE, 0, LEN)) {
		failf("setting up another PD's armed range failed");
		goto out;
	}
	memset(m.map, 0x5a, LEN);
	if (post_write(c.qp[0], 50, m.mr->lkey, 0, LEN, (uintptr_t)peer,
		       pmr->rkey))
		goto out;
	k = poll_wait(c.cq[0], &wc, 1, WAIT_MS);
	if (k != 1)
		failf("no completion: the WRITE waits on another PD's range");
	else if (wc.status != IBV_WC_LOC_PROT_ERR)
		failf("completion status %s, not a local protection error",
		      ibv_wc_status_str(wc.status));
	if (regs_of(m.dm).waiting || ctr("dm_wqes_waiting"))
		failf("the owner's register or dm_wqes_waiting shows a waiter");
	if (shcadv_dm_arm(m.dm, SHCADV_DM_WRITE, 0, LEN))
		failf("the owner could not re-arm its range");
	if (peer[0] || memcmp(peer, peer + 1, LEN - 1))
		failf("bytes reached the peer");
out:
	rc_close(&c);
	dmr_close(&m);
	if (pd2 && ibv_dealloc_pd(pd2))
		failf("ibv_dealloc_pd: %s", strerror(errno));
	case_result(nfail == before,
		    "a WRITE naming another PD's range fails (local protection), not waiting");
}

/*
 * --hold: @n ranges armed for a WRITE, a WRITE from each posted on one QP
 * (the first waits, the rest queue behind it), then sleep until killed.
 */
static int hold(int n, uint8_t *peer, struct ibv_mr *pmr)
{
	struct rc c = {};
	int i;

	if (rc_open(&c, IBV_MTU_1024))
		return KSFT_FAIL;
	for (i = 0; i < n; i++) {
		struct dmr m = {};

		if (dmr_open(&m, QLEN) ||
		    shcadv_dm_arm(m.dm, SHCADV_DM_WRITE, 0, QLEN) ||
		    post_write(c.qp[0], i, m.mr->lkey, 0, QLEN,
			       (uintptr_t)peer, pmr->rkey)) {
			why_flush();
			return KSFT_FAIL;
		}
	}
	return hold_until_killed(n);
}

/*
 * --flight (dm.sh delays the DM device's RoCE packets on the wire first):
 * a DRDMA WRITE is committed and its range given back at once, while its
 * packets, which hold the range's pages, are still on their way.  Until
 * they are gone the window cannot be taken whole (its pages are not
 * handed out again); afterwards it can.  The MR goes with the range, so
 * the WRITE itself may fail (a retransmission finds no MR): not checked.
 */
static int flight(uint8_t *peer, struct ibv_mr *pmr)
{
	struct ibv_device_attr_ex ax = {};
	struct ibv_alloc_dm_attr a = {};
	struct ibv_dm *whole = NULL;
	struct dmr m = {};
	struct rc c = {};
	unsigned long long frag0;
	double t0;

	if (ibv_query_device_ex(d[0].ctx, NULL, &ax) || !ax.max_dm_size) {
		failf("max_dm_size unreadable or 0");
		goto out;
	}
	a.length = ax.max_dm_size;
	if (armed_write(&c, &m, 60, peer, pmr))
		goto out;
	/* the WRITE must be waiting for the range before the commit, or it
	 * is fetched only after the range is gone and sends nothing
	 */
	if (!nothing_completes(c.cq[0]) || ctr("dm_wqes_waiting") != 1) {
		failf("the WRITE is not waiting for the range (dm_wqes_waiting %llu)",
		      ctr("dm_wqes_waiting"));
		goto out;
	}
	memset(m.map, 0x33, LEN);
	frag0 = ctr("dm_tx_frag_bytes");
	if (shcadv_dm_commit(m.dm, LEN, NULL)) {
		failf("the commit failed");
		goto out;
	}
	dmr_close(&m);
	t0 = now_ms();
	whole = ibv_alloc_dm(d[0].ctx, &a);
	if (whole) {
		failf("the whole window was handed out with packets of a range in flight (dm_tx_frag_bytes +%llu)",
		      ctr("dm_tx_frag_bytes") - frag0);
		goto out;
	}
	if (errno != ENOMEM)
		failf("ibv_alloc_dm of the window: %s, not ENOMEM",
		      strerror(errno));
	while (!whole && now_ms() - t0 < WAIT_MS) {
		sleep_ms(50);
		whole = ibv_alloc_dm(d[0].ctx, &a);
	}
	if (!whole)
		failf("the window never came back whole (%s)", strerror(errno));
	else
		diag("the window was whole again %.0f ms after the range was given back",
		     now_ms() - t0);
out:
	if (whole && ibv_free_dm(whole))
		failf("ibv_free_dm: %s", strerror(errno));
	dmr_close(&m);
	rc_close(&c);
	why_flush();
	return nfail ? KSFT_FAIL : KSFT_PASS;
}

int main(int argc, char **argv)
{
	struct rc c = {}, other = {};
	uint8_t *peer;
	struct ibv_mr *pmr;
	int rc, n = 0;

	if (argc == 5 && !strcmp(argv[1], "--hold")) {
		n = atoi(argv[4]);
		argv += 1;
	} else if (argc == 4 && !strcmp(argv[1], "--bench")) {
		n = -1;
		argv += 1;
	} else if (argc == 4 && !strcmp(argv[1], "--flight")) {
		n = -2;
		argv += 1;
	} else if (argc != 3) {
		fprintf(stderr, "usage: %s [--hold|--bench|--flight] DMDEV PEERDEV [N]\n",
			argv[0]);
		return KSFT_FAIL;
	}
	d[0] = (struct test_dev){ .name = argv[1], .gidx = -1 };
	d[1] = (struct test_dev){ .name = argv[2], .gidx = -1 };
	if (n) {
		if (tdev_open_pair(d))
			return KSFT_FAIL;
		peer = zalloc(1 << 20);
		pmr = peer ? ibv_reg_mr(d[1].pd, peer, 1 << 20,
					IBV_ACCESS_LOCAL_WRITE | QP_ACC_ALL) : NULL;
		if (!pmr)
			return KSFT_FAIL;
		if (n == -2)
			return flight(peer, pmr);
		return n > 0 ? hold(n, peer, pmr) : drdma_bench(peer, pmr);
	}
	printf("TAP version 13\n1..%d\n", NCASES);
	rc = tdev_open_pair(d);
	if (rc)
		return tap_skip_all(NCASES, rc, d);
	peer = zalloc(NQ * QLEN + 65536 + LEN);
	pmr = peer ? ibv_reg_mr(d[1].pd, peer, NQ * QLEN + 65536 + LEN,
				IBV_ACCESS_LOCAL_WRITE | QP_ACC_ALL) : NULL;
	if (!pmr || rc_open(&c, IBV_MTU_1024) || rc_open(&other, IBV_MTU_1024)) {
		why_flush();
		return tap_skip_all(NCASES, KSFT_FAIL, d);
	}
	case_bad();
	case_write(&c, &other, peer, pmr);
	case_many(&c, peer, pmr);
	case_read(&c, peer, pmr);
	case_destroy(peer, pmr);
	case_foreign(peer, pmr);
	rc_close(&c);
	rc_close(&other);
	mr_dereg(pmr);
	free(peer);
	tdev_close(&d[1]);
	tdev_close(&d[0]);
	return n_failed || n_cases != NCASES ? KSFT_FAIL : KSFT_PASS;
}
