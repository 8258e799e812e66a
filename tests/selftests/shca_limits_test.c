// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_limits_test: the queue limits a shca device reports hold, at the
 * limit and one past it.
 *
 *   shca_limits_test [-n DONE] DEVICE [QPS CQS MRS AHS]
 *
 * At each limit (max_cqe, max_qp_wr, max_sge, the largest inline payload,
 * max_srq_wr, max_srq_sge) the object is created and used: a CQ of
 * max_cqe entries takes completions, and two RC QPs of max_qp_wr WRs and
 * max_sge SGEs, connected to each other on the device, carry a SEND
 * gathered from max_sge pieces into max_sge pieces and an inline SEND of
 * the largest size, checked byte for byte.  One past each limit, and for
 * an MR one byte longer than max_mr_size, the creation fails with EINVAL
 * and nothing is left behind.  With QPS, CQS, MRS and AHS (what the
 * device has left of max_qp, max_cq, max_mr and max_ah after the kernel's
 * own objects), exactly that many QPs, CQs, MRs and AHs can be created
 * and the next one fails with ENOMEM.  Prints TAP 13; with -n, only
 * the result lines, numbered from DONE + 1 (a later part of a caller's
 * TAP stream).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "shca_test.h"

#define PIECE		8	/* bytes per SGE of the gathered SEND */
#define MAX_INLINE	512	/* shca's largest inline payload */

struct limits {
	struct ibv_context *ctx;
	struct ibv_device_attr da;
	struct ibv_pd *pd;
	int gid;
};

static struct ibv_qp *make_qp(struct limits *l, struct ibv_cq *cq,
			      uint32_t wr, uint32_t sge, uint32_t inl)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = wr, .max_recv_wr = wr,
			 .max_send_sge = sge, .max_recv_sge = sge,
			 .max_inline_data = inl },
	};
	struct ibv_qp *qp = ibv_create_qp(l->pd, &a);

	if (qp && (a.cap.max_send_wr < wr || a.cap.max_recv_wr < wr ||
		   a.cap.max_send_sge < sge || a.cap.max_inline_data < inl))
		failf("granted caps %u/%u WRs %u SGEs %u inline below asked",
		      a.cap.max_send_wr, a.cap.max_recv_wr,
		      a.cap.max_send_sge, a.cap.max_inline_data);
	return qp;
}

/* RESET -> RTS, connected to @peer on the same port and GID. */
static int connect_qp(struct limits *l, struct ibv_qp *qp, uint32_t peer)
{
	struct rc_path path = {
		.access = IBV_ACCESS_LOCAL_WRITE,
		.mtu = IBV_MTU_1024,
		.dest_qpn = peer,
		.sgid_index = l->gid,
		.min_rnr_timer = 1,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
	};

	if (ibv_query_gid(l->ctx, 1, l->gid, &path.dgid))
		return -1;
	return rc_connect(qp, &path, NULL);
}

/* Poll @cq for @n successful completions within 10 s. */
static int wait_wcs(struct ibv_cq *cq, int n)
{
	double end = now_ms() + 10000;
	struct ibv_wc wc;
	int got = 0;

	while (got < n && now_ms() < end) {
		int r = ibv_poll_cq(cq, 1, &wc);

		if (r < 0)
			return -1;
		if (!r)
			continue;
		if (wc.status != IBV_WC_SUCCESS) {
			failf("completion %s", ibv_wc_status_str(wc.status));
			return -1;
		}
		got++;
	}
	if (got < n)
		failf("%d of %d completions", got, n);
	return got == n ? 0 : -1;
}

/*
 * Two QPs at the WR, SGE and inline limits: a SEND of max_sge pieces into
 * max_sge pieces, then an inline SEND of MAX_INLINE bytes.
 */
