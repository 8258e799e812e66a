// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_flush_test: IBA 1.5's FLUSH (ibv_wr_flush) from a requester device
 * to a responder device.
 *
 *   shca_flush_test REQUESTER RESPONDER [must]
 *
 * The two may be one device, shca or rdma_rxe (interop both ways).  Built
 * against rdma-core 56.1's verbs.h and run on its libibverbs (rpath):
 * Debian 12's libibverbs 44 has no ibv_qp_ex.wr_flush.  Every case skips
 * when a device does not report IBV_DEVICE_FLUSH_GLOBAL (both devices
 * before Linux 6.2, whose RDMA core refuses the MR rights a FLUSH needs),
 * unless "must" is given: then that is a failure.
 *
 * Each case connects a fresh RC pair of extended QPs: WRITEs land in the
 * responder's MR, then a FLUSH to global visibility (a range, the whole
 * MR, nothing) completes after them; a FLUSH to persistence, past the
 * MR, to an MR or a QP without the right fails the way IBA says, and no
 * MR may ask for persistence on memory that is not persistent.  Prints
 * TAP; exits 0, 1 or 4 (a device missing).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "shca_test.h"

#define N_CASES		10
#define BUF_LEN		(64 * 1024)
#define N_PIPE		32
/* IB_UVERBS_DEVICE_FLUSH_GLOBAL in device_cap_flags_ex */
#define DEV_FLUSH_GLOBAL	(1ULL << 38)
#define QP_ACC		(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_FLUSH_GLOBAL | \
			 IBV_ACCESS_FLUSH_PERSISTENT)
#define MR_ACC		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_FLUSH_GLOBAL)

static struct test_dev d[2];

/* A connected pair: side 0 on d[0] sends, side 1 on d[1] is the target */
struct fpair {
	struct ibv_qp *qp[2];
	struct ibv_cq *cq[2];
	struct ibv_mr *src, *dst;
	uint8_t *sbuf, *dbuf;
};

static void fpair_close(struct fpair *p)
{
	mr_dereg(p->src);
	mr_dereg(p->dst);
	qp_cqs_destroy(p->qp[0], p->cq[0], NULL, d[0].name);
	qp_cqs_destroy(p->qp[1], p->cq[1], NULL, d[1].name);
	free(p->sbuf);
	free(p->dbuf);
	memset(p, 0, sizeof(*p));
}

/*
 * Open a pair whose responder QP allows @qp_acc and whose target MR
 * allows @mr_acc.  0, or -1 with a reason recorded.
 */
static int fpair_open(struct fpair *p, unsigned int qp_acc,
		      unsigned int mr_acc)
{
	struct qp_spec spec = qp_spec_simple(256, 128);
	struct rc_path path[2];
	enum ibv_qp_state at;
	int i, side, ret;

	memset(p, 0, sizeof(*p));
	spec.send_ops = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_FLUSH;
	for (i = 0; i < 2; i++) {
		p->qp[i] = qp_create(&d[i], &spec, &p->cq[i], NULL);
		if (!p->qp[i])
			goto err;
	}
	for (i = 0; i < 2; i++) {
		path[i] = (struct rc_path){
			.access = i ? qp_acc : QP_ACC, .mtu = IBV_MTU_1024,
			.dest_qpn = p->qp[!i]->qp_num, .rq_psn = 100 + !i,
			.sq_psn = 100 + i, .dgid = d[!i].gid,
			.sgid_index = d[i].gidx, .rd_atomic = 4,
			.min_rnr_timer = 12, .timeout = scaled_timeout(14),
			.retry_cnt = 7, .rnr_retry = 7,
		};
	}
	ret = rc_connect_pair(p->qp, path, &side, &at);
	if (ret) {
		failf("connect (%s of side %d): %s", st_str(at), side,
		      strerror(ret));
		goto err;
	}
	p->sbuf = zalloc(BUF_LEN);
	p->dbuf = zalloc(BUF_LEN);
	p->src = ibv_reg_mr(d[0].pd, p->sbuf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	p->dst = ibv_reg_mr(d[1].pd, p->dbuf, BUF_LEN, mr_acc);
	if (!p->src || !p->dst) {
		failf("ibv_reg_mr: %s", strerror(errno));
		goto err;
	}
	return 0;
err:
	fpair_close(p);
	return -1;
}

static int post_write(struct fpair *p, uint64_t wr_id, size_t off,
		      size_t len)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(p->qp[0]);

	ibv_wr_start(x);
	x->wr_id = wr_id;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, p->dst->rkey, (uintptr_t)p->dbuf + off);
	ibv_wr_set_sge(x, p->src->lkey, (uintptr_t)p->sbuf + off, len);
	return ibv_wr_complete(x);
}

