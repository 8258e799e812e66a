// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_import_test: importing a context, a PD and an MR.
 *
 *   shca_import_test DEVICE
 *
 * A second context is imported from a duplicate of the first one's
 * command file (ibv_import_device), the first context's PD and MR by
 * handle (ibv_import_pd, ibv_import_mr): the imported MR has the keys and
 * length of the original, and an RC pair on the imported
 * context and PD moves an inline SEND (which needs the context's driver
 * data: its inline limit) and an RDMA WRITE through the imported MR.
 * Handles that name nothing are refused; a parent domain made on an
 * imported PD outlives the PD's unimport; after the imports are dropped
 * the originals still work and are freed.  Prints TAP; exits 0, 1 or 4
 * (no such device).
 */

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "shca_test.h"

#define N_CASES		6
#define BUF_SIZE	8192
#define INLINE_LEN	64
#define PROBES		16	/* blocks of 16, 32, ..., 256 bytes */
#define PER_SIZE	16
#define PROBE_BYTE	0x5a

struct state {
	struct test_dev d;		/* the exporter's context, PD */
	struct ibv_mr *mr;		/* the exporter's MR */
	uint8_t *buf;
	struct ibv_context *ictx;	/* imported */
	struct ibv_pd *ipd;
	struct ibv_mr *imr;
	struct ibv_cq *cq;
	struct ibv_qp *qp[2];
};

static void case_import(struct state *s)
{
	int fd = dup(s->d.ctx->cmd_fd);

	s->ictx = fd < 0 ? NULL : ibv_import_device(fd);
	if (!s->ictx) {
		failf("ibv_import_device: errno %d", errno);
		if (fd >= 0)
			close(fd);
		goto out;
	}
	s->ipd = ibv_import_pd(s->ictx, s->d.pd->handle);
	if (!s->ipd) {
		failf("ibv_import_pd: errno %d", errno);
		goto out;
	}
	s->imr = ibv_import_mr(s->ipd, s->mr->handle);
	if (!s->imr) {
		failf("ibv_import_mr: errno %d", errno);
		goto out;
	}
	/* the address is the exporter's: libibverbs leaves it NULL */
	if (s->imr->lkey != s->mr->lkey || s->imr->rkey != s->mr->rkey ||
	    s->imr->length != s->mr->length)
		failf("imported MR: lkey %#x rkey %#x length %zu; original %#x %#x %zu",
		      s->imr->lkey, s->imr->rkey, s->imr->length,
		      s->mr->lkey, s->mr->rkey, s->mr->length);
out:
	case_result(!why[0], "a context imported from a duplicate command file, the PD and MR by handle: the MR's keys and length are the original's");
}

static void case_bad_handles(struct state *s)
{
	struct ibv_pd *pd;
	struct ibv_mr *mr;

	pd = ibv_import_pd(s->ictx, s->d.pd->handle + 1000);
	if (pd) {
		failf("a PD handle that names nothing was imported");
		ibv_unimport_pd(pd);
	}
	/* a PD's handle is no MR's */
	mr = ibv_import_mr(s->ipd, s->mr->handle + 1000);
	if (mr) {
		failf("an MR handle that names nothing was imported");
		ibv_unimport_mr(mr);
	}
	case_result(!why[0], "handles that name no PD or MR are refused");
}

static bool make_pair(struct state *s)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = INLINE_LEN },
	};
	struct test_dev pair[2] = { s->d, s->d };
	int i;

	s->cq = ibv_create_cq(s->ictx, 16, NULL, NULL, 0);
	if (!s->cq) {
		failf("ibv_create_cq on the imported context: errno %d", errno);
		return false;
	}
	qa.send_cq = qa.recv_cq = s->cq;
	for (i = 0; i < 2; i++) {
		s->qp[i] = ibv_create_qp(s->ipd, &qa);
		if (!s->qp[i]) {
			failf("ibv_create_qp on the imported PD: errno %d",
			      errno);
			return false;
		}
	}
	return !rc_pair_connect(pair, s->qp, 300, IBV_MTU_1024);
}

/* an inline SEND 0->1 into [4096, +64), a WRITE 1->0 of [0, 1024) to 2048 */
static void case_traffic(struct state *s)
{
	struct ibv_sge sg = { .addr = (uintptr_t)s->buf, .lkey = s->imr->lkey };
	struct ibv_sge rs = { .addr = (uintptr_t)s->buf + 4096,
			      .length = INLINE_LEN, .lkey = s->imr->lkey };
	struct send_args a = { .wr_id = 1, .op = IBV_WR_SEND, .sg = &sg,
			       .nsge = 1,
			       .flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE };
	struct ibv_wc wc[3];
	int i, n;

	pattern(s->buf, 1024, 11);
	sg.length = INLINE_LEN;
	if (post_recv1(s->qp[1], NULL, 9, &rs, 1) || post_send1(s->qp[0], &a))
		failf("posting the inline SEND failed: errno %d", errno);
	a = (struct send_args){ .wr_id = 2, .op = IBV_WR_RDMA_WRITE,
				.sg = &sg, .nsge = 1,
				.flags = IBV_SEND_SIGNALED,
				.raddr = (uintptr_t)s->buf + 2048,
				.rkey = s->imr->rkey };
	sg.length = 1024;
	if (post_send1(s->qp[1], &a))
		failf("posting the WRITE failed");
	n = poll_wait(s->cq, wc, 3, SCALED_MS(5000));
	if (n != 3)
		failf("%d completions of 3", n);
	for (i = 0; i < n && i < 3; i++)
		if (wc[i].status != IBV_WC_SUCCESS)
			failf("completion %d: %s", i, st_str(wc[i].status));
	if (memcmp(s->buf, s->buf + 4096, INLINE_LEN) ||
	    memcmp(s->buf, s->buf + 2048, 1024))
		failf("the data differ");
	case_result(!why[0], "an RC pair on the imported context and PD: a 64-byte inline SEND and a WRITE through the imported MR, every byte right");
}

