/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca rings (shca_ring.c).
 *
 * Every SQ, RQ, SRQ and CQ is a ring (struct shca_ring_ctrl + slots, see
 * include/uapi/rdma/shca-abi.h) in vmalloc memory.  A user ring is mapped
 * by the process through an rdma_user_mmap_entry; a kernel ring (kernel
 * verbs users) is only touched by the kernel.
 *
 * Every mmap entry of the device is created by shca_ring_init() (the
 * device's mmap_free callback assumes so): its vmalloc memory is freed
 * when the ring is destroyed and no mmap() call is using the entry.  Pages
 * the process still has mapped stay alive through the page references the
 * mapping holds, so the kernel never frees memory a process can reach.
 */
#ifndef SHCA_RING_H
#define SHCA_RING_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/shca-abi.h>

/*
 * Queue limits.  A ring is one vmalloc_user() area the process maps, so
 * they are bounded by memory only: a CQ of SHCA_MAX_CQE entries takes
 * 256 MiB, a send queue of SHCA_MAX_QP_WR WQEs with SHCA_MAX_SGE SGEs
 * 32 MiB (and the kernel's copy of its WQEs about as much again).  Inline
 * data is copied into the WQE slot, where the SGEs would be.
 */
#define SHCA_MAX_SGE		32
#define SHCA_MAX_INLINE		(SHCA_MAX_SGE * 16)
#define SHCA_MAX_QP_WR		32768
#define SHCA_MAX_CQE		(1 << 22)
#define SHCA_MAX_SRQ_WR		32768
#define SHCA_MAX_SRQ		65536	/* SRQ numbers 0..SHCA_MAX_SRQ-1 */

/**
 * struct shca_ring - one ring
 * @ctrl: control block (shared with the process for a user ring)
 * @slots: first slot
 * @entries: number of slots, a power of two
 * @stride: bytes per slot, a power of two
 * @mask: @entries - 1
 * @kidx: the index the kernel owns (consumer index of SQ/RQ/SRQ, producer
 *	index of a CQ); the kernel never reads it back from @ctrl
 * @buf: vmalloc_user() memory holding @ctrl and the slots
 * @size: bytes of @buf (page aligned)
 * @mmap: the process's mmap entry, NULL for a kernel ring
 *
 * The fields are set by shca_ring_init(); @kidx and the words of @ctrl the
 * kernel owns are written under the lock of the queue the ring belongs to.
 */
struct shca_ring {
	struct shca_ring_ctrl *ctrl;
	u8 *slots;
	u32 entries;
	u32 stride;
	u32 mask;
	u32 kidx;
	void *buf;
	size_t size;
	struct rdma_user_mmap_entry *mmap;
};

/**
 * shca_ring_init - allocate a ring
 * @r: ring to fill
 * @uctx: user context to map it into, or NULL for a kernel ring
 * @entries: minimum number of slots (rounded up to a power of two),
 *	1..2^20
 * @stride: minimum slot size (rounded up to a power of two), 1..2^16
 * @info: filled with what the process needs to map it (may be NULL)
 *
 * The memory is zeroed.  Sleeps.
 *
 * Return: 0 or a negative errno (-EINVAL for out-of-range sizes).
 */
int shca_ring_init(struct shca_ring *r, struct ib_ucontext *uctx,
		   u32 entries, u32 stride, struct shca_ring_info *info);

/**
 * shca_ring_destroy - release a ring; a user mapping keeps the memory
 * alive until the process unmaps it, the kernel no longer touches it
 * @r: ring (a zeroed, never initialised ring is accepted and ignored)
 *
 * May sleep: never call it under a spinlock.
 */
void shca_ring_destroy(struct shca_ring *r);

static inline void *shca_ring_slot(const struct shca_ring *r, u32 idx)
{
	return r->slots + (size_t)(idx & r->mask) * r->stride;
}

/**
 * shca_ring_pending - slots filled by the producer, not yet consumed
 * @r: SQ/RQ/SRQ ring (kernel consumes)
 *
 * Reads the producer index once (acquire).
 *
 * Return: the count, or -EPROTO when the producer index is impossible
 * (more than @entries ahead of the consumer index).
 */
int shca_ring_pending(struct shca_ring *r);

/**
 * shca_ring_consume - advance the kernel's consumer index and publish it
 * @r: SQ/RQ/SRQ ring
 * @n: slots consumed
 */
void shca_ring_consume(struct shca_ring *r, u32 n);

/**
 * struct shca_mmap_entry - memory a process maps: a ring, or a range of a
 *	device-memory window
 * @rdma: RDMA core entry (its offset is what the process passes to mmap)
 * @buf: vmalloc_user() memory; a ring's is freed by the device's
 *	mmap_free callback
 * @pgoff: first page of @buf mapped (a window's range)
 * @size: bytes mapped (page aligned)
 * @release: if set, what mmap_free calls instead of freeing @buf (a
 *	window's range goes back to the window)
 * @release_arg: for @release
 * @read_only: the process may map it only for reading (a register page)
 */
struct shca_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *buf;
	unsigned long pgoff;
	size_t size;
	void (*release)(struct shca_mmap_entry *me);
	void *release_arg;
	bool read_only;
};

static inline struct shca_mmap_entry *
to_smmap(struct rdma_user_mmap_entry *entry)
{
	return container_of(entry, struct shca_mmap_entry, rdma);
}

static inline bool shca_ring_is_user(const struct shca_ring *r)
{
	return r->mmap;
}

void shca_ring_move(struct shca_ring *new, const struct shca_ring *old,
		    u32 from, u32 to, u32 kidx);
void shca_ring_set_flags(struct shca_ring *r, u32 flags);

#endif /* SHCA_RING_H */
