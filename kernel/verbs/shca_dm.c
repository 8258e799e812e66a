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
#include <linux/vmalloc.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/uverbs_named_ioctl.h>
#include "shca.h"
#include "shca_dm.h"
#include "shca_dmw.h"
#include "shca_drdma.h"
#include "shca_mem.h"
#include "shca_memreg.h"
#include "shca_obj.h"
#include "shca_ring.h"

/**
 * struct shca_dm_map - what a process maps of an allocation: the range and
 *	its register page; owns both until neither is mapped any more
 * @me: mmap entry of the range (buf: the window's memory, pgoff: the
 *	range's first page)
 * @me_reg: mmap entry of the register page (mapped read only)
 * @ref: one per mmap entry
 * @sdev: device
 * @w: window
 * @idx: range
 * @reg: the range's address range register, a page of its own
 */
struct shca_dm_map {
	struct shca_mmap_entry me;
	struct shca_mmap_entry me_reg;
	struct kref ref;
	struct shca_dev *sdev;
	struct shca_dmw *w;
	u32 idx;
	struct shca_arr_reg *reg;
};

/**
 * struct shca_dm - a device-memory allocation
 * @ibdm: RDMA core object (length: the bytes asked for)
 * @map: its range's mapping, removed by dealloc_dm
 * @span: its range
 */
struct shca_dm {
	struct ib_dm ibdm;
	struct shca_dm_map *map;
	struct shca_dm_span span;
};

static inline struct shca_dm *to_sdm(struct ib_dm *ibdm)
{
	return container_of(ibdm, struct shca_dm, ibdm);
}

static void shca_dm_map_free(struct kref *ref)
{
	struct shca_dm_map *map = container_of(ref, struct shca_dm_map, ref);

	shca_dmw_free(map->sdev, map->w, map->idx);
	vfree(map->reg);
	kfree(map);
}

/* mmap_free of the range or of its register page */
static void shca_dm_map_release(struct shca_mmap_entry *me)
{
	struct shca_dm_map *map = me->release_arg;

	kref_put(&map->ref, shca_dm_map_free);
}

/* Offer @me (@size bytes of @buf from page @pgoff) to @uctx's mmap. */
static int shca_dm_map_offer(struct ib_ucontext *uctx, struct shca_dm_map *map,
			     struct shca_mmap_entry *me, void *buf,
			     unsigned long pgoff, size_t size)
{
	int ret;

	me->buf = buf;
	me->pgoff = pgoff;
	me->size = size;
	me->release = shca_dm_map_release;
	me->release_arg = map;
	ret = rdma_user_mmap_entry_insert(uctx, &me->rdma, size);
	if (!ret)
		shca_obj_get(SHCA_OBJ_MMAP);
	return ret;
}

/* Take a range of @length bytes and make it and its register mappable. */
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
	map->reg = vmalloc_user(PAGE_SIZE);
	if (!map->reg) {
		kfree(map);
		return ERR_PTR(-ENOMEM);
	}
	idx = shca_dmw_alloc(sdev, w, length);
	if (idx < 0) {
		vfree(map->reg);
		kfree(map);
		return ERR_PTR(idx);
	}
	pages = shca_dmw_pages(w, idx, &npages);
	map->sdev = sdev;
	map->w = w;
	map->idx = idx;
	shca_drdma_attach(w, idx, map->reg);
	/* two references, one per entry; each failed offer drops its own */
	kref_init(&map->ref);
	kref_get(&map->ref);
	map->me_reg.read_only = true;
	ret = shca_dm_map_offer(uctx, map, &map->me, w->base, pages - w->pages,
				(size_t)npages << PAGE_SHIFT);
	if (ret) {
		kref_put(&map->ref, shca_dm_map_free);
		kref_put(&map->ref, shca_dm_map_free);
		return ERR_PTR(ret);
	}
	ret = shca_dm_map_offer(uctx, map, &map->me_reg, map->reg, 0,
				PAGE_SIZE);
	if (ret) {
		kref_put(&map->ref, shca_dm_map_free);
		rdma_user_mmap_entry_remove(&map->me.rdma);
		return ERR_PTR(ret);
	}
	return map;
}

/* Remove both mmap entries: the map goes once neither is mapped. */
static void shca_dm_map_remove(struct shca_dm_map *map)
{
	rdma_user_mmap_entry_remove(&map->me_reg.rdma);
	rdma_user_mmap_entry_remove(&map->me.rdma);
}

/* Return the mmap keys and range index through the driver attributes. */
static int shca_dm_reply(struct shca_dm_map *map,
			 struct uverbs_attr_bundle *attrs)
{
	u64 offset = rdma_user_mmap_get_offset(&map->me.rdma);
	u64 reg = rdma_user_mmap_get_offset(&map->me_reg.rdma);
	u32 idx = map->idx;
	int ret;

