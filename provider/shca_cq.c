// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: rdma-core provider for the shca software RDMA HCA.
 *
 * Completion queues.  The kernel writes completions into a ring this
 * process maps; polling is a read of the ring, no system call.
 */

#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shca.h"
#include "shca_abi.h"
#include "shcadv.h"

/* Completion fields an extended CQ can report */
enum {
	SHCA_CQ_EX_WC_FLAGS = IBV_WC_STANDARD_FLAGS,
	/* with SHCA_CAP_CQ_TIMESTAMP */
	SHCA_CQ_EX_TS_FLAGS = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			      IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	SHCA_CQ_EX_CREATE_FLAGS = IBV_CREATE_CQ_ATTR_SINGLE_THREADED,
};

/* The provider's state of a CQ, on parent domain @ibpd if not NULL */
static struct shca_cq *shca_cq_alloc(struct ibv_pd *ibpd)
{
	struct shca_objmem mem;
	struct shca_cq *cq;

	cq = shca_obj_alloc(ibpd, sizeof(*cq), SHCADV_RES_TYPE_CQ, &mem);
	if (cq)
		cq->mem = mem;
	return cq;
}

static void shca_cq_free(struct shca_cq *cq)
{
	shca_obj_free(cq, &cq->mem, SHCADV_RES_TYPE_CQ);
}

/*
 * Map the ring of a CQ the kernel just created; @single: polled by one
 * thread at a time, without the lock.
 */
static int shca_cq_init(struct shca_cq *cq, struct ibv_context *ibctx,
			const struct shca_create_cq_resp *resp, bool single)
{
	int ret;

	ret = shca_ring_map(ibctx, &cq->ring, &resp->cq,
			    sizeof(struct shca_cqe), false);
	if (ret)
		return ret;

	cq->cqn = resp->cqn;
	ret = shca_lock_init(&cq->lock, single);
	if (ret)
		shca_ring_unmap(&cq->ring);
	return ret;
}

/**
 * shca_req_notify_cq - arm a CQ for its next (or next solicited)
 * completion
 * @ibcq: CQ
 * @solicited_only: only a solicited completion (or an error) raises the
 *	event
 *
 * The arm is a store of a new sequence number into the ring's arm word;
 * the kernel compares it with the last one it consumed each time it adds a
 * completion, so arming costs no system call.  As with any verbs device,
 * completions added before the arm raise no event: poll once more after
 * arming.
 *
 * Return: 0, or an errno from the system call a kernel without the arm
 * word needs.
 */
int shca_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct shca_context *ctx = to_shca_ctx(ibcq->context);
	struct shca_cq *cq = to_shca_cq(ibcq);
	uint32_t arm;

	if (!(ctx->caps & SHCA_CAP_CQ_ARM_WORD))
		return ibv_cmd_req_notify_cq(ibcq, solicited_only);

	shca_lock(&cq->lock);
	cq->arm_seq = (cq->arm_seq + 1) & SHCA_CQ_ARM_SEQ_MASK;
	arm = cq->arm_seq;
	if (solicited_only)
		arm |= SHCA_CQ_ARM_SOLICITED;
	atomic_store_explicit((_Atomic(uint32_t) *)&cq->ring.ctrl->arm, arm,
			      memory_order_release);
	/* the arm store is ordered before the caller's next poll */
	atomic_thread_fence(memory_order_seq_cst);
	shca_unlock(&cq->lock);
	return 0;
}

struct ibv_cq *shca_create_cq(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector)
{
	struct ushca_create_cq_resp resp = {};
	struct shca_cq *cq;
	int ret;

	cq = shca_cq_alloc(NULL);
	if (!cq)
		return NULL;

	ret = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->vcq.cq,
				NULL, 0, &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	ret = shca_cq_init(cq, ibctx, &resp.drv_payload, false);
	if (ret)
		goto err_destroy;

