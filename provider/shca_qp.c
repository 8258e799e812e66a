// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: rdma-core provider for the shca software RDMA HCA.
 *
 * Queue pairs.  The send and receive queues are rings the kernel maps into
 * the process: posting writes entries into them and, when the engine asks
 * for it (or cannot poll), makes one post_send/post_recv system call with
 * no work requests as the doorbell.
 */

#include <config.h>

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shca.h"
#include "shca_abi.h"
#include "shcadv.h"

enum {
	SHCA_QP_COMP_MASK = IBV_QP_INIT_ATTR_PD |
			    IBV_QP_INIT_ATTR_CREATE_FLAGS |
			    IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
};

static bool shca_qp_type_ok(enum ibv_qp_type type)
{
	return type == IBV_QPT_RC || type == IBV_QPT_UC || type == IBV_QPT_UD;
}

static int shca_wq_init(struct shca_wq *wq, struct ibv_pd *ibpd)
{
	return shca_lock_init(&wq->lock, shca_pd_single_thread(ibpd));
}

/* The provider's state of a QP created on @ibpd (a PD or parent domain) */
static struct shca_qp *shca_qp_alloc(struct ibv_pd *ibpd)
{
	struct shca_objmem mem;
	struct shca_qp *qp;

	qp = shca_obj_alloc(ibpd, sizeof(*qp), SHCADV_RES_TYPE_QP, &mem);
	if (qp)
		qp->mem = mem;
	return qp;
}

static void shca_qp_free(struct shca_qp *qp)
{
	shca_obj_free(qp, &qp->mem, SHCADV_RES_TYPE_QP);
}

/*
 * Map the rings of a QP the kernel just created and derive what its send
 * queue accepts from the granted capabilities and the slot sizes.
 */
static int shca_qp_init(struct shca_qp *qp, struct ibv_context *ibctx,
			const struct ibv_qp_init_attr_ex *attr,
			const struct shca_create_qp_resp *resp)
{
	struct shca_context *ctx = to_shca_ctx(ibctx);
	uint32_t room;
	int ret;

	ret = shca_ring_map(ibctx, &qp->sq.ring, &resp->sq,
			    sizeof(struct shca_sqe), true);
	if (ret)
		return ret;
	if (!attr->srq && resp->rq.entries) {
		ret = shca_ring_map(ibctx, &qp->rq.ring, &resp->rq,
				    sizeof(struct shca_rqe), true);
		if (ret)
			goto err_sq;
		qp->rq.max_sge = min_t(uint32_t, attr->cap.max_recv_sge,
				       shca_slot_max_sge(qp->rq.ring.stride,
							 sizeof(struct shca_rqe)));
	}

	room = qp->sq.ring.stride - sizeof(struct shca_sqe);
	qp->sq.max_sge = min_t(uint32_t, attr->cap.max_send_sge,
			       shca_slot_max_sge(qp->sq.ring.stride,
						 sizeof(struct shca_sqe)));
	/* the granted cap: the kernel enforces the QP's own limit */
	qp->sq.max_inline = min_t(uint32_t, ctx->max_inline, room);
	qp->sq.max_inline = min_t(uint32_t, qp->sq.max_inline,
				  attr->cap.max_inline_data);
	qp->qpn = resp->qpn;
	qp->lim.qp_type = attr->qp_type;
	qp->lim.max_sge = qp->sq.max_sge;
	qp->lim.max_inline = qp->sq.max_inline;
	qp->lim.sig_all = attr->sq_sig_all;

	ret = shca_wq_init(&qp->sq, qp->vqp.qp.pd);
	if (ret)
		goto err_rq;
	ret = shca_wq_init(&qp->rq, qp->vqp.qp.pd);
	if (ret)
		goto err_sq_lock;
	return 0;

err_sq_lock:
	shca_lock_destroy(&qp->sq.lock);
err_rq:
	shca_ring_unmap(&qp->rq.ring);
err_sq:
	shca_ring_unmap(&qp->sq.ring);
	return ret;
}

