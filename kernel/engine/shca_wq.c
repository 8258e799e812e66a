// SPDX-License-Identifier: GPL-2.0
/*
 * shca work queues of a QP in the engine: lookup by QPN, the fetch that
 * copies send WQEs out of the send ring and validates them, in-order
 * completion, and the error state with its flush.
 *
 * Locking: qp->lock (BH-safe) protects the QP's state, requester and
 * responder; the engine's tx_lock nests inside it for TX LLQ operations,
 * qp->rq_lock and the CQ locks nest inside it too.
 */
#include "shca.h"
#include "shca_cqe.h"
#include "shca_drdma.h"
#include "shca_engine.h"
#include "shca_fault.h"
#include "shca_mem.h"
#include "shca_qpc.h"
#include "shca_ring.h"
#include "shca_rqe.h"
#include "shca_sendq.h"
#include "shca_wq.h"
#include "shca_av.h"
#include "shca_resp.h"
#include "shca_trace.h"

/**
 * shca_qp_idx - a device's QP number as a queue index of its engine
 * @sdev: device
 * @qpn: QP number, below the engine's QPNs
 *
 * The functions of an engine share its QPNs, but each has a GSI QP (QPN
 * 1), whose index follows the QPNs.
 *
 * Return: the index (shca_qp.idx).
 */
u32 shca_qp_idx(const struct shca_dev *sdev, u32 qpn)
{
	return qpn == 1 ? sdev->eng->nqp + sdev->fn : qpn;
}

/**
 * shca_qp_get_idx - look a QP of an engine up by queue index
 * @eng: engine
 * @idx: index (from a queue entry)
 *
 * The RDMA core frees a destroyed QP with kfree() as soon as
 * shca_destroy_qp() returns, without an RCU grace period, so the QP is
 * found and its reference taken under the xarray's lock: the erase in
 * shca_destroy_qp() comes before or after the whole lookup, and a QP
 * found here stays until its reference is dropped.  Process or softirq
 * context.
 *
 * Return: the QP with a reference (shca_qp_put()), or NULL.
 */
struct shca_qp *shca_qp_get_idx(struct shca_engine *eng, u32 idx)
{
	struct shca_qp *qp;

	xa_lock_bh(&eng->qp_xa);
	qp = xa_load(&eng->qp_xa, idx);
	if (qp) {
		shca_fault_point(SHCA_HOLD_LOOKUP);
		if (!refcount_inc_not_zero(&qp->ref))
			qp = NULL;
	}
	xa_unlock_bh(&eng->qp_xa);
	return qp;
}

/**
 * shca_qp_get - look a device's QP up by number
 * @sdev: device
 * @qpn: QP number (anything)
 *
 * A QP of another function of the engine is not found.
 *
 * Return: the QP with a reference (shca_qp_put()), or NULL.
 */
struct shca_qp *shca_qp_get(struct shca_dev *sdev, u32 qpn)
{
	struct shca_qp *qp;

	if (qpn >= sdev->eng->nqp)
		return NULL;
	qp = shca_qp_get_idx(sdev->eng, shca_qp_idx(sdev, qpn));
	if (qp && qp->sdev != sdev) {
		shca_qp_put(qp);
		qp = NULL;
	}
	return qp;
}

/**
 * shca_qp_put - drop a reference taken by shca_qp_get()
 * @qp: QP
 */
void shca_qp_put(struct shca_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->done);
}

static u8 shca_wc_opcode(u8 wr_opcode)
{
	switch (wr_opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case SHCA_WR_FLUSH:
		return SHCA_WC_FLUSH;
	case SHCA_WR_ATOMIC_WRITE:
		return SHCA_WC_ATOMIC_WRITE;
	default:
		return IB_WC_SEND;
	}
}

/**
 * shca_qp_complete - completion stage: pop the finished WQEs at the head
 * of the QP's TX LLQ list, in order, and post their completions
 * @qp: QP (caller must hold qp->lock)
 */
