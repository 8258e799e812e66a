// SPDX-License-Identifier: GPL-2.0
/*
 * shca memory region and memory window verbs: register (DMA, user memory,
 * fast-registration MRs), re-register, map a fast-registration page list,
 * deregister; allocate and deallocate windows.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>
#include "shca.h"
#include "shca_ctx.h"
#include "shca_mem.h"
#include "shca_memreg.h"
#include "shca_mr.h"
#include "shca_obj.h"
#include "shca_rkey.h"

static void shca_mr_free(struct shca_mkey *o)
{
	if (o->kind == SHCA_MRK_USER) {
		kvfree(o->m.pages);
		ib_umem_release(o->m.umem);
	} else if (o->kind == SHCA_MRK_FRMR) {
		kfree(o->m.blocks);
		kfree(o->m.staged);
	}
	kfree_rcu(o, rcu);
}

/**
 * shca_get_dma_mr - an MR covering all kernel memory (kernel users)
 * @ibpd: its PD
 * @access: IB_ACCESS_* rights
 *
 * Addresses in its SGEs are kernel virtual addresses (shca is a virtual
 * DMA device).
 *
 * Return: the MR, or ERR_PTR(-EINVAL) or ERR_PTR(-EOPNOTSUPP) for rights
 * shca_mr_check_access() refuses, or ERR_PTR(-ENOMEM) when memory or
 * keys run out.
 */
struct ib_mr *shca_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct shca_dev *sdev = to_sdev(ibpd->device);
	struct shca_mkey *o;
	int ret;

	ret = shca_mr_check_access(ibpd->device, access);
	if (ret)
		return ERR_PTR(ret);
	o = shca_mkey_new(sdev, to_spd(ibpd)->pdn, SHCA_MRK_DMA);
	if (!o)
		return ERR_PTR(-ENOMEM);
	o->access = access & SHCA_MR_ACCESS;
	o->iova = 0;
	o->length = U64_MAX;
	o->m.shift = PAGE_SHIFT;
	ret = shca_mkey_publish(o, SHCA_MRS_VALID);
	if (ret) {
		kfree(o);
		return ERR_PTR(ret);
	}
	shca_obj_get(SHCA_OBJ_MR);
	return &o->ibmr;
}

/* Fill the page array of a user MR from its umem. */
static int shca_mr_fill_pages(struct shca_mkey *o, struct ib_umem *umem)
{
	struct sg_page_iter iter;
	size_t npages = ib_umem_num_pages(umem);
	u32 i = 0;

	if (!npages || npages > U32_MAX)
		return -EINVAL;
	o->m.pages = kvcalloc(npages, sizeof(*o->m.pages), GFP_KERNEL_ACCOUNT);
	if (!o->m.pages)
		return -ENOMEM;
	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		if (i == npages)
			break;
		o->m.pages[i++] = sg_page_iter_page(&iter);
	}
	if (i != npages)
		return -EFAULT;
	o->m.npages = npages;
	o->m.base = ib_umem_offset(umem);
	o->m.shift = PAGE_SHIFT;
	return 0;
}

/**
 * shca_reg_user_mr - register a process's memory
 * @ibpd: its PD
 * @start: user address of the first byte
 * @length: bytes, 1 to SHCA_MAX_MR_SIZE
 * @iova: the address the MR's SGEs and remote requests use for @start
 * @access: IB_ACCESS_* rights
 * @udata: the process's
 *
 * Pins the pages (ib_umem_get()) and keeps their array; the data path
 * maps them page by page.  Process context.
 *
 * Return: the MR, or ERR_PTR() of -EINVAL (length, an iova range that
 * wraps, rights, driver input), -EOPNOTSUPP (on-demand paging), -ENOMEM, or what
 * ib_umem_get() returns.
 */
struct ib_mr *shca_reg_user_mr(struct ib_pd *ibpd, u64 start,
			       u64 length, u64 iova, int access,
			       struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibpd->device);
	struct ib_umem *umem;
	struct shca_mkey *o;
	int ret;

	ret = shca_mr_check_access(ibpd->device, access);
	if (!ret)
		ret = shca_udata_check_in(udata);
	if (ret)
		return ERR_PTR(ret);
	if (!length || length > SHCA_MAX_MR_SIZE || iova > U64_MAX - length)
		return ERR_PTR(-EINVAL);
	o = shca_mkey_new(sdev, to_spd(ibpd)->pdn, SHCA_MRK_USER);
	if (!o)
		return ERR_PTR(-ENOMEM);
	umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(umem)) {
		ret = PTR_ERR(umem);
		goto err_free;
	}
	o->m.umem = umem;
	ret = shca_mr_fill_pages(o, umem);
	if (ret)
		goto err_umem;
	ret = shca_mkey_publish_mr(o, access, iova, length);
	if (ret)
		goto err_umem;
	shca_obj_get(SHCA_OBJ_MR);
	return &o->ibmr;

err_umem:
	kvfree(o->m.pages);
	ib_umem_release(umem);
err_free:
	kfree(o);
	return ERR_PTR(ret);
}