struct ibv_qp *shca_create_qp(struct ibv_pd *ibpd,
			      struct ibv_qp_init_attr *attr)
{
	struct ushca_create_qp_resp resp = {};
	struct ibv_qp_init_attr_ex attr_ex = {};
	struct ibv_create_qp cmd = {};
	struct shca_qp *qp;
	int ret;

	if (!shca_qp_type_ok(attr->qp_type)) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	qp = shca_qp_alloc(ibpd);
	if (!qp)
		return NULL;

	ret = ibv_cmd_create_qp(ibpd, &qp->vqp.qp, attr, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	/* the granted capabilities are in attr->cap now */
	memcpy(&attr_ex, attr, sizeof(*attr));
	ret = shca_qp_init(qp, ibpd->context, &attr_ex, &resp.drv_payload);
	if (ret)
		goto err_destroy;

	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	shca_qp_free(qp);
	errno = ret;
	return NULL;
}

static int shca_qp_ex_check(const struct ibv_qp_init_attr_ex *attr)
{
	if (!shca_qp_type_ok(attr->qp_type))
		return EOPNOTSUPP;
	if (attr->comp_mask & ~SHCA_QP_COMP_MASK)
		return EOPNOTSUPP;
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) ||
	    !attr->create_flags)
		return 0;
	/* a UD QP may leave itself out of its multicast groups' copies */
	if (attr->create_flags & ~IBV_QP_CREATE_BLOCK_SELF_MCAST_LB)
		return EOPNOTSUPP;
	return attr->qp_type == IBV_QPT_UD ? 0 : EINVAL;
}

/*
 * libibverbs releases before rdma-core 45 (Debian 12 ships 44) have no
 * ibv_qp_ex.wr_flush, so their struct verbs_qp keeps comp_mask where this
 * build keeps wr_flush, and their ibv_qp_to_qp_ex() reads it there.  The
 * provider asks the libibverbs that loaded it which one it is, and marks
 * the QP extended where that one looks; only a newer one gets wr_flush.
 */
static_assert(offsetof(struct ibv_qp_ex, wr_flush) + sizeof(void *) ==
	      sizeof(struct ibv_qp_ex), "wr_flush is the last member");

/**
 * shca_have_wr_flush - does the libibverbs in use have ibv_qp_ex.wr_flush?
 *
 * A probe QP is marked extended only where an older libibverbs keeps
 * comp_mask: its ibv_qp_to_qp_ex() finds the mark, a newer one does not.
 *
 * Return: true for rdma-core 45 and later.
 */
bool shca_have_wr_flush(void)
{
	struct verbs_qp probe;
	uint32_t mark = VERBS_QP_EX;

	memset(&probe, 0, sizeof(probe));
	memcpy(&probe.qp_ex.wr_flush, &mark, sizeof(mark));
	return !ibv_qp_to_qp_ex(&probe.qp);
}

static void shca_qp_mark_ex(struct shca_qp *qp, struct shca_context *ctx)
{
	uint8_t *old_mask = (uint8_t *)&qp->vqp.qp_ex.wr_flush;
	uint32_t mask;

	qp->vqp.comp_mask |= VERBS_QP_EX;
	if (ctx->wr_flush_abi)
		return;
	memcpy(&mask, old_mask, sizeof(mask));
	mask |= VERBS_QP_EX;
	memcpy(old_mask, &mask, sizeof(mask));
}

struct ibv_qp *shca_create_qp_ex(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr)
{
	struct ushca_create_qp_ex_resp resp = {};
	struct ibv_create_qp_ex cmd = {};
	struct shca_qp *qp;
	int ret;

	ret = shca_qp_ex_check(attr);
	if (ret) {
		errno = ret;
		return NULL;
	}

