// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_dm_test - device memory (ibv_alloc_dm) of a shca device, used by an
 * RC peer on another device (shca or rdma_rxe).
 *
 *   shca_dm_test DMDEV PEERDEV	the cases below, TAP
 *   shca_dm_test --hold DMDEV N	allocate N ranges, write to them and
 *				sleep (a process killed with ranges)
 *
 * Cases: max_dm_size is reported; a new allocation reads as zeros; words
 * written with ibv_memcpy_to_dm read back; copies at an unaligned offset
 * or length or past the end fail and change nothing; allocations beyond
 * max_dm_size or with a comp_mask fail; MR registrations past the end or
 * not zero based fail; the peer WRITEs into a DM MR that covers the middle
 * of an allocation (data verified through ibv_memcpy_from_dm, the bytes
 * around it untouched), READs it back, and runs atomics on it; the DM
 * side sends from and reads into its DM MR; a WRITE past the DM MR fails
 * with a remote access error and writes nothing; ibv_free_dm with an MR
 * on the allocation fails with EBUSY; the window can be filled with
 * one-page allocations and then, freed, taken whole in one.
 */
#include <stdlib.h>
#include <unistd.h>

#include "shca_test.h"

#define DM_LEN		(16 * 1024)
#define MR_OFF		4096		/* the DM MR covers [4096, 12288) */
#define MR_LEN		8192
#define XFER		5000		/* bytes a WRITE/READ moves */
#define WAIT_MS		SCALED_MS(10000)

static struct test_dev d[2];	/* [0]: the DM side, [1]: the peer */
static uint64_t max_dm;

static struct ibv_dm *dm_alloc(struct ibv_context *ctx, uint64_t len,
			       uint32_t comp_mask)
{
	struct ibv_alloc_dm_attr a = { .length = len,
				       .comp_mask = comp_mask };

	return ibv_alloc_dm(ctx, &a);
}

static bool dm_read(struct ibv_dm *dm, uint64_t off, void *buf, size_t len)
{
	int ret = ibv_memcpy_from_dm(buf, dm, off, len);

	if (ret)
		failf("ibv_memcpy_from_dm(%llu, %zu): %s",
		      (unsigned long long)off, len, strerror(ret));
	return !ret;
}

/* @len bytes at @off of @dm equal @want (NULL: zeros) */
static bool dm_equal(struct ibv_dm *dm, uint64_t off, const uint8_t *want,
		     size_t len, const char *what)
{
	uint8_t *got = calloc(1, len), *zero = calloc(1, len);
	bool same = false;

	if (got && zero && dm_read(dm, off, got, len)) {
		same = !memcmp(got, want ? want : zero, len);
		if (!same)
			failf("%s: %zu bytes at %llu differ", what, len,
			      (unsigned long long)off);
	}
	free(got);
	free(zero);
	return same;
}

static void case_query(void)
{
	struct ibv_device_attr_ex ax = {};
	int ret = ibv_query_device_ex(d[0].ctx, NULL, &ax);

	if (ret)
		failf("ibv_query_device_ex: %s", strerror(ret));
	max_dm = ax.max_dm_size;
	diag("max_dm_size %llu", (unsigned long long)max_dm);
	if (!ret && (!max_dm || max_dm % 4096))
		failf("max_dm_size %llu", (unsigned long long)max_dm);
	case_result(!why[0], "max_dm_size is reported, in whole pages");
}

static void case_copy(void)
{
	struct ibv_dm *dm = dm_alloc(d[0].ctx, DM_LEN, 0);
	uint8_t buf[DM_LEN], back[DM_LEN];
	unsigned int before = nfail;

	if (!dm) {
		failf("ibv_alloc_dm(%d): %s", DM_LEN, strerror(errno));
		case_result(0, "alloc, zeroed, write and read back");
		return;
	}
	dm_equal(dm, 0, NULL, DM_LEN, "a new allocation");
	pattern(buf, sizeof(buf), 11);
	if (ibv_memcpy_to_dm(dm, 0, buf, DM_LEN) ||
	    ibv_memcpy_to_dm(dm, 100, buf, 400))
		failf("ibv_memcpy_to_dm failed");
	memcpy(back, buf, sizeof(back));
	memcpy(back + 100, buf, 400);
	dm_equal(dm, 0, back, DM_LEN, "written words");
	case_result(nfail == before,
		    "alloc: zeroed; words written read back");

	before = nfail;
	if (!ibv_memcpy_to_dm(dm, 2, buf, 8) ||
	    !ibv_memcpy_to_dm(dm, 8, buf, 6) ||
	    !ibv_memcpy_to_dm(dm, DM_LEN - 4, buf, 8) ||
	    !ibv_memcpy_to_dm(dm, DM_LEN + 4, buf, 4))
		failf("an unaligned or out-of-range copy to the DM passed");
	if (!ibv_memcpy_from_dm(buf, dm, 1, 4) ||
	    !ibv_memcpy_from_dm(buf, dm, 0, DM_LEN + 4))
		failf("an unaligned or out-of-range copy from the DM passed");
	dm_equal(dm, 0, back, DM_LEN, "after refused copies");
	case_result(nfail == before,
		    "unaligned or out-of-range copies fail and change nothing");
	if (ibv_free_dm(dm))
		failf("ibv_free_dm: %s", strerror(errno));
}

