// SPDX-License-Identifier: GPL-2.0
/*
 * shca responder: requests arriving at an RC or UC QP.  Sequence checks
 * (duplicates answered again from the responder resources, gaps NAKed
 * once), SEND into receive WQEs, RDMA WRITE and READ and ATOMIC through
 * the QP's R_Key slots (shca_rkey.c), receive completions.  What goes
 * back is sent by shca_resp_tx.c.
 *
 * Every function here runs with qp->lock held, unless it says otherwise.
 */
#include "shca.h"
#include "shca_cqe.h"
#include "shca_engine.h"
#include "shca_hdr.h"
#include "shca_mem.h"
#include "shca_qpc.h"
#include "shca_resp.h"
#include "shca_resp_tx.h"
#include "shca_rkey.h"
#include "shca_rqe.h"
#include "shca_wq.h"
#include "shca_memreg.h"
#include "shca_trace.h"

/*
 * Post a receive completion for the WQE in qp->resp.rwqe; qp->resp.se
 * says whether the message was solicited.
 */
static void shca_resp_complete_recv(struct shca_qp *qp, u8 opcode,
				    enum ib_wc_status status, u32 byte_len,
				    u16 wc_flags, u32 ex)
{
	struct shca_cqe cqe = {
		.wr_id = qp->resp.rwqe->wr_id,
		.status = status,
		.opcode = opcode,
		.wc_flags = wc_flags,
		.byte_len = byte_len,
		.ex = ex,
		.qp_num = qp->qpn,
		.port_num = 1,
	};

	shca_cq_post(qp->rcq, &cqe, qp->resp.se);
}

/**
 * shca_resp_get_rwqe - take the next receive WQE into qp->resp.rwqe
 * @qp: QP (caller must hold qp->lock)
 * @need: bytes the WQE must hold to be taken (a UD datagram and its GRH);
 *	0 for RC and UC, where a message too long fails its WQE instead
 *
 * A malformed WQE completes with IB_WC_LOC_QP_OP_ERR and moves the QP to
 * error.
 *
 * Return: 0, -EAGAIN (none posted), -EMSGSIZE (the next WQE is smaller
 * than @need and was left in place) or another negative errno (the
 * caller NAKs).
 */
int shca_resp_get_rwqe(struct shca_qp *qp, u32 need)
{
	int ret;

	lockdep_assert_held(&qp->lock);
	if (qp->resp.rwqe_kept) {
		/* taken by a UC message that was dropped: this one's now */
		qp->resp.rwqe_kept = false;
		return 0;
	}
	if (qp->srq) {
		ret = shca_srq_get_wqe(qp->srq, need, qp->resp.rwqe);
	} else {
		spin_lock(&qp->rq_lock);
		ret = shca_ring_get_rqe(&qp->rq, qp->max_recv_sge, need,
					qp->resp.rwqe);
		spin_unlock(&qp->rq_lock);
	}
	if (ret == -EBADMSG) {
		shca_resp_complete_recv(qp, IB_WC_RECV, IB_WC_LOC_QP_OP_ERR,
					0, 0, 0);
		shca_qp_error(qp);
	}
	return ret;
}

u32 shca_resp_plen(struct sk_buff *skb, const struct shca_pkt_hdr *h,
		   u32 hdr_len)
{
	return shca_payload_len(skb->len + SHCA_ICRC_LEN, hdr_len,
				h->pad_count);
}

/*
 * SEND packets.  Returns 0, or a NAK code; -EAGAIN means no receive WQE
 * (RNR).
 */
