/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca user contexts, protection domains, mmap, and udata helpers
 * (shca_ctx.c).
 *
 * The verbs here are callbacks of struct ib_device_ops: their contract is
 * the RDMA core's (include/rdma/ib_verbs.h), and shca_dev_ops
 * (shca_dev.c) lists them all.
 */
#ifndef SHCA_CTX_H
#define SHCA_CTX_H

#include <rdma/ib_verbs.h>

int shca_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void shca_dealloc_ucontext(struct ib_ucontext *ibuc);
int shca_query_ucontext(struct ib_ucontext *ibuc,
			struct uverbs_attr_bundle *attrs);
void shca_disassociate_ucontext(struct ib_ucontext *ibuc);
int shca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int shca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int shca_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void shca_mmap_free(struct rdma_user_mmap_entry *entry);

struct ib_ucontext *shca_udata_uctx(struct ib_udata *udata);
int shca_udata_check_in(struct ib_udata *udata);
int shca_copy_resp(struct ib_udata *udata, void *resp, size_t len);

#endif /* SHCA_CTX_H */
