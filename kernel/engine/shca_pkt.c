// SPDX-License-Identifier: GPL-2.0
/*
 * shca packet construction shared by requester and responder.
 *
 * A packet's payload reaches the skb one of two ways:
 *  - by reference: the pages of the source MR become page fragments of
 *    the skb (headers in the linear part, a trailer fragment for the pad
 *    and the ICRC), so the CPU never copies the payload on transmit; the
 *    ICRC is computed over the fragments when the packet is sent;
 *  - by copy into the linear part: UC and UD packets, inline data,
 *    payloads shorter than SHCA_FRAG_MIN, a netdev without scatter-gather
 *    (NETIF_F_SG: the stack would copy anyway), SGE lists needing more
 *    fragments than an skb has, and memory that must not be referenced
 *    (slab).
 */
#include "shca.h"
#include "shca_hdr.h"
#include "shca_qpc.h"
#include "shca_pkt.h"
#include "shca_udp_tx.h"
#include "shca_engine.h"
#include "shca_mem.h"
#include "shca_av.h"

/*
 * Payloads shorter than this are copied: below it a page fragment (page
 * reference, trailer allocation, fragment walk on both sides) costs about
 * what the copy saves.
 */
#define SHCA_FRAG_MIN		256

/*
 * Allocate a packet for @payload_len bytes of payload and write its
 * transport headers; the linear part holds the payload and pad too when
 * @linear.
 */
static struct sk_buff *shca_pkt_new(struct shca_qp *qp,
				    const struct shca_av *av,
				    struct shca_pkt_hdr *h, u32 payload_len,
				    bool linear)
{
	u32 hdr_len = shca_opcode_info(h->opcode)->hdr_len;
	u8 pad = shca_pad_count(payload_len);
	struct sk_buff *skb;

	h->pad_count = pad;
	h->pkey = SHCA_DEFAULT_PKEY;
	h->migreq = true;
	skb = shca_pkt_alloc(qp->sdev, av,
			     hdr_len + (linear ? payload_len + pad : 0));
	if (!skb)
		return NULL;
	if (shca_hdr_build(skb->data, hdr_len, h) < 0) {
		kfree_skb(skb);
		return NULL;
	}
	return skb;
}

/**
 * shca_build_pkt - allocate a packet and write its transport headers
 * @qp: sending QP (caller holds qp->lock, or sends a deferred ACK, which
 *	needs no lock: only the QP's device is used)
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
	struct sk_buff *skb;

	lockdep_assert(shca_qp_may_tx(qp));
	skb = shca_pkt_new(qp, av, h, payload_len, true);
	if (!skb)
		return NULL;
	*payload = skb->data + hdr_len;
	memset(*payload + payload_len, 0, h->pad_count);
	return skb;
}

/**
 * shca_build_pkt_room - a packet whose payload the caller writes in place
 * @qp: sending QP (caller must hold qp->lock)
 * @av: destination
 * @h: transport header fields; the BTH pad count and P_Key are filled in
 * @payload_len: payload bytes the caller will write at *@payload
 * @payload: where the payload goes (the pad after it is zeroed)
 *
 * As shca_build_pkt(), but a payload of SHCA_FRAG_MIN bytes or more on a
 * netdev with scatter-gather goes in a page fragment
 * (shca_pkt_frag_payload()) rather than in a linear part of its size.
 *
 * Return: the skb (skb->data at the BTH) or NULL when out of memory.
 */
struct sk_buff *shca_build_pkt_room(struct shca_qp *qp,
				    const struct shca_av *av,
				    struct shca_pkt_hdr *h, u32 payload_len,
				    u8 **payload)
{
	struct sk_buff *skb;

	lockdep_assert_held(&qp->lock);
	if (payload_len < SHCA_FRAG_MIN ||
	    !(READ_ONCE(qp->sdev->ndev->features) & NETIF_F_SG))
		return shca_build_pkt(qp, av, h, payload_len, payload);
	skb = shca_pkt_new(qp, av, h, payload_len, false);
	if (!skb)
		return NULL;
	*payload = shca_pkt_frag_payload(skb, payload_len, h->pad_count);
	if (*payload)
		return skb;
	kfree_skb(skb);
	return shca_build_pkt(qp, av, h, payload_len, payload);
}

/*
 * Only RC packets go by reference.  An RC send completes when the peer
 * has acknowledged it, i.e. holds the bytes; a copy of the packet still
 * in a queue then (a retransmission) is a duplicate, which the peer drops
 * whatever its bytes have become.  UC and UD sends complete once built:
 * the application may reuse the buffer while the packet still waits in
 * a queue, so those are copied.
 */
