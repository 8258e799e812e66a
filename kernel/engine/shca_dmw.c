// SPDX-License-Identifier: GPL-2.0
/*
 * shca device-memory window: the pages behind ibv_alloc_dm, created on a
 * device's first allocation, handed out in address ranges from the free
 * list of shca_arr.c, taken back once nothing refers to them.  Rules in
 * shca_dmw.h.
 */
#include <linux/mm.h>
#include <linux/version.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "shca.h"
#include "shca_dmw.h"
#include "shca_drdma.h"

/* the window's size, in bytes (whole pages, at most SHCA_DMW_MAX_BYTES) */
unsigned int shca_dm_size = 4U << 20;
module_param_named(dm_size, shca_dm_size, uint, 0444);
MODULE_PARM_DESC(dm_size,
		 "Device memory per device in bytes, rounded down to whole pages; 0 turns device memory off (default 4194304, at most 1073741824)");

#define SHCA_DMW_MAX_BYTES	(1ULL << 30)
#define SHCA_DMW_MAX_RANGES	4096U

/**
 * shca_dmw_max_size - the device memory a device offers (max_dm_size)
 *
 * Return: bytes, a multiple of the page size; 0 when turned off.
 */
u64 shca_dmw_max_size(void)
{
	u64 size = min_t(u64, shca_dm_size, SHCA_DMW_MAX_BYTES);

	return round_down(size, PAGE_SIZE);
}

static void shca_dmw_free_window(struct shca_dmw *w)
{
	kvfree(w->ranges);
	kvfree(w->pool.free);
	kvfree(w->pool.range);
	kvfree(w->pages);
	vfree(w->base);
	kfree(w);
}

static struct shca_dmw *shca_dmw_create(u32 nblocks)
{
	u32 nranges = min(nblocks, SHCA_DMW_MAX_RANGES), i;
	struct shca_arr_range *range;
	struct shca_arr_ext *ext;
	struct shca_dmw *w;

	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return ERR_PTR(-ENOMEM);
	spin_lock_init(&w->lock);
	w->nblocks = nblocks;
	w->base = vmalloc_user((size_t)nblocks << PAGE_SHIFT);
	w->pages = kvcalloc(nblocks, sizeof(*w->pages), GFP_KERNEL);
	ext = kvcalloc(nranges + 1, sizeof(*ext), GFP_KERNEL);
	range = kvcalloc(nranges, sizeof(*range), GFP_KERNEL);
	w->ranges = kvcalloc(nranges, sizeof(*w->ranges), GFP_KERNEL);
	w->pool.free = ext;
	w->pool.range = range;
	if (!w->base || !w->pages || !ext || !range || !w->ranges)
		goto err;
	for (i = 0; i < nranges; i++)
		INIT_LIST_HEAD(&w->ranges[i].waiters);
	for (i = 0; i < nblocks; i++)
		w->pages[i] = vmalloc_to_page(w->base + ((size_t)i << PAGE_SHIFT));
	if (shca_arr_init(&w->pool, nblocks, nranges, ext, range))
		goto err;
	return w;

err:
	shca_dmw_free_window(w);
	return ERR_PTR(-ENOMEM);
}

/**
 * shca_dmw_of - a device's window if it has been created
 * @sdev: device
 *
 * Any context.
 *
 * Return: the window or NULL.
 */
struct shca_dmw *shca_dmw_of(struct shca_dev *sdev)
{
	/* pairs with the cmpxchg_release() of shca_dmw_get() */
	return smp_load_acquire(&sdev->dmw);
}

/**
 * shca_dmw_get - a device's window, created by the first call
 * @sdev: device
 *
 * Process context (may sleep).
 *
 * Return: the window, ERR_PTR(-EOPNOTSUPP) when device memory is turned
 * off, or ERR_PTR(-ENOMEM).
 */
struct shca_dmw *shca_dmw_get(struct shca_dev *sdev)
{
	u64 size = shca_dmw_max_size();
	struct shca_dmw *w, *old;

	w = shca_dmw_of(sdev);
	if (w)
		return w;
	if (!size)
		return ERR_PTR(-EOPNOTSUPP);
	w = shca_dmw_create(size >> PAGE_SHIFT);
	if (IS_ERR(w))
		return w;
	old = cmpxchg_release(&sdev->dmw, NULL, w);
	if (old) {
		/* another allocation created it first */
		shca_dmw_free_window(w);
		return old;
	}
	return w;
}

/**
 * shca_dmw_destroy - free a device's window (from its dealloc_driver)
 * @sdev: device, with no user context left
 *
 * Pages still referenced by a packet in flight stay allocated until that
 * reference is put.
 */
void shca_dmw_destroy(struct shca_dev *sdev)
{
	struct shca_dmw *w = sdev->dmw;

	if (!w)
		return;
	WARN_ON_ONCE(w->pool.in_use != w->draining);
	sdev->dmw = NULL;
	shca_dmw_free_window(w);
}