static int shca_resp_send(struct shca_qp *qp, struct sk_buff *skb,
			  const struct shca_pkt_hdr *h, u32 hdr_len)
{
	const struct shca_opcode_info *oi = shca_opcode_info(h->opcode);
	struct shca_resp *resp = &qp->resp;
	u32 plen = shca_resp_plen(skb, h, hdr_len);
	u16 flags = 0;
	u32 ex = 0;
	int ret;

	if (oi->flags & SHCA_OPF_FIRST) {
		ret = shca_resp_get_rwqe(qp, 0);
		if (ret == -EAGAIN)
			return -EAGAIN;
		if (ret) {
			shca_qp_error(qp);
			return SHCA_NAK_REMOTE_OP_ERR;
		}
		resp->in_send = true;
		resp->recv_off = 0;
	}
	if (plen > resp->rwqe->length - min(resp->recv_off,
					    resp->rwqe->length)) {
		shca_resp_complete_recv(qp, IB_WC_RECV, IB_WC_LOC_LEN_ERR,
					0, 0, 0);
		resp->in_send = false;
		return SHCA_NAK_INVALID_REQ;
	}
	ret = shca_sgl_copy_skb(&SHCA_SGL(qp, resp->rwqe->sge,
					  resp->rwqe->num_sge),
				resp->recv_off, skb, hdr_len, plen, SHCA_TO_MR);
	if (ret) {
		shca_resp_complete_recv(qp, IB_WC_RECV, IB_WC_LOC_PROT_ERR,
					0, 0, 0);
		resp->in_send = false;
		return SHCA_NAK_REMOTE_OP_ERR;
	}
	trace_shca_place(&qp->sdev->ibdev, qp->qpn, h->psn, h->opcode,
			 resp->recv_off, plen);
	resp->recv_off += plen;
	if (!(oi->flags & SHCA_OPF_LAST))
		return 0;

	if (oi->flags & SHCA_OPF_IMM) {
		flags |= IB_WC_WITH_IMM;
		ex = (__force u32)h->imm;
	} else if (oi->flags & SHCA_OPF_INV) {
		if (shca_mr_invalidate(qp->sdev, qp->pd, h->ieth.rkey, true)) {
			shca_resp_complete_recv(qp, IB_WC_RECV,
						IB_WC_REM_INV_REQ_ERR, 0, 0, 0);
			resp->in_send = false;
			return SHCA_NAK_INVALID_REQ;
		}
		flags |= IB_WC_WITH_INVALIDATE;
		ex = h->ieth.rkey;
	}
	shca_resp_complete_recv(qp, IB_WC_RECV, IB_WC_SUCCESS, resp->recv_off,
				flags, ex);
	resp->in_send = false;
	return 0;
}

static bool shca_resp_access_ok(struct shca_qp *qp, int access)
{
	return (qp->attr.qp_access_flags & access) == access;
}

/* The RDMA WRITE in progress is over (done or abandoned): close its slot. */
static void shca_resp_write_end(struct shca_qp *qp)
{
	struct shca_resp *resp = &qp->resp;

	resp->in_write = false;
	shca_rkey_close(qp, resp->wr_slot);
	resp->wr_slot = -1;
}

/*
 * A WRITE's FIRST (or ONLY) packet: note the message and open its R_Key
 * slot with a full check of the whole range (none for a zero-length
 * WRITE, which accesses no memory).  Returns 0 or a NAK code.
 */
static int shca_resp_write_begin(struct shca_qp *qp,
				 const struct shca_pkt_hdr *h)
{
	struct shca_resp *resp = &qp->resp;
	int slot;

	shca_resp_write_end(qp);
	resp->in_write = true;
	resp->wr_va = h->reth.va;
	resp->wr_rkey = h->reth.rkey;
	resp->wr_resid = h->reth.dma_len;
	resp->wr_len = h->reth.dma_len;
	if (!resp->wr_resid)
		return 0;
	slot = shca_rkey_open(qp, resp->wr_rkey, resp->wr_va, resp->wr_resid,
			      IB_ACCESS_REMOTE_WRITE);
	if (slot < 0)
		return slot == -ENOSPC ? SHCA_NAK_REMOTE_OP_ERR :
		       SHCA_NAK_REMOTE_ACCESS_ERR;
	resp->wr_slot = slot;
	return 0;
}

/*
 * RDMA WRITE packets.  Returns 0 or a NAK code; -EAGAIN = RNR.  The
 * FIRST packet checks the R_Key for the whole message and opens a slot;
 * every packet's payload is placed through the slot (shca_rkey.c), so an
 * invalidation stops the WRITE at its next packet.
 */