static int post_flush(struct fpair *p, uint64_t wr_id, uint64_t addr,
		      size_t len, uint8_t type, uint8_t level)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(p->qp[0]);

	ibv_wr_start(x);
	x->wr_id = wr_id;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(x, p->dst->rkey, addr, len, type, level);
	return ibv_wr_complete(x);
}

/* The next completion of side 0: @wr_id with @st (and @op on success) */
static bool expect_wc(struct fpair *p, uint64_t wr_id, int st, int op,
		      const char *what)
{
	struct ibv_wc wc;

	if (poll_wait(p->cq[0], &wc, 1, SCALED_MS(10000)) != 1) {
		failf("%s: no completion", what);
		return false;
	}
	if (wc.wr_id != wr_id || (int)wc.status != st ||
	    (st == IBV_WC_SUCCESS && (int)wc.opcode != op)) {
		failf("%s: wr_id %llu status %s opcode %d, expected %llu %s %d",
		      what, (unsigned long long)wc.wr_id, st_str(wc.status),
		      wc.opcode, (unsigned long long)wr_id, st_str(st), op);
		return false;
	}
	return true;
}

/* @n WRITEs of BUF_LEN / @n bytes each, every one followed by a FLUSH */
static void case_write_flush(int n, uint8_t level, const char *what)
{
	size_t len = BUF_LEN / n;
	struct fpair p;
	int i;

	if (fpair_open(&p, QP_ACC, MR_ACC))
		goto out;
	pattern(p.sbuf, BUF_LEN, n);
	for (i = 0; i < n; i++) {
		if (post_write(&p, 2 * i, i * len, len) ||
		    post_flush(&p, 2 * i + 1, (uintptr_t)p.dbuf + i * len,
			       level == IBV_FLUSH_MR ? 12345678 : len,
			       IBV_FLUSH_GLOBAL, level)) {
			failf("%s: post %d failed", what, i);
			goto out;
		}
	}
	for (i = 0; i < 2 * n && !why[0]; i++)
		expect_wc(&p, i, IBV_WC_SUCCESS,
			  i & 1 ? IBV_WC_FLUSH : IBV_WC_RDMA_WRITE, what);
	if (!why[0] && memcmp(p.sbuf, p.dbuf, BUF_LEN))
		failf("%s: the WRITEs' bytes are not in the target", what);
out:
	fpair_close(&p);
	case_result(!why[0], what);
}

/* A FLUSH of 0 bytes at the MR's start completes */
static void case_flush_empty(void)
{
	const char *what = "FLUSH (global, range) of 0 bytes";
	struct fpair p;

	if (!fpair_open(&p, QP_ACC, MR_ACC) &&
	    !post_flush(&p, 1, (uintptr_t)p.dbuf, 0, IBV_FLUSH_GLOBAL,
			IBV_FLUSH_RANGE))
		expect_wc(&p, 1, IBV_WC_SUCCESS, IBV_WC_FLUSH, what);
	fpair_close(&p);
	case_result(!why[0], what);
}

/* Is @qp in @st within a second? */
static bool wait_state(struct ibv_qp *qp, int st)
{
	int i;

	for (i = 0; i < 100 && qp_state(qp) != st; i++)
		sleep_ms(10);
	return qp_state(qp) == st;
}

/*
 * A FLUSH that is refused: the requester completes with @st and its QP is
 * in ERR, the responder's too when the responder refused it (not when the
 * requester did: @st IBV_WC_LOC_QP_OP_ERR).
 */
static void case_refused(unsigned int qp_acc, unsigned int mr_acc,
			 size_t off, size_t len, uint8_t type, int st,
			 const char *what)
{
	struct fpair p;

	if (fpair_open(&p, qp_acc, mr_acc))
		goto out;
	if (post_flush(&p, 7, (uintptr_t)p.dbuf + off, len, type,
		       IBV_FLUSH_RANGE)) {
		failf("%s: post failed", what);
		goto out;
	}
	if (!expect_wc(&p, 7, st, 0, what))
		goto out;
	/* rdma_rxe moves its QPs to ERR just after the completion */
	if (!wait_state(p.qp[0], IBV_QPS_ERR))
		failf("%s: requester QP not in ERR", what);
	if (st == IBV_WC_LOC_QP_OP_ERR) {
		sleep_ms(100);
		if (qp_state(p.qp[1]) != IBV_QPS_RTS)
			failf("%s: responder QP not in RTS", what);
	} else if (!wait_state(p.qp[1], IBV_QPS_ERR)) {
		failf("%s: responder QP not in ERR", what);
	}
out:
	fpair_close(&p);
	case_result(!why[0], what);
}

