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

#include <linux/mm_types.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include "shca_arr.h"

struct shca_dev;

extern unsigned int shca_dm_size;

/**
 * struct shca_dmw - a device's device-memory window
 * @lock: protects @pool (spin_lock_bh)
 * @base: vmalloc_user() memory of @nblocks pages
 * @pages: the page of each block
 * @nblocks: pages in the window
 * @draining: ranges given back and not yet released
 * @pool: the free list and range slots (shca_arr.c)
 */
struct shca_dmw {
	spinlock_t lock;
	void *base;
	struct page **pages;
	u32 nblocks;
	u32 draining;
	struct shca_arr_pool pool;
};

u64 shca_dmw_max_size(void);
struct shca_dmw *shca_dmw_get(struct shca_dev *sdev);
void shca_dmw_destroy(struct shca_dev *sdev);
int shca_dmw_alloc(struct shca_dev *sdev, struct shca_dmw *w, u64 length);
void shca_dmw_free(struct shca_dev *sdev, struct shca_dmw *w, u32 idx);
struct page **shca_dmw_pages(struct shca_dmw *w, u32 idx, u32 *nblocks);

#endif /* SHCA_DMW_H */
