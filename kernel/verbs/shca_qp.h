/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca queue pair verbs (shca_qp.c).
 *
 * The verbs here are callbacks of struct ib_device_ops: their contract is
 * the RDMA core's (include/rdma/ib_verbs.h), and shca_dev_ops
 * (shca_dev.c) lists them all.
 */
#ifndef SHCA_QP_H
#define SHCA_QP_H

#include <rdma/ib_verbs.h>

int shca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata);
int shca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata);
int shca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init);
int shca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int shca_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int shca_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int shca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr);
int shca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr);

#endif /* SHCA_QP_H */
