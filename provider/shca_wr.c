// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: rdma-core provider for the shca software RDMA HCA.
 *
 * The ibv_wr_* send API (struct ibv_qp_ex).  wr_start takes the SQ lock;
 * each opcode call starts a SQE in the next free slot, the setters that
 * follow fill it in place; wr_complete publishes them all at once (or none
 * if any call failed) and drops the lock.
 */

#include <config.h>

#include <errno.h>
#include <string.h>

#include "shca.h"

enum {
	SHCA_UD_SEND_OPS = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM,
	SHCA_UC_SEND_OPS = SHCA_UD_SEND_OPS | IBV_QP_EX_WITH_SEND_WITH_INV |
			   IBV_QP_EX_WITH_RDMA_WRITE |
			   IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			   IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW,
	SHCA_RC_SEND_OPS = SHCA_UC_SEND_OPS | IBV_QP_EX_WITH_RDMA_READ |
			   IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			   IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
			   IBV_QP_EX_WITH_ATOMIC_WRITE,
};

/*
 * Is @opcode valid on @qp through the ibv_wr_* API?  IBA 1.5's FLUSH and
 * ATOMIC WRITE exist only there (struct ibv_send_wr cannot say them).
 */
static bool shca_wr_opcode_ok(struct shca_qp *qp, enum ibv_wr_opcode opcode)
{
	if (opcode == IBV_WR_FLUSH || opcode == IBV_WR_ATOMIC_WRITE)
		return qp->lim.qp_type == IBV_QPT_RC;
	return shca_opcode_ok(qp->lim.qp_type, opcode);
}

/* Record the first error of a wr_start..wr_complete sequence */
static void shca_wr_fail(struct shca_qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
	qp->wr_cur = NULL;
}

/*
 * Start a SQE for @opcode in the next slot, with the WR id and flags the
 * caller set in the ibv_qp_ex.  Returns NULL after an error.
 */
static struct shca_sqe *shca_wr_new(struct shca_qp *qp,
				    enum ibv_wr_opcode opcode)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	struct shca_sqe *sqe;

	qp->wr_cur = NULL;
	if (qp->wr_err)
		return NULL;
	if (!shca_wr_opcode_ok(qp, opcode) ||
	    (qpx->wr_flags & ~SHCA_SEND_FLAGS)) {
		shca_wr_fail(qp, EINVAL);
		return NULL;
	}
	if (!shca_prod_room(&qp->sq.ring, qp->wr_idx)) {
		shca_wr_fail(qp, ENOMEM);
		return NULL;
	}

	sqe = shca_ring_slot(&qp->sq.ring, qp->wr_idx++);
	memset(sqe, 0, sizeof(*sqe));
	sqe->wr_id = qpx->wr_id;
	sqe->opcode = opcode;
	/* inline is what wr_set_inline_data*() say, not a flag */
	sqe->flags = qpx->wr_flags & SHCA_SEND_FLAGS & ~IBV_SEND_INLINE;
	if (qp->lim.sig_all)
		sqe->flags |= SHCA_SQE_F_SIGNALED;
	qp->wr_cur = sqe;
	return sqe;
}

/* The SQE a setter applies to; NULL (and an error) if there is none */
static struct shca_sqe *shca_wr_cur(struct shca_qp *qp)
{
	if (!qp->wr_cur && !qp->wr_err)
		shca_wr_fail(qp, EINVAL);
	return qp->wr_cur;
}

static void shca_wr_start(struct ibv_qp_ex *qpx)
{
	struct shca_qp *qp = ex_to_shca_qp(qpx);

	shca_lock(&qp->sq.lock);
	qp->wr_idx = qp->sq.ring.idx;
	qp->wr_cur = NULL;
	qp->wr_err = 0;
	if (qpx->qp_base.state < IBV_QPS_RTS ||
	    qpx->qp_base.state > IBV_QPS_ERR)
		qp->wr_err = EINVAL;
}

