/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca shared receive queue verbs (shca_srq.c).  On a user SRQ,
 * post_srq_recv takes no work requests (a doorbell: returns 0);
 * modify_srq IB_SRQ_MAX_WR resizes kernel SRQs only (-EOPNOTSUPP for a
 * user SRQ: modify_srq has no response to carry a new ring).
 *
 * The verbs here are callbacks of struct ib_device_ops: their contract is
 * the RDMA core's (include/rdma/ib_verbs.h), and shca_dev_ops
 * (shca_dev.c) lists them all.
 */
#ifndef SHCA_SRQ_H
#define SHCA_SRQ_H

#include <rdma/ib_verbs.h>

int shca_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata);
int shca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata);
int shca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int shca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int shca_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);

#endif /* SHCA_SRQ_H */