void shca_qp_complete(struct shca_qp *qp)
{
	struct shca_engine *eng = qp->sdev->eng;
	struct shca_llq_payload p;
	struct shca_send_wqe *wqe;
	u32 n = 0;
	int ret;

	lockdep_assert_held(&qp->lock);
	while (n < qp->sq.entries) {
		spin_lock(&eng->tx_lock);
		ret = shca_llq_pop(&eng->tx_llq, qp->idx, &p);
		spin_unlock(&eng->tx_lock);
		if (ret)
			break;
		wqe = shca_qp_wqe(qp, (u32)p.w[0]);
		qp->req.comp++;
		n++;
		/*
		 * The slot is free before its completion is visible: a
		 * consumer may post again as soon as it polls the CQE.
		 */
		shca_ring_consume(&qp->sq, 1);
		if (wqe->status != IB_WC_SUCCESS || wqe->signal) {
			struct shca_cqe cqe = {
				.wr_id = wqe->wr_id,
				.status = wqe->status,
				.opcode = shca_wc_opcode(wqe->opcode),
				.byte_len = wqe->length,
				.qp_num = qp->qpn,
				.port_num = 1,
			};

			shca_cq_post(qp->scq, &cqe, false);
		}
	}
	shca_txc_uncharge(qp, n);
}

/* ---- fetch: copy WQEs out of the send ring and validate them ------- */

static bool shca_opcode_ok(struct shca_qp *qp, u8 op)
{
	switch (op) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		return true;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_LOCAL_INV:
	case IB_WR_BIND_MW:
		return qp->type == IB_QPT_RC || qp->type == IB_QPT_UC;
	case IB_WR_REG_MR:
		return !qp->user &&
		       (qp->type == IB_QPT_RC || qp->type == IB_QPT_UC);
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case SHCA_WR_ATOMIC_WRITE:
		return qp->type == IB_QPT_RC;
	case SHCA_WR_FLUSH:
		/* the MR rights a FLUSH needs exist from Linux 6.2 on */
		return qp->type == IB_QPT_RC && SHCA_ACCESS_FLUSH;
	default:
		return false;
	}
}

/* the SQE flags the engine knows; any other bit is refused */
#define SHCA_SQE_FLAGS	(SHCA_SQE_F_FENCE | SHCA_SQE_F_SIGNALED | \
			 SHCA_SQE_F_SOLICITED | SHCA_SQE_F_INLINE)

/* Bytes of sqe->u the opcode uses on @qp (the rest must be zero). */
static size_t shca_sqe_u_used(const struct shca_qp *qp, u8 op)
{
	const struct shca_sqe *q = NULL;

	if (qp->type == IB_QPT_UD || qp->type == IB_QPT_GSI)
		return offsetof(typeof(q->u.ud), rsvd);
	switch (op) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		return offsetof(typeof(q->u.rdma), rsvd);
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return offsetof(typeof(q->u.atomic), rsvd);
	case SHCA_WR_ATOMIC_WRITE:
		return offsetof(typeof(q->u.atomic_write), rsvd);
	case SHCA_WR_FLUSH:
		return offsetof(typeof(q->u.flush), rsvd);
	case IB_WR_BIND_MW:
		return sizeof(q->u.bind);
	case IB_WR_REG_MR:
		return 16;	/* kernel QPs only: MR pointer, key, access */
	default:
		return 0;
	}
}

/* Does @op carry immediate data or a key to invalidate in sqe->ex? */
static bool shca_sqe_has_ex(u8 op)
{
	return op == IB_WR_SEND_WITH_IMM || op == IB_WR_RDMA_WRITE_WITH_IMM ||
	       op == IB_WR_SEND_WITH_INV || op == IB_WR_LOCAL_INV;
}

/*
 * Is everything of @sqe the opcode does not define zero?  Reserved
 * fields, unused bytes of the union and of ex, unknown flag bits, an
 * inline length without the inline flag (or SGEs with it) are refused,
 * so that they can be given a meaning later.
 */
static bool shca_sqe_clean(const struct shca_qp *qp,
			   const struct shca_sqe *sqe)
{
	size_t used = shca_sqe_u_used(qp, sqe->opcode);

	if ((sqe->flags & ~SHCA_SQE_FLAGS) || sqe->rsvd || sqe->rsvd1)
		return false;
	if (sqe->ex && !shca_sqe_has_ex(sqe->opcode))
		return false;
	if (memchr_inv(sqe->u.raw + used, 0, sizeof(sqe->u) - used))
		return false;
	if (sqe->flags & SHCA_SQE_F_INLINE)
		return !sqe->num_sge;
	return !sqe->inline_len;
}