static void case_bad_alloc(void)
{
	struct ibv_dm *dm;

	dm = dm_alloc(d[0].ctx, max_dm + 1, 0);
	if (dm) {
		failf("an allocation past max_dm_size passed");
		ibv_free_dm(dm);
	}
	dm = dm_alloc(d[0].ctx, 64, 1);
	if (dm || errno != EINVAL) {
		failf("comp_mask 1: %s", dm ? "passed" : strerror(errno));
		if (dm)
			ibv_free_dm(dm);
	}
	dm = dm_alloc(d[0].ctx, 0, 0);
	if (dm) {
		failf("an empty allocation passed");
		ibv_free_dm(dm);
	}
	case_result(!why[0], "allocations too large, empty or with a comp_mask fail");
}

static void case_bad_mr(struct ibv_dm *dm)
{
	const unsigned int acc = IBV_ACCESS_ZERO_BASED |
				 IBV_ACCESS_LOCAL_WRITE;
	struct ibv_mr *mr;
	unsigned int before = nfail;

	mr = ibv_reg_dm_mr(d[0].pd, dm, 0, DM_LEN + 4, acc);
	if (mr)
		failf("an MR past the allocation registered");
	mr_dereg(mr);
	mr = ibv_reg_dm_mr(d[0].pd, dm, DM_LEN + 4096, 4, acc);
	if (mr)
		failf("an MR starting past the allocation registered");
	mr_dereg(mr);
	mr = ibv_reg_dm_mr(d[0].pd, dm, 0, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (mr)
		failf("an MR that is not zero based registered");
	mr_dereg(mr);
	case_result(nfail == before,
		    "DM MRs past the end or not zero based are refused");
}

struct rc {
	struct ibv_qp *qp[2];
	struct ibv_cq *cq[2];
};

static int rc_open(struct rc *c)
{
	struct qp_spec spec = qp_spec_simple(16, 8);

	if (qp_pair_create(d, &spec, c->qp, c->cq))
		return -1;
	return rc_pair_connect(d, c->qp, 100, IBV_MTU_1024);
}

/* post @a on side @s and wait for its completion: its status, or -1 */
static int run1(struct rc *c, int s, struct send_args *a)
{
	struct ibv_wc wc;

	a->flags |= IBV_SEND_SIGNALED;
	if (post_send1(c->qp[s], a)) {
		failf("ibv_post_send on %s: %s", d[s].name, strerror(errno));
		return -1;
	}
	if (poll_wait(c->cq[s], &wc, 1, WAIT_MS) != 1) {
		failf("no completion on %s", d[s].name);
		return -1;
	}
	return wc.status;
}

/* The peer (side 1) uses the DM MR @dmr as a remote target. */
static void case_peer_rdma(struct rc *c, struct ibv_dm *dm,
			   struct ibv_mr *dmr)
{
	uint8_t *buf = zalloc(2 * XFER), img[DM_LEN];
	struct ibv_mr *mr = buf ? ibv_reg_mr(d[1].pd, buf, 2 * XFER,
					     IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = XFER };
	struct send_args a = { .op = IBV_WR_RDMA_WRITE, .sg = &sge,
			       .nsge = 1, .raddr = 100, .rkey = dmr->rkey };
	uint64_t *v = (uint64_t *)(buf + XFER);
	unsigned int before = nfail;
	int st;

	if (!mr) {
		failf("ibv_reg_mr on the peer failed");
		goto out;
	}
	sge.lkey = mr->lkey;
	pattern(buf, XFER, 21);
	memset(img, 0, sizeof(img));
	memcpy(img + MR_OFF + 100, buf, XFER);
	st = run1(c, 1, &a);
	if (st)
		failf("the peer's WRITE into the DM MR: status %d", st);
	dm_equal(dm, 0, img, DM_LEN, "the DM after the peer's WRITE");
	case_result(nfail == before,
		    "peer WRITEs into the DM MR: data in place, the rest untouched");

	before = nfail;
	memset(buf, 0, XFER);
	a.op = IBV_WR_RDMA_READ;
	st = run1(c, 1, &a);
	if (st)
		failf("the peer's READ from the DM MR: status %d", st);
	else if (memcmp(buf, img + MR_OFF + 100, XFER))
		failf("the peer READ other bytes than the DM holds");
	case_result(nfail == before, "peer READs the DM MR back");

	/* the operand, at MR offset 8, is still 0 */
	before = nfail;
	sge.addr = (uintptr_t)v;
	sge.length = 8;
	a = (struct send_args){ .op = IBV_WR_ATOMIC_FETCH_AND_ADD, .sg = &sge,
				.nsge = 1, .raddr = 8, .rkey = dmr->rkey,
				.cmp_add = 5 };
	st = run1(c, 1, &a);
	if (!st && *v != 0)
		failf("fetch-and-add returned %#llx, not 0",
		      (unsigned long long)*v);
	a.op = IBV_WR_ATOMIC_CMP_AND_SWP;
	a.swap = 0x1122334455667788ULL;
	if (!st)
		st = run1(c, 1, &a);
	if (st)
		failf("the peer's atomics on the DM MR: status %d", st);
	else if (*v != 5)
		failf("compare-and-swap returned %#llx, not 5",
		      (unsigned long long)*v);
	memcpy(img + MR_OFF + 8, &a.swap, 8);
	dm_equal(dm, 0, img, DM_LEN, "the DM after the atomics");
	case_result(nfail == before, "peer atomics on the DM MR");

out:
	mr_dereg(mr);
	free(buf);
}

/* The DM side (side 0) uses its DM MR as a local SGE. */
static void case_local_sge(struct rc *c, struct ibv_dm *dm,
			   struct ibv_mr *dmr)
{
	uint8_t *buf = zalloc(XFER), src[XFER];
	struct ibv_mr *mr = buf ? ibv_reg_mr(d[1].pd, buf, XFER,
					     IBV_ACCESS_LOCAL_WRITE |
					     QP_ACC_ALL) : NULL;
	struct ibv_sge sge = { .addr = 0, .length = XFER, .lkey = dmr->lkey };
	struct send_args a = { .op = IBV_WR_RDMA_WRITE, .sg = &sge,
			       .nsge = 1 };
	unsigned int before = nfail;
	int st;

	if (!mr) {
		failf("ibv_reg_mr on the peer failed");
		goto out;
	}
	a.raddr = (uintptr_t)buf;
	a.rkey = mr->rkey;
	pattern(src, XFER, 31);
	if (ibv_memcpy_to_dm(dm, MR_OFF, src, XFER))
		failf("ibv_memcpy_to_dm failed");
	st = run1(c, 0, &a);
	if (st || memcmp(buf, src, XFER))
		failf("WRITE from the DM MR: status %d, data %s", st,
		      memcmp(buf, src, XFER) ? "wrong" : "right");
	case_result(nfail == before, "WRITE with the DM MR as its source");

	before = nfail;
	pattern(buf, XFER, 41);
	a.op = IBV_WR_RDMA_READ;
	sge.addr = 8;
	st = run1(c, 0, &a);
	if (st)
		failf("READ into the DM MR: status %d", st);
	dm_equal(dm, MR_OFF + 8, buf, XFER, "the DM after the READ");
	case_result(nfail == before, "READ with the DM MR as its target");
out:
	mr_dereg(mr);
	free(buf);
}

/* A peer's WRITE past the DM MR: refused, nothing written (ends the QPs). */
static void case_write_past(struct rc *c, struct ibv_dm *dm,
			    struct ibv_mr *dmr)
{
	uint8_t *buf = zalloc(64), img[DM_LEN];
	struct ibv_mr *mr = buf ? ibv_reg_mr(d[1].pd, buf, 64,
					     IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64 };
	struct send_args a = { .op = IBV_WR_RDMA_WRITE, .sg = &sge,
			       .nsge = 1, .raddr = MR_LEN - 32,
			       .rkey = dmr->rkey };
	unsigned int before = nfail;
	int st;

	if (!mr || !dm_read(dm, 0, img, DM_LEN)) {
		failf("setting up the WRITE past the DM MR failed");
		goto out;
	}
	sge.lkey = mr->lkey;
	memset(buf, 0xee, 64);
	st = run1(c, 1, &a);
	if (st != IBV_WC_REM_ACCESS_ERR)
		failf("a WRITE past the DM MR: status %d, not %d", st,
		      IBV_WC_REM_ACCESS_ERR);
	dm_equal(dm, 0, img, DM_LEN, "the DM after the refused WRITE");
out:
	case_result(nfail == before,
		    "a WRITE past the DM MR: remote access error, nothing written");
	mr_dereg(mr);
	free(buf);
}

static void case_traffic(void)
{
	const unsigned int acc = IBV_ACCESS_ZERO_BASED |
				 IBV_ACCESS_LOCAL_WRITE | QP_ACC_ALL;
	struct ibv_dm *dm = dm_alloc(d[0].ctx, DM_LEN, 0);
	struct ibv_mr *dmr = NULL;
	struct rc c = {};
	int ret;

	if (!dm) {
		failf("ibv_alloc_dm: %s", strerror(errno));
		goto out;
	}
	case_bad_mr(dm);
	dmr = ibv_reg_dm_mr(d[0].pd, dm, MR_OFF, MR_LEN, acc);
	if (!dmr) {
		failf("ibv_reg_dm_mr: %s", strerror(errno));
		goto out;
	}
	if (rc_open(&c))
		goto out;
	case_peer_rdma(&c, dm, dmr);
	case_local_sge(&c, dm, dmr);
	case_write_past(&c, dm, dmr);

	errno = 0;
	ret = ibv_free_dm(dm);
	if (ret != EBUSY && errno != EBUSY)
		failf("ibv_free_dm with an MR on it: %d (%s), not EBUSY",
		      ret, strerror(errno));
	case_result(ret != 0 && (ret == EBUSY || errno == EBUSY),
		    "ibv_free_dm with an MR on it: EBUSY");
out:
	if (why[0])
		case_result(0, "DM MR traffic set up");
	qp_cqs_destroy(c.qp[0], c.cq[0], NULL, d[0].name);
	qp_cqs_destroy(c.qp[1], c.cq[1], NULL, d[1].name);
	mr_dereg(dmr);
	if (dm && ibv_free_dm(dm))
		failf("ibv_free_dm: %s", strerror(errno));
}

static void case_fill(void)
{
	size_t n = max_dm / 4096, i, got = 0;
	struct ibv_dm **dm = calloc(n + 1, sizeof(*dm));
	unsigned int before;
	struct ibv_dm *all;

	for (i = 0; dm && i <= n; i++) {
		dm[i] = dm_alloc(d[0].ctx, 4096, 0);
		if (!dm[i])
			break;
		got++;
	}
	before = nfail;
	if (got != n)
		failf("%zu one-page allocations of %zu", got, n);
	for (i = 0; i < got; i++)
		if (ibv_free_dm(dm[i]))
			failf("ibv_free_dm: %s", strerror(errno));
	all = dm_alloc(d[0].ctx, max_dm, 0);
	if (!all)
		failf("the whole window after freeing: %s", strerror(errno));
	else if (ibv_free_dm(all))
		failf("ibv_free_dm: %s", strerror(errno));
	free(dm);
	case_result(nfail == before,
		    "the window fills with one-page allocations, then is taken whole");
}

static int hold(const char *dev, int n)
{
	struct test_dev h = { .name = dev, .gidx = -1 };
	uint32_t word = 0x5a5a5a5a;
	int i;

	if (tdev_open(&h))
		return KSFT_FAIL;
	for (i = 0; i < n; i++) {
		struct ibv_dm *dm = dm_alloc(h.ctx, 8192, 0);

		if (!dm || ibv_memcpy_to_dm(dm, 4096, &word, 4)) {
			fprintf(stderr, "allocation %d: %s\n", i,
				strerror(errno));
			return KSFT_FAIL;
		}
	}
	return hold_until_killed(n);
}

int main(int argc, char **argv)
{
	int rc;

	if (argc == 4 && !strcmp(argv[1], "--hold"))
		return hold(argv[2], atoi(argv[3]));
	if (argc != 3) {
		fprintf(stderr, "usage: %s DMDEV PEERDEV | --hold DMDEV N\n",
			argv[0]);
		return KSFT_FAIL;
	}
	d[0] = (struct test_dev){ .name = argv[1], .gidx = -1 };
	d[1] = (struct test_dev){ .name = argv[2], .gidx = -1 };
	printf("TAP version 13\n1..13\n");
	rc = tdev_open_pair(d);
	if (rc)
		return tap_skip_all(13, rc, d);
	case_query();
	case_copy();
	case_bad_alloc();
	case_traffic();
	case_fill();
	tdev_close(&d[1]);
	tdev_close(&d[0]);
	return n_failed || n_cases != 13 ? KSFT_FAIL : KSFT_PASS;
}