static int qp_at_limits(struct limits *l, struct ibv_cq *cq)
{
	uint32_t sge = l->da.max_sge, wr = l->da.max_qp_wr, i;
	size_t len = (size_t)sge * PIECE;
	struct ibv_sge *ss = calloc(sge, sizeof(*ss));
	struct ibv_sge *rs = calloc(sge, sizeof(*rs));
	uint8_t *buf = calloc(2, len + MAX_INLINE);
	struct ibv_send_wr swr = {}, *bs;
	struct ibv_recv_wr rwr = {}, *br;
	struct ibv_qp *a = NULL, *b = NULL;
	struct ibv_mr *mr = NULL;
	uint8_t *src = buf, *dst = buf + len + MAX_INLINE;
	int ret = -1;

	if (!ss || !rs || !buf)
		goto out;
	mr = ibv_reg_mr(l->pd, buf, 2 * (len + MAX_INLINE),
			IBV_ACCESS_LOCAL_WRITE);
	a = make_qp(l, cq, wr, sge, MAX_INLINE);
	b = make_qp(l, cq, wr, sge, MAX_INLINE);
	if (!mr || !a || !b) {
		failf("reg_mr/create_qp at the limits: %s", strerror(errno));
		goto out;
	}
	if (connect_qp(l, a, b->qp_num) || connect_qp(l, b, a->qp_num)) {
		failf("connect: %s", strerror(errno));
		goto out;
	}
	pattern(src, len + MAX_INLINE, 42);
	/* the gather takes every other piece first, the scatter in order */
	for (i = 0; i < sge; i++) {
		uint32_t from = (i * 2 + (i * 2 >= sge)) % sge;

		ss[i] = (struct ibv_sge){ (uintptr_t)src + from * PIECE,
					  PIECE, mr->lkey };
		rs[i] = (struct ibv_sge){ (uintptr_t)dst + i * PIECE, PIECE,
					  mr->lkey };
	}
	rwr.sg_list = rs;
	rwr.num_sge = sge;
	if (ibv_post_recv(b, &rwr, &br))
		goto out;
	rwr.sg_list = &(struct ibv_sge){ (uintptr_t)dst + len, MAX_INLINE,
					 mr->lkey };
	rwr.num_sge = 1;
	if (ibv_post_recv(b, &rwr, &br))
		goto out;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	swr.sg_list = ss;
	swr.num_sge = sge;
	if (ibv_post_send(a, &swr, &bs))
		goto out;
	swr.sg_list = &(struct ibv_sge){ (uintptr_t)src + len, MAX_INLINE, 0 };
	swr.num_sge = 1;
	swr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	if (ibv_post_send(a, &swr, &bs)) {
		failf("inline SEND of %d bytes: %s", MAX_INLINE,
		      strerror(errno));
		goto out;
	}
	if (wait_wcs(cq, 4))
		goto out;
	for (i = 0; i < sge; i++) {
		uint32_t from = (i * 2 + (i * 2 >= sge)) % sge;

		if (memcmp(dst + i * PIECE, src + from * PIECE, PIECE)) {
			failf("piece %u of the gathered SEND differs", i);
			goto out;
		}
	}
	if (memcmp(dst + len, src + len, MAX_INLINE)) {
		failf("the inline SEND's data differ");
		goto out;
	}
	ret = 0;
out:
	if (ret && !why[0])
		failf("post: %s", strerror(errno));
	if (a)
		ibv_destroy_qp(a);
	if (b)
		ibv_destroy_qp(b);
	if (mr)
		ibv_dereg_mr(mr);
	free(ss);
	free(rs);
	free(buf);
	return ret;
}

/* Creation one past a limit fails with EINVAL. */
static void past(struct limits *l, struct ibv_cq *cq, const char *what,
		 uint32_t wr, uint32_t sge, uint32_t inl)
{
	char desc[128];
	struct ibv_qp *qp;

	errno = 0;
	qp = make_qp(l, cq, wr, sge, inl);
	snprintf(desc, sizeof(desc), "QP with %s one past the limit: EINVAL",
		 what);
	case_result(!qp && errno == EINVAL, desc);
	if (qp)
		ibv_destroy_qp(qp);
}

/* An SRQ of @wr WRs and @sge SGEs, one past a limit, fails with EINVAL. */
static void srq_past(struct limits *l, uint32_t wr, uint32_t sge,
		     const char *desc)
{
	struct ibv_srq_init_attr a = {
		.attr = { .max_wr = wr, .max_sge = sge },
	};
	struct ibv_srq *srq;

	errno = 0;
	srq = ibv_create_srq(l->pd, &a);
	case_result(!srq && errno == EINVAL, desc);
	if (srq)
		ibv_destroy_srq(srq);
}