	return &cq->vcq.cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	shca_cq_free(cq);
	errno = ret;
	return NULL;
}

int shca_destroy_cq(struct ibv_cq *ibcq)
{
	struct shca_cq *cq = to_shca_cq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;

	shca_ring_unmap(&cq->ring);
	shca_lock_destroy(&cq->lock);
	shca_cq_free(cq);
	return 0;
}

/**
 * shca_poll_cq - take up to @ne completions
 * @ibcq: CQ
 * @ne: room in @wc
 * @wc: filled with the completions
 *
 * Return: the number taken, or -1 when the ring is broken (unmapped after
 * a failed resize, or an impossible producer index).
 */
int shca_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct shca_cq *cq = to_shca_cq(ibcq);
	struct shca_uring *r = &cq->ring;
	int64_t avail;
	int n;

	shca_lock(&cq->lock);
	if (!r->map) {
		shca_unlock(&cq->lock);
		return -1;
	}

	avail = shca_cons_avail(r);
	if (avail < 0) {
		shca_unlock(&cq->lock);
		return -1;
	}

	for (n = 0; n < ne && n < avail; n++) {
		shca_cqe_to_wc(shca_ring_slot(r, r->idx), &wc[n]);
		r->idx++;
	}
	if (n)
		shca_cons_publish(r);

	shca_unlock(&cq->lock);
	return n;
}

/**
 * shca_cq_clean - drop the completions of one QP that a CQ still holds
 * @ibcq: CQ
 * @qpn: the QP, just moved to RESET
 *
 * A QP moved to RESET starts afresh: its completions that were not
 * polled yet (flushes of its receive queue, say) must not be read as
 * those of its next life.  The kernel adds no more for it; it may add
 * other QPs' completions meanwhile, past the producer index read here,
 * which this never touches.  The completions kept move toward the
 * producer end and the consumer index moves past the room freed.
 */
void shca_cq_clean(struct ibv_cq *ibcq, uint32_t qpn)
{
	struct shca_cq *cq = to_shca_cq(ibcq);
	struct shca_uring *r = &cq->ring;
	uint32_t freed = 0;
	int64_t avail, i;

	shca_lock(&cq->lock);
	avail = r->map ? shca_cons_avail(r) : 0;
	for (i = avail - 1; i >= 0; i--) {
		struct shca_cqe *cqe = shca_ring_slot(r, r->idx + i);

		if (cqe->qp_num == qpn)
			freed++;
		else if (freed)
			memcpy(shca_ring_slot(r, r->idx + i + freed), cqe,
			       sizeof(*cqe));
	}
	if (freed) {
		r->idx += freed;
		shca_cons_publish(r);
	}
	shca_unlock(&cq->lock);
}

/**
 * shca_resize_cq - resize a CQ: the kernel hands back a new ring holding
 * the completions not yet polled
 * @ibcq: CQ
 * @cqe: new minimum size
 *
 * Pollers are kept out (cq->lock) from before the command until the new
 * ring is in place.  If the new ring cannot be mapped the CQ is left
 * without a ring and polls fail.
 *
 * Return: 0 or an errno.
 */
int shca_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct shca_cq *cq = to_shca_cq(ibcq);
	struct ushca_resize_cq_resp resp = {};
	struct ibv_resize_cq cmd = {};
	struct shca_uring old;
	int ret;

	shca_lock(&cq->lock);

	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto out;

	old = cq->ring;
	memset(&cq->ring, 0, sizeof(cq->ring));
	ret = shca_ring_map(ibcq->context, &cq->ring, &resp.cq,
			    sizeof(struct shca_cqe), false);
	if (ret)
		verbs_err(&to_shca_ctx(ibcq->context)->ibv_ctx,
			  "shca: CQ %u lost its ring in a resize\n", cq->cqn);
	shca_ring_unmap(&old);
out:
	shca_unlock(&cq->lock);
	return ret;
}