static int shca_wr_complete(struct ibv_qp_ex *qpx)
{
	struct shca_qp *qp = ex_to_shca_qp(qpx);
	struct shca_uring *r = &qp->sq.ring;
	int ret = qp->wr_err;

	if (ret || qp->wr_idx == r->idx) {
		shca_unlock(&qp->sq.lock);
		return ret;
	}

	r->idx = qp->wr_idx;
	shca_prod_publish(r);
	shca_unlock(&qp->sq.lock);

	if (shca_sq_doorbell_needed(qp))
		ret = shca_sq_doorbell(qp);
	return ret;
}

static void shca_wr_abort(struct ibv_qp_ex *qpx)
{
	shca_unlock(&ex_to_shca_qp(qpx)->sq.lock);
}

static void shca_wr_send(struct ibv_qp_ex *qpx)
{
	shca_wr_new(ex_to_shca_qp(qpx), IBV_WR_SEND);
}

static void shca_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct shca_sqe *sqe = shca_wr_new(ex_to_shca_qp(qpx),
					   IBV_WR_SEND_WITH_IMM);

	if (sqe)
		sqe->ex = (__force uint32_t)imm_data;
}

static void shca_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct shca_sqe *sqe = shca_wr_new(ex_to_shca_qp(qpx),
					   IBV_WR_SEND_WITH_INV);

	if (sqe)
		sqe->ex = invalidate_rkey;
}

static void shca_wr_rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode,
			 uint32_t rkey, uint64_t remote_addr, uint32_t ex)
{
	struct shca_sqe *sqe = shca_wr_new(ex_to_shca_qp(qpx), opcode);

	if (!sqe)
		return;
	sqe->ex = ex;
	sqe->u.rdma.remote_addr = remote_addr;
	sqe->u.rdma.rkey = rkey;
}

static void shca_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			       uint64_t remote_addr)
{
	shca_wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void shca_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t remote_addr, __be32 imm_data)
{
	shca_wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr,
		     (__force uint32_t)imm_data);
}

static void shca_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t remote_addr)
{
	shca_wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void shca_wr_atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode,
			   uint32_t rkey, uint64_t remote_addr,
			   uint64_t compare_add, uint64_t swap)
{
	struct shca_qp *qp = ex_to_shca_qp(qpx);
	struct shca_sqe *sqe;

	sqe = shca_wr_new(qp, opcode);
	if (!sqe)
		return;
	sqe->u.atomic.remote_addr = remote_addr;
	sqe->u.atomic.compare_add = compare_add;
	sqe->u.atomic.swap = swap;
	sqe->u.atomic.rkey = rkey;
}

static void shca_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t remote_addr, uint64_t compare,
				   uint64_t swap)
{
	shca_wr_atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr,
		       compare, swap);
}

static void shca_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				     uint64_t remote_addr, uint64_t add)
{
	shca_wr_atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr,
		       add, 0);
}

static void shca_wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				 uint64_t remote_addr, const void *atomic_wr)
{
	struct shca_sqe *sqe;

	sqe = shca_wr_new(ex_to_shca_qp(qpx), IBV_WR_ATOMIC_WRITE);
	if (!sqe)
		return;
	sqe->u.atomic_write.remote_addr = remote_addr;
	memcpy(&sqe->u.atomic_write.value, atomic_wr,
	       sizeof(sqe->u.atomic_write.value));
	sqe->u.atomic_write.rkey = rkey;
}