/* Payload: inline bytes or SGEs.  Returns a completion status. */
static enum ib_wc_status shca_fetch_data(struct shca_qp *qp,
					 struct shca_send_wqe *wqe,
					 const struct shca_sqe *sqe,
					 const u8 *slot)
{
	u32 room = qp->sq.stride - sizeof(*sqe);
	u64 total = 0;
	u32 i;

	if (sqe->flags & SHCA_SQE_F_INLINE) {
		if (sqe->inline_len > qp->max_inline || sqe->inline_len > room)
			return IB_WC_LOC_LEN_ERR;
		memcpy(wqe->inline_data, slot + sizeof(*sqe), sqe->inline_len);
		wqe->num_sge = 0;
		wqe->length = sqe->inline_len;
		return IB_WC_SUCCESS;
	}
	if (sqe->num_sge > qp->max_send_sge ||
	    sqe->num_sge * sizeof(struct shca_sge) > room)
		return IB_WC_LOC_QP_OP_ERR;
	wqe->num_sge = sqe->num_sge;
	memcpy(wqe->sge, slot + sizeof(*sqe),
	       wqe->num_sge * sizeof(struct shca_sge));
	for (i = 0; i < wqe->num_sge; i++)
		total += wqe->sge[i].length;
	if (total > SHCA_MAX_MSG_SIZE)
		return IB_WC_LOC_LEN_ERR;
	wqe->length = total;
	return IB_WC_SUCCESS;
}

/* FLUSH: one placement type or both, a known level.  A status. */
static enum ib_wc_status shca_fetch_flush(struct shca_send_wqe *wqe,
					  const struct shca_sqe *sqe)
{
	u8 type = sqe->u.flush.type, level = sqe->u.flush.level;

	if (!type || type & ~(SHCA_FLUSH_GLOBAL | SHCA_FLUSH_PERSISTENT) ||
	    (level != SHCA_FLUSH_RANGE && level != SHCA_FLUSH_MR))
		return IB_WC_LOC_QP_OP_ERR;
	wqe->u.flush.va = sqe->u.flush.remote_addr;
	wqe->u.flush.rkey = sqe->u.flush.rkey;
	wqe->u.flush.length = sqe->u.flush.length;
	wqe->u.flush.type = type;
	wqe->u.flush.level = level;
	return IB_WC_SUCCESS;
}

/* Opcode specific fields.  Returns a completion status. */
static enum ib_wc_status shca_fetch_op(struct shca_qp *qp,
				       struct shca_send_wqe *wqe,
				       const struct shca_sqe *sqe)
{
	switch (wqe->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		wqe->u.rdma.va = sqe->u.rdma.remote_addr;
		wqe->u.rdma.rkey = sqe->u.rdma.rkey;
		if (wqe->opcode == IB_WR_RDMA_READ &&
		    (wqe->flags & SHCA_SQE_F_INLINE))
			return IB_WC_LOC_QP_OP_ERR;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		if (wqe->length != sizeof(u64) ||
		    (wqe->flags & SHCA_SQE_F_INLINE))
			return IB_WC_LOC_LEN_ERR;
		wqe->u.atomic.va = sqe->u.atomic.remote_addr;
		wqe->u.atomic.compare_add = sqe->u.atomic.compare_add;
		wqe->u.atomic.swap = sqe->u.atomic.swap;
		wqe->u.atomic.rkey = sqe->u.atomic.rkey;
		break;
	case SHCA_WR_ATOMIC_WRITE:
		wqe->u.atomic_write.va = sqe->u.atomic_write.remote_addr;
		wqe->u.atomic_write.value = sqe->u.atomic_write.value;
		wqe->u.atomic_write.rkey = sqe->u.atomic_write.rkey;
		wqe->length = sizeof(u64);
		break;
	case SHCA_WR_FLUSH:
		return shca_fetch_flush(wqe, sqe);
	case IB_WR_REG_MR:
		memcpy(&wqe->u.reg.mr, sqe->u.raw, sizeof(wqe->u.reg.mr));
		memcpy(&wqe->u.reg.key, sqe->u.raw + 8, sizeof(u32));
		memcpy(&wqe->u.reg.access, sqe->u.raw + 12, sizeof(int));
		break;
	case IB_WR_BIND_MW:
		wqe->u.bind.addr = sqe->u.bind.addr;
		wqe->u.bind.length = sqe->u.bind.length;
		wqe->u.bind.mr_lkey = sqe->u.bind.mr_lkey;
		wqe->u.bind.mw_rkey = sqe->u.bind.mw_rkey;
		wqe->u.bind.rkey = sqe->u.bind.rkey;
		wqe->u.bind.access = sqe->u.bind.access;
		break;
	default:
		break;
	}
	if (qp->type == IB_QPT_UD || qp->type == IB_QPT_GSI) {
		if (shca_ah_lookup(qp->sdev, qp->pd, sqe->u.ud.ah,
				   &wqe->u.ud.av))
			return IB_WC_LOC_QP_OP_ERR;
		wqe->u.ud.remote_qpn = sqe->u.ud.remote_qpn & 0xffffff;
		wqe->u.ud.remote_qkey = sqe->u.ud.remote_qkey;
		if (wqe->length > ib_mtu_enum_to_int(IB_MTU_4096))
			return IB_WC_LOC_LEN_ERR;
	}
	return IB_WC_SUCCESS;
}

