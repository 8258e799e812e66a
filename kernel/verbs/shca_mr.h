/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca memory region and memory window verbs (shca_mr.c).
 *
 * The verbs here are callbacks of struct ib_device_ops: their contract is
 * the RDMA core's (include/rdma/ib_verbs.h), and shca_dev_ops
 * (shca_dev.c) lists them all.
 */
#ifndef SHCA_MR_H
#define SHCA_MR_H

#include <rdma/ib_verbs.h>

struct ib_mr *shca_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *shca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata);
struct ib_mr *shca_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 iova, int access,
				 struct ib_pd *ibpd, struct ib_udata *udata);
int shca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *shca_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg);
int shca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset);
int shca_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int shca_dealloc_mw(struct ib_mw *ibmw);

#endif /* SHCA_MR_H */