/*
 * Blocks of each small size, filled to their ends (malloc_usable_size():
 * a freed object's fields may lie past the size asked for).  malloc hands
 * out what was freed last first, but a block freed while its size's
 * cache was full waits behind that cache: PER_SIZE blocks of each size
 * drain it.
 */
static void probes_alloc(unsigned char **probe)
{
	int i;

	for (i = 0; i < PROBES * PER_SIZE; i++) {
		probe[i] = malloc((i / PER_SIZE + 1) * 16);
		if (probe[i])
			memset(probe[i], PROBE_BYTE,
			       malloc_usable_size(probe[i]));
	}
}

/* false when a byte of a probe changed; frees them */
static bool probes_intact(unsigned char **probe)
{
	bool intact = true;
	size_t j;
	int i;

	for (i = 0; i < PROBES * PER_SIZE; i++) {
		for (j = 0; probe[i] && j < malloc_usable_size(probe[i]); j++)
			intact &= probe[i][j] == PROBE_BYTE;
		free(probe[i]);
	}
	return intact;
}

/*
 * A parent domain made on an imported PD, the PD unimported under it: the
 * parent domain still works and deallocates.  libshca must keep the PD's
 * memory until then; had it freed it at the unimport, one of the blocks
 * malloc gives out right after (probes_alloc()) would change when the
 * parent domain's dealloc drops its count in the PD.
 */
static void case_pdom_unimport(struct state *s)
{
	struct ibv_parent_domain_init_attr pa = {};
	unsigned char *probe[PROBES * PER_SIZE];
	struct ibv_pd *ipd, *pdom;
	struct ibv_mr *mr;

	ipd = ibv_import_pd(s->ictx, s->d.pd->handle);
	if (!ipd) {
		failf("ibv_import_pd: errno %d", errno);
		goto out;
	}
	pa.pd = ipd;
	pdom = ibv_alloc_parent_domain(s->ictx, &pa);
	if (!pdom) {
		failf("ibv_alloc_parent_domain on the imported PD: errno %d",
		      errno);
		ibv_unimport_pd(ipd);
		goto out;
	}
	ibv_unimport_pd(ipd);
	probes_alloc(probe);
	mr = ibv_reg_mr(pdom, s->buf + 4096, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		failf("ibv_reg_mr on the parent domain after the unimport: errno %d",
		      errno);
	else if (ibv_dereg_mr(mr))
		failf("ibv_dereg_mr failed");
	if (ibv_dealloc_pd(pdom))
		failf("the parent domain's dealloc failed: errno %d", errno);
	if (!probes_intact(probe))
		failf("memory malloc gave out after the unimport changed at the parent domain's dealloc: the PD was freed under it");
out:
	case_result(!why[0], "a parent domain on an imported PD outlives the PD's unimport: an MR on it, then its dealloc, and the PD's memory freed only then");
}

static void case_unimport(struct state *s)
{
	qps_destroy(s->qp, 2);
	if (s->cq && ibv_destroy_cq(s->cq))
		failf("destroying the imported context's CQ failed");
	ibv_unimport_mr(s->imr);
	ibv_unimport_pd(s->ipd);
	if (ibv_close_device(s->ictx))
		failf("closing the imported context failed");
	if (ibv_dereg_mr(s->mr))
		failf("the original MR could not be deregistered");
	s->mr = NULL;
	case_result(!why[0], "imports dropped, the imported context closed: the original MR is deregistered");
}

int main(int argc, char **argv)
{
	int rc;
	struct state s = {};

	rc = tdev_main_open(&s.d, argc, argv, N_CASES);
	if (rc)
		return rc;

	s.buf = zalloc(BUF_SIZE);
	s.mr = s.buf ? ibv_reg_mr(s.d.pd, s.buf, BUF_SIZE,
				  IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_WRITE) : NULL;
	case_result(s.mr != NULL, "the exporter's MR");
	if (s.mr)
		case_import(&s);
	else
		case_result(0, "import: not run");
	if (!s.imr) {
		while (n_cases < N_CASES)
			case_result(0, "not run");
		return KSFT_FAIL;
	}
	case_bad_handles(&s);
	if (make_pair(&s))
		case_traffic(&s);
	else
		case_result(0, "traffic on the imported context: not run");
	case_pdom_unimport(&s);
	case_unimport(&s);
	tdev_close(&s.d);
	free(s.buf);
	return n_failed ? KSFT_FAIL : KSFT_PASS;
}
