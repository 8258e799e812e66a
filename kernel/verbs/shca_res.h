/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca resource tracking details (shca_res.c): the driver attributes of
 * `rdma resource show qp -dd`.
 */
#ifndef SHCA_RES_H
#define SHCA_RES_H

#include <rdma/ib_verbs.h>

int shca_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);

#endif /* SHCA_RES_H */
