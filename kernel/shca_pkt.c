// SPDX-License-Identifier: GPL-2.0
/*
 * shca packet construction shared by requester and responder.
 */
#include "shca.h"
#include "shca_hdr.h"
#include "shca_qp.h"

/**
 * shca_build_pkt - allocate a packet and write its transport headers
 * @qp: sending QP (caller must hold qp->lock)
 * @av: destination
 * @h: transport header fields; the BTH pad count and P_Key are filled in
 * @payload_len: payload bytes the caller will write at *@payload
 * @payload: where the payload goes (the pad after it is zeroed)
 *
 * Return: the skb (skb->data at the BTH) or NULL when out of memory.
 */
struct sk_buff *shca_build_pkt(struct shca_qp *qp, const struct shca_av *av,
			       struct shca_pkt_hdr *h, u32 payload_len,
			       u8 **payload)
{
	u32 hdr_len = shca_opcode_info(h->opcode)->hdr_len;
	u8 pad = shca_pad_count(payload_len);
	struct sk_buff *skb;

	h->pad_count = pad;
	h->pkey = SHCA_DEFAULT_PKEY;
	h->migreq = true;
	skb = shca_pkt_alloc(qp->sdev, av, hdr_len + payload_len + pad);
	if (!skb)
		return NULL;
	if (shca_hdr_build(skb->data, hdr_len, h) < 0) {
		kfree_skb(skb);
		return NULL;
	}
	*payload = skb->data + hdr_len;
	memset(*payload + payload_len, 0, pad);
	return skb;
}

/**
 * shca_send_pkt - transmit a packet of @qp
 * @qp: sending QP
 * @av: destination
 * @skb: from shca_build_pkt()
 *
 * The UDP source port spreads flows by QP pair, as the RDMA core does.
 *
 * Return: 0 or a negative errno (the packet is lost; RC recovers).
 */
int shca_send_pkt(struct shca_qp *qp, const struct shca_av *av,
		  struct sk_buff *skb)
{
	u32 fl = av->flow_label;

	if (!fl)
		fl = rdma_calc_flow_label(qp->qpn, qp->attr.dest_qp_num);
	return shca_pkt_xmit(qp->sdev, av, rdma_flow_label_to_udp_sport(fl),
			     skb);
}
