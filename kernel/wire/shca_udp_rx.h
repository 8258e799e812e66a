/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca receive checks of RoCEv2 packets (shca_udp_rx.c).
 */
#ifndef SHCA_UDP_RX_H
#define SHCA_UDP_RX_H

#include <linux/skbuff.h>
#include <net/sock.h>

struct shca_dev;
struct shca_icrc;

int shca_udp_encap_recv(struct sock *sk, struct sk_buff *skb);
void shca_net_rcv(struct shca_dev *sdev, struct sk_buff *skb);
void shca_net_rcv_local(struct shca_dev *to, struct sk_buff *skb);
bool shca_net_rx_verify(struct shca_dev *sdev, struct sk_buff *skb);
bool shca_net_rx_strip(struct shca_dev *sdev, struct sk_buff *skb);
bool shca_icrc_skb(struct shca_icrc *st, struct sk_buff *skb,
		   unsigned int off, unsigned int len);

#endif /* SHCA_UDP_RX_H */