static int shca_resp_write(struct shca_qp *qp, struct sk_buff *skb,
			   const struct shca_pkt_hdr *h, u32 hdr_len)
{
	const struct shca_opcode_info *oi = shca_opcode_info(h->opcode);
	struct shca_resp *resp = &qp->resp;
	u32 plen = shca_resp_plen(skb, h, hdr_len);
	int ret;

	if (!shca_resp_access_ok(qp, IB_ACCESS_REMOTE_WRITE))
		return SHCA_NAK_INVALID_REQ;
	if ((oi->flags & SHCA_OPF_IMM) && !resp->in_send) {
		/*
		 * The packet carrying the immediate (ONLY or LAST) takes its
		 * receive WQE before anything changes: after an RNR NAK the
		 * requester sends just this packet again, and the WRITE must
		 * still be in progress then.
		 */
		ret = shca_resp_get_rwqe(qp, 0);
		if (ret == -EAGAIN)
			return -EAGAIN;
		if (ret)
			return SHCA_NAK_REMOTE_OP_ERR;
		resp->in_send = true;
	}
	if (oi->flags & SHCA_OPF_FIRST) {
		ret = shca_resp_write_begin(qp, h);
		if (ret)
			return ret;
	}
	if (plen > resp->wr_resid ||
	    (!(oi->flags & SHCA_OPF_LAST) && plen != resp->seg))
		return SHCA_NAK_INVALID_REQ;
	if (plen && shca_rkey_write_skb(qp, resp->wr_slot, resp->wr_va, skb,
					hdr_len, plen))
		return SHCA_NAK_REMOTE_ACCESS_ERR;
	trace_shca_place(&qp->sdev->ibdev, qp->qpn, h->psn, h->opcode,
			 resp->wr_len - resp->wr_resid, plen);
	resp->wr_va += plen;
	resp->wr_resid -= plen;
	if (!(oi->flags & SHCA_OPF_LAST))
		return 0;
	shca_resp_write_end(qp);
	if (resp->wr_resid)
		return SHCA_NAK_INVALID_REQ;
	if (!(oi->flags & SHCA_OPF_IMM))
		return 0;
	resp->in_send = false;
	shca_resp_complete_recv(qp, IB_WC_RECV_RDMA_WITH_IMM, IB_WC_SUCCESS,
				resp->wr_len, IB_WC_WITH_IMM,
				(__force u32)h->imm);
	return 0;
}

static struct shca_rd_res *shca_resp_new_res(struct shca_qp *qp)
{
	struct shca_resp *resp = &qp->resp;
	u32 n = shca_resp_nres(qp);
	struct shca_rd_res *res;

	res = &resp->res[resp->res_next % n];
	if (res->valid && res->pending && !res->sent)
		return NULL;	/* more outstanding than negotiated */
	/*
	 * The oldest resource, answered once and queued again for a
	 * duplicate: the requester has completed it since (it used the
	 * credit for this request), so that answer is no longer needed.
	 */
	if (res->valid && res->pending && resp->res_out)
		resp->res_out--;
	if (res == resp->rd_res)
		shca_resp_read_stop(qp);
	resp->res_next++;
	memset(res, 0, sizeof(*res));
	res->valid = true;
	res->pending = true;
	resp->res_out++;
	/* responses acknowledge every earlier request */
	resp->ack_pending = false;
	return res;
}

/* Give back a resource taken for a request that failed. */
static void shca_resp_drop_res(struct shca_qp *qp, struct shca_rd_res *res)
{
	res->valid = false;
	res->pending = false;
	qp->resp.res_out--;
}