/**
 * shca_alloc_mr - a fast-registration MR, mapped later by REG_MR WRs
 * @ibpd: its PD
 * @type: only IB_MR_TYPE_MEM_REG
 * @max_num_sg: pages it may map, 1 to SHCA_MAX_FAST_REG_PAGES
 *
 * The MR starts in the free state: lookups fail until a REG_MR work
 * request makes it valid.
 *
 * Return: the MR, or ERR_PTR(-EINVAL) for another type or a page count
 * out of range, or ERR_PTR(-ENOMEM).
 */
struct ib_mr *shca_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg)
{
	struct shca_dev *sdev = to_sdev(ibpd->device);
	struct shca_mkey *o;
	int ret;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EINVAL);
	if (!max_num_sg || max_num_sg > SHCA_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);
	o = shca_mkey_new(sdev, to_spd(ibpd)->pdn, SHCA_MRK_FRMR);
	if (!o)
		return ERR_PTR(-ENOMEM);
	o->m.blocks = kcalloc(max_num_sg, sizeof(*o->m.blocks), GFP_KERNEL);
	o->m.staged = kcalloc(max_num_sg, sizeof(*o->m.staged), GFP_KERNEL);
	if (!o->m.blocks || !o->m.staged) {
		ret = -ENOMEM;
		goto err_free;
	}
	o->m.max_pages = max_num_sg;
	o->m.shift = PAGE_SHIFT;
	ret = shca_mkey_publish(o, SHCA_MRS_FREE);
	if (ret)
		goto err_blocks;
	shca_obj_get(SHCA_OBJ_MR);
	return &o->ibmr;

err_blocks:
	kfree(o->m.blocks);
	kfree(o->m.staged);
err_free:
	kfree(o);
	return ERR_PTR(ret);
}

static int shca_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct shca_mkey *o = to_smr(ibmr);

	if (o->m.mapped >= o->m.max_pages)
		return -ENOMEM;
	o->m.staged[o->m.mapped++] = addr;
	return 0;
}

/**
 * shca_map_mr_sg - stage a fast-registration MR's page list
 * @ibmr: a fast-registration MR
 * @sg: the scatterlist to map
 * @sg_nents: its entries
 * @sg_offset: offset into the first entry (updated by the core)
 *
 * The pages (in m.staged) take effect at the next REG_MR work request
 * (shca_mr_fast_reg()); the registration in effect, if any, keeps its
 * own until then.  On a virtual DMA device the "DMA addresses" are
 * kernel virtual addresses.
 *
 * Return: the number of entries mapped (as ib_sg_to_pages()), or
 * -EINVAL for an MR that is not a fast-registration MR.
 */
int shca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
		   int sg_nents, unsigned int *sg_offset)
{
	struct shca_mkey *o = to_smr(ibmr);

	if (o->kind != SHCA_MRK_FRMR)
		return -EINVAL;
	o->m.mapped = 0;
	o->m.staged_new = true;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, shca_set_page);
}

/**
 * shca_dereg_mr - deregister an MR
 * @ibmr: the MR
 * @udata: the process's, or NULL
 *
 * The key stops looking up at once; operations in flight that hold it
 * (R_Key slots) are swept, and the call waits for every lookup's
 * reference before the pages are released, so no packet can touch the
 * memory after it returns.  Sleeps.
 *
 * Return: 0, or -EBUSY while memory windows are bound to the MR.
 */
int shca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct shca_mkey *o = to_smr(ibmr);
	u32 key;
	int ret;

	ret = shca_mkey_retire(o, &key);
	if (ret < 0)
		return ret;
	if (!ret && shca_mkey_remote(o))
		shca_rkey_sweep(o->sdev, o->pdn, key);
	shca_mkey_drain(o);
	if (o->kind == SHCA_MRK_DM && o->m.dm_users)
		atomic_dec(o->m.dm_users);
	shca_mr_free(o);
	shca_obj_put(SHCA_OBJ_MR);
	return 0;
}

/*
 * rereg_user_mr of the PD and/or the rights only: in place, the key and
 * the translation stay.  Operations in flight that the change forbids
 * (another PD, a right taken away) are swept.
 */
static int shca_rereg_in_place(struct shca_mkey *o, int flags, u32 pdn,
			       int access)
{
	struct shca_mr_table *t = shca_mrt(o->sdev);
	int old_access, ret;
	u32 old_pdn;
	bool sweep;

	spin_lock_bh(&t->lock);
	if (o->state != SHCA_MRS_VALID || o->m.num_mw) {
		ret = o->m.num_mw ? -EBUSY : -EINVAL;
		spin_unlock_bh(&t->lock);
		return ret;
	}
	old_pdn = o->pdn;
	old_access = o->access;
	write_seqcount_begin(&o->seq);
	if (flags & IB_MR_REREG_PD)
		o->pdn = pdn;
	if (flags & IB_MR_REREG_ACCESS)
		o->access = access & SHCA_MR_ACCESS;
	write_seqcount_end(&o->seq);
	sweep = o->pdn != old_pdn ||
		(old_access & ~o->access & SHCA_ACCESS_REMOTE);
	spin_unlock_bh(&t->lock);
	if (sweep)
		shca_rkey_sweep(o->sdev, old_pdn, o->key);
	return 0;
}