/*
 * Extended CQ: start_poll takes cq->lock and end_poll drops it; each
 * completion is copied to cq->cur, which the read_* callbacks report.
 */

/* Copy the next completion to cq->cur.  Caller holds cq->lock. */
static int shca_cq_ex_next(struct shca_cq *cq)
{
	struct shca_uring *r = &cq->ring;
	int64_t avail;

	if (!r->map)
		return EIO;
	avail = shca_cons_avail(r);
	if (avail < 0)
		return EIO;
	if (!avail)
		return ENOENT;

	memcpy(&cq->cur, shca_ring_slot(r, r->idx), sizeof(cq->cur));
	r->idx++;
	cq->vcq.cq_ex.wr_id = cq->cur.wr_id;
	cq->vcq.cq_ex.status = cq->cur.status;
	return 0;
}

static int shca_cq_ex_start_poll(struct ibv_cq_ex *ibcq,
				 struct ibv_poll_cq_attr *attr)
{
	struct shca_cq *cq = ex_to_shca_cq(ibcq);
	int ret;

	if (attr->comp_mask)
		return EINVAL;

	shca_lock(&cq->lock);
	ret = shca_cq_ex_next(cq);
	if (ret)
		shca_unlock(&cq->lock);
	return ret;
}

static int shca_cq_ex_next_poll(struct ibv_cq_ex *ibcq)
{
	return shca_cq_ex_next(ex_to_shca_cq(ibcq));
}

static void shca_cq_ex_end_poll(struct ibv_cq_ex *ibcq)
{
	struct shca_cq *cq = ex_to_shca_cq(ibcq);

	if (cq->ring.map)
		shca_cons_publish(&cq->ring);
	shca_unlock(&cq->lock);
}

static enum ibv_wc_opcode shca_cq_ex_read_opcode(struct ibv_cq_ex *ibcq)
{
	return ex_to_shca_cq(ibcq)->cur.opcode;
}

static uint32_t shca_cq_ex_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return ex_to_shca_cq(ibcq)->cur.vendor_err;
}

static uint32_t shca_cq_ex_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return ex_to_shca_cq(ibcq)->cur.byte_len;
}

/* Immediate data in network order, or the invalidated rkey in host order */
static __be32 shca_cq_ex_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return (__force __be32)ex_to_shca_cq(ibcq)->cur.ex;
}

static uint32_t shca_cq_ex_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return ex_to_shca_cq(ibcq)->cur.qp_num;
}

static uint32_t shca_cq_ex_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return ex_to_shca_cq(ibcq)->cur.src_qp;
}

static unsigned int shca_cq_ex_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return shca_wc_flags(ex_to_shca_cq(ibcq)->cur.wc_flags);
}

static uint32_t shca_cq_ex_read_slid(struct ibv_cq_ex *ibcq)
{
	return ex_to_shca_cq(ibcq)->cur.slid;
}

static uint8_t shca_cq_ex_read_sl(struct ibv_cq_ex *ibcq)
{
	return shca_wc_sl(&ex_to_shca_cq(ibcq)->cur);
}

static uint8_t shca_cq_ex_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return ex_to_shca_cq(ibcq)->cur.dlid_path_bits;
}

/* The device clock (CLOCK_MONOTONIC ns) when the completion was written */
static uint64_t shca_cq_ex_read_completion_ts(struct ibv_cq_ex *ibcq)
{
	return ex_to_shca_cq(ibcq)->cur.timestamp;
}

/*
 * The same instant in CLOCK_REALTIME: the stamp moved by the distance
 * between the two clocks now (a step of the real-time clock between the
 * completion and this read moves it too).
 */
static uint64_t shca_cq_ex_read_wallclock_ns(struct ibv_cq_ex *ibcq)
{
	uint64_t ts = ex_to_shca_cq(ibcq)->cur.timestamp;
	struct timespec mono, real;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	return ts + (uint64_t)(real.tv_sec - mono.tv_sec) * 1000000000ULL +
	       (uint64_t)(real.tv_nsec - mono.tv_nsec);
}