static int shca_resp_read(struct shca_qp *qp, const struct shca_pkt_hdr *h)
{
	u32 mtu = shca_qp_mtu(qp);
	struct shca_rd_res *res;

	if (!shca_resp_access_ok(qp, IB_ACCESS_REMOTE_READ))
		return SHCA_NAK_INVALID_REQ;
	if (h->reth.dma_len > SHCA_MAX_MSG_SIZE)
		return SHCA_NAK_INVALID_REQ;
	/* checked now; its responses open a slot when they are built */
	if (h->reth.dma_len &&
	    shca_rkey_check(qp, h->reth.rkey, h->reth.va, h->reth.dma_len,
			    IB_ACCESS_REMOTE_READ))
		return SHCA_NAK_REMOTE_ACCESS_ERR;
	res = shca_resp_new_res(qp);
	if (!res)
		return SHCA_NAK_INVALID_REQ;
	res->mtu = mtu;
	res->first_psn = h->psn;
	res->next_psn = h->psn;
	res->last_psn = shca_psn_add(h->psn,
				     max_t(u32, DIV_ROUND_UP(h->reth.dma_len,
							     mtu), 1) - 1);
	res->va = h->reth.va;
	res->rkey = h->reth.rkey;
	res->length = h->reth.dma_len;
	qp->resp.epsn = shca_psn_add(res->last_psn, 1);
	return 0;
}

static int shca_resp_atomic(struct shca_qp *qp, const struct shca_pkt_hdr *h)
{
	bool cmp = (h->opcode & 0x1f) == SHCA_OP_COMPARE_SWAP;
	struct shca_atomic a = {
		.op = cmp ? SHCA_ATOMIC_CMP_SWAP : SHCA_ATOMIC_FETCH_ADD,
		.compare_add = cmp ? h->atomic_eth.compare :
				     h->atomic_eth.swap_add,
		.swap = h->atomic_eth.swap_add,
	};
	struct shca_rd_res *res;
	int slot, ret;

	if (!shca_resp_access_ok(qp, IB_ACCESS_REMOTE_ATOMIC))
		return SHCA_NAK_INVALID_REQ;
	if (h->atomic_eth.va & 7)
		return SHCA_NAK_INVALID_REQ;
	slot = shca_rkey_open(qp, h->atomic_eth.rkey, h->atomic_eth.va,
			      sizeof(u64), IB_ACCESS_REMOTE_ATOMIC);
	if (slot < 0)
		return slot == -ENOSPC ? SHCA_NAK_REMOTE_OP_ERR :
		       SHCA_NAK_REMOTE_ACCESS_ERR;
	res = shca_resp_new_res(qp);
	if (!res) {
		shca_rkey_close(qp, slot);
		return SHCA_NAK_INVALID_REQ;
	}
	ret = shca_rkey_atomic(qp, slot, h->atomic_eth.va, &a);
	shca_rkey_close(qp, slot);
	if (ret) {
		shca_resp_drop_res(qp, res);
		return SHCA_NAK_REMOTE_ACCESS_ERR;
	}
	res->atomic = true;
	res->first_psn = h->psn;
	res->last_psn = h->psn;
	res->next_psn = h->psn;
	res->orig = a.orig;
	return 0;
}

/*
 * A resource answering the request @h with one READ response without
 * data (FLUSH, ATOMIC WRITE; IBA 1.5).  NULL when more are outstanding
 * than negotiated.
 */
static struct shca_rd_res *shca_resp_empty_res(struct shca_qp *qp,
					       const struct shca_pkt_hdr *h)
{
	struct shca_rd_res *res = shca_resp_new_res(qp);

	if (!res)
		return NULL;
	res->mtu = shca_qp_mtu(qp);
	res->first_psn = h->psn;
	res->last_psn = h->psn;
	res->next_psn = h->psn;
	return res;
}

/* The rights a FLUSH to placement types @plt needs; 0 if none known. */
static int shca_flush_access(u8 plt)
{
	int access = 0;

	if (plt & ~(SHCA_FETH_GLOBAL | SHCA_FETH_PERSISTENT))
		return 0;
	if (plt & SHCA_FETH_GLOBAL)
		access |= SHCA_ACCESS_FLUSH_GLOBAL;
	if (plt & SHCA_FETH_PERSISTENT)
		access |= SHCA_ACCESS_FLUSH_PERSISTENT;
	return access;
}

/*
 * FLUSH: the QP and the region must allow the placement type asked for
 * (the range must lie in the region, or the whole region is meant).
 * Every request before it was executed in PSN order under this QP's
 * lock, so its WRITEs and ATOMIC WRITEs are in memory: a full barrier
 * makes them visible to every CPU before the answer leaves.  Persistence
 * is never granted (no MR may allow it).  Returns 0, a NAK code, or
 * -EBUSY when every responder resource still owes its response: rdma_rxe
 * does not count FLUSHes against the READ/atomic depth, so this is not
 * taken as the requester's error; the FLUSH is dropped unanswered and
 * sent again.
 */
