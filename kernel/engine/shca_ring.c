// SPDX-License-Identifier: GPL-2.0
/*
 * shca rings: the memory every SQ, RQ, SRQ and CQ lives in, shared with
 * the process that owns it (or private to the kernel for a kernel
 * verbs user).
 *
 * A ring is vmalloc memory: struct shca_ring_ctrl, then the slots at
 * SHCA_RING_DATA_OFFSET.  A process's ring is charged to its memory
 * cgroup and fails with -ENOMEM past the cgroup's limit (no OOM kill).  Whatever a process can write (the producer
 * index of its SQ/RQ/SRQ, the consumer index and arm word of its CQ, the
 * slots it fills) is read once, into a local, and checked before use.
 */
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/vmalloc.h>
#include "shca.h"
#include "shca_obj.h"
#include "shca_ring.h"

#define SHCA_RING_MAX_ENTRIES	(1U << 22)
#define SHCA_RING_MAX_STRIDE	(1U << 16)

static int shca_ring_map(struct shca_ring *r, struct ib_ucontext *uctx)
{
	struct shca_mmap_entry *me;
	int ret;

	me = kzalloc(sizeof(*me), GFP_KERNEL);
	if (!me)
		return -ENOMEM;
	me->buf = r->buf;
	me->size = r->size;
	ret = rdma_user_mmap_entry_insert(uctx, &me->rdma, me->size);
	if (ret) {
		kfree(me);
		return ret;
	}
	shca_obj_get(SHCA_OBJ_MMAP);
	r->mmap = &me->rdma;
	return 0;
}

/**
 * shca_ring_init - allocate a ring
 * @r: ring to fill
 * @uctx: user context to map it into, or NULL for a kernel ring
 * @entries: minimum number of slots (rounded up to a power of two)
 * @stride: minimum slot size (rounded up to a power of two)
 * @info: filled with what the process needs to map it (may be NULL)
 *
 * For a user ring the memory belongs to an mmap entry from here on and is
 * freed by shca_mmap_free().
 *
 * Return: 0 or a negative errno.
 */
int shca_ring_init(struct shca_ring *r, struct ib_ucontext *uctx,
		   u32 entries, u32 stride, struct shca_ring_info *info)
{
	int ret;

	memset(r, 0, sizeof(*r));
	if (!entries || entries > SHCA_RING_MAX_ENTRIES ||
	    !stride || stride > SHCA_RING_MAX_STRIDE)
		return -EINVAL;

	r->entries = roundup_pow_of_two(entries);
	r->stride = roundup_pow_of_two(stride);
	r->mask = r->entries - 1;
	r->size = PAGE_ALIGN(SHCA_RING_DATA_OFFSET +
			     (size_t)r->entries * r->stride);
	/* a process past its cgroup's limit is told ENOMEM, not logged */
	r->buf = __vmalloc(r->size, uctx ? GFP_KERNEL_ACCOUNT | __GFP_ZERO |
				 __GFP_RETRY_MAYFAIL | __GFP_NOWARN :
				 GFP_KERNEL | __GFP_ZERO);
	if (!r->buf)
		return -ENOMEM;
	r->ctrl = r->buf;
	r->slots = (u8 *)r->buf + SHCA_RING_DATA_OFFSET;

	if (uctx) {
		ret = shca_ring_map(r, uctx);
		if (ret)
			goto err_free;
	}
	if (info) {
		info->mmap_offset = r->mmap ? rdma_user_mmap_get_offset(r->mmap)
					    : 0;
		info->mmap_size = r->size;
		info->entries = r->entries;
		info->stride = r->stride;
	}
	shca_obj_get(SHCA_OBJ_RING);
	return 0;

err_free:
	vfree(r->buf);
	memset(r, 0, sizeof(*r));
	return ret;
}

/**
 * shca_ring_destroy - release a ring
 * @r: ring (a zeroed ring is ignored)
 *
 * A user ring's memory is freed by shca_mmap_free() once no mmap() call is
 * using the entry; pages the process still maps live on through the
 * mapping's page references.  The kernel does not touch @r afterwards.
 */
void shca_ring_destroy(struct shca_ring *r)
{
	if (!r->buf)
		return;
	if (r->mmap)
		rdma_user_mmap_entry_remove(r->mmap);
	else
		vfree(r->buf);
	memset(r, 0, sizeof(*r));
	shca_obj_put(SHCA_OBJ_RING);
}

/**
 * shca_ring_pending - slots filled by the producer, not yet consumed
 * @r: SQ/RQ/SRQ ring (kernel consumes); caller holds the consumer lock
 *
 * Return: the count, or -EPROTO when the producer index is impossible.
 */
int shca_ring_pending(struct shca_ring *r)
{
	/* acquire: the slots up to prod are read after prod */
	u32 prod = smp_load_acquire(&r->ctrl->prod);
	u32 n = prod - r->kidx;

	if (n > r->entries)
		return -EPROTO;
	return n;
}

/**
 * shca_ring_consume - advance the kernel's consumer index and publish it
 * @r: SQ/RQ/SRQ ring; caller holds the consumer lock
 * @n: slots consumed
 *
 * The release store orders the kernel's reads of the slots before the
 * producer may reuse them.
 */
void shca_ring_consume(struct shca_ring *r, u32 n)
{
	r->kidx += n;
	/* release: slots read before the producer may reuse them */
	smp_store_release(&r->ctrl->cons, r->kidx);
}

/**
 * shca_ring_move - copy slots into a new ring (resize)
 * @new: the new ring
 * @old: the ring it replaces
 * @from: first slot index to copy
 * @to: index past the last one
 * @kidx: the kernel's index @new continues at
 *
 * Slots keep their indices; @new continues where @old was.  Caller holds
 * the queue's lock and has checked that @to - @from fits @new.
 */
void shca_ring_move(struct shca_ring *new, const struct shca_ring *old,
		    u32 from, u32 to, u32 kidx)
{
	u32 i;

	for (i = from; i != to; i++)
		memcpy(shca_ring_slot(new, i), shca_ring_slot(old, i),
		       min(new->stride, old->stride));
	new->kidx = kidx;
	WRITE_ONCE(new->ctrl->prod, to);
	WRITE_ONCE(new->ctrl->cons, from);
}

/**
 * shca_ring_set_flags - set a ring's flags word for its producer to read
 * @r: ring (an unallocated ring is ignored)
 * @flags: SHCA_RING_F_* (the whole word)
 */
void shca_ring_set_flags(struct shca_ring *r, u32 flags)
{
	if (r->ctrl)
		WRITE_ONCE(r->ctrl->flags, flags);
}
