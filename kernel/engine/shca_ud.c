// SPDX-License-Identifier: GPL-2.0
/*
 * shca UD and GSI receive: a datagram placed into the next receive WQE
 * behind the 40 bytes of its GRH, and its completion with the sender's
 * address.
 */
#include <linux/if_vlan.h>
#include "shca.h"
#include "shca_av.h"
#include "shca_cqe.h"
#include "shca_hdr.h"
#include "shca_mem.h"
#include "shca_qpc.h"
#include "shca_resp.h"
#include "shca_ud.h"
#include "shca_resp_tx.h"
#include "shca_trace.h"

/* Write the 40-byte GRH area a UD receive starts with. */
static int shca_ud_put_grh(struct shca_qp *qp, struct sk_buff *skb)
{
	u8 grh[SHCA_GRH_LEN];

	shca_pkt_grh(skb, grh);
	return shca_sgl_copy_buf(&SHCA_SGL(qp, qp->resp.rwqe->sge,
					   qp->resp.rwqe->num_sge),
				 0, grh, SHCA_GRH_LEN, SHCA_TO_MR);
}

/*
 * A datagram that came up through a VLAN device (its arrival interface,
 * skb_iif) completes with that VLAN's id: the RDMA core builds a reply's
 * address from the completion and matches its VLAN against the GID
 * attributes (a VLAN's GIDs carry its id), so without it an rdma_cm
 * request over a VLAN finds no GID and is dropped.
 */
static void shca_ud_vlan(const struct shca_qp *qp, const struct sk_buff *skb,
			 struct shca_cqe *cqe)
{
	struct net_device *dev;

	if (skb->skb_iif == qp->sdev->ndev->ifindex)
		return;		/* the device's own netdev: no VLAN */
	rcu_read_lock();
	dev = dev_get_by_index_rcu(qp->sdev->net, skb->skb_iif);
	if (dev && is_vlan_dev(dev)) {
		cqe->vlan_id = vlan_dev_vlan_id(dev);
		cqe->wc_flags |= IB_WC_WITH_VLAN;
	}
	rcu_read_unlock();
}

/**
 * shca_ud_recv - a UD packet for a UD or GSI QP
 * @qp: QP (caller must hold qp->lock)
 * @skb: packet, consumed
 * @h: parsed transport headers
 * @hdr_len: their length
 */
void shca_ud_recv(struct shca_qp *qp, struct sk_buff *skb,
		  const struct shca_pkt_hdr *h, u32 hdr_len)
{
	u32 qkey = qp->type == IB_QPT_GSI ? SHCA_GSI_QKEY : qp->attr.qkey;
	u32 plen = shca_resp_plen(skb, h, hdr_len);
	bool v4 = ip_hdr(skb)->version == 4;
	struct shca_cqe cqe = {
		.opcode = IB_WC_RECV,
		.qp_num = qp->qpn,
		.port_num = 1,
		.wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE,
		.network_hdr_type = v4 ? SHCA_CQE_NET_IPV4 : SHCA_CQE_NET_IPV6,
	};
	int ret;

	lockdep_assert_held(&qp->lock);
	/* the CQE's value is the kernel's, as its wc becomes an ib_wc */
	BUILD_BUG_ON((int)SHCA_CQE_NET_IPV4 != (int)RDMA_NETWORK_IPV4 ||
		     (int)SHCA_CQE_NET_IPV6 != (int)RDMA_NETWORK_IPV6);

	if (!shca_resp_state_ok(qp)) {
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_QP_STATE);
		goto out;
	}
	if (h->deth.qkey != qkey) {
		shca_stat_inc(qp->sdev, SHCA_CNT_RX_DROP_BAD_KEY);
		goto out;
	}
	/*
	 * UD has no RNR: without a WQE the packet is lost.  Nor does a
	 * datagram too long for the next WQE fail it (the sender would
	 * never know, and a kernel consumer such as the MAD layer re-posts
	 * a buffer only after a good completion): it is dropped and the
	 * WQE waits for one that fits.
	 */
	ret = shca_resp_get_rwqe(qp, plen + SHCA_GRH_LEN);
	if (ret) {
		shca_stat_inc(qp->sdev, ret == -EMSGSIZE ?
			      SHCA_CNT_RX_DROP_TOO_LONG :
			      SHCA_CNT_RX_DROP_QUEUE_FULL);
		goto out;
	}
	cqe.wr_id = qp->resp.rwqe->wr_id;
	cqe.src_qp = h->deth.src_qpn;
	shca_ud_vlan(qp, skb, &cqe);
	cqe.byte_len = plen + SHCA_GRH_LEN;
	if (shca_ud_put_grh(qp, skb) ||
		   shca_sgl_copy_skb(&SHCA_SGL(qp, qp->resp.rwqe->sge,
					     qp->resp.rwqe->num_sge),
				     SHCA_GRH_LEN, skb, hdr_len, plen,
				     SHCA_TO_MR)) {
		cqe.status = IB_WC_LOC_PROT_ERR;
	} else {
		trace_shca_place(&qp->sdev->ibdev, qp->qpn, h->psn, h->opcode,
				 SHCA_GRH_LEN, plen);
	}
	if ((h->opcode & 0x1f) == SHCA_OP_SEND_ONLY_WITH_IMMEDIATE) {
		cqe.wc_flags |= IB_WC_WITH_IMM;
		cqe.ex = (__force u32)h->imm;
	}
	shca_cq_post(qp->rcq, &cqe, h->solicited);
out:
	kfree_skb(skb);
}