static int shca_resp_flush(struct shca_qp *qp, const struct shca_pkt_hdr *h)
{
	int access = shca_flush_access(h->feth.plt);
	int ret;

	if (!access || h->feth.sel > SHCA_FETH_MR ||
	    !shca_resp_access_ok(qp, access))
		return SHCA_NAK_INVALID_REQ;
	if (h->feth.sel == SHCA_FETH_MR)
		ret = shca_rkey_check_whole(qp, h->reth.rkey, access);
	else
		ret = shca_rkey_check(qp, h->reth.rkey, h->reth.va,
				      h->reth.dma_len, access);
	if (ret)
		return SHCA_NAK_REMOTE_ACCESS_ERR;
	/* the placed bytes before the response that says they are placed */
	smp_mb();
	return shca_resp_empty_res(qp, h) ? 0 : -EBUSY;
}

/*
 * ATOMIC WRITE: 8 bytes to an aligned address of a region that allows
 * RDMA WRITE, stored at once (after everything placed before them).
 * Returns 0 or a NAK code.
 */
static int shca_resp_atomic_write(struct shca_qp *qp, struct sk_buff *skb,
				  const struct shca_pkt_hdr *h, u32 hdr_len)
{
	struct shca_atomic a = { .op = SHCA_ATOMIC_STORE };
	struct shca_rd_res *res;
	int slot, ret;

	if (!shca_resp_access_ok(qp, IB_ACCESS_REMOTE_WRITE))
		return SHCA_NAK_INVALID_REQ;
	if (h->reth.dma_len != sizeof(u64) || h->reth.va & 7 ||
	    shca_resp_plen(skb, h, hdr_len) != sizeof(u64) ||
	    skb_copy_bits(skb, hdr_len, &a.swap, sizeof(u64)))
		return SHCA_NAK_INVALID_REQ;
	slot = shca_rkey_open(qp, h->reth.rkey, h->reth.va, sizeof(u64),
			      IB_ACCESS_REMOTE_WRITE);
	if (slot < 0)
		return slot == -ENOSPC ? SHCA_NAK_REMOTE_OP_ERR :
		       SHCA_NAK_REMOTE_ACCESS_ERR;
	res = shca_resp_empty_res(qp, h);
	if (!res) {
		shca_rkey_close(qp, slot);
		return SHCA_NAK_INVALID_REQ;
	}
	ret = shca_rkey_atomic(qp, slot, h->reth.va, &a);
	shca_rkey_close(qp, slot);
	if (ret) {
		shca_resp_drop_res(qp, res);
		return SHCA_NAK_REMOTE_ACCESS_ERR;
	}
	trace_shca_place(&qp->sdev->ibdev, qp->qpn, h->psn, h->opcode, 0,
			 sizeof(u64));
	return 0;
}

/* Largest path MTU the QP has had since RTR. */
static u32 shca_resp_max_seg(struct shca_qp *qp)
{
	u32 m = qp->resp.mtu_seen & 0x3e;	/* IB_MTU_256..IB_MTU_4096 */

	return m ? ib_mtu_enum_to_int((enum ib_mtu)__fls(m)) : 0;
}

/* Is @plen one of the path MTUs the QP has had since RTR? */
static bool shca_resp_seg_ok(struct shca_qp *qp, u32 plen)
{
	u32 m = qp->resp.mtu_seen & 0x3e;

	return plen >= 256 && plen <= 4096 && is_power_of_2(plen) &&
	       (m & (1U << (ilog2(plen) - 7)));
}

/*
 * Payload length rules of a SEND or WRITE packet.  A multi-packet message
 * is cut into segments of the path MTU: its FIRST packet carries exactly
 * one segment, every MIDDLE the same, its LAST at most that and not
 * nothing; an ONLY packet at most the MTU.  "The path MTU" is the one the
 * requester cut the message with: the current one, or one the QP had
 * before a path MTU change (a message sent before the change may be
 * retransmitted after it).  A FIRST packet sets the segment size.
 */
