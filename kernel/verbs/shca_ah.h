/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca address handle verbs (shca_ah.c).
 *
 * The verbs here are callbacks of struct ib_device_ops: their contract is
 * the RDMA core's (include/rdma/ib_verbs.h), and shca_dev_ops
 * (shca_dev.c) lists them all.
 */
#ifndef SHCA_AH_H
#define SHCA_AH_H

#include <rdma/ib_verbs.h>

int shca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		   struct ib_udata *udata);
int shca_create_user_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
			struct ib_udata *udata);
int shca_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int shca_destroy_ah(struct ib_ah *ibah, u32 flags);

#endif /* SHCA_AH_H */