	qp = shca_qp_alloc(attr->comp_mask & IBV_QP_INIT_ATTR_PD ?
			   attr->pd : NULL);
	if (!qp)
		return NULL;

	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ret = shca_qp_set_send_ops(qp, attr->qp_type,
					   attr->send_ops_flags,
					   to_shca_ctx(ibctx));
		if (ret)
			goto err_free;
	}

	ret = ibv_cmd_create_qp_ex2(ibctx, &qp->vqp, attr, &cmd, sizeof(cmd),
				    &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	ret = shca_qp_init(qp, ibctx, attr, &resp.drv_payload);
	if (ret)
		goto err_destroy;

	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		shca_qp_mark_ex(qp, to_shca_ctx(ibctx));

	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	shca_qp_free(qp);
	errno = ret;
	return NULL;
}

int shca_destroy_qp(struct ibv_qp *ibqp)
{
	struct shca_qp *qp = to_shca_qp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;

	shca_ring_unmap(&qp->rq.ring);
	shca_ring_unmap(&qp->sq.ring);
	shca_lock_destroy(&qp->rq.lock);
	shca_lock_destroy(&qp->sq.lock);
	shca_qp_free(qp);
	return 0;
}

/*
 * After a reset the kernel has dropped what was posted; it may also have
 * restarted the indices.  Take both from the control block again.
 */
static void shca_wq_resync(struct shca_wq *wq)
{
	struct shca_uring *r = &wq->ring;

	if (!r->map)
		return;
	shca_lock(&wq->lock);
	r->idx = shca_load_acquire(&r->ctrl->prod);
	r->peer = shca_load_acquire(&r->ctrl->cons);
	shca_unlock(&wq->lock);
}