static bool shca_resp_len_ok(struct shca_qp *qp,
			     const struct shca_opcode_info *oi, u32 plen)
{
	struct shca_resp *resp = &qp->resp;

	if (!(oi->flags & (SHCA_OPF_SEND | SHCA_OPF_WRITE)))
		return true;
	if ((oi->flags & SHCA_OPF_ONLY) == SHCA_OPF_ONLY)
		return plen <= shca_resp_max_seg(qp);
	if (oi->flags & SHCA_OPF_FIRST) {
		if (!shca_resp_seg_ok(qp, plen))
			return false;
		resp->seg = plen;
		return true;
	}
	if (!(oi->flags & SHCA_OPF_LAST))
		return plen == resp->seg;
	return plen && plen <= resp->seg;
}

/* Is @op (low five bits) the right next packet of the message? */
static bool shca_resp_seq_ok(struct shca_qp *qp,
			     const struct shca_opcode_info *oi)
{
	if (qp->resp.in_write)
		return (oi->flags & SHCA_OPF_WRITE) &&
		       !(oi->flags & SHCA_OPF_FIRST);
	if (qp->resp.in_send)
		return (oi->flags & SHCA_OPF_SEND) &&
		       !(oi->flags & SHCA_OPF_FIRST);
	return !!(oi->flags & SHCA_OPF_FIRST);
}

/* A duplicate request: answer it again, never execute it again. */
static void shca_resp_duplicate(struct shca_qp *qp,
				const struct shca_pkt_hdr *h)
{
	struct shca_resp *resp = &qp->resp;
	u32 i, n = shca_resp_nres(qp);
	const struct shca_opcode_info *oi = shca_opcode_info(h->opcode);
	struct shca_rd_res *res;

	shca_stat_inc(qp->sdev, SHCA_CNT_DUP_REQ);
	/*
	 * SEND/WRITE: acknowledge everything received again, after the
	 * READ/ATOMIC responses still to go when there are some.  Only
	 * when the newest request is a SEND/WRITE (ack_psn is its PSN): a
	 * plain ACK must not carry the PSN of a READ/ATOMIC, which only
	 * its response acknowledges (rdma_rxe completes a READ/ATOMIC on
	 * such an ACK, without its data), and an ACK for an older PSN
	 * could reach the requester in the middle of a READ's responses.
	 * Behind this duplicate the requester resends that READ/ATOMIC
	 * too, and its response acknowledges everything before it.
	 */
	if (!(oi->flags & SHCA_OPF_RES_REQ)) {
		if (resp->ack_psn != shca_psn_add(resp->epsn, -1))
			return;
		if (resp->res_out || !shca_resp_may_send(qp))
			resp->ack_pending = true;
		else
			shca_resp_send_ack(qp, resp->ack_psn,
					   shca_aeth_ack(SHCA_AETH_CREDITS_INVALID));
		return;
	}
	for (i = 0; i < n; i++) {
		res = &resp->res[i];
		if (!res->valid ||
		    shca_psn_diff(h->psn, res->first_psn) < 0 ||
		    shca_psn_diff(h->psn, res->last_psn) > 0)
			continue;
		if (!!(oi->flags & SHCA_OPF_ATOMIC) != res->atomic)
			return;
		/* answered from the saved resource: never executed again */
		shca_stat_inc(qp->sdev, SHCA_CNT_DUP_RD_ATOMIC);
		if (!res->pending) {
			res->pending = true;
			resp->res_out++;
		}
		if (shca_psn_diff(h->psn, res->next_psn) < 0 ||
		    !res->atomic)
			res->next_psn = h->psn;
		return;
	}
}

static void shca_resp_rnr(struct shca_qp *qp, u32 psn)
{
	shca_resp_nak(qp, psn, shca_aeth_rnr_nak(qp->attr.min_rnr_timer));
}

