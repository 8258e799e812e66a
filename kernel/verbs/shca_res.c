// SPDX-License-Identifier: GPL-2.0
/*
 * shca resource tracking details: what `rdma resource show qp -dd` prints
 * of a QP's engine state, for finding out why a connection stands still
 * (its requester's sequence numbers and work queue positions, what it
 * waits for, its doorbell state, its responder's expected PSN).
 */
#include <rdma/restrack.h>
#include "shca.h"
#include "shca_engine.h"
#include "shca_llq.h"
#include "shca_qpc.h"
#include "shca_res.h"
#include "shca_ring.h"

/* One QP's state, read under its lock and printed after. */
struct shca_res_qp {
	u32 psn, una_psn, fetch, comp, rd_atomic, epsn, msn;
	int sq_pending, llq_len, retry, rnr_retry;
	u32 flags;
	u32 db_state;
	u32 qp_credit_waits, ctx_credit_waits;
};

/* bits of shca_res_qp.flags, printed as "req_flags" */
enum {
	SHCA_RES_CUR = BIT(0),		/* a message is being sent */
	SHCA_RES_PEND = BIT(1),		/* the next WQE is taken from the LLQ */
	SHCA_RES_RETRY = BIT(2),	/* a replay is due */
	SHCA_RES_RNR_WAIT = BIT(3),	/* waiting out an RNR NAK */
	SHCA_RES_ACK_ARMED = BIT(4),	/* the ACK timer runs */
	SHCA_RES_HELD = BIT(5),		/* a doorbell call sends */
	SHCA_RES_SCHED = BIT(6),	/* on the transmit scheduler */
	SHCA_RES_DIRECT = BIT(7),	/* direct doorbells */
};

static void shca_res_qp_read(struct shca_qp *qp, struct shca_res_qp *r)
{
	struct shca_engine *eng = qp->sdev->eng;
	struct shca_req *req = &qp->req;

	spin_lock_bh(&qp->lock);
	r->psn = req->psn;
	r->una_psn = req->una_psn;
	r->fetch = req->fetch;
	r->comp = req->comp;
	r->rd_atomic = req->rd_atomic;
	r->retry = req->retry;
	r->rnr_retry = req->rnr_retry;
	r->epsn = qp->resp.epsn;
	r->msn = qp->resp.msn;
	r->sq_pending = qp->sq.ctrl ? shca_ring_pending(&qp->sq) : 0;
	r->db_state = qp->db.state;
	r->qp_credit_waits = qp->txc.qp_waits;
	r->ctx_credit_waits = qp->txc.ctx_waits;
	r->flags = (req->cur_valid ? SHCA_RES_CUR : 0) |
		   (req->pend_valid ? SHCA_RES_PEND : 0) |
		   (req->need_retry ? SHCA_RES_RETRY : 0) |
		   (req->rnr_wait ? SHCA_RES_RNR_WAIT : 0) |
		   (req->ack_armed ? SHCA_RES_ACK_ARMED : 0) |
		   (req->held ? SHCA_RES_HELD : 0) |
		   (READ_ONCE(qp->scheduled) ? SHCA_RES_SCHED : 0) |
		   (qp->db.direct ? SHCA_RES_DIRECT : 0);
	spin_lock(&eng->tx_lock);
	r->llq_len = shca_llq_len(&eng->tx_llq, qp->idx);
	spin_unlock(&eng->tx_lock);
	spin_unlock_bh(&qp->lock);
}

/**
 * shca_fill_res_qp_entry - a QP's driver details for the RDMA core's
 * resource tracking (netlink)
 * @msg: the netlink message being built
 * @ibqp: the QP
 *
 * Return: 0, or -EMSGSIZE when @msg is full.
 */
int shca_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct shca_qp *qp = to_sqp(ibqp);
	struct shca_res_qp r;
	struct nlattr *nest;

	shca_res_qp_read(qp, &r);
	nest = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32_hex(msg, "req_psn", r.psn) ||
	    rdma_nl_put_driver_u32_hex(msg, "una_psn", r.una_psn) ||
	    rdma_nl_put_driver_u32(msg, "fetched", r.fetch) ||
	    rdma_nl_put_driver_u32(msg, "completed", r.comp) ||
	    rdma_nl_put_driver_u32(msg, "sq_pending", r.sq_pending) ||
	    rdma_nl_put_driver_u32(msg, "llq_len", r.llq_len) ||
	    rdma_nl_put_driver_u32(msg, "rd_atomic", r.rd_atomic) ||
	    rdma_nl_put_driver_u32(msg, "retry", r.retry) ||
	    rdma_nl_put_driver_u32(msg, "rnr_retry", r.rnr_retry) ||
	    rdma_nl_put_driver_u32_hex(msg, "req_flags", r.flags) ||
	    rdma_nl_put_driver_u32(msg, "db_state", r.db_state) ||
	    rdma_nl_put_driver_u32_hex(msg, "resp_epsn", r.epsn) ||
	    rdma_nl_put_driver_u32(msg, "resp_msn", r.msn) ||
	    rdma_nl_put_driver_u32(msg, "qp_credit_waits", r.qp_credit_waits) ||
	    rdma_nl_put_driver_u32(msg, "ctx_credit_waits",
				   r.ctx_credit_waits)) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}