static void shca_cq_ex_set_ops(struct ibv_cq_ex *cqx, uint64_t wc_flags)
{
	cqx->start_poll = shca_cq_ex_start_poll;
	cqx->next_poll = shca_cq_ex_next_poll;
	cqx->end_poll = shca_cq_ex_end_poll;
	cqx->read_opcode = shca_cq_ex_read_opcode;
	cqx->read_vendor_err = shca_cq_ex_read_vendor_err;
	cqx->read_wc_flags = shca_cq_ex_read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		cqx->read_byte_len = shca_cq_ex_read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		cqx->read_imm_data = shca_cq_ex_read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		cqx->read_qp_num = shca_cq_ex_read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		cqx->read_src_qp = shca_cq_ex_read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		cqx->read_slid = shca_cq_ex_read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		cqx->read_sl = shca_cq_ex_read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		cqx->read_dlid_path_bits = shca_cq_ex_read_dlid_path_bits;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		cqx->read_completion_ts = shca_cq_ex_read_completion_ts;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		cqx->read_completion_wallclock_ns = shca_cq_ex_read_wallclock_ns;
}

static int shca_cq_ex_check(struct ibv_context *ibctx,
			    const struct ibv_cq_init_attr_ex *attr)
{
	uint64_t wc_flags = SHCA_CQ_EX_WC_FLAGS;

	if (to_shca_ctx(ibctx)->caps & SHCA_CAP_CQ_TIMESTAMP)
		wc_flags |= SHCA_CQ_EX_TS_FLAGS;
	if (attr->wc_flags & ~wc_flags)
		return EOPNOTSUPP;
	if (attr->comp_mask & ~(IBV_CQ_INIT_ATTR_MASK_FLAGS |
				IBV_CQ_INIT_ATTR_MASK_PD))
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~SHCA_CQ_EX_CREATE_FLAGS))
		return EOPNOTSUPP;
	/* a CQ belongs to no PD: only a parent domain may be named */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain || attr->parent_domain->context != ibctx ||
	     !to_shca_pd(attr->parent_domain)->protection))
		return EINVAL;
	return 0;
}

/* Is the CQ polled by one thread at a time (no lock needed)? */
static bool shca_cq_ex_single(const struct ibv_cq_init_attr_ex *attr)
{
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED))
		return true;
	return (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	       shca_pd_single_thread(attr->parent_domain);
}

struct ibv_cq_ex *shca_create_cq_ex(struct ibv_context *ibctx,
				    struct ibv_cq_init_attr_ex *attr)
{
	struct ushca_create_cq_ex_resp resp = {};
	struct ibv_cq_init_attr_ex kattr;
	struct shca_cq *cq;
	int ret;

	ret = shca_cq_ex_check(ibctx, attr);
	if (ret) {
		errno = ret;
		return NULL;
	}

	cq = shca_cq_alloc(attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD ?
			   attr->parent_domain : NULL);
	if (!cq)
		return NULL;

	/* the kernel's CQ has no PD: the parent domain stays here */
	kattr = *attr;
	kattr.comp_mask &= ~IBV_CQ_INIT_ATTR_MASK_PD;
	ret = ibv_cmd_create_cq_ex(ibctx, &kattr, &cq->vcq, NULL, 0,
				   &resp.ibv_resp, sizeof(resp), 0);
	if (ret)
		goto err_free;

	ret = shca_cq_init(cq, ibctx, &resp.drv_payload,
			   shca_cq_ex_single(attr));
	if (ret)
		goto err_destroy;

	shca_cq_ex_set_ops(&cq->vcq.cq_ex, attr->wc_flags);
	return &cq->vcq.cq_ex;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	shca_cq_free(cq);
	errno = ret;
	return NULL;
}