	ret = uverbs_copy_to(attrs, SHCA_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
			     &offset, sizeof(offset));
	if (!ret && uverbs_attr_is_valid(attrs, SHCA_ATTR_ALLOC_DM_RESP_RANGE))
		ret = uverbs_copy_to(attrs, SHCA_ATTR_ALLOC_DM_RESP_RANGE,
				     &idx, sizeof(idx));
	if (!ret &&
	    uverbs_attr_is_valid(attrs, SHCA_ATTR_ALLOC_DM_RESP_REG_OFFSET))
		ret = uverbs_copy_to(attrs, SHCA_ATTR_ALLOC_DM_RESP_REG_OFFSET,
				     &reg, sizeof(reg));
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
	shca_dm_span_init(&dm->span, w, map->idx, attr->length);
	ret = shca_dm_reply(map, attrs);
	if (ret)
		goto err_map;
	shca_obj_get(SHCA_OBJ_DM);
	return &dm->ibdm;

err_map:
	/* never mapped: the range goes back at once */
	shca_dm_map_remove(map);
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

	shca_dm_map_remove(dm->map);
	kfree(dm);
	shca_obj_put(SHCA_OBJ_DM);
	return 0;
}

/**
 * shca_dm_span_init - describe a range in use
 * @span: filled in
 * @w: its window
 * @idx: the range
 * @length: bytes its owner asked for
 */
void shca_dm_span_init(struct shca_dm_span *span, struct shca_dmw *w,
		       u32 idx, u64 length)
{
	span->pages = shca_dmw_pages(w, idx, &span->npages);
	span->idx = idx;
	span->gen = shca_dmw_gen(w, idx);
	span->length = length;
}

/**
 * shca_dm_mr - a zero-based MR over part of a device-memory range
 * @ibpd: PD
 * @span: the range
 * @attr: offset and length in it, and the rights (IB_ZERO_BASED among
 *	them)
 *
 * Address 0 of the MR is byte @attr->offset of the range.
 *
 * Return: the MR object, published, or ERR_PTR() of -EINVAL (rights, or
 * a part outside the range), -EOPNOTSUPP (on-demand paging) or -ENOMEM.
 */
struct shca_mkey *shca_dm_mr(struct ib_pd *ibpd, const struct shca_dm_span *span,
			     const struct ib_dm_mr_attr *attr)
{
	u64 first = attr->offset >> PAGE_SHIFT;
	int access = attr->access_flags;
	struct shca_mkey *o;
	int ret;

	if (!(access & IB_ZERO_BASED))
		return ERR_PTR(-EINVAL);
	ret = shca_mr_check_access(ibpd->device, access & ~IB_ZERO_BASED);
	if (ret)
		return ERR_PTR(ret);
	if (attr->offset > span->length ||
	    attr->length > span->length - attr->offset || first > span->npages)
		return ERR_PTR(-EINVAL);
	o = shca_mkey_new(to_sdev(ibpd->device), to_spd(ibpd)->pdn,
			  SHCA_MRK_DM);
	if (!o)
		return ERR_PTR(-ENOMEM);
	o->m.pages = span->pages + first;
	o->m.npages = span->npages - first;
	o->m.base = offset_in_page(attr->offset);
	o->m.shift = PAGE_SHIFT;
	o->m.dm_range = span->idx;
	o->m.dm_gen = span->gen;
	o->m.dm_off = attr->offset;
	ret = shca_mkey_publish_mr(o, access, 0, attr->length);
	if (ret) {
		kfree(o);
		return ERR_PTR(ret);
	}
	shca_obj_get(SHCA_OBJ_MR);
	return o;
}

/**
 * shca_reg_dm_mr - register part of a device-memory allocation
 * @ibpd: PD
 * @ibdm: the allocation
 * @attr: offset and length in it (checked by the RDMA core to lie inside
 *	it) and the rights, which include IB_ZERO_BASED
 * @attrs: the method's attributes
 *
 * The MR is zero based (shca_dm_mr()).  It lives no longer than the
 * allocation (the RDMA core counts it as a user of @ibdm).
 *
 * Return: the MR, or an ERR_PTR() of shca_dm_mr().
 */
struct ib_mr *shca_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			     struct ib_dm_mr_attr *attr,
			     struct uverbs_attr_bundle *attrs)
{
	struct shca_mkey *o = shca_dm_mr(ibpd, &to_sdm(ibdm)->span, attr);

	return IS_ERR(o) ? ERR_CAST(o) : &o->ibmr;
}

/*
 * Direct verb: arm a range's register for a DRDMA WRITE or READ (or
 * disarm it).  The transfer must lie inside the allocation.
 */
