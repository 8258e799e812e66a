// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_pdom_test: thread domains and parent domains.
 *
 *   shca_pdom_test DEVICE
 *
 * On one device talking to itself: a parent domain with a thread domain
 * and allocators carries an extended CQ, an SRQ, an MR and two RC QPs
 * (one from ibv_create_qp, one from ibv_create_qp_ex) that exchange an
 * RDMA WRITE and SENDs; the provider's state of each object comes from
 * the allocator with its resource type, cache-line aligned, and goes back
 * through the free callback when the object is destroyed.  Bad attributes
 * are refused, objects in use cannot be freed, an allocator answering
 * IBV_ALLOCATOR_USE_DEFAULT or failing is handled.  Prints TAP; exits 0, 1 or
 * 4 (no such device).
 */

#include <errno.h>
#include <stdlib.h>
#include <infiniband/verbs.h>

#include <shcadv.h>

#include "shca_test.h"

#define N_CASES		12
#define BUF_SIZE	4096
#define MSG_LEN		512
#define MAX_ALLOCS	16

enum mode { ALLOC_OWN, ALLOC_DEFAULT, ALLOC_FAIL };

/* What the application's allocator handed out */
struct alloc_rec {
	void *ptr;
	size_t size, align;
	uint64_t type;
	bool freed;
};

struct allocator {
	enum mode mode;
	int n, n_free, n_bad_free;
	struct alloc_rec rec[MAX_ALLOCS];
};

static void *t_alloc(struct ibv_pd *pd, void *pd_context, size_t size,
		     size_t align, uint64_t type)
{
	struct allocator *a = pd_context;
	struct alloc_rec *r;
	void *p;

	(void)pd;
	if (a->mode == ALLOC_DEFAULT)
		return IBV_ALLOCATOR_USE_DEFAULT;
	if (a->mode == ALLOC_FAIL || a->n == MAX_ALLOCS)
		return NULL;
	if (posix_memalign(&p, align ? align : 8, size))
		return NULL;
	memset(p, 0xa5, size);	/* the provider must clear it */
	r = &a->rec[a->n++];
	*r = (struct alloc_rec){ .ptr = p, .size = size, .align = align,
				 .type = type };
	return p;
}

static void t_free(struct ibv_pd *pd, void *pd_context, void *ptr,
		   uint64_t type)
{
	struct allocator *a = pd_context;
	int i;

	(void)pd;
	for (i = 0; i < a->n; i++) {
		if (a->rec[i].ptr == ptr && !a->rec[i].freed &&
		    a->rec[i].type == type) {
			a->rec[i].freed = true;
			a->n_free++;
			free(ptr);
			return;
		}
	}
	a->n_bad_free++;
}

/* Allocations of @type so far, and whether all were cache-line aligned */
static int n_of_type(const struct allocator *a, uint64_t type, bool *aligned)
{
	int i, n = 0;

	for (i = 0; i < a->n; i++) {
		if (a->rec[i].type != type)
			continue;
		n++;
		if (a->rec[i].align < 64 ||
		    (uintptr_t)a->rec[i].ptr % a->rec[i].align)
			*aligned = false;
	}
	return n;
}

struct state {
	struct test_dev d;
	struct allocator a;
	struct ibv_td *td;
	struct ibv_pd *pdom;
	struct ibv_cq_ex *cqx;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp[2];
	struct ibv_mr *mr;
	uint8_t *buf;
};

static struct ibv_pd *pdom_alloc(struct state *s, struct ibv_pd *pd,
				 struct ibv_td *td, uint32_t mask)
{
	struct ibv_parent_domain_init_attr pa = {
		.pd = pd, .td = td, .comp_mask = mask,
		.alloc = t_alloc, .free = t_free, .pd_context = &s->a,
	};

	return ibv_alloc_parent_domain(s->d.ctx, &pa);
}

/* Did @p come back NULL with errno @err? */
static bool refused(void *p, int err, const char *what)
{
	if (!p && errno == err)
		return true;
	failf("%s: %s, errno %d, expected %d", what, p ? "created" : "refused",
	      p ? 0 : errno, err);
	return false;
}

static void case_bad_attrs(struct state *s)
{
	struct ibv_td_init_attr ta = { .comp_mask = 1 };
	struct ibv_parent_domain_init_attr pa = { .pd = s->d.pd };
	const uint32_t both = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			      IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	struct ibv_pd *p;

	case_result(refused(ibv_alloc_td(s->d.ctx, &ta), EINVAL,
			    "alloc_td with comp_mask 1"),
		    "ibv_alloc_td refuses an unknown comp_mask (EINVAL)");

	refused(pdom_alloc(s, NULL, NULL, 0), EINVAL, "no PD");
	refused(pdom_alloc(s, s->d.pd, NULL, 1u << 7), EOPNOTSUPP,
		"comp_mask bit 7");
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
	pa.alloc = t_alloc;
	refused(ibv_alloc_parent_domain(s->d.ctx, &pa), EINVAL,
		"alloc without free");
	p = pdom_alloc(s, s->d.pd, NULL, both);
	if (p) {
		refused(pdom_alloc(s, p, NULL, 0), EINVAL,
			"a parent domain as the PD");
		if (ibv_dealloc_pd(p))
			failf("freeing an unused parent domain failed");
	} else {
		failf("a plain parent domain: errno %d", errno);
	}
	case_result(!why[0], "ibv_alloc_parent_domain refuses no PD, a parent domain as PD, an unknown comp_mask bit, allocators without free");
}

