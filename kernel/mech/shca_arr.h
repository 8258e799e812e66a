/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Address ranges of a device-memory window: the free list the ranges are
 * handed out from.
 *
 * A device-memory window is a run of equal blocks (pages) the engine owns.
 * Processes and kernel producers take address ranges of whole blocks from
 * it; each range has a slot (its index, the number its Address Range
 * Register goes by) and a state:
 *  - FREE: the slot is unused;
 *  - USED: the range is handed out;
 *  - DRAINING: its owner gave it back but something may still refer to its
 *    blocks (a packet queued with the block as a page fragment); the
 *    blocks stay out of the free list until the caller releases the range.
 *
 * The free blocks are kept as a list of extents sorted by address, never
 * two adjacent ones (releasing a range merges it with its neighbours).
 * Free extents are separated by blocks of ranges, so there are never more
 * of them than ranges plus one: the extent array has nranges + 1 entries.
 * Allocation is first fit from the lowest address.
 *
 * Pure C (see shca_pure.h): no kernel calls, no allocation, no locking;
 * the caller supplies the arrays and serialises every call on one pool,
 * and every loop is bounded by the array sizes.
 */
#ifndef SHCA_ARR_H
#define SHCA_ARR_H

#include "shca_pure.h"

/* Error codes (negative); errno values in the module, as for the LLQ. */
#if defined(__KERNEL__) && defined(EUCLEAN)
#define SHCA_ARR_EINVAL		(-EINVAL)
#define SHCA_ARR_ENOSPC		(-ENOSPC)
#define SHCA_ARR_ENOMEM		(-ENOMEM)
#define SHCA_ARR_ECORRUPT	(-EUCLEAN)
#else
#define SHCA_ARR_EINVAL		(-22)	/* bad argument or state */
#define SHCA_ARR_ENOSPC		(-28)	/* every range slot is taken */
#define SHCA_ARR_ENOMEM		(-12)	/* no free extent is large enough */
#define SHCA_ARR_ECORRUPT	(-117)	/* a check failed */
#endif

/* Most blocks and ranges one pool may have (indices fit an int). */
#define SHCA_ARR_MAX_BLOCKS	(1u << 24)
#define SHCA_ARR_MAX_RANGES	(1u << 16)

enum shca_arr_state {
	SHCA_ARR_FREE,
	SHCA_ARR_USED,
	SHCA_ARR_DRAINING,
};

/**
 * struct shca_arr_ext - a run of free blocks
 * @start: first block
 * @len: blocks, at least 1
 */
struct shca_arr_ext {
	u32 start;
	u32 len;
};

/**
 * struct shca_arr_range - one address range slot
 * @start: first block (USED, DRAINING)
 * @nblocks: blocks (USED, DRAINING); 0 when FREE
 * @state: enum shca_arr_state
 */
struct shca_arr_range {
	u32 start;
	u32 nblocks;
	u8 state;
};

/**
 * struct shca_arr_pool - a window's blocks and range slots
 * @nblocks: blocks in the window
 * @nranges: range slots
 * @nfree: extents in @free
 * @free_blocks: blocks in @free, total
 * @in_use: slots not FREE
 * @free: free extents sorted by @start, capacity @nranges + 1
 * @range: the range slots, @nranges entries
 */
struct shca_arr_pool {
	u32 nblocks;
	u32 nranges;
	u32 nfree;
	u32 free_blocks;
	u32 in_use;
	struct shca_arr_ext *free;
	struct shca_arr_range *range;
};

int shca_arr_init(struct shca_arr_pool *p, u32 nblocks, u32 nranges,
		  struct shca_arr_ext *ext, struct shca_arr_range *range);
int shca_arr_alloc(struct shca_arr_pool *p, u32 nblocks);
int shca_arr_retire(struct shca_arr_pool *p, u32 idx);
int shca_arr_release(struct shca_arr_pool *p, u32 idx);
const struct shca_arr_range *shca_arr_get(const struct shca_arr_pool *p,
					  u32 idx);
int shca_arr_check(const struct shca_arr_pool *p);

#endif /* SHCA_ARR_H */