static void srq_limits(struct limits *l)
{
	struct ibv_srq_init_attr a = {
		.attr = { .max_wr = l->da.max_srq_wr,
			  .max_sge = l->da.max_srq_sge },
	};
	struct ibv_srq *srq = ibv_create_srq(l->pd, &a);

	case_result(srq && a.attr.max_wr >= (uint32_t)l->da.max_srq_wr,
	   "SRQ of max_srq_wr WRs and max_srq_sge SGEs");
	if (srq)
		ibv_destroy_srq(srq);
	srq_past(l, l->da.max_srq_wr + 1, l->da.max_srq_sge,
		 "SRQ of max_srq_wr + 1 WRs: EINVAL");
	srq_past(l, 16, l->da.max_srq_sge + 1,
		 "SRQ of max_srq_sge + 1 SGEs: EINVAL");
}

/*
 * Create objects with @make until it fails, up to @want + 1 times; the
 * count must be @want and the failure ENOMEM.  Returns the count.
 */
static int fill(void **objs, int want, void *(*make)(struct limits *, void *),
		struct limits *l, void *arg, const char *what)
{
	char desc[128];
	int n;

	errno = 0;
	for (n = 0; n <= want; n++) {
		objs[n] = make(l, arg);
		if (!objs[n])
			break;
	}
	snprintf(desc, sizeof(desc), "%d %s: all created", want, what);
	if (n < want)
		failf("creation %d failed: %s", n + 1, strerror(errno));
	case_result(n == want, desc);
	snprintf(desc, sizeof(desc), "%s number %d: ENOMEM", what, want + 1);
	if (n > want)
		failf("it was created");
	else if (n == want && errno != ENOMEM)
		failf("errno %d (%s)", errno, strerror(errno));
	case_result(n == want && errno == ENOMEM, desc);
	return n;
}

static void *make_cq(struct limits *l, void *arg)
{
	(void)arg;
	return ibv_create_cq(l->ctx, 1, NULL, NULL, 0);
}

static void *make_small_qp(struct limits *l, void *cq)
{
	return make_qp(l, cq, 1, 1, 0);
}

static void *make_mr(struct limits *l, void *buf)
{
	return ibv_reg_mr(l->pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
}

/* an AH to the device's own GID */
static void *make_ah(struct limits *l, void *gid)
{
	struct ibv_ah_attr a = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = *(union ibv_gid *)gid, .sgid_index = l->gid,
			 .hop_limit = 64 },
	};

	return ibv_create_ah(l->pd, &a);
}

static int max4(int a, int b, int c, int d)
{
	int m = a > b ? a : b;

	m = m > c ? m : c;
	return m > d ? m : d;
}

/* Exactly @qps QPs, @cqs CQs, @mrs MRs and @ahs AHs, then ENOMEM. */
static void counts(struct limits *l, int qps, int cqs, int mrs, int ahs)
{
	int max = max4(qps, cqs, mrs, ahs) + 1, n, i;
	union ibv_gid gid;
	void **objs, *buf;

	objs = calloc(max, sizeof(*objs));
	buf = calloc(1, 4096);
	if (!objs || !buf)
		return;
	n = fill(objs, cqs, make_cq, l, NULL, "CQs");
	for (i = 1; i < n; i++)
		ibv_destroy_cq(objs[i]);
	if (n) {
		struct ibv_cq *cq = objs[0];

		n = fill(objs, qps, make_small_qp, l, cq, "QPs");
		for (i = 0; i < n; i++)
			ibv_destroy_qp(objs[i]);
		ibv_destroy_cq(cq);
	}
	n = fill(objs, mrs, make_mr, l, buf, "MRs");
	for (i = 0; i < n; i++)
		ibv_dereg_mr(objs[i]);
	if (ibv_query_gid(l->ctx, 1, l->gid, &gid)) {
		failf("query GID %d: %s", l->gid, strerror(errno));
		case_result(0, "AHs");
		case_result(0, "AHs: ENOMEM");
	} else {
		n = fill(objs, ahs, make_ah, l, &gid, "AHs");
		for (i = 0; i < n; i++)
			ibv_destroy_ah(objs[i]);
	}
	free(objs);
	free(buf);
}