static bool make_objects(struct state *s)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
	};
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16,
						  .max_sge = 1 } };
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_send_sge = 1,
			 .max_recv_wr = 0, .max_recv_sge = 1 },
	};
	struct ibv_qp_init_attr_ex qx = { .qp_type = IBV_QPT_RC };

	ca.parent_domain = s->d.pd;
	case_result(refused(ibv_create_cq_ex(s->d.ctx, &ca), EINVAL,
			    "CQ naming a PD"),
		    "an extended CQ naming a PD that is not a parent domain is refused (EINVAL)");

	ca.parent_domain = s->pdom;
	s->cqx = ibv_create_cq_ex(s->d.ctx, &ca);
	if (!s->cqx) {
		failf("ibv_create_cq_ex on the parent domain: errno %d", errno);
		return false;
	}
	s->cq = ibv_cq_ex_to_cq(s->cqx);
	s->srq = ibv_create_srq(s->pdom, &sa);
	if (!s->srq) {
		failf("ibv_create_srq on the parent domain: errno %d", errno);
		return false;
	}
	qa.send_cq = qa.recv_cq = s->cq;
	qa.srq = s->srq;
	s->qp[0] = ibv_create_qp(s->pdom, &qa);
	memcpy(&qx, &qa, sizeof(qa));
	qx.comp_mask = IBV_QP_INIT_ATTR_PD;
	qx.pd = s->pdom;
	s->qp[1] = ibv_create_qp_ex(s->d.ctx, &qx);
	if (!s->qp[0] || !s->qp[1]) {
		failf("RC QPs on the parent domain: errno %d", errno);
		return false;
	}
	s->buf = zalloc(BUF_SIZE);
	if (!s->buf)
		return false;
	s->mr = ibv_reg_mr(s->pdom, s->buf, BUF_SIZE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!s->mr) {
		failf("ibv_reg_mr on the parent domain: errno %d", errno);
		return false;
	}
	return true;
}

static void case_allocs(struct state *s)
{
	bool aligned = true;
	int cq = n_of_type(&s->a, SHCADV_RES_TYPE_CQ, &aligned);
	int srq = n_of_type(&s->a, SHCADV_RES_TYPE_SRQ, &aligned);
	int qp = n_of_type(&s->a, SHCADV_RES_TYPE_QP, &aligned);

	if (cq != 1 || srq != 1 || qp != 2 || s->a.n != 4)
		failf("allocations: CQ %d, SRQ %d, QP %d, all %d (expected 1, 1, 2, 4)",
		      cq, srq, qp, s->a.n);
	if (!aligned)
		failf("an allocation asked for less than 64-byte alignment or got a misaligned block");
	case_result(!why[0], "the CQ, SRQ and QPs' memory came from the parent domain's allocator, one call each with its type, 64-byte aligned");
}

/* WRITE 0->1 then SEND 1->0 and 0->1 into the SRQ; every byte checked */
static bool traffic(struct state *s)
{
	struct ibv_sge sg = { .addr = (uintptr_t)s->buf, .length = MSG_LEN,
			      .lkey = s->mr->lkey };
	struct ibv_sge rs = sg;
	struct send_args w = { .wr_id = 1, .op = IBV_WR_RDMA_WRITE,
			       .sg = &sg, .nsge = 1,
			       .flags = IBV_SEND_SIGNALED,
			       .rkey = s->mr->rkey };
	struct ibv_wc wc[4];
	int i, n;

	pattern(s->buf, MSG_LEN, 7);
	memset(s->buf + MSG_LEN, 0, BUF_SIZE - MSG_LEN);
	w.raddr = (uintptr_t)s->buf + 2 * MSG_LEN;
	if (post_send1(s->qp[0], &w))
		failf("posting the WRITE failed");
	for (i = 0; i < 2; i++) {
		rs.addr = (uintptr_t)s->buf + (4 + i) * MSG_LEN;
		if (post_recv1(NULL, s->srq, 10 + i, &rs, 1))
			failf("posting an SRQ receive failed");
	}
	w.op = IBV_WR_SEND;
	w.wr_id = 2;
	if (post_send1(s->qp[1], &w) || post_send1(s->qp[0], &w))
		failf("posting the SENDs failed");
	n = poll_wait(s->cq, wc, 5, SCALED_MS(5000));
	if (n != 5)
		failf("%d completions of 5", n);
	for (i = 0; i < n && i < 5; i++)
		if (wc[i].status != IBV_WC_SUCCESS)
			failf("completion %d: %s", i, st_str(wc[i].status));
	for (i = 2; i < 6; i++)
		if (i != 3 && memcmp(s->buf, s->buf + i * MSG_LEN, MSG_LEN))
			failf("the data at %d KiB differ", i * MSG_LEN / 1024);
	return !why[0];
}

