// SPDX-License-Identifier: GPL-2.0
/*
 * Address ranges of a device-memory window: first-fit allocation from a
 * sorted, coalesced free list of block extents.  Contract in shca_arr.h.
 */
#include "shca_arr.h"

/**
 * shca_arr_init - set up a pool with every block free
 * @p: the pool
 * @nblocks: blocks in the window, 1 to SHCA_ARR_MAX_BLOCKS
 * @nranges: range slots, 1 to SHCA_ARR_MAX_RANGES
 * @ext: @nranges + 1 extents of memory for the free list
 * @range: @nranges slots
 *
 * Return: 0 or SHCA_ARR_EINVAL.
 */
int shca_arr_init(struct shca_arr_pool *p, u32 nblocks, u32 nranges,
		  struct shca_arr_ext *ext, struct shca_arr_range *range)
{
	if (!p || !ext || !range || !nblocks || !nranges ||
	    nblocks > SHCA_ARR_MAX_BLOCKS || nranges > SHCA_ARR_MAX_RANGES)
		return SHCA_ARR_EINVAL;
	memset(range, 0, sizeof(*range) * nranges);
	memset(ext, 0, sizeof(*ext) * (nranges + 1));
	p->nblocks = nblocks;
	p->nranges = nranges;
	p->free = ext;
	p->range = range;
	p->free[0].start = 0;
	p->free[0].len = nblocks;
	p->nfree = 1;
	p->free_blocks = nblocks;
	p->in_use = 0;
	return 0;
}

static int shca_arr_free_slot(const struct shca_arr_pool *p)
{
	u32 i;

	for (i = 0; i < p->nranges; i++)
		if (p->range[i].state == SHCA_ARR_FREE)
			return i;
	return SHCA_ARR_ENOSPC;
}

static void shca_arr_ext_remove(struct shca_arr_pool *p, u32 i)
{
	memmove(&p->free[i], &p->free[i + 1],
		sizeof(p->free[0]) * (p->nfree - i - 1));
	p->nfree--;
}

/**
 * shca_arr_alloc - take a range of blocks
 * @p: the pool
 * @nblocks: blocks, 1 to the window's size
 *
 * The range is the lowest run of @nblocks free blocks; its slot is the
 * lowest free one, in state USED.
 *
 * Return: the range's index, SHCA_ARR_EINVAL for a bad size,
 * SHCA_ARR_ENOSPC when every slot is taken, SHCA_ARR_ENOMEM when no
 * free extent holds @nblocks.
 */
int shca_arr_alloc(struct shca_arr_pool *p, u32 nblocks)
{
	struct shca_arr_range *r;
	u32 i;
	int idx;

	if (!nblocks || nblocks > p->nblocks)
		return SHCA_ARR_EINVAL;
	idx = shca_arr_free_slot(p);
	if (idx < 0)
		return idx;
	for (i = 0; i < p->nfree; i++)
		if (p->free[i].len >= nblocks)
			break;
	if (i == p->nfree)
		return SHCA_ARR_ENOMEM;
	r = &p->range[idx];
	r->start = p->free[i].start;
	r->nblocks = nblocks;
	r->state = SHCA_ARR_USED;
	if (p->free[i].len == nblocks) {
		shca_arr_ext_remove(p, i);
	} else {
		p->free[i].start += nblocks;
		p->free[i].len -= nblocks;
	}
	p->free_blocks -= nblocks;
	p->in_use++;
	return idx;
}

/**
 * shca_arr_retire - the owner gave a range back; its blocks may still be
 *	referred to
 * @p: the pool
 * @idx: a USED range
 *
 * Return: 0, or SHCA_ARR_EINVAL for an index or state that is not that.
 */
int shca_arr_retire(struct shca_arr_pool *p, u32 idx)
{
	if (idx >= p->nranges || p->range[idx].state != SHCA_ARR_USED)
		return SHCA_ARR_EINVAL;
	p->range[idx].state = SHCA_ARR_DRAINING;
	return 0;
}

/* Put blocks [@start, @start + @len) back, merged with their neighbours. */
static int shca_arr_ext_insert(struct shca_arr_pool *p, u32 start, u32 len)
{
	u32 pos, end = start + len;
	struct shca_arr_ext *prev, *next;

	for (pos = 0; pos < p->nfree; pos++)
		if (p->free[pos].start > start)
			break;
	prev = pos ? &p->free[pos - 1] : NULL;
	next = pos < p->nfree ? &p->free[pos] : NULL;
	if ((prev && prev->start + prev->len > start) ||
	    (next && next->start < end))
		return SHCA_ARR_ECORRUPT;	/* already free */
	if (prev && prev->start + prev->len == start) {
		prev->len += len;
		if (next && next->start == end) {
			prev->len += next->len;
			shca_arr_ext_remove(p, pos);
		}
		return 0;
	}
	if (next && next->start == end) {
		next->start = start;
		next->len += len;
		return 0;
	}
	if (p->nfree >= p->nranges + 1)
		return SHCA_ARR_ECORRUPT;
	memmove(&p->free[pos + 1], &p->free[pos],
		sizeof(p->free[0]) * (p->nfree - pos));
	p->free[pos].start = start;
	p->free[pos].len = len;
	p->nfree++;
	return 0;
}

