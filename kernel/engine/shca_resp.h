/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca responder (shca_resp.c).
 */
#ifndef SHCA_RESP_H
#define SHCA_RESP_H

#include <linux/skbuff.h>

struct shca_pkt_hdr;
struct shca_qp;

void shca_resp_recv(struct shca_qp *qp, struct sk_buff *skb,
		    const struct shca_pkt_hdr *h, u32 hdr_len);
void shca_resp_init(struct shca_qp *qp);
void shca_resp_reset(struct shca_qp *qp);
void shca_resp_drop_keys(struct shca_qp *qp);
int shca_resp_get_rwqe(struct shca_qp *qp, u32 need);
u32 shca_resp_plen(struct sk_buff *skb, const struct shca_pkt_hdr *h,
		   u32 hdr_len);

#endif /* SHCA_RESP_H */
