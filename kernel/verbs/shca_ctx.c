// SPDX-License-Identifier: GPL-2.0
/*
 * shca user contexts, protection domains and the mmap callbacks that hand
 * rings to processes; helpers for every verb's udata.
 */
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>
#include "shca.h"
#include "shca_ctx.h"
#include "shca_obj.h"
#include "shca_mem.h"
#include "shca_ring.h"
#include "shca_rkey.h"

/**
 * shca_udata_uctx - the user context a verb's udata comes from
 * @udata: udata of the verb (or NULL for a kernel caller)
 *
 * Return: the context, or NULL for a kernel caller.
 */
struct ib_ucontext *shca_udata_uctx(struct ib_udata *udata)
{
	struct shca_ucontext *suc;

	suc = rdma_udata_to_drv_context(udata, struct shca_ucontext, ibuc);
	return suc ? &suc->ibuc : NULL;
}

/**
 * shca_udata_check_in - refuse driver input shca does not understand
 * @udata: udata of the verb (NULL for a kernel caller)
 *
 * No shca verb takes a driver request (Documentation/abi.md), so every
 * byte a process passes must be zero: a request from a later provider
 * whose fields this module does not know is refused, not ignored.
 * Process context (it may read user memory).
 *
 * Return: 0, or -EINVAL when a byte of the input is not zero.
 */
int shca_udata_check_in(struct ib_udata *udata)
{
	if (!udata || !udata->inlen)
		return 0;
	return ib_is_udata_cleared(udata, 0, udata->inlen) ? 0 : -EINVAL;
}

/**
 * shca_copy_resp - copy a verb's response to the process, as much of it as
 * the process has room for
 * @udata: udata of the verb (nothing is copied for NULL or no room)
 * @resp: the response
 * @len: its size
 *
 * Return: 0 or -EFAULT.
 */
int shca_copy_resp(struct ib_udata *udata, void *resp, size_t len)
{
	if (!udata || !udata->outlen)
		return 0;
	return ib_copy_to_udata(udata, resp, min(len, udata->outlen));
}

/*
 * Map @me's vmalloc memory page by page (the VMA is exactly its size);
 * a read-only entry can never be made writable.  Rings are allocated
 * with __vmalloc(), charged to the process's memory cgroup, which
 * remap_vmalloc_range() does not take (it wants vmalloc_user() memory).
 */
static int shca_mmap_vmalloc(struct vm_area_struct *vma,
			     struct shca_mmap_entry *me)
{
	u8 *buf = (u8 *)me->buf + (me->pgoff << PAGE_SHIFT);
	unsigned long off;
	int ret;

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	if (me->read_only)
		vm_flags_clear(vma, VM_MAYWRITE);
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
#else
	if (me->read_only)
		vma->vm_flags &= ~VM_MAYWRITE;
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
#endif
	for (off = 0; off < vma->vm_end - vma->vm_start; off += PAGE_SIZE) {
		ret = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(buf + off));
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * shca_mmap - map a ring or a device-memory range into a process
 * @uctx: the process's context
 * @vma: the mapping; its offset is the key a create verb (or alloc_dm)
 *	returned
 *
 * The mapping must be shared and exactly the ring's (range's) size; a
 * range's register page may only be mapped for reading.
 *
 * Return: 0, or -EINVAL for an unknown key, a private mapping or a wrong
 * size, -EPERM for a writable mapping of a register page (or the error of
 * remap_vmalloc_range()).
 */
int shca_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	struct shca_mmap_entry *me;
	int ret;

	/* checks VM_SHARED and that the VMA covers the whole entry */
	entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!entry)
		return -EINVAL;
	me = to_smmap(entry);
	if (vma->vm_end - vma->vm_start != me->size)
		ret = -EINVAL;
	else if (me->read_only && (vma->vm_flags & VM_WRITE))
		ret = -EPERM;
	else
		ret = shca_mmap_vmalloc(vma, me);
	rdma_user_mmap_entry_put(entry);
	return ret;
}

/**
 * shca_mmap_free - free a ring's memory (give a device-memory range back)
 *	once nothing maps it any more
 * @entry: the mmap entry, removed by its owner and unmapped by every
 *	process
 */
void shca_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct shca_mmap_entry *me = to_smmap(entry);

	shca_obj_put(SHCA_OBJ_MMAP);
	if (me->release) {
		me->release(me);
		return;
	}
	vfree(me->buf);
	kfree(me);
}

/* What a context's provider must know: the same for every context */
static const struct shca_alloc_ucontext_resp shca_uctx_resp = {
	.caps = SHCA_CAP_DOORBELL_SUPPRESS | SHCA_CAP_CQ_ARM_WORD |
		SHCA_CAP_CQ_TIMESTAMP | (SHCA_ACCESS_FLUSH ? SHCA_CAP_FLUSH : 0),
	.max_inline = SHCA_MAX_INLINE,
	.sqe_size = sizeof(struct shca_sqe),
	.cqe_size = sizeof(struct shca_cqe),
};