static void case_busy(struct state *s)
{
	int r;

	r = ibv_dealloc_td(s->td);
	if (r != EBUSY)
		failf("dealloc of the parent domain's TD: %d, expected EBUSY", r);
	r = ibv_dealloc_pd(s->d.pd);
	if (r != EBUSY)
		failf("dealloc of the parent domain's PD: %d, expected EBUSY", r);
	r = ibv_dealloc_pd(s->pdom);
	if (r != EBUSY)
		failf("dealloc of the parent domain with QPs: %d, expected EBUSY",
		      r);
	case_result(!why[0], "in use: the TD, the PD and the parent domain cannot be freed (EBUSY)");
}

static void destroy_objects(struct state *s)
{
	mr_dereg(s->mr);
	qps_destroy(s->qp, 2);
	if (s->srq && ibv_destroy_srq(s->srq))
		failf("destroying the SRQ failed");
	if (s->cq && ibv_destroy_cq(s->cq))
		failf("destroying the CQ failed");
	free(s->buf);
}

/* One QP on the parent domain with the allocator in @mode */
static void case_mode(struct state *s, enum mode mode)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC, .send_cq = s->cq, .recv_cq = s->cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int n0 = s->a.n, f0 = s->a.n_free;
	struct ibv_qp *qp;

	s->a.mode = mode;
	qp = ibv_create_qp(s->pdom, &qa);
	if (mode == ALLOC_FAIL) {
		refused(qp, ENOMEM, "QP with a failing allocator");
		s->a.mode = ALLOC_OWN;
		qp = ibv_create_qp(s->pdom, &qa);
	}
	if (!qp)
		failf("a QP after the allocator mode %d: errno %d", mode, errno);
	else if (ibv_destroy_qp(qp))
		failf("destroying it failed");
	if (mode == ALLOC_DEFAULT && (s->a.n != n0 || s->a.n_free != f0))
		failf("the allocator kept %d blocks, free was called %d times",
		      s->a.n - n0, s->a.n_free - f0);
	s->a.mode = ALLOC_OWN;
}

int main(int argc, char **argv)
{
	struct ibv_td_init_attr ta = {};
	struct state s = {};
	bool ok;
	int rc;

	rc = tdev_main_open(&s.d, argc, argv, N_CASES);
	if (rc)
		return rc;

	case_bad_attrs(&s);

	s.td = ibv_alloc_td(s.d.ctx, &ta);
	if (s.td)
		s.pdom = pdom_alloc(&s, s.d.pd, s.td,
				    IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
				    IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT);
	if (!s.pdom)
		failf("TD and parent domain with allocators: errno %d", errno);
	case_result(s.pdom != NULL, "a thread domain and a parent domain with it and allocators");
	if (!s.pdom)
		goto out;

	ok = make_objects(&s);
	case_result(ok, "an extended CQ, an SRQ, an MR and two RC QPs (ibv_create_qp, ibv_create_qp_ex) on the parent domain");
	case_allocs(&s);
	if (ok) {
		struct test_dev pair[2] = { s.d, s.d };

		ok = !rc_pair_connect(pair, s.qp, 100, IBV_MTU_1024);
	}
	case_result(ok && traffic(&s), "an RDMA WRITE and SENDs into the SRQ between the two QPs, without locks, every byte right");
	case_busy(&s);

	case_mode(&s, ALLOC_DEFAULT);
	case_result(!why[0], "an allocator answering IBV_ALLOCATOR_USE_DEFAULT: the QP works, nothing goes through free");
	case_mode(&s, ALLOC_FAIL);
	case_result(!why[0], "a failing allocator: ibv_create_qp fails with ENOMEM, the next one works");

	destroy_objects(&s);
	if (s.a.n_free != s.a.n || s.a.n_bad_free)
		failf("%d blocks allocated, %d given back, %d unknown frees",
		      s.a.n, s.a.n_free, s.a.n_bad_free);
	case_result(!why[0], "destroyed: every block went back through free with its pointer and type");

	if (ibv_dealloc_pd(s.pdom) || ibv_dealloc_td(s.td))
		failf("freeing the parent domain, then the TD failed");
	s.td = NULL;
	case_result(!why[0], "the parent domain, then its TD, freed once unused");
out:
	if (s.td)
		ibv_dealloc_td(s.td);
	while (n_cases < N_CASES)
		case_result(0, "not run");
	tdev_close(&s.d);
	return n_failed ? KSFT_FAIL : KSFT_PASS;
}
