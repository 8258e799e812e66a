// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the device-memory window's address-range free list
 * (kernel/mech/shca_arr.c).
 */
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "shca_arr.h"

#define RANGES	8

static struct shca_arr_ext ext[RANGES + 1];
static struct shca_arr_range rng[RANGES];

static void test_init(void)
{
	struct shca_arr_pool p;

	ok_eq(shca_arr_init(&p, 0, RANGES, ext, rng), SHCA_ARR_EINVAL,
	      "a window of no blocks is refused");
	ok_eq(shca_arr_init(&p, 16, 0, ext, rng), SHCA_ARR_EINVAL,
	      "a pool of no ranges is refused");
	ok_eq(shca_arr_init(&p, SHCA_ARR_MAX_BLOCKS + 1, RANGES, ext, rng),
	      SHCA_ARR_EINVAL, "too many blocks are refused");
	ok_eq(shca_arr_init(&p, 16, RANGES, ext, rng), 0, "init");
	ok(p.nfree == 1 && p.free[0].start == 0 && p.free[0].len == 16 &&
	   p.free_blocks == 16 && p.in_use == 0, "every block starts free");
	ok_eq(shca_arr_check(&p), 0, "a fresh pool passes its checks");
}

static void test_alloc(void)
{
	struct shca_arr_pool p;
	int a, b, c;

	shca_arr_init(&p, 16, RANGES, ext, rng);
	ok_eq(shca_arr_alloc(&p, 0), SHCA_ARR_EINVAL, "no empty range");
	ok_eq(shca_arr_alloc(&p, 17), SHCA_ARR_EINVAL,
	      "no range larger than the window");
	a = shca_arr_alloc(&p, 4);
	b = shca_arr_alloc(&p, 4);
	c = shca_arr_alloc(&p, 8);
	ok(a == 0 && b == 1 && c == 2, "slots are the lowest free ones");
	ok(rng[a].start == 0 && rng[b].start == 4 && rng[c].start == 8,
	   "first fit from the lowest address");
	ok(p.nfree == 0 && p.free_blocks == 0, "the window is full");
	ok_eq(shca_arr_alloc(&p, 1), SHCA_ARR_ENOMEM,
	      "a full window refuses with ENOMEM");
	ok_eq(shca_arr_check(&p), 0, "checks pass when full");

	ok_eq(shca_arr_release(&p, b), 0, "release the middle range");
	ok(p.nfree == 1 && p.free[0].start == 4 && p.free[0].len == 4,
	   "its blocks are the one free extent");
	ok_eq(shca_arr_alloc(&p, 5), SHCA_ARR_ENOMEM,
	      "a hole too small for the request is skipped");
	ok_eq(shca_arr_release(&p, a), 0, "release the first range");
	ok(p.nfree == 1 && p.free[0].start == 0 && p.free[0].len == 8,
	   "it merges with the free extent after it");
	ok_eq(shca_arr_release(&p, c), 0, "release the last range");
	ok(p.nfree == 1 && p.free[0].len == 16 && p.in_use == 0,
	   "everything merges back into one extent");
	ok_eq(shca_arr_check(&p), 0, "checks pass when empty again");
}

static void test_slots(void)
{
	struct shca_arr_pool p;
	int i, idx[RANGES];

	shca_arr_init(&p, 64, RANGES, ext, rng);
	for (i = 0; i < RANGES; i++)
		idx[i] = shca_arr_alloc(&p, 1);
	ok(idx[0] == 0 && idx[RANGES - 1] == RANGES - 1,
	   "every slot can be used");
	ok_eq(shca_arr_alloc(&p, 1), SHCA_ARR_ENOSPC,
	      "no slot left: ENOSPC, though blocks are free");
	/* free every other range: the most extents the list can hold */
	for (i = 0; i < RANGES; i += 2)
		ok_eq(shca_arr_release(&p, idx[i]), 0, "release slot %d", i);
	ok_eq(p.nfree, RANGES / 2 + 1, "one extent per hole and the tail");
	ok_eq(shca_arr_check(&p), 0, "checks pass with holes");
	i = shca_arr_alloc(&p, 2);
	ok(i == 0 && rng[i].start == RANGES,
	   "a range too big for the holes: the lowest slot, blocks from the tail");
}

static void test_states(void)
{
	struct shca_arr_pool p;
	int a;

	shca_arr_init(&p, 8, RANGES, ext, rng);
	a = shca_arr_alloc(&p, 2);
	ok_eq(shca_arr_retire(&p, a), 0, "retire a used range");
	ok_eq(rng[a].state, SHCA_ARR_DRAINING, "it is draining");
	ok_eq(p.free_blocks, 6, "its blocks stay out of the free list");
	ok_eq(shca_arr_alloc(&p, 7), SHCA_ARR_ENOMEM,
	      "a draining range's blocks are not handed out");
	ok_eq(shca_arr_retire(&p, a), SHCA_ARR_EINVAL, "retire twice");
	ok_eq(shca_arr_check(&p), 0, "checks pass while draining");
	ok_eq(shca_arr_release(&p, a), 0, "release the draining range");
	ok_eq(shca_arr_release(&p, a), SHCA_ARR_EINVAL, "release twice");
	ok_eq(shca_arr_retire(&p, a), SHCA_ARR_EINVAL, "retire a free slot");
	ok_eq(shca_arr_release(&p, RANGES), SHCA_ARR_EINVAL,
	      "an index past the slots");
	ok(shca_arr_get(&p, RANGES) == NULL && shca_arr_get(&p, 0) == &rng[0],
	   "get checks the index");
	ok_eq(p.free_blocks, 8, "all blocks free again");
}

static void test_corrupt(void)
{
	struct shca_arr_pool p;
	int a, b;

	shca_arr_init(&p, 8, RANGES, ext, rng);
	a = shca_arr_alloc(&p, 2);
	b = shca_arr_alloc(&p, 2);
	rng[b].start = 1;	/* overlaps a */
	ok_eq(shca_arr_check(&p), SHCA_ARR_ECORRUPT,
	      "overlapping ranges are caught");
	rng[b].start = 5;	/* overlaps the free extent */
	ok_eq(shca_arr_check(&p), SHCA_ARR_ECORRUPT,
	      "a range over free blocks is caught");
	ok_eq(shca_arr_release(&p, b), SHCA_ARR_ECORRUPT,
	      "releasing it is refused");
	rng[b].start = 2;
	ok_eq(shca_arr_check(&p), 0, "repaired");
	p.free_blocks++;
	ok_eq(shca_arr_check(&p), SHCA_ARR_ECORRUPT,
	      "a wrong free count is caught");
	p.free_blocks--;
	(void)a;
}

int main(void)
{
	tap_start();
	test_init();
	test_alloc();
	test_slots();
	test_states();
	test_corrupt();
	return tap_done();
}
