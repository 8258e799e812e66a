/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca transmit side of the wire (shca_udp_tx.c): what the engine calls
 * to get a packet buffer and to send the packet it built.
 */
#ifndef SHCA_UDP_TX_H
#define SHCA_UDP_TX_H

#include <linux/skbuff.h>

struct dst_cache;
struct shca_av;
struct shca_dev;

/**
 * shca_pkt_alloc - allocate a packet to send
 * @sdev: device
 * @av: destination
 * @tlen: bytes of transport headers + payload + pad (the ICRC is added by
 *	shca_pkt_xmit())
 *
 * The skb is linear, has headroom for Ethernet, IP and UDP headers and
 * tailroom for the ICRC; skb->data points at the BTH and skb->len ==
 * @tlen.  The engine writes all @tlen bytes (the last 4 come zeroed, so
 * the pad bytes may be left alone).  Allocated with GFP_ATOMIC: any
 * context.
 *
 * Return: the skb or NULL.
 */
struct sk_buff *shca_pkt_alloc(struct shca_dev *sdev,
			       const struct shca_av *av, u32 tlen);
int shca_pkt_frag_trailer(struct sk_buff *skb, u32 pad);
void *shca_pkt_frag_payload(struct sk_buff *skb, u32 len, u32 pad);
void shca_pkt_tail_crc(struct sk_buff *skb, u32 len, u32 crc);
void shca_pkt_icrc_rxe(struct sk_buff *skb);

/**
 * shca_pkt_xmit - send a packet built by the engine
 * @sdev: device
 * @av: destination
 * @cache: route cache that belongs to @av (a connected QP's), or NULL
 * @src_port: UDP source port (flow entropy, e.g. from the QPN)
 * @skb: packet from shca_pkt_alloc(), skb->data at the BTH
 *
 * Appends the ICRC, adds UDP and IP headers and transmits through the
 * device's netdev, or hands the packet straight to the receive path when
 * it is addressed to this host.  With @cache, a route to a peer that is
 * not this host is looked up once per CPU and reused while it stays
 * valid (struct dst_cache: per CPU, BHs off, no lock needed).  Consumes
 * @skb.  A packet ended by shca_pkt_frag_trailer() keeps its page
 * fragments (the ICRC is computed over them and stored in the trailer);
 * any other skb that is not as shca_pkt_alloc() made it (cloned,
 * nonlinear, short of room) is copied first.  Process or softirq context;
 * never calls shca_rx() itself (local packets are delivered from a
 * tasklet).
 *
 * Return: 0, or a negative errno when the packet was dropped (no route,
 * netdev down); the engine treats a drop like loss on the wire.
 */
int shca_pkt_xmit(struct shca_dev *sdev, const struct shca_av *av,
		  struct dst_cache *cache, u16 src_port, struct sk_buff *skb);

/**
 * struct shca_tx_hold - IP packets held back while a doorbell call holds
 * its QP's lock (shca_udp_tx.c)
 * @q: the packets, in sending order
 */
struct shca_tx_hold {
	struct sk_buff_head q;
};

void shca_tx_hold(struct shca_tx_hold *h);
bool shca_tx_unhold(struct shca_tx_hold *h);
void shca_tx_flush(struct shca_tx_hold *h);

#endif /* SHCA_UDP_TX_H */
