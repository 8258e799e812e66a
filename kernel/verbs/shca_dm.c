// SPDX-License-Identifier: GPL-2.0
/*
 * shca device-memory verbs: alloc_dm hands a process an address range of
 * the device's window (shca_dmw.c) and a key to map it; dealloc_dm gives
 * the range back once the process has unmapped it; reg_dm_mr registers a
 * zero-based MR over part of a range, which SGEs and remote requests use
 * like any MR (the data path moves its bytes page by page, and sends them
 * by page reference).  The driver attributes that return the mmap key are
 * declared here too.
 */
#define UVERBS_MODULE_NAME shca_ib
#include <linux/slab.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/uverbs_named_ioctl.h>
#include "shca.h"
#include "shca_dm.h"
#include "shca_dmw.h"
#include "shca_mem.h"
#include "shca_memreg.h"
#include "shca_obj.h"
#include "shca_ring.h"

/**
 * struct shca_dm_map - the mapping of a range: owns the range until the
 *	last process mapping it is gone
 * @me: mmap entry (buf: the window's memory, pgoff: the range's first page)
 * @sdev: device
 * @w: window
 * @idx: range
 */
struct shca_dm_map {
	struct shca_mmap_entry me;
	struct shca_dev *sdev;
	struct shca_dmw *w;
	u32 idx;
};

/**
 * struct shca_dm - a device-memory allocation
 * @ibdm: RDMA core object (length: the bytes asked for)
 * @map: its range's mapping, removed by dealloc_dm
 * @pages: the range's pages (the window's)
 * @npages: pages in the range
 */
struct shca_dm {
	struct ib_dm ibdm;
	struct shca_dm_map *map;
	struct page **pages;
	u32 npages;
};

static inline struct shca_dm *to_sdm(struct ib_dm *ibdm)
{
	return container_of(ibdm, struct shca_dm, ibdm);
}

/* mmap_free of a range: nothing maps it any more */
static void shca_dm_map_release(struct shca_mmap_entry *me)
{
	struct shca_dm_map *map = container_of(me, struct shca_dm_map, me);

	shca_dmw_free(map->sdev, map->w, map->idx);
	kfree(map);
}

/* Take a range of @length bytes and make it mappable by @uctx. */
static struct shca_dm_map *shca_dm_map_new(struct shca_dev *sdev,
					   struct ib_ucontext *uctx,
					   struct shca_dmw *w, u64 length)
{
	struct shca_dm_map *map;
	struct page **pages;
	u32 npages;
	int idx, ret;

	map = kzalloc(sizeof(*map), GFP_KERNEL);
	if (!map)
		return ERR_PTR(-ENOMEM);
	idx = shca_dmw_alloc(sdev, w, length);
	if (idx < 0) {
		kfree(map);
		return ERR_PTR(idx);
	}
	pages = shca_dmw_pages(w, idx, &npages);
	map->sdev = sdev;
	map->w = w;
	map->idx = idx;
	map->me.buf = w->base;
	map->me.pgoff = pages - w->pages;
	map->me.size = (size_t)npages << PAGE_SHIFT;
	map->me.release = shca_dm_map_release;
	ret = rdma_user_mmap_entry_insert(uctx, &map->me.rdma, map->me.size);
	if (ret) {
		shca_dmw_free(sdev, w, idx);
		kfree(map);
		return ERR_PTR(ret);
	}
	shca_obj_get(SHCA_OBJ_MMAP);
	return map;
}

/* Return the mmap key and range index through the driver attributes. */
static int shca_dm_reply(struct shca_dm_map *map,
			 struct uverbs_attr_bundle *attrs)
{
	u64 offset = rdma_user_mmap_get_offset(&map->me.rdma);
	u32 idx = map->idx;
	int ret;

	ret = uverbs_copy_to(attrs, SHCA_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
			     &offset, sizeof(offset));
	if (ret)
		return ret;
	if (uverbs_attr_is_valid(attrs, SHCA_ATTR_ALLOC_DM_RESP_RANGE))
		ret = uverbs_copy_to(attrs, SHCA_ATTR_ALLOC_DM_RESP_RANGE,
				     &idx, sizeof(idx));
	return ret;
}

/**
 * shca_alloc_dm - allocate device memory for a process
 * @ibdev: device
 * @uctx: the process's context
 * @attr: length (1 to max_dm_size bytes) and log2 alignment (at most the
 *	page size's: a range is whole pages)
 * @attrs: the method's attributes; SHCA_ATTR_ALLOC_DM_RESP_MMAP_OFFSET
 *	receives the key to map the range with
 *
 * The range is zeroed.  Process context.
 *
 * Return: the object, or ERR_PTR() of -EINVAL (length, alignment, flags),
 * -EOPNOTSUPP (device memory turned off, or a kernel caller), -ENOMEM (the
 * window has no free run of pages or no range slot left), or -EFAULT.
 */
