// SPDX-License-Identifier: GPL-2.0
/*
 * shca device memory for kernel producers: the exported functions of
 * shca_kdm.h.  A kernel allocation is a range of the device's window like
 * a process's, with its register in kernel memory instead of a mapped
 * page; its MRs are counted so that it cannot be freed under them.
 */
#include <linux/slab.h>
#include "shca.h"
#include "shca_dm.h"
#include "shca_dmw.h"
#include "shca_drdma.h"
#include "shca_kdm.h"
#include "shca_mem.h"
#include "shca_obj.h"

/**
 * struct shca_kdm - a kernel producer's device-memory allocation
 * @sdev: device
 * @w: its window
 * @span: the range
 * @mrs: MRs registered over it and not deregistered yet
 * @reg: its address range register
 */
struct shca_kdm {
	struct shca_dev *sdev;
	struct shca_dmw *w;
	struct shca_dm_span span;
	atomic_t mrs;
	struct shca_arr_reg reg;
};

/**
 * shca_kdm_alloc - take a range of a shca device's window
 * @ibdev: a shca device
 * @length: bytes, 1 to its max_dm_size
 *
 * The range is zeroed.  Process context.
 *
 * Return: the allocation, or ERR_PTR() of -ENODEV (not a shca device),
 * -EINVAL (length), -EOPNOTSUPP (device memory turned off) or -ENOMEM.
 */
struct shca_kdm *shca_kdm_alloc(struct ib_device *ibdev, u64 length)
{
	struct shca_dev *sdev;
	struct shca_kdm *kdm;
	struct shca_dmw *w;
	int idx;

	if (!ibdev || ibdev->ops.alloc_dm != shca_alloc_dm)
		return ERR_PTR(-ENODEV);
	sdev = to_sdev(ibdev);
	if (!length || length > shca_dmw_max_size())
		return ERR_PTR(-EINVAL);
	w = shca_dmw_get(sdev);
	if (IS_ERR(w))
		return ERR_CAST(w);
	kdm = kzalloc(sizeof(*kdm), GFP_KERNEL);
	if (!kdm)
		return ERR_PTR(-ENOMEM);
	idx = shca_dmw_alloc(sdev, w, length);
	if (idx < 0) {
		kfree(kdm);
		return ERR_PTR(idx);
	}
	kdm->sdev = sdev;
	kdm->w = w;
	shca_dm_span_init(&kdm->span, w, idx, length);
	shca_drdma_attach(w, idx, &kdm->reg);
	shca_obj_get(SHCA_OBJ_DM);
	return kdm;
}
EXPORT_SYMBOL_GPL(shca_kdm_alloc);

/**
 * shca_kdm_free - give a kernel allocation back
 * @kdm: the allocation
 *
 * Its pages go back to the window once no packet refers to them.
 * Process context.
 *
 * Return: 0, or -EBUSY while an MR registered over it is not deregistered
 * (nothing is freed then).
 */
int shca_kdm_free(struct shca_kdm *kdm)
{
	if (atomic_read(&kdm->mrs))
		return -EBUSY;
	shca_dmw_free(kdm->sdev, kdm->w, kdm->span.idx);
	kfree(kdm);
	shca_obj_put(SHCA_OBJ_DM);
	return 0;
}
EXPORT_SYMBOL_GPL(shca_kdm_free);

/**
 * shca_kdm_pages - the pages a producer writes into
 * @kdm: the allocation
 * @npages: receives their number
 *
 * Return: the array of the range's pages, in order (the window's; valid
 * until shca_kdm_free()).
 */
struct page **shca_kdm_pages(struct shca_kdm *kdm, u32 *npages)
{
	*npages = kdm->span.npages;
	return kdm->span.pages;
}
EXPORT_SYMBOL_GPL(shca_kdm_pages);

/**
 * shca_kdm_reg_mr - a zero-based MR over part of a kernel allocation
 * @pd: a PD of the allocation's device
 * @kdm: the allocation
 * @offset: first byte of the MR in it
 * @length: bytes
 * @access: IB_ACCESS_* rights; IB_ZERO_BASED is implied
 *
 * Deregister it with ib_dereg_mr() before shca_kdm_free().  Process
 * context.
 *
 * Return: the MR, or ERR_PTR() of -EINVAL (another device's PD, rights,
 * a part outside the allocation), -EOPNOTSUPP or -ENOMEM.
 */
struct ib_mr *shca_kdm_reg_mr(struct ib_pd *pd, struct shca_kdm *kdm,
			      u64 offset, u64 length, int access)
{
	struct ib_dm_mr_attr attr = {
		.offset = offset,
		.length = length,
		.access_flags = access | IB_ZERO_BASED,
	};
	struct shca_mkey *o;

	if (pd->device != &kdm->sdev->ibdev)
		return ERR_PTR(-EINVAL);
	o = shca_dm_mr(pd, &kdm->span, &attr);
	if (IS_ERR(o))
		return ERR_CAST(o);
	/* what the RDMA core does for an MR it creates */
	o->ibmr.device = pd->device;
	o->ibmr.pd = pd;
	o->ibmr.type = IB_MR_TYPE_DM;
	o->ibmr.uobject = NULL;
	atomic_inc(&pd->usecnt);
	o->m.dm_users = &kdm->mrs;
	atomic_inc(&kdm->mrs);
	return &o->ibmr;
}
EXPORT_SYMBOL_GPL(shca_kdm_reg_mr);

/**
 * shca_kdm_arm - arm the allocation's register (shcadv_dm_arm())
 * @kdm: the allocation
 * @dir: SHCA_ARR_DIR_WRITE, _READ or _NONE
 * @offset: first byte of the transfer in the allocation
 * @length: its bytes
 *
 * Return: 0, -EINVAL or -EBUSY (see shca_drdma_arm()).
 */
int shca_kdm_arm(struct shca_kdm *kdm, u32 dir, u64 offset, u32 length)
{
	if (dir != SHCA_ARR_DIR_NONE &&
	    (offset > kdm->span.length || length > kdm->span.length - offset))
		return -EINVAL;
	return shca_drdma_arm(kdm->w, kdm->span.idx, dir, offset, length);
}
EXPORT_SYMBOL_GPL(shca_kdm_arm);

/**
 * shca_kdm_commit - the producer wrote @bytes more of a DRDMA WRITE
 * @kdm: the allocation
 * @bytes: bytes written into its pages since the last commit
 * @count: if not NULL, receives the byte count afterwards
 *
 * Context: process or softirq.  The commit that completes the transfer
 * may send the waiting WRITE from here (shca_drdma_commit()), so the
 * caller must not hold a lock its own completion handling takes.
 *
 * Return: 0 or -EINVAL (see shca_drdma_commit()).
 */
int shca_kdm_commit(struct shca_kdm *kdm, u32 bytes, u32 *count)
{
	u32 now;
	int ret;

	ret = shca_drdma_commit(kdm->sdev, kdm->w, kdm->span.idx, bytes, &now);
	if (count)
		*count = now;
	return ret;
}
EXPORT_SYMBOL_GPL(shca_kdm_commit);

/**
 * shca_kdm_regs - a consistent copy of the allocation's register
 * @kdm: the allocation
 * @regs: receives it
 */
void shca_kdm_regs(struct shca_kdm *kdm, struct shca_arr_reg *regs)
{
	shca_drdma_read(kdm->w, &kdm->reg, regs);
}
EXPORT_SYMBOL_GPL(shca_kdm_regs);