static void shca_wr_flush(struct ibv_qp_ex *qpx, uint32_t rkey,
			  uint64_t remote_addr, size_t len, uint8_t type,
			  uint8_t level)
{
	struct shca_qp *qp = ex_to_shca_qp(qpx);
	struct shca_sqe *sqe;

	sqe = shca_wr_new(qp, IBV_WR_FLUSH);
	if (!sqe)
		return;
	/* a range's length is 32 bits on the wire; the MR level has none */
	if (level == IBV_FLUSH_RANGE && len > UINT32_MAX) {
		shca_wr_fail(qp, EINVAL);
		return;
	}
	sqe->u.flush.remote_addr = remote_addr;
	sqe->u.flush.rkey = rkey;
	sqe->u.flush.length = level == IBV_FLUSH_RANGE ? len : 0;
	sqe->u.flush.type = type;
	sqe->u.flush.level = level;
}

static void shca_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
			    uint32_t rkey,
			    const struct ibv_mw_bind_info *bind_info)
{
	struct shca_sqe *sqe = shca_wr_new(ex_to_shca_qp(qpx), IBV_WR_BIND_MW);

	if (!sqe)
		return;
	sqe->u.bind.addr = bind_info->addr;
	sqe->u.bind.length = bind_info->length;
	sqe->u.bind.mr_lkey = bind_info->mr ? bind_info->mr->lkey : 0;
	sqe->u.bind.mw_rkey = mw->rkey;
	sqe->u.bind.rkey = rkey;
	sqe->u.bind.access = bind_info->mw_access_flags;
}

static void shca_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct shca_sqe *sqe = shca_wr_new(ex_to_shca_qp(qpx),
					   IBV_WR_LOCAL_INV);

	if (sqe)
		sqe->ex = invalidate_rkey;
}

static void shca_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
				uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct shca_qp *qp = ex_to_shca_qp(qpx);
	struct shca_sqe *sqe = shca_wr_cur(qp);

	if (!sqe)
		return;
	if (qp->lim.qp_type != IBV_QPT_UD || !ah) {
		shca_wr_fail(qp, EINVAL);
		return;
	}
	sqe->u.ud.ah = to_shca_ah(ah)->handle;
	sqe->u.ud.remote_qpn = remote_qpn;
	sqe->u.ud.remote_qkey = remote_qkey;
}

/*
 * May the current SQE take @num_sge SGEs (@first_len: length of the first
 * one)?  Atomics take exactly one of at least 8 bytes.
 */
static bool shca_wr_sge_ok(struct shca_qp *qp, struct shca_sqe *sqe,
			   size_t num_sge, uint32_t first_len)
{
	if (!shca_opcode_has_data(sqe->opcode))
		return false;
	if (sqe->num_sge || sqe->inline_len)
		return false;
	if (num_sge > qp->sq.max_sge)
		return false;
	if (shca_opcode_is_atomic(sqe->opcode))
		return num_sge == 1 && first_len >= 8;
	return true;
}

static void shca_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey,
			    uint64_t addr, uint32_t length)
{
	struct shca_qp *qp = ex_to_shca_qp(qpx);
	struct shca_sqe *sqe = shca_wr_cur(qp);
	struct shca_sge *sge;

	if (!sqe)
		return;
	if (!shca_wr_sge_ok(qp, sqe, 1, length)) {
		shca_wr_fail(qp, EINVAL);
		return;
	}
	sge = (struct shca_sge *)(sqe + 1);
	sge->addr = addr;
	sge->length = length;
	sge->lkey = lkey;
	sqe->num_sge = 1;
}

static void shca_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
				 const struct ibv_sge *sg_list)
{
	struct shca_qp *qp = ex_to_shca_qp(qpx);
	struct shca_sqe *sqe = shca_wr_cur(qp);

	if (!sqe)
		return;
	if (num_sge && !sg_list) {
		shca_wr_fail(qp, EINVAL);
		return;
	}
	if (!shca_wr_sge_ok(qp, sqe, num_sge,
			    num_sge ? sg_list[0].length : 0)) {
		shca_wr_fail(qp, EINVAL);
		return;
	}
	shca_write_sges((struct shca_sge *)(sqe + 1), sg_list, num_sge);
	sqe->num_sge = num_sge;
}