/**
 * shca_arr_release - return a range's blocks to the free list
 * @p: the pool
 * @idx: a USED or DRAINING range
 *
 * Return: 0, SHCA_ARR_EINVAL for an index or state that is not that, or
 * SHCA_ARR_ECORRUPT if the pool's lists are inconsistent (nothing is
 * changed then).
 */
int shca_arr_release(struct shca_arr_pool *p, u32 idx)
{
	struct shca_arr_range *r;
	int ret;

	if (idx >= p->nranges)
		return SHCA_ARR_EINVAL;
	r = &p->range[idx];
	if (r->state != SHCA_ARR_USED && r->state != SHCA_ARR_DRAINING)
		return SHCA_ARR_EINVAL;
	if (!r->nblocks || r->start >= p->nblocks ||
	    r->nblocks > p->nblocks - r->start)
		return SHCA_ARR_ECORRUPT;
	ret = shca_arr_ext_insert(p, r->start, r->nblocks);
	if (ret)
		return ret;
	p->free_blocks += r->nblocks;
	p->in_use--;
	r->start = 0;
	r->nblocks = 0;
	r->state = SHCA_ARR_FREE;
	return 0;
}

/**
 * shca_arr_get - a range slot
 * @p: the pool
 * @idx: untrusted index
 *
 * Return: the slot (in any state), or NULL for an index out of range.
 */
const struct shca_arr_range *shca_arr_get(const struct shca_arr_pool *p,
					  u32 idx)
{
	return idx < p->nranges ? &p->range[idx] : NULL;
}

static int shca_arr_check_free(const struct shca_arr_pool *p)
{
	u64 sum = 0, end = 0;
	u32 i;

	if (p->nfree > p->nranges + 1)
		return SHCA_ARR_ECORRUPT;
	for (i = 0; i < p->nfree; i++) {
		const struct shca_arr_ext *e = &p->free[i];

		/* sorted, at least one block apart, inside the window */
		if (!e->len || (i && e->start <= end) ||
		    e->start >= p->nblocks || e->len > p->nblocks - e->start)
			return SHCA_ARR_ECORRUPT;
		end = (u64)e->start + e->len;
		sum += e->len;
	}
	return sum == p->free_blocks ? 0 : SHCA_ARR_ECORRUPT;
}

static bool shca_arr_overlap(u32 a, u32 alen, u32 b, u32 blen)
{
	return (u64)a < (u64)b + blen && (u64)b < (u64)a + alen;
}

/* range @i: inside the window, clear of every free extent and range */
static int shca_arr_check_range(const struct shca_arr_pool *p, u32 i)
{
	const struct shca_arr_range *r = &p->range[i];
	u32 j;

	if (!r->nblocks || r->start >= p->nblocks ||
	    r->nblocks > p->nblocks - r->start)
		return SHCA_ARR_ECORRUPT;
	for (j = 0; j < p->nfree; j++)
		if (shca_arr_overlap(r->start, r->nblocks, p->free[j].start,
				     p->free[j].len))
			return SHCA_ARR_ECORRUPT;
	for (j = i + 1; j < p->nranges; j++)
		if (p->range[j].state != SHCA_ARR_FREE &&
		    shca_arr_overlap(r->start, r->nblocks, p->range[j].start,
				     p->range[j].nblocks))
			return SHCA_ARR_ECORRUPT;
	return 0;
}

/**
 * shca_arr_check - check every invariant of a pool
 * @p: the pool
 *
 * The free list is sorted, coalesced and inside the window; the ranges in
 * use lie inside the window and overlap neither each other nor a free
 * extent; free and used blocks add up to the window; the counters agree.
 * Quadratic in the number of ranges: for tests and debugging.
 *
 * Return: 0 or SHCA_ARR_ECORRUPT.
 */
int shca_arr_check(const struct shca_arr_pool *p)
{
	u64 used = 0;
	u32 i, n = 0;

	if (!p->nblocks || p->nblocks > SHCA_ARR_MAX_BLOCKS ||
	    !p->nranges || p->nranges > SHCA_ARR_MAX_RANGES)
		return SHCA_ARR_ECORRUPT;
	if (shca_arr_check_free(p))
		return SHCA_ARR_ECORRUPT;
	for (i = 0; i < p->nranges; i++) {
		const struct shca_arr_range *r = &p->range[i];

		if (r->state == SHCA_ARR_FREE) {
			if (r->nblocks)
				return SHCA_ARR_ECORRUPT;
			continue;
		}
		if (r->state != SHCA_ARR_USED && r->state != SHCA_ARR_DRAINING)
			return SHCA_ARR_ECORRUPT;
		if (shca_arr_check_range(p, i))
			return SHCA_ARR_ECORRUPT;
		used += r->nblocks;
		n++;
	}
	if (n != p->in_use || used + p->free_blocks != p->nblocks)
		return SHCA_ARR_ECORRUPT;
	return 0;
}
