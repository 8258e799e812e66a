// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_arr.c - libFuzzer harness of kernel/mech/shca_arr.c.
 *
 * The input picks a window size (1..64 blocks) and a slot count (1..16),
 * then is read as operations, one opcode byte and an argument byte each:
 * allocate n blocks (n from 0 to a little past the window), retire a slot,
 * release a slot (any index, a little past the slots too), look a slot up.
 *
 * A model kept here (the owner of every block and the state of every
 * slot) predicts each return code, the slot an allocation takes (the
 * lowest free one) and its blocks (the start of the first maximal free
 * run long enough), from the contract in shca_arr.h.  After every
 * operation the pool's own check must pass and its free list must match
 * the model's free blocks exactly.  Any disagreement traps.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "shca_arr.h"
#include "fuzz_util.h"

#define A_BLOCKS	64
#define A_RANGES	16
#define MAX_OPS		2048
#define NOBODY		0xff

struct model {
	u32 nblocks;
	u32 nranges;
	u8 owner[A_BLOCKS];		/* slot owning the block, or NOBODY */
	u8 state[A_RANGES];
	u32 start[A_RANGES];
	u32 len[A_RANGES];
};

/*
 * The next maximal run of free blocks at or after *@b: [*@b, *@e), true;
 * false when there is none.
 */
static bool model_run(const struct model *m, u32 *b, u32 *e)
{
	while (*b < m->nblocks && m->owner[*b] != NOBODY)
		(*b)++;
	if (*b >= m->nblocks)
		return false;
	for (*e = *b; *e < m->nblocks && m->owner[*e] == NOBODY; (*e)++)
		;
	return true;
}

/* first maximal free run of at least @n blocks, or -1 */
static int model_fit(const struct model *m, u32 n)
{
	u32 b, e;

	for (b = 0; model_run(m, &b, &e); b = e)
		if (e - b >= n)
			return b;
	return -1;
}

static int model_slot(const struct model *m)
{
	u32 i;

	for (i = 0; i < m->nranges; i++)
		if (m->state[i] == SHCA_ARR_FREE)
			return i;
	return -1;
}

static void do_alloc(struct shca_arr_pool *p, struct model *m, u32 n)
{
	int ret = shca_arr_alloc(p, n), slot, at;
	u32 b;

	if (!n || n > m->nblocks) {
		FUZZ_ASSERT(ret == SHCA_ARR_EINVAL);
		return;
	}
	slot = model_slot(m);
	if (slot < 0) {
		FUZZ_ASSERT(ret == SHCA_ARR_ENOSPC);
		return;
	}
	at = model_fit(m, n);
	if (at < 0) {
		FUZZ_ASSERT(ret == SHCA_ARR_ENOMEM);
		return;
	}
	FUZZ_ASSERT(ret == slot);
	FUZZ_ASSERT(p->range[slot].start == (u32)at);
	FUZZ_ASSERT(p->range[slot].nblocks == n);
	FUZZ_ASSERT(p->range[slot].state == SHCA_ARR_USED);
	for (b = at; b < at + n; b++)
		m->owner[b] = slot;
	m->state[slot] = SHCA_ARR_USED;
	m->start[slot] = at;
	m->len[slot] = n;
}

static void do_retire(struct shca_arr_pool *p, struct model *m, u32 i)
{
	int ret = shca_arr_retire(p, i);

	if (i >= m->nranges || m->state[i] != SHCA_ARR_USED) {
		FUZZ_ASSERT(ret == SHCA_ARR_EINVAL);
		return;
	}
	FUZZ_ASSERT(ret == 0);
	m->state[i] = SHCA_ARR_DRAINING;
}

static void do_release(struct shca_arr_pool *p, struct model *m, u32 i)
{
	int ret = shca_arr_release(p, i);
	u32 b;

	if (i >= m->nranges || m->state[i] == SHCA_ARR_FREE) {
		FUZZ_ASSERT(ret == SHCA_ARR_EINVAL);
		return;
	}
	FUZZ_ASSERT(ret == 0);
	for (b = m->start[i]; b < m->start[i] + m->len[i]; b++)
		m->owner[b] = NOBODY;
	m->state[i] = SHCA_ARR_FREE;
}

/* the free list is exactly the model's maximal free runs */
static void compare(const struct shca_arr_pool *p, const struct model *m)
{
	u32 b, e, k = 0;

	FUZZ_ASSERT(shca_arr_check(p) == 0);
	for (b = 0; model_run(m, &b, &e); b = e, k++) {
		FUZZ_ASSERT(k < p->nfree);
		FUZZ_ASSERT(p->free[k].start == b && p->free[k].len == e - b);
	}
	FUZZ_ASSERT(k == p->nfree);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct shca_arr_ext ext[A_RANGES + 1];
	static struct shca_arr_range rng[A_RANGES];
	struct shca_arr_pool p;
	struct model m;
	struct fuzz_in in;
	int ops = 0;

	fuzz_in_init(&in, data, size);
	memset(&m, 0, sizeof(m));
	m.nblocks = 1 + fuzz_pick(&in, A_BLOCKS);
	m.nranges = 1 + fuzz_pick(&in, A_RANGES);
	memset(m.owner, NOBODY, sizeof(m.owner));
	FUZZ_ASSERT(shca_arr_init(&p, m.nblocks, m.nranges, ext, rng) == 0);
	while (!fuzz_in_done(&in) && ops++ < MAX_OPS) {
		u8 op = fuzz_u8(&in), arg = fuzz_u8(&in);

		switch (op % 4) {
		case 0:
			do_alloc(&p, &m, arg % (A_BLOCKS + 4));
			break;
		case 1:
			do_retire(&p, &m, arg % (A_RANGES + 2));
			break;
		case 2:
			do_release(&p, &m, arg % (A_RANGES + 2));
			break;
		default: {
			const struct shca_arr_range *r;

			r = shca_arr_get(&p, arg % (A_RANGES + 2));
			FUZZ_ASSERT(!r == (arg % (A_RANGES + 2) >= m.nranges));
			break;
		}
		}
		compare(&p, &m);
	}
	return 0;
}