/* mappings of a window page (an order-0 page) */
static int shca_dmw_mapcount(struct page *page)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	return folio_mapcount(page_folio(page));
#else
	return page_mapcount(page);
#endif
}

/**
 * shca_dmw_held - does anything but the window refer to a page of a run?
 * @w: the window
 * @start: first block
 * @nblocks: blocks
 * @mapped_ok: a process's mapping of a page does not count
 *
 * A packet carrying a page as a fragment holds a page reference, as does
 * every mapping; the window holds one of its own.
 *
 * Return: whether any page has a reference beyond those.
 */
bool shca_dmw_held(struct shca_dmw *w, u32 start, u32 nblocks,
		   bool mapped_ok)
{
	u32 i;

	for (i = start; i < start + nblocks; i++) {
		struct page *page = w->pages[i];
		int own = 1 + (mapped_ok ? shca_dmw_mapcount(page) : 0);

		if (page_ref_count(page) > own)
			return true;
	}
	return false;
}

/* No page of range @r is referenced by anything but the window. */
static bool shca_dmw_idle(struct shca_dmw *w, const struct shca_arr_range *r)
{
	return !shca_dmw_held(w, r->start, r->nblocks, false);
}

/* Release the draining ranges nothing refers to any more. */
static void shca_dmw_reap(struct shca_dmw *w)
{
	u32 i;

	lockdep_assert_held(&w->lock);
	for (i = 0; i < w->pool.nranges && w->draining; i++) {
		const struct shca_arr_range *r = &w->pool.range[i];

		if (r->state != SHCA_ARR_DRAINING || !shca_dmw_idle(w, r))
			continue;
		if (!WARN_ON_ONCE(shca_arr_release(&w->pool, i)))
			w->draining--;
	}
}

/**
 * shca_dmw_alloc - take an address range, zeroed
 * @sdev: device (counters)
 * @w: its window
 * @length: bytes, 1 to the window's size; rounded up to whole pages
 *
 * Return: the range's index, -EINVAL for a bad length, or -ENOMEM when
 * no free run of pages or no range slot is left.
 */
int shca_dmw_alloc(struct shca_dev *sdev, struct shca_dmw *w, u64 length)
{
	u64 nblocks = DIV_ROUND_UP_ULL(length, PAGE_SIZE);
	const struct shca_arr_range *r;
	int idx;

	if (!length || nblocks > w->nblocks)
		return -EINVAL;
	spin_lock_bh(&w->lock);
	if (w->draining)
		shca_dmw_reap(w);
	idx = shca_arr_alloc(&w->pool, nblocks);
	if (idx >= 0)
		w->ranges[idx].gen++;
	spin_unlock_bh(&w->lock);
	if (idx < 0)
		return idx == -EINVAL ? -EINVAL : -ENOMEM;
	/* the slot is ours: nobody else touches it or its pages */
	r = shca_arr_get(&w->pool, idx);
	memset(w->base + ((size_t)r->start << PAGE_SHIFT), 0,
	       (size_t)r->nblocks << PAGE_SHIFT);
	shca_stat_inc(sdev, SHCA_CNT_DM_RANGES);
	return idx;
}

/**
 * shca_dmw_free - give an address range back
 * @sdev: device (counters)
 * @w: its window
 * @idx: a range shca_dmw_alloc() returned, not given back yet
 *
 * Its pages return to the free list now if nothing refers to them, else
 * once the last reference is gone (a later allocation checks).  Its
 * register is detached; a WQE still waiting for it goes on (its key
 * lookup fails: the range's MRs are gone).
 */
void shca_dmw_free(struct shca_dev *sdev, struct shca_dmw *w, u32 idx)
{
	spin_lock_bh(&w->lock);
	shca_drdma_detach(w, idx);
	if (!WARN_ON_ONCE(shca_arr_retire(&w->pool, idx))) {
		if (shca_dmw_idle(w, shca_arr_get(&w->pool, idx)))
			WARN_ON_ONCE(shca_arr_release(&w->pool, idx));
		else
			w->draining++;
	}
	spin_unlock_bh(&w->lock);
	atomic64_dec(&sdev->stats[SHCA_CNT_DM_RANGES]);
}

/**
 * shca_dmw_pages - the pages of a range in use
 * @w: the window
 * @idx: a range shca_dmw_alloc() returned, not given back yet
 * @nblocks: receives its page count
 *
 * Return: its first page's entry in the window's page array.
 */
struct page **shca_dmw_pages(struct shca_dmw *w, u32 idx, u32 *nblocks)
{
	const struct shca_arr_range *r = shca_arr_get(&w->pool, idx);

	*nblocks = r->nblocks;
	return &w->pages[r->start];
}

/**
 * shca_dmw_gen - a range slot's allocation generation
 * @w: the window
 * @idx: a range in use
 *
 * Return: the generation it was handed out with.
 */
u32 shca_dmw_gen(struct shca_dmw *w, u32 idx)
{
	u32 gen;

	spin_lock_bh(&w->lock);
	gen = w->ranges[idx].gen;
	spin_unlock_bh(&w->lock);
	return gen;
}
