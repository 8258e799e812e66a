// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_drdma_test --bench DMDEV PEERDEV: what DRDMA buys, measured (the
 * benchmark scripts/bench.sh runs; not a test).
 *
 * Latency from "the producer has written the last byte" to "the data is
 * at the remote" (the remote's receive completion of a WRITE with
 * immediate), for 4 KiB and 1 MiB:
 *  - drdma: the WRITE was posted before, from a DM MR over an armed
 *    range; the producer writes into the mapped range, and the clock
 *    starts before its commit;
 *  - host: the producer writes into host memory registered as an MR, and
 *    the clock starts before the application posts the WRITE.
 * Bandwidth of 64 KiB WRITEs, 16 outstanding, from a DM MR and from host
 * memory.  The path MTU is the ports' active MTU, as perftest's.  One
 * line per figure: "# drdma: <what> <size> <value> <unit>".
 */
#include <stdlib.h>

#include <shcadv.h>

#include "shca_drdma.h"

#define BW_MSG		65536
#define BW_DEPTH	16
#define BW_BYTES	(64ULL << 20)

/* The WRITE with immediate of @len bytes from @mr at @laddr, signaled. */
static int bench_post(struct rc *c, struct ibv_mr *mr, uint64_t laddr,
		      uint32_t len, uint8_t *peer, struct ibv_mr *pmr)
{
	struct ibv_sge sge = { .addr = laddr, .length = len,
			       .lkey = mr->lkey };
	struct send_args a = { .op = IBV_WR_RDMA_WRITE_WITH_IMM, .sg = &sge,
			       .nsge = 1, .flags = IBV_SEND_SIGNALED,
			       .raddr = (uintptr_t)peer, .rkey = pmr->rkey,
			       .imm = 1 };

	return post_send1(c->qp[0], &a);
}

/*
 * Up to @n completions of @cq, polled without a pause (poll_wait() naps
 * between empty polls, which a measurement must not); 0 after WAIT_MS.
 */
static int bench_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	double end = now_ms() + WAIT_MS;
	int k;

	do {
		k = ibv_poll_cq(cq, n, wc);
		if (k)
			return k;
	} while (now_ms() < end);
	return 0;
}