/*
 * rereg_user_mr with a new translation: a new MR (new pages, new key)
 * replaces @o, which dies here (its operations in flight swept) and is
 * deregistered by the RDMA core once the new one is installed.
 */
static struct ib_mr *shca_rereg_new(struct shca_mkey *o, u64 start, u64 length,
				    u64 iova, int access, struct ib_pd *pd)
{
	struct ib_mr *ibmr;
	u32 key;
	int ret;

	ibmr = shca_reg_user_mr(pd, start, length, iova, access, NULL);
	if (IS_ERR(ibmr))
		return ibmr;
	ret = shca_mkey_retire(o, &key);
	if (ret) {
		shca_dereg_mr(ibmr, NULL);
		return ERR_PTR(ret < 0 ? ret : -EINVAL);
	}
	if (shca_mkey_remote(o))
		shca_rkey_sweep(o->sdev, o->pdn, key);
	return ibmr;
}

/**
 * shca_rereg_user_mr - ibv_rereg_mr
 * @ibmr: a user MR
 * @flags: IB_MR_REREG_TRANS, _PD, _ACCESS
 * @start: new user address (TRANS)
 * @length: new length (TRANS)
 * @iova: new I/O virtual address (TRANS)
 * @access: new rights (ACCESS)
 * @pd: the MR's PD after the call (the core passes the old one without
 *	IB_MR_REREG_PD)
 * @udata: the process's (no driver input)
 *
 * A PD or rights change keeps the key; a new translation gives a new MR
 * and key.  Either way the call returns only after the operations in
 * flight that the change ends have been swept, as an invalidation does.
 * Refused with -EBUSY while windows are bound to the MR.
 *
 * Return: NULL (changed in place), the new MR, or an ERR_PTR.
 */
struct ib_mr *shca_rereg_user_mr(struct ib_mr *ibmr, int flags,
				 u64 start, u64 length, u64 iova,
				 int access, struct ib_pd *pd,
				 struct ib_udata *udata)
{
	struct shca_mkey *o = to_smr(ibmr);
	int ret;

	if (o->kind != SHCA_MRK_USER || shca_udata_check_in(udata))
		return ERR_PTR(-EINVAL);
	if (!(flags & IB_MR_REREG_ACCESS))
		access = o->access;
	ret = shca_mr_check_access(ibmr->device, access);
	if (ret)
		return ERR_PTR(ret);
	if (flags & IB_MR_REREG_TRANS)
		return shca_rereg_new(o, start, length, iova, access, pd);
	ret = shca_rereg_in_place(o, flags, to_spd(pd)->pdn, access);
	return ret ? ERR_PTR(ret) : NULL;
}

/**
 * shca_alloc_mw - allocate a memory window
 * @ibmw: the RDMA core's MW, allocated by the core (type and PD set)
 * @udata: the process's, or NULL
 *
 * A type 1 window is valid, bound to nothing, from the start; a type 2
 * window waits in the free state for its first BIND_MW work request.
 *
 * Return: 0, -EINVAL for an unknown type or driver input, or -ENOMEM.
 */
int shca_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibmw->device);
	struct shca_mw *smw = to_smw(ibmw);
	enum shca_mkey_kind kind;
	struct shca_mkey *o;
	int ret;

	if (shca_udata_check_in(udata))
		return -EINVAL;
	if (ibmw->type == IB_MW_TYPE_1)
		kind = SHCA_MRK_MW1;
	else if (ibmw->type == IB_MW_TYPE_2)
		kind = SHCA_MRK_MW2;
	else
		return -EINVAL;
	o = shca_mkey_new(sdev, to_spd(ibmw->pd)->pdn, kind);
	if (!o)
		return -ENOMEM;
	o->w.ibmw = ibmw;
	/* a type 1 window is valid (bound to nothing) from the start */
	ret = shca_mkey_publish(o, kind == SHCA_MRK_MW1 ? SHCA_MRS_VALID :
						       SHCA_MRS_FREE);
	if (ret) {
		kfree(o);
		return ret;
	}
	ibmw->rkey = o->key;
	smw->obj = o;
	shca_obj_get(SHCA_OBJ_MW);
	return 0;
}

/**
 * shca_dealloc_mw - free a memory window
 * @ibmw: the MW
 *
 * As for an MR: the key stops looking up and the window leaves the MR
 * it was bound to, operations in flight through it are swept, and the
 * call waits for every lookup's reference before freeing it.  Sleeps.
 *
 * Return: 0.
 */
int shca_dealloc_mw(struct ib_mw *ibmw)
{
	struct shca_mkey *o = to_smw(ibmw)->obj;
	u32 key = 0;

	WARN_ON(shca_mkey_retire(o, &key));
	shca_rkey_sweep(o->sdev, o->pdn, key);
	shca_mkey_drain(o);
	shca_mr_free(o);
	shca_obj_put(SHCA_OBJ_MW);
	return 0;
}
