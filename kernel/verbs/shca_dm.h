/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca device-memory verbs (shca_dm.c).
 *
 * The verbs here are callbacks of struct ib_device_ops: their contract is
 * the RDMA core's (include/rdma/ib_verbs.h), and shca_dev_ops
 * (shca_dev.c) lists them all.  shca_dm_uapi_defs adds the driver
 * attributes of <rdma/shca-abi.h> to the core's DM_ALLOC method and the
 * DM's own methods (chained into shca_uapi_defs, shca_uapi.c).
 */
#ifndef SHCA_DM_H
#define SHCA_DM_H

#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

struct ib_dm *shca_alloc_dm(struct ib_device *ibdev, struct ib_ucontext *uctx,
			    struct ib_dm_alloc_attr *attr,
			    struct uverbs_attr_bundle *attrs);
int shca_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs);
struct ib_mr *shca_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			     struct ib_dm_mr_attr *attr,
			     struct uverbs_attr_bundle *attrs);

extern const struct uapi_definition shca_dm_uapi_defs[];

struct shca_dmw;
struct shca_mkey;

/**
 * struct shca_dm_span - a device-memory range as its MRs see it
 * @pages: its pages (the window's)
 * @npages: pages in the range
 * @idx: the range's index in the window
 * @gen: its allocation generation
 * @length: bytes its owner asked for (MRs lie inside them)
 */
struct shca_dm_span {
	struct page **pages;
	u32 npages;
	u32 idx;
	u32 gen;
	u64 length;
};

void shca_dm_span_init(struct shca_dm_span *span, struct shca_dmw *w,
		       u32 idx, u64 length);
struct shca_mkey *shca_dm_mr(struct ib_pd *ibpd, const struct shca_dm_span *span,
			     const struct ib_dm_mr_attr *attr);

#endif /* SHCA_DM_H */