static void shca_wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
					 const struct ibv_data_buf *buf_list)
{
	struct shca_qp *qp = ex_to_shca_qp(qpx);
	struct shca_sqe *sqe = shca_wr_cur(qp);
	uint8_t *data;
	size_t i, len = 0;

	if (!sqe)
		return;
	if (!shca_opcode_inline_ok(sqe->opcode) || sqe->num_sge ||
	    sqe->inline_len || (num_buf && !buf_list)) {
		shca_wr_fail(qp, EINVAL);
		return;
	}
	for (i = 0; i < num_buf; i++) {
		len += buf_list[i].length;
		if (buf_list[i].length > qp->sq.max_inline ||
		    len > qp->sq.max_inline) {
			shca_wr_fail(qp, EINVAL);
			return;
		}
	}

	data = (uint8_t *)(sqe + 1);
	for (i = 0; i < num_buf; i++) {
		memcpy(data, buf_list[i].addr, buf_list[i].length);
		data += buf_list[i].length;
	}
	sqe->inline_len = len;
	sqe->flags |= SHCA_SQE_F_INLINE;
}

static void shca_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				    size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	shca_wr_set_inline_data_list(qpx, 1, &buf);
}

/**
 * shca_qp_set_send_ops - install the ibv_wr_* API on a QP being created
 * @qp: the QP
 * @qp_type: its type
 * @send_ops_flags: IBV_QP_EX_WITH_* the caller wants
 * @ctx: its context
 *
 * FLUSH needs the kernel's SHCA_CAP_FLUSH and a libibverbs with
 * ibv_qp_ex.wr_flush (see shca_have_wr_flush()).
 *
 * Return: 0, or EOPNOTSUPP when an operation is not available on @qp_type.
 */
int shca_qp_set_send_ops(struct shca_qp *qp, enum ibv_qp_type qp_type,
			 uint64_t send_ops_flags, struct shca_context *ctx)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	uint64_t ok;

	switch (qp_type) {
	case IBV_QPT_RC:
		ok = SHCA_RC_SEND_OPS;
		break;
	case IBV_QPT_UC:
		ok = SHCA_UC_SEND_OPS;
		break;
	case IBV_QPT_UD:
		ok = SHCA_UD_SEND_OPS;
		break;
	default:
		ok = 0;
		break;
	}
	if (qp_type == IBV_QPT_RC && (ctx->caps & SHCA_CAP_FLUSH) &&
	    ctx->wr_flush_abi)
		ok |= IBV_QP_EX_WITH_FLUSH;
	if (send_ops_flags & ~ok)
		return EOPNOTSUPP;

	qpx->wr_start = shca_wr_start;
	qpx->wr_complete = shca_wr_complete;
	qpx->wr_abort = shca_wr_abort;
	qpx->wr_send = shca_wr_send;
	qpx->wr_send_imm = shca_wr_send_imm;
	qpx->wr_send_inv = shca_wr_send_inv;
	qpx->wr_rdma_write = shca_wr_rdma_write;
	qpx->wr_rdma_write_imm = shca_wr_rdma_write_imm;
	qpx->wr_rdma_read = shca_wr_rdma_read;
	qpx->wr_atomic_cmp_swp = shca_wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = shca_wr_atomic_fetch_add;
	qpx->wr_atomic_write = shca_wr_atomic_write;
	if (ok & IBV_QP_EX_WITH_FLUSH)
		qpx->wr_flush = shca_wr_flush;
	qpx->wr_bind_mw = shca_wr_bind_mw;
	qpx->wr_local_inv = shca_wr_local_inv;
	qpx->wr_set_ud_addr = shca_wr_set_ud_addr;
	qpx->wr_set_sge = shca_wr_set_sge;
	qpx->wr_set_sge_list = shca_wr_set_sge_list;
	qpx->wr_set_inline_data = shca_wr_set_inline_data;
	qpx->wr_set_inline_data_list = shca_wr_set_inline_data_list;
	return 0;
}