/* An in-sequence RC request. */
static void shca_resp_rc(struct shca_qp *qp, struct sk_buff *skb,
			 const struct shca_pkt_hdr *h, u32 hdr_len)
{
	const struct shca_opcode_info *oi = shca_opcode_info(h->opcode);
	struct shca_resp *resp = &qp->resp;
	int ret;

	/* the PSN a NAK asked for arrived: a NAK still waiting is moot */
	resp->nak_sent = false;
	resp->nak_pending = false;
	resp->se = h->solicited;
	if (!shca_resp_seq_ok(qp, oi) ||
	    !shca_resp_len_ok(qp, oi, shca_resp_plen(skb, h, hdr_len))) {
		shca_resp_nak_fatal(qp, h->psn, SHCA_NAK_INVALID_REQ);
		return;
	}
	if (oi->flags & SHCA_OPF_SEND)
		ret = shca_resp_send(qp, skb, h, hdr_len);
	else if (oi->flags & SHCA_OPF_WRITE)
		ret = shca_resp_write(qp, skb, h, hdr_len);
	else if (oi->flags & SHCA_OPF_READ)
		ret = shca_resp_read(qp, h);
	else if (oi->flags & SHCA_OPF_FLUSH)
		ret = shca_resp_flush(qp, h);
	else if (oi->flags & SHCA_OPF_ATOMIC_WRITE)
		ret = shca_resp_atomic_write(qp, skb, h, hdr_len);
	else
		ret = shca_resp_atomic(qp, h);

	if (ret == -EAGAIN) {
		shca_resp_rnr(qp, h->psn);
		return;
	}
	if (ret == -EBUSY) {
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_FLUSH_RES);
		return;
	}
	if (ret) {
		shca_resp_nak_fatal(qp, h->psn, ret);
		return;
	}
	if (oi->flags & SHCA_OPF_READ)
		return;		/* epsn moved past the responses */
	if (oi->flags & SHCA_OPF_LAST)
		resp->msn = (resp->msn + 1) & 0xffffff;
	if ((oi->flags & (SHCA_OPF_SEND | SHCA_OPF_LAST)) ==
	    (SHCA_OPF_SEND | SHCA_OPF_LAST))
		WRITE_ONCE(resp->sends, resp->sends + 1);
	resp->epsn = shca_psn_add(h->psn, 1);
	if (oi->flags & (SHCA_OPF_FLUSH | SHCA_OPF_ATOMIC_WRITE)) {
		/* answered now if nothing is owed before it: its resource frees */
		if (resp->res_out == 1)
			shca_resp_transmit(qp, 1);
		return;
	}
	if (oi->flags & SHCA_OPF_RES_REQ)
		return;		/* a resource answers it */
	/*
	 * Coalescing: an ACK is owed only when the requester asks for one
	 * (AckReq); it then acknowledges everything up to this PSN.
	 */
	resp->ack_psn = h->psn;
	if (!h->ack_req)
		return;
	resp->ack_pending = true;
	if (!resp->res_out)
		shca_resp_transmit(qp, 1);
}

/*
 * UC: drop the message in progress (UC has no acknowledgements: a gap, a
 * packet out of sequence or one that does not fit just ends it).  A
 * receive WQE it took (a SEND, or the packet of a WRITE carrying the
 * immediate) was not used up: it is kept for the next message, neither
 * completed nor lost.
 */
static void shca_resp_uc_drop(struct shca_qp *qp)
{
	struct shca_resp *resp = &qp->resp;

	if (resp->in_send)
		resp->rwqe_kept = true;
	resp->in_send = false;
	shca_resp_write_end(qp);
}

static void shca_resp_uc(struct shca_qp *qp, struct sk_buff *skb,
			 const struct shca_pkt_hdr *h, u32 hdr_len)
{
	const struct shca_opcode_info *oi = shca_opcode_info(h->opcode);
	struct shca_resp *resp = &qp->resp;

	if (h->psn != resp->epsn) {
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_PSN);
		shca_resp_uc_drop(qp);
		resp->epsn = shca_psn_add(h->psn, 1);
		if (!(oi->flags & SHCA_OPF_FIRST))
			return;
	} else {
		resp->epsn = shca_psn_add(h->psn, 1);
	}
	if (!shca_resp_seq_ok(qp, oi)) {
		shca_resp_uc_drop(qp);
		if (!(oi->flags & SHCA_OPF_FIRST))
			return;
	}
	/* UC drops what it cannot take; no NAK, no RNR */
	resp->se = h->solicited;
	if (!shca_resp_len_ok(qp, oi, shca_resp_plen(skb, h, hdr_len))) {
		shca_resp_uc_drop(qp);
		return;
	}
	if (oi->flags & SHCA_OPF_SEND) {
		/* a failed SEND completed its WQE with the error */
		if (shca_resp_send(qp, skb, h, hdr_len))
			resp->in_send = false;
	} else if (shca_resp_write(qp, skb, h, hdr_len)) {
		shca_resp_uc_drop(qp);
	}
}