static int UVERBS_HANDLER(SHCA_METHOD_DM_ARM)(struct uverbs_attr_bundle *attrs)
{
	struct ib_dm *ibdm = uverbs_attr_get_obj(attrs,
						 SHCA_ATTR_DM_ARM_HANDLE);
	struct shca_dm *dm = to_sdm(ibdm);
	u32 dir, length;
	u64 offset;
	int ret;

	ret = uverbs_copy_from(&dir, attrs, SHCA_ATTR_DM_ARM_DIR);
	if (!ret)
		ret = uverbs_copy_from(&offset, attrs, SHCA_ATTR_DM_ARM_OFFSET);
	if (!ret)
		ret = uverbs_copy_from(&length, attrs, SHCA_ATTR_DM_ARM_LENGTH);
	if (ret)
		return ret;
	if (dir != SHCA_ARR_DIR_NONE &&
	    (offset > ibdm->length || length > ibdm->length - offset))
		return -EINVAL;
	return shca_drdma_arm(dm->map->w, dm->map->idx, dir, offset, length);
}

/* Direct verb: the producer wrote @bytes more of a DRDMA WRITE. */
static int UVERBS_HANDLER(SHCA_METHOD_DM_COMMIT)(struct uverbs_attr_bundle *attrs)
{
	struct ib_dm *ibdm = uverbs_attr_get_obj(attrs,
						 SHCA_ATTR_DM_COMMIT_HANDLE);
	struct shca_dm *dm = to_sdm(ibdm);
	u32 bytes, count;
	int ret;

	ret = uverbs_copy_from(&bytes, attrs, SHCA_ATTR_DM_COMMIT_BYTES);
	if (ret)
		return ret;
	ret = shca_drdma_commit(dm->map->sdev, dm->map->w, dm->map->idx, bytes,
				&count);
	if (!ret && uverbs_attr_is_valid(attrs, SHCA_ATTR_DM_COMMIT_COUNT))
		ret = uverbs_copy_to(attrs, SHCA_ATTR_DM_COMMIT_COUNT, &count,
				     sizeof(count));
	return ret;
}

DECLARE_UVERBS_NAMED_METHOD(
	SHCA_METHOD_DM_ARM,
	UVERBS_ATTR_IDR(SHCA_ATTR_DM_ARM_HANDLE, UVERBS_OBJECT_DM,
			UVERBS_ACCESS_READ, UA_MANDATORY),
	UVERBS_ATTR_PTR_IN(SHCA_ATTR_DM_ARM_DIR, UVERBS_ATTR_TYPE(u32),
			   UA_MANDATORY),
	UVERBS_ATTR_PTR_IN(SHCA_ATTR_DM_ARM_OFFSET, UVERBS_ATTR_TYPE(u64),
			   UA_MANDATORY),
	UVERBS_ATTR_PTR_IN(SHCA_ATTR_DM_ARM_LENGTH, UVERBS_ATTR_TYPE(u32),
			   UA_MANDATORY));

DECLARE_UVERBS_NAMED_METHOD(
	SHCA_METHOD_DM_COMMIT,
	UVERBS_ATTR_IDR(SHCA_ATTR_DM_COMMIT_HANDLE, UVERBS_OBJECT_DM,
			UVERBS_ACCESS_READ, UA_MANDATORY),
	UVERBS_ATTR_PTR_IN(SHCA_ATTR_DM_COMMIT_BYTES, UVERBS_ATTR_TYPE(u32),
			   UA_MANDATORY),
	UVERBS_ATTR_PTR_OUT(SHCA_ATTR_DM_COMMIT_COUNT, UVERBS_ATTR_TYPE(u32),
			    UA_OPTIONAL));

ADD_UVERBS_METHODS(shca_dm_methods, UVERBS_OBJECT_DM,
		   &UVERBS_METHOD(SHCA_METHOD_DM_ARM),
		   &UVERBS_METHOD(SHCA_METHOD_DM_COMMIT));

ADD_UVERBS_ATTRIBUTES_SIMPLE(
	shca_dm_alloc_attrs, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC,
	UVERBS_ATTR_PTR_OUT(SHCA_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
			    UVERBS_ATTR_TYPE(u64), UA_MANDATORY),
	UVERBS_ATTR_PTR_OUT(SHCA_ATTR_ALLOC_DM_RESP_RANGE,
			    UVERBS_ATTR_TYPE(u32), UA_OPTIONAL),
	UVERBS_ATTR_PTR_OUT(SHCA_ATTR_ALLOC_DM_RESP_REG_OFFSET,
			    UVERBS_ATTR_TYPE(u64), UA_OPTIONAL));

/* the DM's part of the driver's additions (shca_uapi_defs chains it) */
const struct uapi_definition shca_dm_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &shca_dm_alloc_attrs),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &shca_dm_methods),
	{},
};