/* Is @op one of IBA 1.5's operations, which carry no SGEs or inline data? */
static bool shca_wqe_iba15(u8 op)
{
	return op == SHCA_WR_FLUSH || op == SHCA_WR_ATOMIC_WRITE;
}

/* Does @op carry no data of the caller's (no SGEs, no inline bytes)? */
static bool shca_wqe_no_data(u8 op)
{
	return op == IB_WR_LOCAL_INV || op == IB_WR_BIND_MW ||
	       op == IB_WR_REG_MR || shca_wqe_iba15(op);
}

/* Copy and validate the SQE at ring index @idx into its kernel copy. */
static enum ib_wc_status shca_fetch_one(struct shca_qp *qp, u32 idx,
					struct shca_send_wqe *wqe)
{
	const u8 *slot = shca_ring_slot(&qp->sq, idx);
	struct shca_sqe sqe;
	enum ib_wc_status st;

	memcpy(&sqe, slot, sizeof(sqe));
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = sqe.wr_id;
	wqe->opcode = sqe.opcode;
	wqe->flags = sqe.flags & SHCA_SQE_FLAGS;
	wqe->ex = sqe.ex;
	wqe->signal = qp->sq_sig_all || (wqe->flags & SHCA_SQE_F_SIGNALED);
	if (qp->state == IB_QPS_ERR)
		return IB_WC_WR_FLUSH_ERR;
	if (!shca_opcode_ok(qp, wqe->opcode) || !shca_sqe_clean(qp, &sqe))
		return IB_WC_LOC_QP_OP_ERR;
	if (shca_wqe_no_data(wqe->opcode)) {
		if (shca_wqe_iba15(wqe->opcode) &&
		    (sqe.num_sge || (sqe.flags & SHCA_SQE_F_INLINE)))
			return IB_WC_LOC_QP_OP_ERR;
		wqe->flags &= ~SHCA_SQE_F_INLINE;
	} else {
		st = shca_fetch_data(qp, wqe, &sqe, slot);
		if (st != IB_WC_SUCCESS)
			return st;
	}
	return shca_fetch_op(qp, wqe, &sqe);
}

/**
 * shca_qp_fetch - fetch stage: move newly posted WQEs into the TX LLQ
 * @qp: QP (caller must hold qp->lock)
 *
 * A WQE that fails validation completes with an error and the QP enters
 * the error state; a corrupt producer index is a fatal QP error.
 *
 * Return: WQEs fetched.
 */