/*
 * An MR one byte longer than max_mr_size is refused before any page is
 * pinned.  (One of max_mr_size bytes, about 1 TiB, would need that much
 * memory pinned.)
 */
static void mr_too_long(struct limits *l)
{
	static char page[4096] __attribute__((aligned(4096)));
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(l->pd, page, l->da.max_mr_size + 1,
			IBV_ACCESS_LOCAL_WRITE);
	if (mr)
		failf("registered");
	else if (errno != EINVAL)
		failf("errno %d (%s)", errno, strerror(errno));
	case_result(!mr && errno == EINVAL,
		    "MR of max_mr_size + 1 bytes: EINVAL");
	if (mr)
		ibv_dereg_mr(mr);
}

static void run(struct limits *l)
{
	struct ibv_cq *cq;

	diag("max_cqe %d max_qp_wr %d max_sge %d max_srq_wr %d max_srq_sge %d max_mr_size %llu",
	     l->da.max_cqe, l->da.max_qp_wr, l->da.max_sge,
	     l->da.max_srq_wr, l->da.max_srq_sge,
	     (unsigned long long)l->da.max_mr_size);
	case_result(l->da.max_cqe >= 1 << 22 && l->da.max_qp_wr >= 32768 &&
	   l->da.max_srq_wr >= 32768 && l->da.max_sge >= 32,
	   "limits at least 4M CQEs, 32768 WRs, 32 SGEs");

	cq = ibv_create_cq(l->ctx, l->da.max_cqe, NULL, NULL, 0);
	case_result(cq && cq->cqe >= l->da.max_cqe, "CQ of max_cqe entries");
	case_result(cq && !qp_at_limits(l, cq),
	   "QPs at max_qp_wr, max_sge and 512 B inline carry data");
	if (cq)
		ibv_destroy_cq(cq);
	errno = 0;
	cq = ibv_create_cq(l->ctx, l->da.max_cqe + 1, NULL, NULL, 0);
	case_result(!cq && errno == EINVAL, "CQ of max_cqe + 1 entries: EINVAL");
	if (cq)
		ibv_destroy_cq(cq);

	cq = ibv_create_cq(l->ctx, 64, NULL, NULL, 0);
	if (!cq) {
		case_result(0, "CQ for the refusals");
		return;
	}
	past(l, cq, "max_qp_wr", l->da.max_qp_wr + 1, 1, 0);
	past(l, cq, "max_sge", 16, l->da.max_sge + 1, 0);
	past(l, cq, "the inline limit", 16, 1, MAX_INLINE + 1);
	ibv_destroy_cq(cq);
	srq_limits(l);
	mr_too_long(l);
}

int main(int argc, char **argv)
{
	struct ibv_device **list, *dev;
	struct limits l = {};
	bool plan = true;

	if (argc > 2 && !strcmp(argv[1], "-n")) {
		n_cases = atoi(argv[2]);
		plan = false;
		argc -= 2;
		argv += 2;
	}
	if (argc != 2 && argc != 6) {
		fprintf(stderr, "usage: shca_limits_test [-n DONE] DEVICE [QPS CQS MRS AHS]\n");
		return 2;
	}
	if (plan)
		printf("TAP version 13\n1..%d\n", argc == 6 ? 19 : 11);
	list = ibv_get_device_list(NULL);
	dev = dev_find(list, argv[1]);
	if (dev)
		l.ctx = ibv_open_device(dev);
	if (!l.ctx || ibv_query_device(l.ctx, &l.da)) {
		printf("not ok 1 - open %s\n", argv[1]);
		return 1;
	}
	l.pd = ibv_alloc_pd(l.ctx);
	l.gid = find_v4_gid(l.ctx);
	if (!l.pd || l.gid < 0) {
		printf("not ok 1 - PD and an IPv4 GID on %s\n", argv[1]);
		return 1;
	}
	run(&l);
	if (argc == 6)
		counts(&l, atoi(argv[2]), atoi(argv[3]), atoi(argv[4]),
		       atoi(argv[5]));
	ibv_dealloc_pd(l.pd);
	ibv_close_device(l.ctx);
	ibv_free_device_list(list);
	return n_failed ? 1 : 0;
}
