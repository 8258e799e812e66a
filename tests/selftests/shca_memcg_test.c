// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_memcg_test: the memory a process's shca objects take is charged
 * to its memory cgroup, and a cgroup's limit stops them.
 *
 *   shca_memcg_test [-n DONE] DEVICE CGROUP
 *
 * Moves itself into CGROUP (a cgroup v2 directory with the memory
 * controller) and reads its memory.current around each step: a CQ of
 * 2^20 entries (64 MiB of ring) and an RC QP of 32768 send WRs (its
 * send ring and the kernel's copies of its WQEs) raise it by at least
 * their size and give it back when destroyed; under a memory.max 16 MiB
 * above the usage, the 64 MiB CQ fails with ENOMEM (no OOM kill: this
 * process goes on) and a 1 MiB one is created.  Prints TAP 13; with -n,
 * only the result lines, numbered from DONE + 1.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "shca_test.h"

#define MIB		(1024LL * 1024)
#define BIG_CQE		(1 << 20)	/* 64 B each: 64 MiB */
#define SMALL_CQE	(1 << 14)	/* 1 MiB */
#define QP_WR		32768
#define SQE_MIN		64		/* one SQE, no SGE */
/*
 * memory.current moves in steps of the per-CPU charge stocks (64 pages a
 * CPU), and the process's other allocations move it too: a ring's charge
 * and uncharge are judged within this much of its size
 */
#define CG_SLACK	MIB

static const char *cg;
static int n_case;
static bool failed;

static void result(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void result(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++n_case);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failed |= !ok;
}

static bool cg_write(const char *file, const char *val)
{
	char path[512];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	f = fopen(path, "w");
	if (!f)
		return false;
	ret = fputs(val, f);
	return fclose(f) == 0 && ret >= 0;
}

/* memory.current in bytes, -1 when it cannot be read */
static long long cg_current(void)
{
	char path[512];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/memory.current", cg);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static void cq_charge(struct ibv_context *ctx)
{
	long long c0, c1, c2;
	struct ibv_cq *cq;

	c0 = cg_current();
	cq = ibv_create_cq(ctx, BIG_CQE, NULL, NULL, 0);
	c1 = cg_current();
	if (!cq) {
		result(false, "CQ of %d entries: %s", BIG_CQE, strerror(errno));
		return;
	}
	ibv_destroy_cq(cq);
	c2 = cg_current();
	printf("# CQ of %d entries: memory.current %lld -> %lld -> %lld\n",
	       BIG_CQE, c0, c1, c2);
	result(c1 - c0 >= 64 * MIB - CG_SLACK,
	       "a 64 MiB CQ ring is charged to the cgroup (+%lld KiB)",
	       (c1 - c0) / 1024);
	result(c1 - c2 >= 64 * MIB - CG_SLACK,
	       "and uncharged when the CQ is destroyed (-%lld KiB)",
	       (c1 - c2) / 1024);
}

static void qp_charge(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = QP_WR, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	long long c0, c1, want = 2LL * QP_WR * SQE_MIN;
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *qp;

	if (!cq) {
		result(false, "small CQ: %s", strerror(errno));
		return;
	}
	ia.send_cq = cq;
	ia.recv_cq = cq;
	c0 = cg_current();
	qp = ibv_create_qp(pd, &ia);
	c1 = cg_current();
	if (!qp) {
		result(false, "QP of %d send WRs: %s", QP_WR, strerror(errno));
	} else {
		printf("# QP of %d send WRs: memory.current %lld -> %lld\n",
		       QP_WR, c0, c1);
		/* the ring holds an SQE and an SGE per WR, the copy more */
		result(c1 - c0 >= want,
		       "a QP's send ring and WQE copies are charged (+%lld KiB, at least %lld)",
		       (c1 - c0) / 1024, want / 1024);
		ibv_destroy_qp(qp);
	}
	ibv_destroy_cq(cq);
}

static void cq_limit(struct ibv_context *ctx)
{
	long long c0 = cg_current();
	struct ibv_cq *cq;
	char max[32];
	int err;

	snprintf(max, sizeof(max), "%lld", c0 + 16 * MIB);
	if (c0 < 0 || !cg_write("memory.max", max)) {
		result(false, "memory.max = memory.current + 16 MiB: %s",
		       strerror(errno));
		return;
	}
	cq = ibv_create_cq(ctx, BIG_CQE, NULL, NULL, 0);
	err = errno;
	result(!cq && err == ENOMEM,
	       "under memory.max, a 64 MiB CQ fails with ENOMEM (%s)",
	       cq ? "created" : strerror(err));
	if (cq)
		ibv_destroy_cq(cq);
	cq = ibv_create_cq(ctx, SMALL_CQE, NULL, NULL, 0);
	result(cq, "and a 1 MiB CQ is created (%s)",
	       cq ? "ok" : strerror(errno));
	if (cq)
		ibv_destroy_cq(cq);
	cg_write("memory.max", "max");
}

int main(int argc, char **argv)
{
	struct ibv_device **list, *dev;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd = NULL;
	char pid[32];
	bool plan = true;

	if (argc > 2 && !strcmp(argv[1], "-n")) {
		n_case = atoi(argv[2]);
		plan = false;
		argc -= 2;
		argv += 2;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: shca_memcg_test [-n DONE] DEVICE CGROUP\n");
		return 2;
	}
	cg = argv[2];
	if (plan)
		printf("TAP version 13\n1..5\n");
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (!cg_write("cgroup.procs", pid) || cg_current() < 0) {
		result(false, "join %s: %s", cg, strerror(errno));
		return 1;
	}
	list = ibv_get_device_list(NULL);
	dev = dev_find(list, argv[1]);
	if (dev)
		ctx = ibv_open_device(dev);
	if (ctx)
		pd = ibv_alloc_pd(ctx);
	if (!pd) {
		result(false, "open %s and a PD", argv[1]);
		return 1;
	}
	cq_charge(ctx);
	qp_charge(ctx, pd);
	cq_limit(ctx);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failed ? 1 : 0;
}