/**
 * shca_resp_recv - responder: a request packet for an RC or UC QP
 * @qp: QP (caller must hold qp->lock)
 * @skb: packet, consumed
 * @h: parsed transport headers
 * @hdr_len: their length
 */
void shca_resp_recv(struct shca_qp *qp, struct sk_buff *skb,
		    const struct shca_pkt_hdr *h, u32 hdr_len)
{
	struct shca_resp *resp = &qp->resp;
	s32 diff;

	lockdep_assert_held(&qp->lock);
	if (!shca_resp_state_ok(qp)) {
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_QP_STATE);
		goto out;
	}
	if (qp->type == IB_QPT_UC) {
		shca_resp_uc(qp, skb, h, hdr_len);
		goto out;
	}
	if (resp->fatal_pending) {
		/* a request failed: nothing after it is taken */
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_QP_STATE);
		goto out;
	}
	diff = shca_psn_diff(h->psn, resp->epsn);
	if (diff > 0) {
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_PSN);
		if (!resp->nak_sent) {
			resp->nak_sent = true;
			shca_resp_nak(qp, resp->epsn,
				      shca_aeth_nak(SHCA_NAK_PSN_SEQ_ERR));
		}
	} else if (diff < 0) {
		shca_resp_duplicate(qp, h);
	} else {
		shca_resp_rc(qp, skb, h, hdr_len);
	}
out:
	kfree_skb(skb);
}

/**
 * shca_resp_init - responder state of a new QP
 * @qp: QP being created
 */
void shca_resp_init(struct shca_qp *qp)
{
	qp->resp.wr_slot = -1;
	qp->resp.rd_slot = -1;
	init_waitqueue_head(&qp->resp.ack_wq);
	hrtimer_init(&qp->resp.held_timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL_SOFT);
	qp->resp.held_timer.function = shca_resp_held_fn;
}

/**
 * shca_resp_drop_keys - close the R_Key slots of the RDMA operations in
 *	progress (the QP stops executing them: error, reset)
 * @qp: QP (caller must hold qp->lock)
 */
void shca_resp_drop_keys(struct shca_qp *qp)
{
	struct shca_resp *resp = &qp->resp;

	lockdep_assert_held(&qp->lock);
	resp->in_write = false;
	resp->wr_slot = -1;
	resp->rd_slot = -1;
	resp->rd_res = NULL;
	shca_rkey_close_all(qp);
}

/**
 * shca_resp_reset - responder back to its initial state
 * @qp: QP (caller must hold qp->lock)
 */
void shca_resp_reset(struct shca_qp *qp)
{
	struct shca_resp *resp = &qp->resp;

	lockdep_assert_held(&qp->lock);
	shca_resp_drop_keys(qp);
	resp->epsn = qp->attr.rq_psn & 0xffffff;
	resp->ack_psn = shca_psn_add(resp->epsn, -1);
	resp->msn = 0;
	resp->nak_sent = false;
	resp->in_send = false;
	resp->rwqe_kept = false;
	resp->ack_pending = false;
	resp->fatal_pending = false;
	resp->nak_pending = false;
	resp->res_out = 0;
	resp->res_next = 0;
	memset(resp->res, 0, sizeof(resp->res));
	resp->seg = 0;
	resp->mtu_seen = 0;
	if (qp->attr.path_mtu >= IB_MTU_256 && qp->attr.path_mtu <= IB_MTU_4096)
		resp->mtu_seen = 1U << qp->attr.path_mtu;
}