int shca_qp_fetch(struct shca_qp *qp)
{
	struct shca_engine *eng = qp->sdev->eng;
	struct shca_req *req = &qp->req;
	struct shca_llq_payload p = {};
	struct shca_send_wqe *wqe;
	enum ib_wc_status st;
	int pending, n = 0, ret;
	bool failed = false;

	lockdep_assert_held(&qp->lock);
	pending = shca_ring_pending(&qp->sq);
	if (pending < 0) {
		shca_qp_error(qp);
		return 0;
	}
	pending -= req->fetch - req->comp;
	while (n < pending) {
		if (!shca_txc_charge(qp))
			break;	/* the WQE stays in the ring */
		wqe = shca_qp_wqe(qp, req->fetch);
		st = shca_fetch_one(qp, req->fetch, wqe);
		trace_shca_fetch(&qp->sdev->ibdev, qp->qpn, req->fetch,
				 wqe->wr_id, wqe->opcode, wqe->length, st);
		if (st == IB_WC_SUCCESS)
			shca_drdma_fetched(qp, wqe);
		else
			wqe->dm_range = 0;
		p.w[0] = req->fetch;
		spin_lock(&eng->tx_lock);
		ret = shca_llq_push(&eng->tx_llq, qp->idx, qp->sdev->fn, &p,
				    st != IB_WC_SUCCESS);
		spin_unlock(&eng->tx_lock);
		if (ret < 0) {
			shca_txc_uncharge(qp, 1);
			break;	/* LLQ full: the WQE stays in the ring */
		}
		wqe->entry = ret;
		wqe->state = st == IB_WC_SUCCESS ? SHCA_WQE_QUEUED :
			     SHCA_WQE_DONE;
		wqe->status = st;
		if (st != IB_WC_SUCCESS && st != IB_WC_WR_FLUSH_ERR)
			failed = true;
		req->fetch++;
		n++;
	}
	if (failed)
		shca_qp_error(qp);
	return n;
}

/*
 * Fetch what every process QP of @sdev for which @want(qp, @arg) holds
 * has posted to its send ring (RTS only), and have the transmit stage
 * send it.  Every QP of the engine is looked at.  Process context.
 */
static void shca_qp_fetch_each(struct shca_dev *sdev,
			       bool (*want)(const struct shca_qp *qp,
					    const void *arg),
			       const void *arg)
{
	struct shca_qp *qp;
	unsigned long idx;
	void *entry;
	bool fetched;

	xa_for_each(&sdev->eng->qp_xa, idx, entry) {
		qp = shca_qp_get_idx(sdev->eng, idx);
		if (!qp)
			continue;
		fetched = false;
		if (qp->sdev == sdev && qp->user && want(qp, arg)) {
			spin_lock_bh(&qp->lock);
			if (qp->state == IB_QPS_RTS)
				fetched = shca_qp_fetch(qp) > 0;
			spin_unlock_bh(&qp->lock);
		}
		if (fetched)
			shca_engine_schedule(qp);
		shca_qp_put(qp);
	}
}

static bool shca_qp_ud_of_pd(const struct shca_qp *qp, const void *pd)
{
	return qp->type == IB_QPT_UD && qp->pd == pd;
}

/**
 * shca_qp_fetch_pd - fetch what a process's UD QPs of a PD have posted
 * @sdev: device
 * @pd: the PD, one of whose address handles is being destroyed
 *
 * A send WQE names its AH by handle, looked up when the WQE is fetched.
 * A process may destroy an AH right after posting sends through it (a
 * hardware HCA copies the address vector into the WQE when it is posted,
 * so that is safe there; mckey's sender does it): the WQEs posted so far
 * are fetched first and keep their copy of the address vector, and the
 * transmit stage sends them.  Process context.
 */
void shca_qp_fetch_pd(struct shca_dev *sdev, struct shca_pd *pd)
{
	shca_qp_fetch_each(sdev, shca_qp_ud_of_pd, pd);
}

static bool shca_qp_sends_to(const struct shca_qp *qp, const void *cq)
{
	return qp->scq == cq;
}

/**
 * shca_qp_fetch_cq - fetch what the process QPs completing their sends
 * into a CQ have posted
 * @sdev: device
 * @cq: the CQ, being resized
 *
 * A resize is judged on the completions the CQ holds.  Sends a process
 * posted before it (a store to the ring, which the engine may not have
 * read yet) are fetched here, so that those the engine completes at
 * once (UD) are in the CQ after shca_engine_flush_tx().  Process
 * context.
 */
void shca_qp_fetch_cq(struct shca_dev *sdev, struct shca_cq *cq)
{
	shca_qp_fetch_each(sdev, shca_qp_sends_to, cq);
}

/**
 * shca_rq_flush - complete the QP's receive WQEs with IB_WC_WR_FLUSH_ERR
 * (QP in error)
 * @qp: QP (caller must hold qp->lock)
 *
 * The WQE a message in progress holds (or a dropped UC message kept) is
 * the QP's, whether it came from the QP's RQ or from an SRQ: it is
 * completed here.  The RQ is then flushed whole; an SRQ's WQEs stay
 * there for its other QPs.
 */