struct ib_dm *shca_alloc_dm(struct ib_device *ibdev,
			    struct ib_ucontext *uctx,
			    struct ib_dm_alloc_attr *attr,
			    struct uverbs_attr_bundle *attrs)
{
	struct shca_dev *sdev = to_sdev(ibdev);
	struct shca_dm_map *map;
	struct shca_dmw *w;
	struct shca_dm *dm;
	int ret;

	if (!uctx || !attrs)
		return ERR_PTR(-EOPNOTSUPP);
	if (!attr->length || attr->length > shca_dmw_max_size() ||
	    attr->alignment > PAGE_SHIFT || attr->flags)
		return ERR_PTR(-EINVAL);
	w = shca_dmw_get(sdev);
	if (IS_ERR(w))
		return ERR_CAST(w);
	dm = kzalloc(sizeof(*dm), GFP_KERNEL);
	if (!dm)
		return ERR_PTR(-ENOMEM);
	map = shca_dm_map_new(sdev, uctx, w, attr->length);
	if (IS_ERR(map)) {
		ret = PTR_ERR(map);
		goto err_dm;
	}
	dm->map = map;
	dm->pages = shca_dmw_pages(w, map->idx, &dm->npages);
	ret = shca_dm_reply(map, attrs);
	if (ret)
		goto err_map;
	shca_obj_get(SHCA_OBJ_DM);
	return &dm->ibdm;

err_map:
	/* never mapped: the range goes back at once */
	rdma_user_mmap_entry_remove(&map->me.rdma);
err_dm:
	kfree(dm);
	return ERR_PTR(ret);
}

/**
 * shca_dealloc_dm - free device memory
 * @ibdm: the allocation; the RDMA core refuses to free it (EBUSY) while
 *	an MR uses it
 * @attrs: the method's attributes
 *
 * The range goes back to the window once the process has unmapped it and
 * no packet refers to its pages any more.
 *
 * Return: 0.
 */
int shca_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs)
{
	struct shca_dm *dm = to_sdm(ibdm);

	rdma_user_mmap_entry_remove(&dm->map->me.rdma);
	kfree(dm);
	shca_obj_put(SHCA_OBJ_DM);
	return 0;
}

/**
 * shca_reg_dm_mr - register part of a device-memory allocation
 * @ibpd: PD
 * @ibdm: the allocation
 * @attr: offset and length in it (checked by the RDMA core to lie inside
 *	it) and the rights, which include IB_ZERO_BASED
 * @attrs: the method's attributes
 *
 * The MR is zero based: address 0 is byte @attr->offset of the allocation.
 * It lives no longer than the allocation (the RDMA core counts it as a
 * user of @ibdm).
 *
 * Return: the MR, or ERR_PTR() of -EINVAL (rights), -EOPNOTSUPP
 * (on-demand paging) or -ENOMEM.
 */
struct ib_mr *shca_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			     struct ib_dm_mr_attr *attr,
			     struct uverbs_attr_bundle *attrs)
{
	struct shca_dev *sdev = to_sdev(ibpd->device);
	struct shca_dm *dm = to_sdm(ibdm);
	u64 first = attr->offset >> PAGE_SHIFT;
	struct shca_mkey *o;
	int access = attr->access_flags;
	int ret;

	if (!(access & IB_ZERO_BASED))
		return ERR_PTR(-EINVAL);
	ret = shca_mr_check_access(ibpd->device, access & ~IB_ZERO_BASED);
	if (ret)
		return ERR_PTR(ret);
	if (attr->offset > ibdm->length ||
	    attr->length > ibdm->length - attr->offset || first > dm->npages)
		return ERR_PTR(-EINVAL);
	o = shca_mkey_new(sdev, to_spd(ibpd)->pdn, SHCA_MRK_DM);
	if (!o)
		return ERR_PTR(-ENOMEM);
	o->m.pages = dm->pages + first;
	o->m.npages = dm->npages - first;
	o->m.base = offset_in_page(attr->offset);
	o->m.shift = PAGE_SHIFT;
	o->access = access & SHCA_MR_ACCESS;
	o->iova = 0;
	o->length = attr->length;
	o->ibmr.iova = 0;
	o->ibmr.length = attr->length;
	ret = shca_mkey_publish(o, SHCA_MRS_VALID);
	if (ret) {
		kfree(o);
		return ERR_PTR(ret);
	}
	shca_obj_get(SHCA_OBJ_MR);
	return &o->ibmr;
}

ADD_UVERBS_ATTRIBUTES_SIMPLE(
	shca_dm_alloc_attrs, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC,
	UVERBS_ATTR_PTR_OUT(SHCA_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
			    UVERBS_ATTR_TYPE(u64), UA_MANDATORY),
	UVERBS_ATTR_PTR_OUT(SHCA_ATTR_ALLOC_DM_RESP_RANGE,
			    UVERBS_ATTR_TYPE(u32), UA_OPTIONAL));

/* the driver's additions to the RDMA core's methods (ib_device.driver_def) */
const struct uapi_definition shca_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &shca_dm_alloc_attrs),
	{},
};
