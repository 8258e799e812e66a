/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca device-memory window ("packet memory", shca_dmw.c): blocks of pages
 * the engine owns, one window per device, handed out in address ranges.
 *
 * The window is created by the device's first range allocation (its size
 * is the dm_size module parameter, fixed when the module loads) and freed
 * with the device.  A range is a run of whole pages, zeroed when it is
 * handed out.  Its pages may be mapped into a process and attached to
 * packets as page fragments, each such use holding a page reference, so
 * a range given back goes to the free list only once no page of it is
 * referenced by anything but the window; until then it drains, and each
 * later allocation looks at it again.
 *
 * Locking: @lock (spin_lock_bh) protects the pool; the pages and @base
 * never change while the window exists.
 */
#ifndef SHCA_DMW_H
#define SHCA_DMW_H

#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include "shca_arr.h"

struct shca_dev;

extern unsigned int shca_dm_size;

/**
 * struct shca_dmw_range - the engine's state of one range slot
 * @reg: the range's address range register (shca_drdma.c), attached by
 *	its owner; NULL when it has none
 * @waiters: QPs whose next send WQE waits for the range's packet side
 *	(shca_qp.dm_wait)
 * @gen: incremented each time the slot is handed out, so that a WQE or
 *	an MR of an earlier owner never acts on a later one's range
 */
struct shca_dmw_range {
	struct shca_arr_reg *reg;
	struct list_head waiters;
	u32 gen;
};

/**
 * struct shca_dmw - a device's device-memory window
 * @lock: protects @pool, @ranges and every register (spin_lock_bh; may
 *	nest inside a qp->lock, never the other way)
 * @base: vmalloc_user() memory of @nblocks pages
 * @pages: the page of each block
 * @nblocks: pages in the window
 * @draining: ranges given back and not yet released
 * @armed_writes: ranges armed for a DRDMA WRITE (fetch looks a send's
 *	keys up only while there are any)
 * @pool: the free list and range slots (shca_arr.c)
 * @ranges: per range slot, @pool.nranges of them
 */
struct shca_dmw {
	spinlock_t lock;
	void *base;
	struct page **pages;
	u32 nblocks;
	u32 draining;
	u32 armed_writes;
	struct shca_arr_pool pool;
	struct shca_dmw_range *ranges;
};

u64 shca_dmw_max_size(void);
struct shca_dmw *shca_dmw_of(struct shca_dev *sdev);
struct shca_dmw *shca_dmw_get(struct shca_dev *sdev);
void shca_dmw_destroy(struct shca_dev *sdev);
int shca_dmw_alloc(struct shca_dev *sdev, struct shca_dmw *w, u64 length);
void shca_dmw_free(struct shca_dev *sdev, struct shca_dmw *w, u32 idx);
struct page **shca_dmw_pages(struct shca_dmw *w, u32 idx, u32 *nblocks);
u32 shca_dmw_gen(struct shca_dmw *w, u32 idx);
bool shca_dmw_held(struct shca_dmw *w, u32 start, u32 nblocks,
		   bool mapped_ok);

#endif /* SHCA_DMW_H */