/* The remote's receive completion and the sender's: 0 or -1. */
static int bench_wait(struct rc *c)
{
	struct ibv_wc wc;

	if (bench_poll(c->cq[1], &wc, 1) != 1 || wc.status)
		return -1;
	if (bench_poll(c->cq[0], &wc, 1) != 1 || wc.status)
		return -1;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Arm, retrying while the last transfer's packets let go of the pages. */
static int bench_arm(struct ibv_dm *dm, uint32_t len)
{
	int i, ret = EBUSY;

	for (i = 0; i < 1000 && ret == EBUSY; i++) {
		ret = shcadv_dm_arm(dm, SHCADV_DM_WRITE, 0, len);
		if (ret == EBUSY)
			sleep_ms(1);
	}
	return ret;
}

/* Median microseconds over @n runs, drdma or host; -1 on a failure. */
static double bench_lat(struct rc *c, bool drdma, uint32_t len, int n,
			uint8_t *peer, struct ibv_mr *pmr)
{
	uint8_t *src = malloc(len), *host = zalloc(len);
	struct ibv_mr *hmr = host ? ibv_reg_mr(d[0].pd, host, len,
					       IBV_ACCESS_LOCAL_WRITE) : NULL;
	double *us = calloc(n, sizeof(*us)), t0, res = -1;
	struct ibv_sge rsge = { 0 };
	struct dmr m = {};
	int i;

	if (!src || !hmr || !us || (drdma && dmr_open(&m, len)))
		goto out;
	pattern(src, len, len);
	for (i = 0; i < n; i++) {
		if (post_recv1(c->qp[1], NULL, i, &rsge, 0))
			goto out;
		if (drdma) {
			if (bench_arm(m.dm, len) ||
			    bench_post(c, m.mr, 0, len, peer, pmr))
				goto out;
			memcpy(m.map, src, len);
			t0 = now_ms();
			if (shcadv_dm_commit(m.dm, len, NULL))
				goto out;
		} else {
			memcpy(host, src, len);
			t0 = now_ms();
			if (bench_post(c, hmr, (uintptr_t)host, len, peer, pmr))
				goto out;
		}
		if (bench_wait(c))
			goto out;
		us[i] = (now_ms() - t0) * 1000;
	}
	qsort(us, n, sizeof(*us), cmp_double);
	res = us[n / 2];
out:
	dmr_close(&m);
	mr_dereg(hmr);
	free(host);
	free(src);
	free(us);
	return res;
}

/* MB/s of BW_MSG WRITEs from @mr (at @laddr), BW_DEPTH outstanding. */
static double bench_bw(struct rc *c, struct ibv_mr *mr, uint64_t laddr,
		       uint8_t *peer, struct ibv_mr *pmr)
{
	uint64_t n = BW_BYTES / BW_MSG, posted = 0, done = 0;
	struct ibv_sge sge = { .addr = laddr, .length = BW_MSG,
			       .lkey = mr->lkey };
	struct send_args a = { .op = IBV_WR_RDMA_WRITE, .sg = &sge,
			       .nsge = 1, .flags = IBV_SEND_SIGNALED,
			       .raddr = (uintptr_t)peer, .rkey = pmr->rkey };
	struct ibv_wc wc[BW_DEPTH];
	double t0 = now_ms();
	int k, i;

	while (done < n) {
		while (posted < n && posted - done < BW_DEPTH) {
			if (post_send1(c->qp[0], &a))
				return -1;
			posted++;
		}
		k = bench_poll(c->cq[0], wc, BW_DEPTH);
		if (k <= 0)
			return -1;
		for (i = 0; i < k; i++)
			if (wc[i].status)
				return -1;
		done += k;
	}
	return BW_BYTES / ((now_ms() - t0) / 1000) / 1e6;
}

/* The smaller of the two ports' active MTUs (perftest's choice too). */
static enum ibv_mtu bench_mtu(void)
{
	struct ibv_port_attr pa[2];

	if (ibv_query_port(d[0].ctx, 1, &pa[0]) ||
	    ibv_query_port(d[1].ctx, 1, &pa[1]))
		return IBV_MTU_1024;
	return pa[0].active_mtu < pa[1].active_mtu ? pa[0].active_mtu :
						     pa[1].active_mtu;
}

/**
 * drdma_bench - the --bench mode
 * @peer: the peer's buffer, at least 1 MiB, in @pmr
 * @pmr: its MR, remote write allowed
 *
 * Return: KSFT_PASS, or KSFT_FAIL when a measurement failed.
 */
int drdma_bench(uint8_t *peer, struct ibv_mr *pmr)
{
	static const uint32_t sizes[] = { 4096, 1 << 20 };
	uint8_t *host = zalloc(BW_MSG);
	struct ibv_mr *hmr = host ? ibv_reg_mr(d[0].pd, host, BW_MSG,
					       IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct rc c = {};
	struct dmr m = {};
	int bad = 0;
	unsigned int i;
	double v;

	if (!hmr || rc_open(&c, bench_mtu()) || dmr_open(&m, BW_MSG)) {
		why_flush();
		return KSFT_FAIL;
	}
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		int n = sizes[i] > 65536 ? 21 : 201;

		v = bench_lat(&c, true, sizes[i], n, peer, pmr);
		bad |= v < 0;
		printf("# drdma: latency-drdma %u %.1f us\n", sizes[i], v);
		v = bench_lat(&c, false, sizes[i], n, peer, pmr);
		bad |= v < 0;
		printf("# drdma: latency-host %u %.1f us\n", sizes[i], v);
	}
	v = bench_bw(&c, m.mr, 0, peer, pmr);
	bad |= v < 0;
	printf("# drdma: bandwidth-dm %d %.0f MB/s\n", BW_MSG, v);
	v = bench_bw(&c, hmr, (uintptr_t)host, peer, pmr);
	bad |= v < 0;
	printf("# drdma: bandwidth-host %d %.0f MB/s\n", BW_MSG, v);
	dmr_close(&m);
	rc_close(&c);
	mr_dereg(hmr);
	free(host);
	why_flush();
	return bad ? KSFT_FAIL : KSFT_PASS;
}