static bool shca_pkt_frag_ok(struct shca_qp *qp,
			     const struct shca_pkt_src *src)
{
	return qp->type == IB_QPT_RC && !src->buf &&
	       src->len >= SHCA_FRAG_MIN &&
	       (READ_ONCE(qp->sdev->ndev->features) & NETIF_F_SG);
}

/*
 * Build the packet with its payload by reference.  NULL with *@err set to
 * -E2BIG when the payload must be copied instead, to 0 when out of
 * memory, or to a key error.
 */
static struct sk_buff *shca_build_pkt_frags(struct shca_qp *qp,
					    const struct shca_av *av,
					    struct shca_pkt_hdr *h,
					    const struct shca_pkt_src *src,
					    int *err)
{
	/* one fragment stays free for the trailer */
	unsigned int max = MAX_SKB_FRAGS - 1;
	struct sk_buff *skb;
	int ret;

	*err = 0;
	skb = shca_pkt_new(qp, av, h, src->len, false);
	if (!skb)
		return NULL;
	if (src->mr)
		ret = shca_mkey_frag_skb(src->mr, src->iova, skb, src->len, max);
	else
		ret = shca_sgl_frag(&SHCA_SGL(qp, src->sgl, src->num_sge),
				    src->off, skb, src->len, max);
	/* a trailer that cannot be had: the copy may still work */
	if (!ret && shca_pkt_frag_trailer(skb, h->pad_count))
		ret = -E2BIG;
	if (ret) {
		kfree_skb(skb);
		*err = ret;
		return NULL;
	}
	/* the pages are not ours: nobody may write to them in place */
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	shca_stat_add(qp->sdev, SHCA_CNT_TX_FRAG_BYTES, src->len);
	return skb;
}

/* Build the packet with its payload copied into the linear part. */
static struct sk_buff *shca_build_pkt_copy(struct shca_qp *qp,
					   const struct shca_av *av,
					   struct shca_pkt_hdr *h,
					   const struct shca_pkt_src *src,
					   int *err)
{
	struct sk_buff *skb;
	u8 *payload;
	int ret = 0;

	*err = 0;
	skb = shca_build_pkt(qp, av, h, src->len, &payload);
	if (!skb || !src->len)
		return skb;
	if (src->buf) {
		memcpy(payload, src->buf, src->len);
		shca_stat_add(qp->sdev, SHCA_CNT_PAYLOAD_COPY_BYTES, src->len);
	} else if (src->mr) {
		ret = shca_mkey_copy(src->mr, src->iova, payload, src->len,
				   SHCA_FROM_MR);
	} else {
		ret = shca_sgl_copy_buf(&SHCA_SGL(qp, src->sgl, src->num_sge),
					src->off, payload, src->len,
					SHCA_FROM_MR);
	}
	if (ret) {
		kfree_skb(skb);
		*err = ret;
		return NULL;
	}
	return skb;
}

/**
 * shca_build_data_pkt - build a packet with its payload
 * @qp: sending QP (caller must hold qp->lock)
 * @av: destination
 * @h: transport header fields; the BTH pad count and P_Key are filled in
 * @src: the payload
 * @err: 0 when NULL is returned for want of memory (treat it as a packet
 *	lost on the wire), else the error of the key lookup or copy
 *
 * Sends the payload by reference when it can (see the top of this file),
 * else copies it.  Each byte copied counts in payload_copy_bytes, each
 * byte sent by reference in tx_frag_bytes.
 *
 * Return: the skb (skb->data at the BTH) or NULL.
 */
struct sk_buff *shca_build_data_pkt(struct shca_qp *qp,
				    const struct shca_av *av,
				    struct shca_pkt_hdr *h,
				    const struct shca_pkt_src *src, int *err)
{
	struct sk_buff *skb;

	lockdep_assert_held(&qp->lock);
	if (shca_pkt_frag_ok(qp, src)) {
		skb = shca_build_pkt_frags(qp, av, h, src, err);
		if (skb || *err != -E2BIG)
			return skb;
	}
	return shca_build_pkt_copy(qp, av, h, src, err);
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
	u8 op = shca_bth_opcode(skb->data);
	u32 fl = av->flow_label;
	int ret;

	if (!fl)
		fl = rdma_calc_flow_label(qp->qpn, qp->attr.dest_qp_num);
	/* the QP's own address vector is its peer's: its route is cached */
	ret = shca_pkt_xmit(qp->sdev, av, av == &qp->av ? &qp->route : NULL,
			    rdma_flow_label_to_udp_sport(fl), skb);
	if (!ret)
		shca_engine_count_tx(op);
	return ret;
}
