// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_abifuzz_test: raw uverbs commands written straight to the command
 * fd (the legacy write() interface libshca uses for its doorbells), and
 * the rings as this process maps them.
 *
 * The raw commands never touch an object libibverbs holds in a way that
 * would free it: a destroy names a handle nothing was given (or, when
 * the caller holds every handle of the context, one it does not hold);
 * a live handle goes only into commands that do not destroy (a query,
 * a doorbell, a modify with an object of another type).  Creates are made
 * with a response buffer the kernel cannot write completely; whatever one
 * created all the same is destroyed again with the handle it returned.
 */

#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/shca-abi.h>

#include "shca_abifuzz.h"

/* a command: header then body, as write() takes it */
struct raw_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	uint8_t body[1024];
};

static int raw_write(struct ibv_context *ctx, uint32_t command,
		     const void *body, size_t len, size_t out_len)
{
	struct raw_cmd c;
	ssize_t n;

	memset(&c, 0, sizeof(c));
	c.hdr.command = command;
	c.hdr.in_words = (uint16_t)((sizeof(c.hdr) + len) / 4);
	c.hdr.out_words = (uint16_t)(out_len / 4);
	memcpy(c.body, body, len);
	n = write(ctx->cmd_fd, &c, sizeof(c.hdr) + len);
	if (n < 0)
		return -errno;
	return n == (ssize_t)(sizeof(c.hdr) + len) ? 0 : -EIO;
}

int raw_db_send(struct ibv_context *ctx, uint32_t qp_handle)
{
	struct ib_uverbs_post_send_resp resp;
	struct ib_uverbs_post_send cmd = {
		.response = (uintptr_t)&resp,
		.qp_handle = qp_handle,
		.wqe_size = sizeof(struct ib_uverbs_send_wr),
	};

	return raw_write(ctx, IB_USER_VERBS_CMD_POST_SEND, &cmd, sizeof(cmd),
			 sizeof(resp));
}

int raw_db_recv(struct ibv_context *ctx, uint32_t qp_handle)
{
	struct ib_uverbs_post_recv_resp resp;
	struct ib_uverbs_post_recv cmd = {
		.response = (uintptr_t)&resp,
		.qp_handle = qp_handle,
		.wqe_size = sizeof(struct ib_uverbs_recv_wr),
	};

	return raw_write(ctx, IB_USER_VERBS_CMD_POST_RECV, &cmd, sizeof(cmd),
			 sizeof(resp));
}

int raw_db_srq(struct ibv_context *ctx, uint32_t srq_handle)
{
	struct ib_uverbs_post_srq_recv_resp resp;
	struct ib_uverbs_post_srq_recv cmd = {
		.response = (uintptr_t)&resp,
		.srq_handle = srq_handle,
		.wqe_size = sizeof(struct ib_uverbs_recv_wr),
	};

	return raw_write(ctx, IB_USER_VERBS_CMD_POST_SRQ_RECV, &cmd,
			 sizeof(cmd), sizeof(resp));
}

int raw_req_notify(struct ibv_context *ctx, uint32_t cq_handle, int solicited)
{
	struct ib_uverbs_req_notify_cq cmd = {
		.cq_handle = cq_handle,
		.solicited_only = (uint32_t)solicited,
	};

	return raw_write(ctx, IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, &cmd,
			 sizeof(cmd), 0);
}

/* A handle no object of @ctx has (see raw_fuzz()) */
static uint32_t dead_handle(struct fz_rng *r, const uint32_t *live, int nlive,
			    bool alone)
{
	uint32_t h;
	int i;

	if (alone && chance(r, 60)) {
		for (;;) {
			h = rnd(r, 64);
			for (i = 0; i < nlive && live[i] != h; i++)
				;
			if (i == nlive)
				return h;
		}
	}
	switch (rnd(r, 3)) {
	case 0: return 0xffffffffU;
	case 1: return 0x7fffffffU;
	default: return 0x10000000U + rnd(r, 0x10000000U);
	}
}

/* Any handle: one that names nothing, or a live one of some type */
static uint32_t any_handle(struct fz_rng *r, const uint32_t *live, int nlive,
			   bool alone)
{
	if (nlive && chance(r, 60))
		return live[rnd(r, (uint32_t)nlive)];
	return dead_handle(r, live, nlive, alone);
}

/*
 * A response address: a good buffer, NULL, a read-only page, or one whose
 * first @fits bytes are writable and the rest falls on a PROT_NONE page.
 */
static uint64_t bad_resp(struct fz_rng *r, void *good, size_t fits)
{
	switch (rnd(r, 4)) {
	case 0: return (uintptr_t)good;
	case 1: return chance(r, 50) ? 0 : 0xffff888000001000ULL;
	case 2: return (uintptr_t)G.ro_page;
	default: return (uintptr_t)G.none_page - fits;
	}
}