/* No MR may ask for persistence: shca has no persistent memory */
static void case_persistent_mr(void)
{
	const char *what = "MR with FLUSH_PERSISTENT on ordinary memory refused";
	void *buf = zalloc(4096);
	struct ibv_mr *mr;

	mr = ibv_reg_mr(d[1].pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_FLUSH_PERSISTENT);
	if (mr) {
		failf("%s: ibv_reg_mr succeeded", what);
		ibv_dereg_mr(mr);
	}
	free(buf);
	case_result(!why[0], what);
}

/* Do both devices report FLUSH to global visibility? */
static bool have_flush(void)
{
	struct ibv_device_attr_ex ax;
	int i;

	for (i = 0; i < 2; i++) {
		memset(&ax, 0, sizeof(ax));
		if (ibv_query_device_ex(d[i].ctx, NULL, &ax) ||
		    !(ax.device_cap_flags_ex & DEV_FLUSH_GLOBAL))
			return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	int ret;

	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "must"))) {
		fprintf(stderr, "usage: %s REQUESTER RESPONDER [must]\n",
			argv[0]);
		return KSFT_FAIL;
	}
	printf("TAP version 13\n1..%d\n", N_CASES);
	d[0] = (struct test_dev){ .name = argv[1], .gidx = -1 };
	d[1] = (struct test_dev){ .name = argv[2], .gidx = -1 };
	ret = tdev_open_pair(d);
	if (ret)
		return tap_skip_all(N_CASES, ret, d);
	if (!have_flush()) {
		for (ret = 1; ret <= N_CASES; ret++)
			printf("%s %d - # SKIP a device does not report FLUSH\n",
			       argc == 4 ? "not ok" : "ok", ret);
		ret = argc == 4 ? KSFT_FAIL : KSFT_PASS;
		goto out;
	}
	case_write_flush(1, IBV_FLUSH_RANGE,
			 "WRITE 64 KiB, FLUSH (global, range) after it");
	case_write_flush(1, IBV_FLUSH_MR,
			 "WRITE 64 KiB, FLUSH (global, whole MR, length ignored)");
	case_write_flush(N_PIPE, IBV_FLUSH_RANGE,
			 "32 WRITEs each followed by a FLUSH, all in flight");
	case_flush_empty();
	case_refused(QP_ACC, MR_ACC, 0, 4096, IBV_FLUSH_PERSISTENT,
		     IBV_WC_REM_ACCESS_ERR,
		     "FLUSH to persistence, MR allows global only: remote access error");
	case_refused(QP_ACC, MR_ACC, BUF_LEN - 4096, 8192, IBV_FLUSH_GLOBAL,
		     IBV_WC_REM_ACCESS_ERR,
		     "FLUSH of a range past the MR's end: remote access error");
	case_refused(QP_ACC, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		     0, 4096, IBV_FLUSH_GLOBAL, IBV_WC_REM_ACCESS_ERR,
		     "FLUSH to an MR without FLUSH_GLOBAL: remote access error");
	case_refused(QP_ACC & ~(IBV_ACCESS_FLUSH_GLOBAL |
				IBV_ACCESS_FLUSH_PERSISTENT), MR_ACC,
		     0, 4096, IBV_FLUSH_GLOBAL, IBV_WC_REM_INV_REQ_ERR,
		     "FLUSH to a QP without FLUSH_GLOBAL: remote invalid request");
	/* what another device's provider does with it is its own choice */
	if (strncmp(d[0].name, "shca", 4))
		printf("ok %d - # SKIP the requester is not shca\n", ++n_cases);
	else
		case_refused(QP_ACC, MR_ACC, 0, 4096, 0x4,
			     IBV_WC_LOC_QP_OP_ERR,
			     "FLUSH with an unknown placement type: refused locally");
	case_persistent_mr();
	ret = n_failed ? KSFT_FAIL : KSFT_PASS;
out:
	tdev_close(&d[0]);
	tdev_close(&d[1]);
	return ret;
}