int shca_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask)
{
	struct shca_qp *qp = to_shca_qp(ibqp);
	struct ibv_modify_qp cmd = {};
	int ret;

	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (ret)
		return ret;

	if ((attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		shca_wq_resync(&qp->sq);
		shca_wq_resync(&qp->rq);
		/* as hardware providers do: no completion survives a reset */
		shca_cq_clean(ibqp->send_cq, ibqp->qp_num);
		if (ibqp->recv_cq != ibqp->send_cq)
			shca_cq_clean(ibqp->recv_cq, ibqp->qp_num);
	}
	return 0;
}

int shca_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

/*
 * A send queue accepts work from RTS on (SQD, SQE and ERR included: the
 * engine completes it or flushes it); a receive queue in every state but
 * RESET.
 */
static bool shca_sq_state_ok(const struct ibv_qp *ibqp)
{
	return ibqp->state >= IBV_QPS_RTS && ibqp->state <= IBV_QPS_ERR;
}

static bool shca_rq_state_ok(const struct ibv_qp *ibqp)
{
	return ibqp->state != IBV_QPS_RESET;
}

/**
 * shca_sq_doorbell_needed - after publishing SQ work: must the kernel be
 * woken?  Always when the engine does not poll rings.
 * @qp: QP
 *
 * Return: true when shca_sq_doorbell() must be called.
 */
bool shca_sq_doorbell_needed(struct shca_qp *qp)
{
	struct shca_context *ctx = to_shca_ctx(qp->vqp.qp.context);

	if (!(ctx->caps & SHCA_CAP_DOORBELL_SUPPRESS))
		return true;
	return shca_ring_need_doorbell(&qp->sq.ring);
}

/*
 * A doorbell is a post command with no work requests.  It goes straight
 * to write(2) on the command fd: ibv_cmd_post_send() and friends send
 * the same command through the ioctl dispatch (UVERBS_METHOD_INVOKE_WRITE),
 * which costs a few microseconds more per call, and a ping-pong makes one
 * call per message.  @cmd is the whole command, starting with its header;
 * the kernel writes @resp_len bytes (bad_wr, always 0 here) to the
 * response address the command carries.
 */
static int shca_db_write(struct ibv_context *ctx, void *cmd, size_t len,
			 uint32_t command, size_t resp_len)
{
	struct ib_uverbs_cmd_hdr *hdr = cmd;

	hdr->command = command;
	hdr->in_words = len / 4;
	hdr->out_words = resp_len / 4;
	if (write(ctx->cmd_fd, cmd, len) != (ssize_t)len)
		return errno;
	return 0;
}

/**
 * shca_sq_doorbell - wake the engine for a QP's send queue: a post_send
 * command with no work requests
 * @qp: QP
 *
 * Return: 0 or an errno.
 */
int shca_sq_doorbell(struct shca_qp *qp)
{
	struct ib_uverbs_post_send_resp resp;
	struct ibv_post_send cmd = {
		.response = (uintptr_t)&resp,
		.qp_handle = qp->vqp.qp.handle,
		.wqe_size = sizeof(struct ib_uverbs_send_wr),
	};

	return shca_db_write(qp->vqp.qp.context, &cmd, sizeof(cmd),
			     IB_USER_VERBS_CMD_POST_SEND, sizeof(resp));
}

/* The receive doorbell of a QP's own receive queue */
static int shca_rq_doorbell(struct ibv_qp *qp)
{
	struct ib_uverbs_post_recv_resp resp;
	struct ibv_post_recv cmd = {
		.response = (uintptr_t)&resp,
		.qp_handle = qp->handle,
		.wqe_size = sizeof(struct ib_uverbs_recv_wr),
	};

	return shca_db_write(qp->context, &cmd, sizeof(cmd),
			     IB_USER_VERBS_CMD_POST_RECV, sizeof(resp));
}

/* The receive doorbell of an SRQ */
static int shca_srq_doorbell(struct ibv_srq *srq)
{
	struct ib_uverbs_post_recv_resp resp;
	struct ibv_post_srq_recv cmd = {
		.response = (uintptr_t)&resp,
		.srq_handle = srq->handle,
		.wqe_size = sizeof(struct ib_uverbs_recv_wr),
	};

	return shca_db_write(srq->context, &cmd, sizeof(cmd),
			     IB_USER_VERBS_CMD_POST_SRQ_RECV, sizeof(resp));
}

/* The kernel's handle of a UD WR's address, 0 on other QPs */
static uint32_t shca_wr_ah(const struct shca_qp *qp,
			   const struct ibv_send_wr *wr)
{
	if (qp->lim.qp_type != IBV_QPT_UD)
		return 0;
	return to_shca_ah(wr->wr.ud.ah)->handle;
}

/*
 * Write the WRs of @wr into the SQ ring.  Caller holds qp->sq.lock.
 * Returns 0 or the errno of the first WR not written (*bad_wr).
 */
static int shca_sq_write(struct shca_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr)
{
	struct shca_uring *r = &qp->sq.ring;
	uint32_t inline_len;
	int ret;

	for (; wr; wr = wr->next) {
		ret = shca_send_wr_check(&qp->lim, wr, &inline_len);
		if (!ret && !shca_prod_room(r, r->idx))
			ret = ENOMEM;
		if (ret) {
			*bad_wr = wr;
			return ret;
		}
		shca_sqe_write(shca_ring_slot(r, r->idx), &qp->lim, wr,
			       inline_len, shca_wr_ah(qp, wr));
		r->idx++;
	}
	return 0;
}

/**
 * shca_post_send - post a list of send WRs
 * @ibqp: QP
 * @wr: the list
 * @bad_wr: set to the first WR not posted on failure
 *
 * WRs before *bad_wr are posted even when an error is returned.  If the
 * doorbell fails, the WRs of this call sit in the ring until the next
 * doorbell: the error is returned with *bad_wr at the first of them.
 *
 * Return: 0 or an errno.
 */
int shca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	struct shca_qp *qp = to_shca_qp(ibqp);
	uint32_t start;
	int ret, db;

	if (!shca_sq_state_ok(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}

	shca_lock(&qp->sq.lock);
	start = qp->sq.ring.idx;
	ret = shca_sq_write(qp, wr, bad_wr);
	if (qp->sq.ring.idx == start) {
		shca_unlock(&qp->sq.lock);
		return ret;
	}
	shca_prod_publish(&qp->sq.ring);
	shca_unlock(&qp->sq.lock);

	if (!shca_sq_doorbell_needed(qp))
		return ret;
	db = shca_sq_doorbell(qp);
	if (db && !ret) {
		*bad_wr = wr;
		ret = db;
	}
	return ret;
}

/*
 * Write the WRs of @wr into a receive ring.  Caller holds wq->lock.
 * Returns 0 or the errno of the first WR not written (*bad_wr).
 */
static int shca_rq_write(struct shca_wq *wq, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr)
{
	struct shca_uring *r = &wq->ring;
	int ret;

	for (; wr; wr = wr->next) {
		ret = shca_recv_wr_check(wq->max_sge, wr);
		if (!ret && !shca_prod_room(r, r->idx))
			ret = ENOMEM;
		if (ret) {
			*bad_wr = wr;
			return ret;
		}
		shca_rqe_write(shca_ring_slot(r, r->idx), wr);
		r->idx++;
	}
	return 0;
}

/**
 * shca_wq_post_recv - post receive WRs to a QP's RQ or an SRQ
 * @wq: the receive queue
 * @wr: the list
 * @bad_wr: set to the first WR not posted on failure
 * @posted: set when at least one WR was published
 *
 * No doorbell: the engine reads the ring when a message arrives.
 *
 * Return: 0 or an errno.
 */
static int shca_wq_post_recv(struct shca_wq *wq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr, bool *posted)
{
	uint32_t start;
	int ret;

	shca_lock(&wq->lock);
	start = wq->ring.idx;
	ret = shca_rq_write(wq, wr, bad_wr);
	*posted = wq->ring.idx != start;
	if (*posted)
		shca_prod_publish(&wq->ring);
	shca_unlock(&wq->lock);
	return ret;
}

int shca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct shca_qp *qp = to_shca_qp(ibqp);
	bool posted;
	int ret, db;

	if (!qp->rq.ring.map || !shca_rq_state_ok(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}

	ret = shca_wq_post_recv(&qp->rq, wr, bad_wr, &posted);
	if (!posted || !shca_ring_need_doorbell(&qp->rq.ring))
		return ret;

	db = shca_rq_doorbell(ibqp);
	if (db && !ret) {
		*bad_wr = wr;
		ret = db;
	}
	return ret;
}

int shca_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct shca_srq *srq = to_shca_srq(ibsrq);
	bool posted;
	int ret, db;

	ret = shca_wq_post_recv(&srq->rq, wr, bad_wr, &posted);
	if (!posted || !shca_ring_need_doorbell(&srq->rq.ring))
		return ret;

	db = shca_srq_doorbell(ibsrq);
	if (db && !ret) {
		*bad_wr = wr;
		ret = db;
	}
	return ret;
}

/**
 * shca_bind_mw - bind a type 1 memory window: post a bind WR carrying the
 * window's next rkey
 * @ibqp: QP to post on
 * @ibmw: the window
 * @mw_bind: what to bind
 *
 * ibmw->rkey takes the new value once the WR is posted; if the bind then
 * completes in error the caller must not use it.
 *
 * Return: 0 or an errno.
 */
int shca_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *ibmw,
		 struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {};
	struct ibv_send_wr *bad;
	int ret;

	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = ibmw;
	wr.bind_mw.rkey = ibv_inc_rkey(ibmw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;

	ret = shca_post_send(ibqp, &wr, &bad);
	if (ret)
		return ret;

	ibmw->rkey = wr.bind_mw.rkey;
	return 0;
}