void shca_rq_flush(struct shca_qp *qp)
{
	struct shca_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = qp->qpn,
		.port_num = 1,
	};
	u32 n;
	int ret;

	lockdep_assert_held(&qp->lock);
	if (qp->resp.in_send || qp->resp.rwqe_kept) {
		qp->resp.in_send = false;
		qp->resp.rwqe_kept = false;
		cqe.wr_id = qp->resp.rwqe->wr_id;
		shca_cq_post(qp->rcq, &cqe, false);
	}
	if (qp->srq || !qp->rq.entries)
		return;
	spin_lock(&qp->rq_lock);
	for (n = 0; n < qp->rq.entries; n++) {
		ret = shca_ring_get_rqe(&qp->rq, qp->max_recv_sge, 0,
					qp->resp.rwqe);
		/* a malformed WQE is consumed: flush it like the others */
		if (ret && ret != -EBADMSG)
			break;
		cqe.wr_id = qp->resp.rwqe->wr_id;
		shca_cq_post(qp->rcq, &cqe, false);
	}
	spin_unlock(&qp->rq_lock);
}

/**
 * shca_qp_flush - complete every outstanding WQE of a QP in error with
 * IB_WC_WR_FLUSH_ERR (the first failed one keeps its own status)
 * @qp: QP in the error state (caller must hold qp->lock)
 */
void shca_qp_flush(struct shca_qp *qp)
{
	u32 i;

	lockdep_assert_held(&qp->lock);
	shca_qp_fetch(qp);
	/* a flushed DRDMA WRITE no longer waits for its range */
	shca_drdma_unwait(qp);
	for (i = qp->req.comp; i != qp->req.fetch; i++) {
		struct shca_send_wqe *wqe = shca_qp_wqe(qp, i);

		if (wqe->state != SHCA_WQE_DONE)
			shca_wqe_done(qp, wqe, IB_WC_WR_FLUSH_ERR);
	}
	shca_req_flush(qp);
	shca_qp_complete(qp);
	shca_rq_flush(qp);
}

/*
 * IB_EVENT_QP_LAST_WQE_REACHED: a QP on an SRQ is in the error state, the
 * receive WQE it held is completed, and it takes no more from the SRQ;
 * its consumer may now drain its CQ and destroy it (the kernel's
 * ib_drain_rq() waits for this event).  Delivered from a work item,
 * outside qp->lock, since the consumer's handler may call verbs on the
 * QP.
 */
static void shca_qp_last_wqe_work(struct work_struct *work)
{
	struct shca_qp *qp = container_of(work, struct shca_qp,
					  last_wqe_work);
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = IB_EVENT_QP_LAST_WQE_REACHED,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/**
 * shca_qp_events_init - prepare a new QP's asynchronous events
 * @qp: QP being created
 *
 * Its destruction must call shca_qp_events_stop().
 */
void shca_qp_events_init(struct shca_qp *qp)
{
	INIT_WORK(&qp->last_wqe_work, shca_qp_last_wqe_work);
}

/**
 * shca_qp_events_stop - cancel the asynchronous events a QP has pending,
 * or wait for the one being delivered
 * @qp: QP being destroyed, in the reset state (so it raises no more)
 *
 * Sleeps.
 */
void shca_qp_events_stop(struct shca_qp *qp)
{
	cancel_work_sync(&qp->last_wqe_work);
}

/**
 * shca_qp_error - move a QP to the error state and flush it
 * @qp: QP (caller must hold qp->lock)
 *
 * A QP on an SRQ then raises IB_EVENT_QP_LAST_WQE_REACHED.
 */
void shca_qp_error(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->lock);

	if (qp->state == IB_QPS_ERR || qp->state == IB_QPS_RESET)
		return;
	trace_shca_qp_state(&qp->sdev->ibdev, qp->qpn, qp->state, IB_QPS_ERR);
	qp->state = IB_QPS_ERR;
	hrtimer_try_to_cancel(&qp->req.timer);
	shca_resp_drop_keys(qp);
	/* posts to a QP in error must ring, so they get flushed */
	shca_ring_set_flags(&qp->sq, SHCA_RING_F_ERROR |
			    SHCA_RING_F_NEED_DOORBELL);
	shca_ring_set_flags(&qp->rq, SHCA_RING_F_ERROR |
			    SHCA_RING_F_NEED_DOORBELL);
	shca_qp_flush(qp);
	if (qp->srq)
		schedule_work(&qp->last_wqe_work);
}
