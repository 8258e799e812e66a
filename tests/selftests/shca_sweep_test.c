// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_sweep_test: an invalidation's sweep visits the R_Key slot sets of
 * its own PD only, so its cost does not depend on other PDs' QPs.
 *
 *   shca_sweep_test [-n DONE] DEVICE [QPS]
 *
 * PD A holds one RC QP and an MR with remote write; taking that right
 * away with ibv_rereg_mr() sweeps the MR's key.  The sweeps are timed
 * and counted (rkey_sweeps, rkey_sets_visited) with no other QP on the
 * device, then again with QPS (default 1024) RC QPs in PD B: each sweep
 * must visit one set both times, and the time per sweep is printed for
 * both (a figure, not a check: it is the emulator's).  Prints TAP 13;
 * with -n, only the result lines, numbered from DONE + 1.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "shca_test.h"

#define SWEEPS		200
#define BUF		4096
#define REMOTE		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)

static int n_case;
static bool failed;
static const char *dev_name;

static void result(bool ok, const char *what, unsigned long long got)
{
	printf("%sok %d - %s (%llu)\n", ok ? "" : "not ", ++n_case, what, got);
	failed |= !ok;
}

/* a port 1 counter of the device, 0 when it cannot be read */
static unsigned long long counter(const char *name)
{
	unsigned long long v;

	/* the RDMA core caches counters for 10 ms */
	sleep_ms(20);
	return ctr_read(dev_name, name, &v) ? v : 0;
}

static struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &ia);
}

/*
 * SWEEPS re-registrations that take remote write away (each sweeps),
 * each followed by one that gives it back (no sweep).  Returns the
 * microseconds per sweep; *@visited gets the sets visited per sweep.
 */
static double sweep_round(struct ibv_mr *mr, double *visited)
{
	unsigned long long s0, v0, s1, v1;
	double t0, t;
	int i;

	s0 = counter("rkey_sweeps");
	v0 = counter("rkey_sets_visited");
	t0 = now_ms();
	for (i = 0; i < SWEEPS; i++)
		if (ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				 0, IBV_ACCESS_LOCAL_WRITE) ||
		    ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				 0, REMOTE)) {
			printf("# ibv_rereg_mr: %s\n", strerror(errno));
			break;
		}
	t = now_ms() - t0;
	s1 = counter("rkey_sweeps");
	v1 = counter("rkey_sets_visited");
	*visited = s1 > s0 ? (double)(v1 - v0) / (double)(s1 - s0) : -1;
	printf("# %llu sweeps, %.2f sets visited per sweep, %.1f us per pair of re-registrations\n",
	       s1 - s0, *visited, t * 1000.0 / SWEEPS);
	return t * 1000.0 / SWEEPS;
}

int main(int argc, char **argv)
{
	struct ibv_device **list, *dev;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pa = NULL, *pb = NULL;
	struct ibv_qp **others = NULL, *qa = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_mr *mr = NULL;
	double us0, us1, v0, v1;
	bool plan = true;
	int i, n = 1024, made = 0;
	void *buf = NULL;

	if (argc > 2 && !strcmp(argv[1], "-n")) {
		n_case = atoi(argv[2]);
		plan = false;
		argc -= 2;
		argv += 2;
	}
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: shca_sweep_test [-n DONE] DEVICE [QPS]\n");
		return 2;
	}
	dev_name = argv[1];
	if (argc == 3)
		n = atoi(argv[2]);
	if (plan)
		printf("TAP version 13\n1..3\n");
	list = ibv_get_device_list(NULL);
	dev = dev_find(list, dev_name);
	if (dev)
		ctx = ibv_open_device(dev);
	if (ctx) {
		pa = ibv_alloc_pd(ctx);
		pb = ibv_alloc_pd(ctx);
		cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	}
	buf = aligned_alloc(4096, BUF);
	others = calloc(n, sizeof(*others));
	if (pa && cq && buf)
		mr = ibv_reg_mr(pa, buf, BUF, REMOTE);
	if (mr)
		qa = rc_qp(pa, cq);
	if (!pb || !qa || !others) {
		printf("not ok %d - set-up on %s: %s\n", ++n_case, dev_name,
		       strerror(errno));
		return 1;
	}
	us0 = sweep_round(mr, &v0);
	result(v0 == 1, "a sweep in PD A with one QP visits one set", v0);
	for (made = 0; made < n; made++) {
		others[made] = rc_qp(pb, cq);
		if (!others[made])
			break;
	}
	us1 = sweep_round(mr, &v1);
	result(made == n, "RC QPs created in PD B", made);
	result(v1 == 1, "with them, a sweep in PD A still visits one set", v1);
	printf("# a pair of re-registrations (one sweep): %.1f us with no other QP, %.1f us with %d QPs in another PD (%.2fx)\n",
	       us0, us1, made, us0 > 0 ? us1 / us0 : 0);
	for (i = 0; i < made; i++)
		ibv_destroy_qp(others[i]);
	ibv_destroy_qp(qa);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pb);
	ibv_dealloc_pd(pa);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(others);
	free(buf);
	return failed ? 1 : 0;
}
