/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca packet building (shca_pkt.c): a packet of a QP's, its headers and
 * its payload, ready for the wire.
 */
#ifndef SHCA_PKT_H
#define SHCA_PKT_H

#include <linux/skbuff.h>
#include "shca_hdr.h"

struct shca_av;
struct shca_mkey;
struct shca_qp;
struct shca_sge;

/**
 * struct shca_pkt_src - where a packet's payload comes from
 * @len: payload bytes
 * @buf: a kernel buffer (inline data), always copied; or NULL
 * @sgl: else, when @mr is NULL: a validated local SGE list, whose lkeys
 *	must belong to the QP's PD
 * @num_sge: entries in @sgl
 * @off: offset of the payload in the concatenated @sgl
 * @mr: else a referenced MR/MW (READ responses), read access checked
 * @iova: first payload byte in @mr
 */
struct shca_pkt_src {
	u32 len;
	const void *buf;
	const struct shca_sge *sgl;
	unsigned int num_sge;
	u32 off;
	struct shca_mkey *mr;
	u64 iova;
};

struct sk_buff *shca_build_pkt(struct shca_qp *qp, const struct shca_av *av,
			       struct shca_pkt_hdr *h, u32 payload_len,
			       u8 **payload);
struct sk_buff *shca_build_pkt_room(struct shca_qp *qp,
				    const struct shca_av *av,
				    struct shca_pkt_hdr *h, u32 payload_len,
				    u8 **payload);
struct sk_buff *shca_build_data_pkt(struct shca_qp *qp,
				    const struct shca_av *av,
				    struct shca_pkt_hdr *h,
				    const struct shca_pkt_src *src, int *err);
int shca_send_pkt(struct shca_qp *qp, const struct shca_av *av,
		  struct sk_buff *skb);

#endif /* SHCA_PKT_H */
