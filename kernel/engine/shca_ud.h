/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca UD and GSI receive (shca_ud.c).
 */
#ifndef SHCA_UD_H
#define SHCA_UD_H

#include <linux/skbuff.h>

struct shca_pkt_hdr;
struct shca_qp;

void shca_ud_recv(struct shca_qp *qp, struct sk_buff *skb,
		  const struct shca_pkt_hdr *h, u32 hdr_len);

#endif /* SHCA_UD_H */