/* Destroy a CQ or PD a raw create made, by its handle */
static void raw_destroy(struct ibv_context *ctx, uint32_t command,
			uint32_t handle)
{
	struct ib_uverbs_destroy_cq_resp resp;
	struct ib_uverbs_destroy_cq cq = {
		.response = (uintptr_t)&resp, .cq_handle = handle,
	};
	struct ib_uverbs_dealloc_pd pd = { .pd_handle = handle };
	int ret;

	if (command == IB_USER_VERBS_CMD_DESTROY_CQ)
		ret = raw_write(ctx, command, &cq, sizeof(cq), sizeof(resp));
	else
		ret = raw_write(ctx, command, &pd, sizeof(pd), 0);
	if (ret)
		fz_bad("raw destroy (command %u) of handle %u the kernel gave: %s",
		       command, handle, strerror(-ret));
}

int raw_fuzz(struct fz_rng *r, struct ibv_context *ctx,
	     const uint32_t *live, int nlive, bool alone)
{
	uint8_t body[512], resp[512];
	/* where the last bytes of a response buffer end: the PROT_NONE page */
	uint8_t *edge;
	uint64_t where;
	int ret = 0, c = (int)rnd(r, 10);

	memset(body, 0, sizeof(body));
	memset(resp, 0, sizeof(resp));
	switch (c) {
	case 0: {			/* query a QP by any handle */
		struct ib_uverbs_query_qp *q = (void *)body;

		q->response = bad_resp(r, resp, 16);
		q->qp_handle = any_handle(r, live, nlive, alone);
		q->attr_mask = (uint32_t)rnd64(r);
		ret = raw_write(ctx, IB_USER_VERBS_CMD_QUERY_QP, q, sizeof(*q),
				sizeof(struct ib_uverbs_query_qp_resp));
		break;
	}
	case 1: {			/* modify: a dead handle, random values */
		struct ib_uverbs_modify_qp *m = (void *)body;
		size_t k;

		for (k = 0; k < sizeof(*m); k++)
			body[k] = (uint8_t)rnd(r, 256);
		m->qp_handle = dead_handle(r, live, nlive, alone);
		ret = raw_write(ctx, IB_USER_VERBS_CMD_MODIFY_QP, m,
				sizeof(*m), 0);
		break;
	}
	case 2: {			/* doorbells with random WRs */
		struct ib_uverbs_post_send *ps = (void *)body;
		size_t k, len = sizeof(*ps) + 8 * rnd(r, 32);

		for (k = sizeof(*ps); k < len; k++)
			body[k] = (uint8_t)rnd(r, 256);
		ps->response = bad_resp(r, resp, 4);
		ps->qp_handle = any_handle(r, live, nlive, alone);
		ps->wr_count = rnd(r, 4);
		ps->sge_count = rnd(r, 4);
		ps->wqe_size = chance(r, 70) ? sizeof(struct ib_uverbs_send_wr) :
			       rnd(r, 256);
		ret = raw_write(ctx, IB_USER_VERBS_CMD_POST_SEND, ps, len,
				sizeof(struct ib_uverbs_post_send_resp));
		break;
	}
	case 3: {
		struct ib_uverbs_post_recv *pr = (void *)body;
		size_t k, len = sizeof(*pr) + 8 * rnd(r, 16);
		bool srq = chance(r, 40);

		for (k = sizeof(*pr); k < len; k++)
			body[k] = (uint8_t)rnd(r, 256);
		pr->response = bad_resp(r, resp, 4);
		pr->qp_handle = any_handle(r, live, nlive, alone);
		pr->wr_count = rnd(r, 3);
		pr->sge_count = rnd(r, 3);
		pr->wqe_size = chance(r, 70) ? sizeof(struct ib_uverbs_recv_wr) :
			       rnd(r, 128);
		ret = raw_write(ctx, srq ? IB_USER_VERBS_CMD_POST_SRQ_RECV :
				IB_USER_VERBS_CMD_POST_RECV, pr, len,
				sizeof(struct ib_uverbs_post_recv_resp));
		break;
	}
	case 4:
		ret = raw_req_notify(ctx, any_handle(r, live, nlive, alone),
				     (int)rnd(r, 3));
		break;
	case 5: {			/* destroy what was never given out */
		static const uint32_t cmds[] = {
			IB_USER_VERBS_CMD_DESTROY_QP, IB_USER_VERBS_CMD_DESTROY_CQ,
			IB_USER_VERBS_CMD_DESTROY_SRQ, IB_USER_VERBS_CMD_DESTROY_AH,
			IB_USER_VERBS_CMD_DEALLOC_MW, IB_USER_VERBS_CMD_DEREG_MR,
			IB_USER_VERBS_CMD_DEALLOC_PD,
		};
		uint32_t *w = (void *)body;
		int k;

		/*
		 * QP, CQ and SRQ take the handle after a response address,
		 * the others first: a dead handle in every word
		 */
		for (k = 0; k < 6; k++)
			w[k] = dead_handle(r, live, nlive, alone);
		ret = raw_write(ctx, cmds[rnd(r, ARRAY_SIZE(cmds))], body, 24,
				sizeof(struct ib_uverbs_destroy_qp_resp));
		break;
	}
	case 6: {			/* create a CQ, response unwritable */
		struct ib_uverbs_create_cq *cc = (void *)body;
		size_t full = sizeof(struct ib_uverbs_create_cq_resp) +
			      sizeof(struct shca_create_cq_resp);
		size_t fits = rnd(r, (uint32_t)full);

		edge = G.none_page - fits;
		cc->response = bad_resp(r, resp, fits);
		if (cc->response == (uintptr_t)resp)
			cc->response = (uintptr_t)edge;
		where = cc->response;
		cc->user_handle = rnd64(r);
		cc->cqe = boundary(r, 1 << 22, 64);
		cc->comp_vector = 0;
		cc->comp_channel = -1;
		ret = raw_write(ctx, IB_USER_VERBS_CMD_CREATE_CQ, cc,
				sizeof(*cc), full);
		if (!ret) {
			fz_bad("raw create_cq with a response at %#llx (%zu of %zu bytes writable) succeeded",
			       (unsigned long long)where, fits, full);
			if (where == (uintptr_t)edge && fits >= 4)
				raw_destroy(ctx, IB_USER_VERBS_CMD_DESTROY_CQ,
					    *(uint32_t *)edge);
		}
		break;
	}
	case 7: {			/* allocate a PD, response unwritable */
		struct ib_uverbs_alloc_pd *ap = (void *)body;
		size_t full = sizeof(struct ib_uverbs_alloc_pd_resp) +
			      sizeof(struct shca_alloc_pd_resp);
		size_t fits = rnd(r, (uint32_t)full);

		edge = G.none_page - fits;
		ap->response = bad_resp(r, resp, fits);
		if (ap->response == (uintptr_t)resp)
			ap->response = (uintptr_t)edge;
		where = ap->response;
		ret = raw_write(ctx, IB_USER_VERBS_CMD_ALLOC_PD, ap, sizeof(*ap),
				full);
		if (!ret) {
			fz_bad("raw alloc_pd with a response at %#llx (%zu of %zu bytes writable) succeeded",
			       (unsigned long long)where, fits, full);
			if (where == (uintptr_t)edge && fits >= 4)
				raw_destroy(ctx, IB_USER_VERBS_CMD_DEALLOC_PD,
					    *(uint32_t *)edge);
		}
		break;
	}
	case 8: {			/* queries with odd ports and buffers */
		struct ib_uverbs_query_port *qp = (void *)body;

		qp->response = bad_resp(r, resp, 8);
		qp->port_num = (uint8_t)rnd(r, 4);
		ret = raw_write(ctx, IB_USER_VERBS_CMD_QUERY_PORT, qp,
				sizeof(*qp),
				sizeof(struct ib_uverbs_query_port_resp));
		break;
	}
	default: {			/* a random command too short to name a handle */
		static const uint32_t cmds[] = {
			IB_USER_VERBS_CMD_QUERY_DEVICE, IB_USER_VERBS_CMD_QUERY_PORT,
			IB_USER_VERBS_CMD_POLL_CQ, IB_USER_VERBS_CMD_PEEK_CQ,
			IB_USER_VERBS_CMD_QUERY_SRQ, IB_USER_VERBS_CMD_QUERY_AH,
			IB_USER_VERBS_CMD_REG_SMR, 60, 0x7f, 0xff,
		};
		uint64_t resp_at = bad_resp(r, resp, 0);

		ret = raw_write(ctx, cmds[rnd(r, ARRAY_SIZE(cmds))], &resp_at,
				rnd(r, 2) * 8, rnd(r, 64) * 4);
		break;
	}
	}
	return ret;
}

/* ---- the rings as mapped ------------------------------------------------ */

int maps_new(const struct uverbs_maps *before,
	     const struct uverbs_maps *after,
	     struct fz_ring *out, int max)
{
	int i, j, n = 0;

	for (i = 0; i < after->n && n < max; i++) {
		for (j = 0; j < before->n; j++)
			if (before->lo[j] == after->lo[i])
				break;
		if (j < before->n)
			continue;
		out[n].base = (uint8_t *)after->lo[i];
		out[n].len = after->hi[i] - after->lo[i];
		out[n].off = after->off[i];
		n++;
	}
	/* largest first */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && out[j].len > out[j - 1].len; j--) {
			struct fz_ring t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

bool ring_alias(struct ibv_context *ctx, const struct fz_ring *r,
		struct fz_ring *alias)
{
	void *p = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ctx->cmd_fd, (off_t)r->off);

	if (p == MAP_FAILED)
		return false;
	*alias = *r;
	alias->base = p;
	return true;
}
