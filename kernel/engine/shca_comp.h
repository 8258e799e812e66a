/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca completer (shca_comp.c).
 */
#ifndef SHCA_COMP_H
#define SHCA_COMP_H

#include <linux/skbuff.h>

struct shca_pkt_hdr;
struct shca_qp;

void shca_req_recv(struct shca_qp *qp, struct sk_buff *skb,
		   const struct shca_pkt_hdr *h, u32 hdr_len);
void shca_req_timer_init(struct shca_qp *qp);

#endif /* SHCA_COMP_H */