/**
 * shca_alloc_ucontext - open the device for a process
 * @ibuc: the RDMA core's context, allocated by the core
 * @udata: receives struct shca_alloc_ucontext_resp: the capabilities and
 *	WQE and CQE sizes the provider must use
 *
 * uverbs pins a device's module only when the device cannot
 * disassociate; shca can, so each context holds a module reference
 * itself: rmmod is refused while a process has the device open.
 *
 * Return: 0, -ENODEV when the module is being unloaded, -EINVAL for
 * driver input (shca_udata_check_in()), or -EFAULT.
 */
int shca_alloc_ucontext(struct ib_ucontext *ibuc,
			struct ib_udata *udata)
{
	struct shca_alloc_ucontext_resp resp = shca_uctx_resp;
	int ret;

	ret = shca_udata_check_in(udata);
	if (ret)
		return ret;

	/*
	 * uverbs pins the module of a device only when the device cannot
	 * disassociate; shca can, so it pins itself for each context: rmmod
	 * stays refused while a process uses shca.
	 */
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	if (udata->outlen) {
		ret = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (ret) {
			module_put(THIS_MODULE);
			return ret;
		}
	}
	shca_obj_get(SHCA_OBJ_UCTX);
	return 0;
}

/**
 * shca_query_ucontext - a context's driver data again, for a process that
 * imports the context (ibv_import_device() on a duplicate of its file)
 * @ibuc: the context
 * @attrs: UVERBS_METHOD_QUERY_CONTEXT's bundle; SHCA_ATTR_QUERY_CONTEXT_RESP
 *	(optional) receives what shca_alloc_ucontext() returned
 *
 * Return: 0, or -EFAULT.
 */
int shca_query_ucontext(struct ib_ucontext *ibuc,
			struct uverbs_attr_bundle *attrs)
{
	if (!uverbs_attr_is_valid(attrs, SHCA_ATTR_QUERY_CONTEXT_RESP))
		return 0;
	return uverbs_copy_to(attrs, SHCA_ATTR_QUERY_CONTEXT_RESP,
			      &shca_uctx_resp, sizeof(shca_uctx_resp));
}

/**
 * shca_dealloc_ucontext - a process closed the device
 * @ibuc: its context, whose objects the RDMA core has destroyed
 *
 * Drops the module reference shca_alloc_ucontext() took.
 */
void shca_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	shca_obj_put(SHCA_OBJ_UCTX);
	module_put(THIS_MODULE);
}

/**
 * shca_disassociate_ucontext - detach a process from a dying device
 * @ibuc: the process's context
 *
 * The device is being unregistered (rdma link delete, its netdev or
 * namespace going away) while a process still has it open.  Providing
 * this callback lets the RDMA core detach the process instead of waiting
 * for it to close the device.  By the time it is called, the core has
 * sent the process IBV_EVENT_DEVICE_FATAL and destroyed every object of
 * the context (so the engine no longer touches its rings); the process's
 * later commands fail with EIO.  Nothing is left to do here: ring pages
 * the process still maps stay alive through its mapping's page
 * references and are used by nobody else.
 */
void shca_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

/**
 * shca_alloc_pd - allocate a protection domain
 * @ibpd: the RDMA core's PD, allocated by the core
 * @udata: for a process, receives the PD number
 *
 * PD numbers run from 1 to SHCA_MAX_PD; the engine compares them when a
 * key is used (an address handle's PD is compared by pointer).
 *
 * Return: 0, -ENOMEM when SHCA_MAX_PD PDs exist or memory runs out,
 * -EINVAL for driver input, or -EFAULT.
 */
int shca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibpd->device);
	struct shca_pd *pd = to_spd(ibpd);
	struct shca_alloc_pd_resp resp = {};
	int id, ret;

	ret = shca_udata_check_in(udata);
	if (ret)
		return ret;

	id = ida_alloc_range(&sdev->pd_ida, 1, SHCA_MAX_PD, GFP_KERNEL);
	if (id < 0)
		return id == -ENOSPC ? -ENOMEM : id;
	pd->pdn = id;
	ret = shca_rkey_pd_add(sdev, pd);
	if (ret)
		goto err_id;

	if (udata && udata->outlen) {
		resp.pdn = pd->pdn;
		ret = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (ret)
			goto err_xa;
	}
	shca_obj_get(SHCA_OBJ_PD);
	return 0;

err_xa:
	shca_rkey_pd_del(sdev, pd);
err_id:
	ida_free(&sdev->pd_ida, id);
	return ret;
}

/**
 * shca_dealloc_pd - free a protection domain
 * @ibpd: the PD; the RDMA core frees it only once nothing uses it
 * @udata: the process's, or NULL
 *
 * Return: 0.
 */
int shca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibpd->device);

	shca_rkey_pd_del(sdev, to_spd(ibpd));
	ida_free(&sdev->pd_ida, to_spd(ibpd)->pdn);
	shca_obj_put(SHCA_OBJ_PD);
	return 0;
}
