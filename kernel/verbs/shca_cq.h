/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca completion queue verbs (shca_cq.c).  poll_cq serves kernel CQs
 * only: a process polls its ring itself.
 *
 * The verbs here are callbacks of struct ib_device_ops: their contract is
 * the RDMA core's (include/rdma/ib_verbs.h), and shca_dev_ops
 * (shca_dev.c) lists them all.
 */
#ifndef SHCA_CQ_H
#define SHCA_CQ_H

#include <linux/version.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
int shca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct uverbs_attr_bundle *attrs);
#else
int shca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata);
#endif
int shca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int shca_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc);
int shca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int shca_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int shca_modify_cq(struct ib_cq *ibcq, u16 count, u16 period);

#endif /* SHCA_CQ_H */
