// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the hardware linked-list queue (kernel/mech/shca_llq.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "shca_llq.h"

static struct shca_llq_payload pl(u64 a, u64 b)
{
	struct shca_llq_payload p = { .w = { a, b } };

	return p;
}

/* Allocate and init a queue; bails out on failure. */
static void *llq_new(struct shca_llq *q, u32 n_entries, u32 n_lists,
		     u32 n_index, u32 n_funcs)
{
	struct shca_llq_cfg cfg = {
		.n_entries = n_entries, .n_lists = n_lists,
		.n_index = n_index, .n_funcs = n_funcs,
	};
	size_t sz = shca_llq_mem_size(&cfg);
	void *mem;

	if (!sz)
		tap_bail("shca_llq_mem_size rejected a valid config");
	mem = aligned_alloc(8, (sz + 7) & ~(size_t)7);
	if (!mem)
		tap_bail("out of memory");
	memset(mem, 0xa5, sz);	/* init must not rely on zeroed memory */
	if (shca_llq_init(q, &cfg, mem))
		tap_bail("shca_llq_init failed");
	return mem;
}

static void test_config(void)
{
	struct shca_llq_cfg good = { 16, 4, 32, 2 };
	struct shca_llq_cfg bad[] = {
		{ 0, 0, 32, 2 },
		{ 16, 0, 32, 2 },
		{ 16, 17, 32, 2 },
		{ 16, 4, 0, 2 },
		{ 16, 4, 32, 0 },
		{ SHCA_LLQ_MAX_ENTRIES + 1, 4, 32, 2 },
		{ 16, 4, SHCA_LLQ_MAX_INDEX + 1, 2 },
		{ 16, 4, 32, SHCA_LLQ_MAX_FUNCS + 1 },
	};
	struct shca_llq q;
	size_t sz, min;
	char *mem;
	unsigned int i, nbad = 0;

	sz = shca_llq_mem_size(&good);
	min = 16 * sizeof(struct shca_llq_entry) +
	      4 * sizeof(struct shca_llq_list) +
	      2 * sizeof(struct shca_llq_func_stats) + 32 * sizeof(u32);
	ok(sz >= min && sz < min + 64 && sz % 8 == 0,
	   "mem_size %zu covers all arrays (%zu)", sz, min);
	ok_eq(sizeof(struct shca_llq_entry), 32, "entry is 32 bytes");
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		nbad += shca_llq_mem_size(&bad[i]) != 0;
	ok_eq(nbad, 0, "mem_size is 0 for every out-of-range config");
	ok_eq(shca_llq_mem_size(NULL), 0, "mem_size(NULL) is 0");

	mem = aligned_alloc(8, sz + 8);
	ok_eq(shca_llq_init(&q, &good, mem + 4), SHCA_LLQ_EINVAL,
	      "init rejects misaligned memory");
	ok_eq(shca_llq_init(&q, &good, NULL), SHCA_LLQ_EINVAL,
	      "init rejects NULL memory");
	ok_eq(shca_llq_init(&q, &bad[2], mem), SHCA_LLQ_EINVAL,
	      "init rejects n_lists > n_entries");
	ok_eq(shca_llq_init(&q, &good, mem), 0, "init accepts good config");
	ok(shca_llq_check(&q) == 0 && shca_llq_empty(&q) &&
	   !shca_llq_has_ready(&q) && shca_llq_free_entries(&q) == 16,
	   "new queue is empty and consistent");
	free(mem);

	/* 1-entry queue: the smallest possible */
	mem = llq_new(&q, 1, 1, 1, 1);
	ok(shca_llq_push(&q, 0, 0, &(struct shca_llq_payload){ { 1, 2 } },
			 true) == 0 &&
	   shca_llq_pop(&q, 0, NULL) == 0 && shca_llq_check(&q) == 0,
	   "1-entry queue push/pop");
	free(mem);
}

static void test_fifo(void)
{
	struct shca_llq q;
	struct shca_llq_payload p;
	void *mem = llq_new(&q, 16, 4, 100, 1);
	int i, r, bad = 0;

	for (i = 0; i < 10; i++) {
		p = pl(i, 1000 + i);
		r = shca_llq_push(&q, 42, 0, &p, true);
		bad += r < 0 || r >= 16;
	}
	ok_eq(bad, 0, "10 pushes to one index return entry ids");
	ok_eq(shca_llq_len(&q, 42), 10, "len is 10");
	ok_eq(shca_llq_stats(&q)->lists_used, 1, "one list in use");
	ok_eq(shca_llq_len(&q, 41), 0, "other index has len 0");
	ok(shca_llq_check(&q) == 0, "check after pushes");

	bad = 0;
	for (i = 0; i < 10; i++) {
		memset(&p, 0, sizeof(p));
		r = shca_llq_pop(&q, 42, &p);
		bad += r != 0 || p.w[0] != (u64)i || p.w[1] != 1000u + i;
		bad += shca_llq_check(&q) != 0;
	}
	ok_eq(bad, 0, "pops return payloads in FIFO order");
	ok_eq(shca_llq_len(&q, 42), 0, "list empty after popping all");
	ok_eq(shca_llq_stats(&q)->lists_used, 0, "list descriptor freed");
	ok_eq(q.map[42], SHCA_LLQ_NIL, "index mapping removed");
	ok_eq(shca_llq_pop(&q, 42, &p), SHCA_LLQ_ENOENT, "pop of gone list");
	ok_eq(shca_llq_stats(&q)->pushes, 10, "pushes counted");
	ok_eq(shca_llq_stats(&q)->pops, 10, "pops counted");
	ok(shca_llq_empty(&q) && shca_llq_free_entries(&q) == 16,
	   "queue empty again");

	/* pop with NULL payload is allowed */
	p = pl(7, 7);
	shca_llq_push(&q, 3, 0, &p, true);
	ok_eq(shca_llq_pop(&q, 3, NULL), 0, "pop with NULL payload");
	free(mem);
}

static void test_ready(void)
{
	struct shca_llq q;
	struct shca_llq_payload p;
	void *mem = llq_new(&q, 16, 4, 8, 1);
	int e0, e1, e2;
	u32 idx;

	p = pl(1, 0);
	e0 = shca_llq_push(&q, 5, 0, &p, false);
	p = pl(2, 0);
	e1 = shca_llq_push(&q, 5, 0, &p, false);
	p = pl(3, 0);
	e2 = shca_llq_push(&q, 5, 0, &p, true);
	ok(e0 >= 0 && e1 >= 0 && e2 >= 0 && e0 != e1 && e1 != e2 && e0 != e2,
	   "three distinct entries");
	ok(!shca_llq_has_ready(&q), "list with unready head is not ready");
	ok_eq(shca_llq_pop(&q, 5, &p), SHCA_LLQ_EAGAIN, "pop unready head");
	ok_eq(shca_llq_pop_ready(&q, &idx, &p), SHCA_LLQ_EAGAIN,
	      "pop_ready with nothing ready");
	ok_eq(shca_llq_first_ready(&q, &idx), SHCA_LLQ_EAGAIN,
	      "first_ready with nothing ready");

	ok_eq(shca_llq_set_ready(&q, e1), 0, "set_ready non-head entry");
	ok(!shca_llq_has_ready(&q) && shca_llq_stats(&q)->ready_lists == 0,
	   "ready non-head entry does not make the list ready");
	ok_eq(shca_llq_set_ready(&q, e0), 0, "set_ready head entry");
	ok(shca_llq_has_ready(&q) && shca_llq_first_ready(&q, &idx) == 0 &&
	   idx == 5, "list ready once its head is ready");
	ok_eq(shca_llq_set_ready(&q, e0), 0, "set_ready twice is harmless");
	ok_eq(shca_llq_stats(&q)->ready_lists, 1, "still one ready list");
	ok(shca_llq_check(&q) == 0, "check");

	ok(shca_llq_pop(&q, 5, &p) == 0 && p.w[0] == 1, "pop head 1");
	ok(shca_llq_pop(&q, 5, &p) == 0 && p.w[0] == 2, "pop head 2");
	ok(shca_llq_pop_ready(&q, &idx, &p) == 0 && p.w[0] == 3 && idx == 5,
	   "pop_ready head 3");
	ok(shca_llq_empty(&q) && !shca_llq_has_ready(&q) &&
	   shca_llq_check(&q) == 0, "empty after all pops");
	ok_eq(shca_llq_set_ready(&q, e0), SHCA_LLQ_ENOENT,
	      "set_ready on a free entry");

	/* entry that becomes head while not ready takes the list off */
	p = pl(10, 0);
	shca_llq_push(&q, 1, 0, &p, true);
	p = pl(11, 0);
	e1 = shca_llq_push(&q, 1, 0, &p, false);
	ok(shca_llq_pop(&q, 1, &p) == 0 && !shca_llq_has_ready(&q),
	   "list leaves ready queue when new head is unready");
	ok(shca_llq_set_ready(&q, e1) == 0 && shca_llq_has_ready(&q),
	   "and rejoins when it is set ready");
	ok(shca_llq_check(&q) == 0, "check");
	free(mem);
}

static void test_no_hol_blocking(void)
{
	struct shca_llq q;
	struct shca_llq_payload p;
	void *mem = llq_new(&q, 32, 8, 16, 1);
	int i, blocker, bad = 0;
	u32 idx;

	/* list 1 is allocated first but its head is not ready */
	p = pl(100, 0);
	blocker = shca_llq_push(&q, 1, 0, &p, false);
	p = pl(101, 0);
	shca_llq_push(&q, 1, 0, &p, true);
	for (i = 0; i < 5; i++) {
		p = pl(200 + i, 0);
		shca_llq_push(&q, 2, 0, &p, true);
	}
	for (i = 0; i < 5; i++) {
		bad += shca_llq_pop_ready(&q, &idx, &p) != 0;
		bad += idx != 2 || p.w[0] != 200u + i;
	}
	ok_eq(bad, 0, "ready list drains in order past an unready list");
	ok_eq(shca_llq_pop_ready(&q, &idx, &p), SHCA_LLQ_EAGAIN,
	      "unready list still held");
	ok_eq(shca_llq_len(&q, 1), 2, "held list keeps both entries");
	shca_llq_set_ready(&q, blocker);
	ok(shca_llq_pop_ready(&q, &idx, &p) == 0 && idx == 1 &&
	   p.w[0] == 100, "held list released in order (1)");
	ok(shca_llq_pop_ready(&q, &idx, &p) == 0 && idx == 1 &&
	   p.w[0] == 101, "held list released in order (2)");
	ok(shca_llq_check(&q) == 0 && shca_llq_empty(&q), "check");
	free(mem);
}

static void test_round_robin(void)
{
	struct shca_llq q;
	struct shca_llq_payload p;
	void *mem = llq_new(&q, 32, 8, 16, 1);
	static const u32 want[] = { 3, 7, 9, 3, 7, 9, 3, 9, 9 };
	u32 got[ARRAY_SIZE(want)], idx;
	int i, bad = 0;

	/* 3 and 7 have 3 entries, 9 has 4; 7's third entry is unready */
	for (i = 0; i < 3; i++) {
		p = pl(3, i);
		shca_llq_push(&q, 3, 0, &p, true);
	}
	for (i = 0; i < 3; i++) {
		p = pl(7, i);
		shca_llq_push(&q, 7, 0, &p, i < 2);
	}
	for (i = 0; i < 4; i++) {
		p = pl(9, i);
		shca_llq_push(&q, 9, 0, &p, true);
	}
	for (i = 0; i < (int)ARRAY_SIZE(want); i++) {
		bad += shca_llq_pop_ready(&q, &idx, &p) != 0;
		got[i] = idx;
		bad += p.w[0] != idx;
		bad += shca_llq_check(&q) != 0;
	}
	ok_eq(bad, 0, "pop_ready succeeds 9 times");
	ok(!memcmp(got, want, sizeof(want)),
	   "ready lists served round-robin: %u %u %u %u %u %u %u %u %u",
	   got[0], got[1], got[2], got[3], got[4], got[5], got[6], got[7],
	   got[8]);
	ok(!shca_llq_has_ready(&q) && shca_llq_len(&q, 7) == 1,
	   "only the unready entry is left");

	/* pop(index) keeps the list's place on the ready queue */
	for (i = 0; i < 2; i++) {
		p = pl(4, i);
		shca_llq_push(&q, 4, 0, &p, true);
		p = pl(5, i);
		shca_llq_push(&q, 5, 0, &p, true);
	}
	shca_llq_pop(&q, 4, &p);
	ok(shca_llq_first_ready(&q, &idx) == 0 && idx == 4,
	   "pop(index) does not rotate");
	shca_llq_pop_ready(&q, &idx, &p);
	ok(idx == 4 && shca_llq_first_ready(&q, &idx) == 0 && idx == 5,
	   "list 4 emptied, 5 is next");
	ok(shca_llq_check(&q) == 0, "check");
	free(mem);
}

static void test_full(void)
{
	struct shca_llq q;
	struct shca_llq_payload p = pl(1, 2);
	struct shca_llq_func_stats fs;
	void *mem = llq_new(&q, 8, 8, 16, 2);
	int i, bad = 0;

	for (i = 0; i < 8; i++)
		bad += shca_llq_push(&q, i % 3, i & 1, &p, true) < 0;
	ok_eq(bad, 0, "8 pushes fill an 8-entry queue");
	ok_eq(shca_llq_free_entries(&q), 0, "no free entries");
	ok_eq(shca_llq_push(&q, 0, 1, &p, true), SHCA_LLQ_ENOENTRY,
	      "push to full queue refused (existing list)");
	ok_eq(shca_llq_push(&q, 9, 0, &p, true), SHCA_LLQ_ENOENTRY,
	      "push to full queue refused (new list)");
	ok_eq(shca_llq_stats(&q)->refused[SHCA_LLQ_REFUSE_ENTRY], 2,
	      "no-entry refusals counted");
	shca_llq_func_stats(&q, 1, &fs);
	ok_eq(fs.refused[SHCA_LLQ_REFUSE_ENTRY], 1, "per function (1)");
	shca_llq_func_stats(&q, 0, &fs);
	ok_eq(fs.refused[SHCA_LLQ_REFUSE_ENTRY], 1, "per function (0)");
	ok(shca_llq_check(&q) == 0 && shca_llq_stats(&q)->entries_used == 8,
	   "refusals leave state unchanged");
	shca_llq_pop(&q, 0, NULL);
	ok(shca_llq_push(&q, 9, 0, &p, true) >= 0,
	   "push succeeds after a pop");
	ok_eq(shca_llq_stats(&q)->entries_hw, 8, "entries high-water 8");
	ok_eq(shca_llq_stats(&q)->lists_hw, 4, "lists high-water 4");
	free(mem);
}

static void test_no_list(void)
{
	struct shca_llq q;
	struct shca_llq_payload p = pl(1, 2);
	struct shca_llq_func_stats fs;
	void *mem = llq_new(&q, 16, 2, 16, 1);

	ok(shca_llq_push(&q, 0, 0, &p, true) >= 0 &&
	   shca_llq_push(&q, 1, 0, &p, true) >= 0, "two lists allocated");
	ok_eq(shca_llq_push(&q, 2, 0, &p, true), SHCA_LLQ_ENOLIST,
	      "third index refused: no list descriptor");
	ok(shca_llq_push(&q, 0, 0, &p, true) >= 0,
	   "existing list still accepts pushes");
	ok_eq(shca_llq_stats(&q)->refused[SHCA_LLQ_REFUSE_LIST], 1,
	      "no-list refusal counted");
	shca_llq_func_stats(&q, 0, &fs);
	ok_eq(fs.refused[SHCA_LLQ_REFUSE_LIST], 1, "per function");
	shca_llq_pop(&q, 1, NULL);
	ok(shca_llq_push(&q, 2, 0, &p, true) >= 0,
	   "freed descriptor reused for a new index");
	ok(shca_llq_check(&q) == 0, "check");
	free(mem);
}

static void test_credit(void)
{
	struct shca_llq q;
	struct shca_llq_payload p = pl(1, 2);
	struct shca_llq_func_stats fs;
	void *mem = llq_new(&q, 16, 8, 16, 3);
	int i, bad = 0;

	shca_llq_func_stats(&q, 2, &fs);
	ok_eq(fs.limit, 16, "default credit is n_entries");
	ok_eq(shca_llq_set_credit(&q, 0, 2), 0, "set_credit func 0 = 2");
	ok_eq(shca_llq_set_credit(&q, 3, 2), SHCA_LLQ_EINVAL,
	      "set_credit bad function");
	ok(shca_llq_push(&q, 0, 0, &p, true) >= 0 &&
	   shca_llq_push(&q, 1, 0, &p, true) >= 0, "func 0 uses its 2 credits");
	ok_eq(shca_llq_push(&q, 0, 0, &p, true), SHCA_LLQ_ENOCREDIT,
	      "func 0 refused without credit");
	for (i = 0; i < 10; i++)
		bad += shca_llq_push(&q, 0, 1, &p, true) < 0;
	ok_eq(bad, 0, "func 1 unaffected by func 0's limit");
	shca_llq_func_stats(&q, 0, &fs);
	ok(fs.used == 2 && fs.refused[SHCA_LLQ_REFUSE_CREDIT] == 1,
	   "func 0: 2 used, 1 credit refusal");
	shca_llq_func_stats(&q, 1, &fs);
	ok(fs.used == 10 && fs.refused[SHCA_LLQ_REFUSE_CREDIT] == 0,
	   "func 1: 10 used, no refusal");
	ok_eq(shca_llq_stats(&q)->refused[SHCA_LLQ_REFUSE_CREDIT], 1,
	      "credit refusal counted globally");
	/* credit is checked before the free list */
	shca_llq_push(&q, 2, 2, &p, true);
	shca_llq_push(&q, 2, 2, &p, true);
	shca_llq_push(&q, 2, 2, &p, true);
	shca_llq_push(&q, 2, 2, &p, true);
	ok(shca_llq_free_entries(&q) == 0 &&
	   shca_llq_push(&q, 0, 0, &p, true) == SHCA_LLQ_ENOCREDIT,
	   "full queue and no credit reports no credit");
	/* popping the head of index 0 (func 0) returns a credit */
	shca_llq_pop(&q, 0, NULL);
	shca_llq_func_stats(&q, 0, &fs);
	ok_eq(fs.used, 1, "pop returns the credit");
	ok(shca_llq_push(&q, 5, 0, &p, true) >= 0, "func 0 may push again");
	ok_eq(shca_llq_set_credit(&q, 1, 4), 0, "lower func 1 below its use");
	ok_eq(shca_llq_push(&q, 9, 1, &p, true), SHCA_LLQ_ENOCREDIT,
	      "func 1 refused while above its new limit");
	ok_eq(shca_llq_set_credit(&q, 0, 0), 0, "credit 0 blocks a function");
	ok_eq(shca_llq_func_reset(&q, 0), 0, "reset func 0's counters");
	shca_llq_func_stats(&q, 0, &fs);
	ok(fs.refused[SHCA_LLQ_REFUSE_CREDIT] == 0 && fs.used == 2 &&
	   fs.limit == 0, "reset clears refusals, keeps use and limit");
	shca_llq_func_stats(&q, 1, &fs);
	ok_eq(fs.refused[SHCA_LLQ_REFUSE_CREDIT], 1,
	      "reset leaves other functions alone");
	ok_eq(shca_llq_func_reset(&q, 3), SHCA_LLQ_EINVAL,
	      "reset bad function");
	ok(shca_llq_check(&q) == 0, "check");
	free(mem);
}

static void test_bad_args(void)
{
	struct shca_llq q;
	struct shca_llq_payload p = pl(1, 2);
	struct shca_llq_func_stats fs;
	void *mem = llq_new(&q, 8, 4, 10, 2);
	u64 inv;
	int e;

	e = shca_llq_push(&q, 3, 1, &p, false);
	inv = shca_llq_stats(&q)->invalid;
	ok_eq(shca_llq_push(&q, 10, 0, &p, true), SHCA_LLQ_EINVAL,
	      "push index == n_index");
	ok_eq(shca_llq_push(&q, 0xffffffffu, 0, &p, true), SHCA_LLQ_EINVAL,
	      "push index 0xffffffff");
	ok_eq(shca_llq_push(&q, 0, 2, &p, true), SHCA_LLQ_EINVAL,
	      "push func == n_funcs");
	ok_eq(shca_llq_push(&q, 0, 0xffffffffu, &p, true), SHCA_LLQ_EINVAL,
	      "push func 0xffffffff");
	ok_eq(shca_llq_push(&q, 0, 0, NULL, true), SHCA_LLQ_EINVAL,
	      "push NULL payload");
	ok_eq(shca_llq_pop(&q, 10, &p), SHCA_LLQ_EINVAL, "pop bad index");
	ok_eq(shca_llq_peek(&q, 10, &p), SHCA_LLQ_EINVAL, "peek bad index");
	ok_eq(shca_llq_reset_peek(&q, 10), SHCA_LLQ_EINVAL,
	      "reset_peek bad index");
	ok_eq(shca_llq_reclaim(&q, 10, NULL, NULL), SHCA_LLQ_EINVAL,
	      "reclaim bad index");
	ok_eq(shca_llq_len(&q, 10), SHCA_LLQ_EINVAL, "len bad index");
	ok_eq(shca_llq_set_ready(&q, 8), SHCA_LLQ_EINVAL,
	      "set_ready entry == n_entries");
	ok_eq(shca_llq_set_ready(&q, SHCA_LLQ_NIL), SHCA_LLQ_EINVAL,
	      "set_ready entry NIL");
	ok_eq(shca_llq_set_ready(&q, (u32)(e + 1)), SHCA_LLQ_ENOENT,
	      "set_ready on a free entry");
	ok_eq(shca_llq_func_stats(&q, 2, &fs), SHCA_LLQ_EINVAL,
	      "func_stats bad function");
	ok_eq(shca_llq_stats(&q)->invalid - inv, 11, "invalid calls counted");
	ok_eq(shca_llq_pop(&q, 4, &p), SHCA_LLQ_ENOENT, "pop index w/o list");
	ok_eq(shca_llq_peek(&q, 4, &p), SHCA_LLQ_ENOENT,
	      "peek index w/o list");
	ok_eq(shca_llq_reset_peek(&q, 4), SHCA_LLQ_ENOENT,
	      "reset_peek index w/o list");
	ok_eq(shca_llq_reclaim(&q, 4, NULL, NULL), 0,
	      "reclaim index w/o list removes nothing");
	ok(shca_llq_check(&q) == 0 && shca_llq_stats(&q)->entries_used == 1 &&
	   shca_llq_stats(&q)->pushes == 1 && shca_llq_len(&q, 3) == 1 &&
	   !shca_llq_has_ready(&q), "bad calls left the state untouched");
	free(mem);
}

static void test_peek(void)
{
	struct shca_llq q;
	struct shca_llq_payload p;
	void *mem = llq_new(&q, 16, 4, 8, 1);
	int ids[4], r, i, bad = 0;

	for (i = 0; i < 3; i++) {
		p = pl(i, 0);
		ids[i] = shca_llq_push(&q, 2, 0, &p, false);
	}
	for (i = 0; i < 3; i++) {
		r = shca_llq_peek(&q, 2, &p);
		bad += r != ids[i] || p.w[0] != (u64)i;
	}
	ok_eq(bad, 0, "peek walks the list in order, returning entry ids");
	ok_eq(shca_llq_peek_pending(&q, 2), 0,
	      "peek_pending: everything peeked");
	ok_eq(shca_llq_peek(&q, 2, &p), SHCA_LLQ_EAGAIN,
	      "peek past the end");
	ok_eq(shca_llq_len(&q, 2), 3, "peek removes nothing");
	ok_eq(shca_llq_peek_pending(&q, 3), 0, "peek_pending: no list");
	ok_eq(shca_llq_peek_pending(&q, 8), SHCA_LLQ_EINVAL,
	      "peek_pending: bad index");
	p = pl(3, 0);
	ids[3] = shca_llq_push(&q, 2, 0, &p, false);
	ok_eq(shca_llq_peek_pending(&q, 2), 1,
	      "peek_pending: a push after the end is pending");
	ok(shca_llq_peek(&q, 2, &p) == ids[3] && p.w[0] == 3,
	   "entry pushed after the end is peeked next");
	ok_eq(shca_llq_reset_peek(&q, 2), 0, "reset_peek");
	ok_eq(shca_llq_peek_pending(&q, 2), 1,
	      "peek_pending after reset_peek");
	ok(shca_llq_peek(&q, 2, &p) == ids[0] && p.w[0] == 0,
	   "peek from the head again");
	ok(shca_llq_check(&q) == 0, "check");

	/* process-then-ready, the way a pipeline stage uses peek */
	for (i = 0; i < 4; i++)
		shca_llq_set_ready(&q, (u32)ids[i]);
	ok(shca_llq_pop(&q, 2, &p) == 0 && p.w[0] == 0, "pop head");
	ok(shca_llq_peek(&q, 2, &p) == ids[1] && p.w[0] == 1,
	   "peek continues after popping a peeked entry");
	shca_llq_reset_peek(&q, 2);
	ok(shca_llq_pop(&q, 2, &p) == 0 && p.w[0] == 1, "pop head again");
	ok(shca_llq_peek(&q, 2, NULL) == ids[2],
	   "popping the unpeeked head moves the peek pointer on");
	ok(shca_llq_check(&q) == 0, "check");
	free(mem);
}

struct rec_ctx {
	struct shca_llq *q;
	int n;
	u64 w0[16];
	u32 func[16];
	int push_back;
};

static void rec_cb(void *ctx, u32 index, u32 func,
		   const struct shca_llq_payload *payload)
{
	struct rec_ctx *c = ctx;

	if (c->n < 16) {
		c->w0[c->n] = payload->w[0];
		c->func[c->n] = func;
	}
	c->n++;
	/* re-entrant use: push to the same index while it is reclaimed */
	if (c->push_back)
		shca_llq_push(c->q, index, func, payload, false);
}

static void test_reclaim(void)
{
	struct shca_llq q;
	struct shca_llq_payload p;
	struct shca_llq_func_stats fs;
	struct rec_ctx c = { .q = &q };
	void *mem = llq_new(&q, 16, 4, 8, 2);
	int i;

	for (i = 0; i < 5; i++) {
		p = pl(i, 0);
		shca_llq_push(&q, 6, i & 1, &p, true);
	}
	p = pl(99, 0);
	shca_llq_push(&q, 7, 0, &p, true);
	shca_llq_peek(&q, 6, NULL);
	ok_eq(shca_llq_reclaim(&q, 6, rec_cb, &c), 5, "reclaim returns 5");
	ok(c.n == 5 && c.w0[0] == 0 && c.w0[4] == 4 && c.func[1] == 1 &&
	   c.func[2] == 0, "callback saw every payload in order");
	ok(shca_llq_len(&q, 6) == 0 && q.map[6] == SHCA_LLQ_NIL &&
	   shca_llq_stats(&q)->lists_used == 1, "list and mapping freed");
	ok(shca_llq_stats(&q)->entries_used == 1 &&
	   shca_llq_stats(&q)->reclaimed == 5, "entries returned, counted");
	shca_llq_func_stats(&q, 1, &fs);
	ok_eq(fs.used, 0, "reclaim returns credits");
	ok(shca_llq_first_ready(&q, &(u32){ 0 }) == 0 &&
	   shca_llq_stats(&q)->ready_lists == 1,
	   "reclaimed list left the ready queue");
	ok(shca_llq_check(&q) == 0, "check");
	ok_eq(shca_llq_reclaim(&q, 6, rec_cb, &c), 0,
	      "second reclaim removes nothing");
	ok_eq(shca_llq_reclaim(&q, 7, NULL, NULL), 1,
	      "reclaim without callback");
	ok(shca_llq_empty(&q) && !shca_llq_has_ready(&q) &&
	   shca_llq_check(&q) == 0, "queue empty");

	/* callback pushing back into the queue */
	for (i = 0; i < 4; i++) {
		p = pl(i, 0);
		shca_llq_push(&q, 1, 0, &p, true);
	}
	c.n = 0;
	c.push_back = 1;
	ok_eq(shca_llq_reclaim(&q, 1, rec_cb, &c), 4,
	      "reclaim with re-entrant callback");
	ok(shca_llq_len(&q, 1) == 4 && shca_llq_check(&q) == 0,
	   "entries pushed by the callback form a new consistent list");
	ok(shca_llq_peek(&q, 1, &p) >= 0 && p.w[0] == 0,
	   "new list in the old order");

	/* reclaim_all */
	c.push_back = 0;
	c.n = 0;
	for (i = 0; i < 3; i++) {
		p = pl(i, 0);
		shca_llq_push(&q, 2 + i, 0, &p, i == 1);
	}
	ok_eq(shca_llq_reclaim_all(&q, rec_cb, &c), 7,
	      "reclaim_all removes every entry");
	ok(c.n == 7 && shca_llq_empty(&q) &&
	   shca_llq_stats(&q)->lists_used == 0 && !shca_llq_has_ready(&q) &&
	   shca_llq_check(&q) == 0, "queue empty after reclaim_all");
	free(mem);
}

static void test_counters(void)
{
	struct shca_llq q;
	struct shca_llq_payload p = pl(0, 0);
	const struct shca_llq_stats *st;
	struct shca_llq_func_stats fs;
	void *mem = llq_new(&q, 32, 8, 32, 2);
	int i;

	st = shca_llq_stats(&q);
	for (i = 0; i < 12; i++)
		shca_llq_push(&q, i % 5, i % 2, &p, true);
	ok(st->entries_used == 12 && st->entries_hw == 12, "12 in use, hw 12");
	ok(st->lists_used == 5 && st->lists_hw == 5, "5 lists, hw 5");
	ok_eq(st->ready_lists, 5, "5 ready lists");
	shca_llq_func_stats(&q, 0, &fs);
	ok_eq(fs.used, 6, "func 0 holds 6");
	for (i = 0; i < 9; i++)
		shca_llq_pop_ready(&q, NULL, NULL);
	ok(st->entries_used == 3 && st->entries_hw == 12,
	   "hw stays at 12 after pops");
	ok(st->lists_used == 3 && st->lists_hw == 5, "lists hw stays at 5");
	for (i = 0; i < 4; i++)
		shca_llq_push(&q, 20, 1, &p, false);
	ok(st->entries_used == 7 && st->entries_hw == 12 &&
	   st->lists_hw == 5, "hw unchanged below the mark");
	ok(st->pushes == 16 && st->pops == 9, "pushes 16, pops 9");
	ok_eq(st->ready_lists, 3, "unready list not counted as ready");
	ok(shca_llq_check(&q) == 0, "check");
	free(mem);
}

/* shca_llq_check() must notice broken state. */
static void test_check_detects(void)
{
	struct shca_llq q;
	struct shca_llq_payload p = pl(0, 0);
	void *mem = llq_new(&q, 16, 4, 8, 2);
	size_t sz = shca_llq_mem_size(&q.cfg);
	void *save = malloc(sz);
	struct shca_llq qsave;
	int e[4], i, detected = 0, tried = 0;

	for (i = 0; i < 4; i++)
		e[i] = shca_llq_push(&q, i & 1, 0, &p, i != 2);
	ok(shca_llq_check(&q) == 0, "check passes before corruption");
	memcpy(save, mem, sz);
	qsave = q;

#define CORRUPT(stmt) do {					\
		stmt;						\
		tried++;					\
		detected += shca_llq_check(&q) == SHCA_LLQ_ECORRUPT; \
		memcpy(mem, save, sz);				\
		q = qsave;					\
	} while (0)

	CORRUPT(q.stats.entries_used++);
	CORRUPT(q.stats.lists_used--);
	CORRUPT(q.stats.ready_lists++);
	CORRUPT(q.entries[e[0]].next = e[0]);
	CORRUPT(q.entries[e[3]].next = e[1]);
	CORRUPT(q.entries[e[1]].list = SHCA_LLQ_NIL);
	CORRUPT(q.entries[e[1]].func = 1);
	CORRUPT(q.entries[e[0]].ready = 0);
	CORRUPT(q.entries[q.free_entry].next = q.free_entry);
	CORRUPT(q.entries[q.free_entry].list = 0);
	CORRUPT(q.lists[q.map[0]].tail = e[0]);
	CORRUPT(q.lists[q.map[0]].len++);
	CORRUPT(q.lists[q.map[1]].peek = e[0]);
	CORRUPT(q.lists[q.map[1]].in_rq = 0);
	CORRUPT(q.map[5] = q.map[0]);
	CORRUPT(q.map[0] = SHCA_LLQ_NIL);
	CORRUPT(q.rq_tail = q.rq_head);
	CORRUPT(q.lists[q.rq_head].rq_prev = q.rq_head);
	CORRUPT(q.free_list = SHCA_LLQ_NIL);
	CORRUPT(q.funcs[0].used--);
#undef CORRUPT
	ok_eq(detected, tried, "check detects all %d corruptions", tried);
	ok(shca_llq_check(&q) == 0, "restored state passes");
	free(save);
	free(mem);
}

/* ---- randomized comparison against a reference model ---- */

#define M_IDX	24	/* indices (some beyond n_index to test rejects) */
#define M_ENT	64

struct m_item {
	struct shca_llq_payload p;
	u32 id;
	u32 func;
	bool ready;
};

struct model {
	u32 n_entries, n_lists, n_index, n_funcs;
	struct m_item l[M_IDX][M_ENT];
	u32 len[M_IDX];
	u32 peek[M_IDX];	/* position of next peek */
	u32 rq[M_IDX];		/* ready queue, index order */
	u32 n_rq;
	u32 used, lists;
	u32 fused[8], flimit[8];
	u64 refused[SHCA_LLQ_REFUSE_NR];
};

static u64 rng_state;

static u32 rnd(u32 n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (u32)(rng_state % n);
}

static void m_rq_del(struct model *m, u32 idx)
{
	u32 i;

	for (i = 0; i < m->n_rq; i++) {
		if (m->rq[i] == idx) {
			memmove(&m->rq[i], &m->rq[i + 1],
				(m->n_rq - i - 1) * sizeof(u32));
			m->n_rq--;
			return;
		}
	}
}

static bool m_in_rq(struct model *m, u32 idx)
{
	u32 i;

	for (i = 0; i < m->n_rq; i++)
		if (m->rq[i] == idx)
			return true;
	return false;
}

/* Model pop of the head of @idx; @rotate as for pop_ready. */
static struct m_item m_pop(struct model *m, u32 idx, bool rotate)
{
	struct m_item it = m->l[idx][0];

	memmove(&m->l[idx][0], &m->l[idx][1],
		(m->len[idx] - 1) * sizeof(struct m_item));
	m->len[idx]--;
	if (m->peek[idx])
		m->peek[idx]--;
	m->used--;
	m->fused[it.func]--;
	if (!m->len[idx]) {
		m->lists--;
		m_rq_del(m, idx);
	} else if (!m->l[idx][0].ready) {
		m_rq_del(m, idx);
	} else if (rotate) {
		m_rq_del(m, idx);
		m->rq[m->n_rq++] = idx;
	}
	return it;
}

/* Compare everything observable; returns a description of a mismatch. */
static const char *m_compare(struct model *m, struct shca_llq *q)
{
	const struct shca_llq_stats *st = shca_llq_stats(q);
	struct shca_llq_func_stats fs;
	u32 i, j, id;

	if (shca_llq_check(q))
		return "shca_llq_check failed";
	if (st->entries_used != m->used || st->lists_used != m->lists ||
	    st->ready_lists != m->n_rq)
		return "usage counters";
	for (i = 0; i < SHCA_LLQ_REFUSE_NR; i++)
		if (st->refused[i] != m->refused[i])
			return "refusal counters";
	for (i = 0; i < m->n_funcs; i++) {
		shca_llq_func_stats(q, i, &fs);
		if (fs.used != m->fused[i] || fs.limit != m->flimit[i])
			return "function counters";
	}
	for (i = 0; i < m->n_index; i++) {
		if (shca_llq_len(q, i) != (int)m->len[i])
			return "list length";
		if (!m->len[i])
			continue;
		id = q->map[i];
		if (q->lists[id].head != m->l[i][0].id)
			return "list head";
		for (j = 0; j < m->len[i]; j++) {
			const struct shca_llq_entry *e =
				&q->entries[m->l[i][j].id];

			if (e->list != id || e->ready != m->l[i][j].ready ||
			    memcmp(&e->payload, &m->l[i][j].p, sizeof(e->payload)) ||
			    e->func != m->l[i][j].func)
				return "entry contents";
		}
		if (q->lists[id].peek != (m->peek[i] < m->len[i] ?
					  m->l[i][m->peek[i]].id :
					  SHCA_LLQ_NIL))
			return "peek pointer";
	}
	/* ready queue order */
	id = q->rq_head;
	for (i = 0; i < m->n_rq; i++) {
		if (id == SHCA_LLQ_NIL || q->lists[id].index != m->rq[i])
			return "ready queue order";
		id = q->lists[id].rq_next;
	}
	if (id != SHCA_LLQ_NIL)
		return "ready queue too long";
	return NULL;
}

enum { OP_PUSH, OP_READY, OP_POP, OP_POP_READY, OP_PEEK, OP_RESET_PEEK,
	OP_RECLAIM, OP_CREDIT, OP_NR };

/*
 * Run @steps random operations on a queue of the given shape and compare
 * every result with the model.  Returns the number of mismatches; adds
 * to @hits how often each op succeeded and to @refused the refusals.
 */
static int run_random(u64 seed, u32 n_entries, u32 n_lists, u32 n_index,
		      u32 n_funcs, int steps, u64 hits[OP_NR],
		      u64 refused[SHCA_LLQ_REFUSE_NR])
{
	static struct model m;
	struct shca_llq q;
	struct shca_llq_payload p;
	void *mem = llq_new(&q, n_entries, n_lists, n_index, n_funcs);
	int step, r, want, fails = 0;
	const char *why;
	u32 idx, f, i, j, k = 0;

	memset(&m, 0, sizeof(m));
	m.n_entries = n_entries;
	m.n_lists = n_lists;
	m.n_index = n_index;
	m.n_funcs = n_funcs;
	for (i = 0; i < n_funcs; i++)
		m.flimit[i] = n_entries;
	rng_state = seed;

	for (step = 0; step < steps && fails < 5; step++) {
		int op = rnd(100);

		/* weights: push 35, ready 20, pop 10, pop_ready 20, peek 7,
		 * reset 3, reclaim 3, credit 2
		 */
		op = op < 35 ? OP_PUSH : op < 55 ? OP_READY : op < 65 ? OP_POP :
		     op < 85 ? OP_POP_READY : op < 92 ? OP_PEEK :
		     op < 95 ? OP_RESET_PEEK : op < 98 ? OP_RECLAIM :
		     OP_CREDIT;
		idx = rnd(M_IDX);	/* may be >= n_index */
		why = NULL;

		switch (op) {
		case OP_PUSH: {
			bool rd = rnd(3) == 0;

			f = rnd(n_funcs + 1);	/* may be invalid */
			p = pl(((u64)step << 8) | idx, rng_state);
			r = shca_llq_push(&q, idx, f, &p, rd);
			if (idx >= n_index || f >= n_funcs)
				want = SHCA_LLQ_EINVAL;
			else if (m.fused[f] >= m.flimit[f])
				want = SHCA_LLQ_ENOCREDIT;
			else if (m.used == n_entries)
				want = SHCA_LLQ_ENOENTRY;
			else if (!m.len[idx] && m.lists == n_lists)
				want = SHCA_LLQ_ENOLIST;
			else
				want = 0;
			if (want < 0) {
				if (r != want)
					why = "push error code";
				if (want == SHCA_LLQ_ENOCREDIT)
					m.refused[SHCA_LLQ_REFUSE_CREDIT]++;
				if (want == SHCA_LLQ_ENOENTRY)
					m.refused[SHCA_LLQ_REFUSE_ENTRY]++;
				if (want == SHCA_LLQ_ENOLIST)
					m.refused[SHCA_LLQ_REFUSE_LIST]++;
				break;
			}
			if (r < 0 || (u32)r >= n_entries) {
				why = "push failed";
				break;
			}
			/* the id must not be in use in the model */
			for (i = 0; i < n_index; i++)
				for (j = 0; j < m.len[i]; j++)
					if (m.l[i][j].id == (u32)r)
						why = "push reused a live id";
			if (!m.len[idx]) {
				m.lists++;
				if (rd)
					m.rq[m.n_rq++] = idx;
			}
			m.l[idx][m.len[idx]++] = (struct m_item){
				.p = p, .id = (u32)r, .func = f, .ready = rd };
			m.used++;
			m.fused[f]++;
			hits[op]++;
			break;
		}
		case OP_READY: {
			/* pick a live entry (mostly) or a random id */
			u32 id = rnd(n_entries + 2);
			bool live = false;

			if (rnd(4) && idx < n_index && m.len[idx]) {
				j = rnd(m.len[idx]);
				id = m.l[idx][j].id;
			}
			for (i = 0; i < n_index && !live; i++)
				for (j = 0; j < m.len[i]; j++)
					if (m.l[i][j].id == id) {
						live = true;
						idx = i;
						k = j;
						break;
					}
			r = shca_llq_set_ready(&q, id);
			want = id >= n_entries ? SHCA_LLQ_EINVAL :
			       !live ? SHCA_LLQ_ENOENT : 0;
			if (r != want) {
				why = "set_ready code";
				break;
			}
			if (!live)
				break;
			if (!m.l[idx][k].ready) {
				m.l[idx][k].ready = true;
				if (k == 0 && !m_in_rq(&m, idx))
					m.rq[m.n_rq++] = idx;
			}
			hits[op]++;
			break;
		}
		case OP_POP: {
			struct m_item it;

			memset(&p, 0, sizeof(p));
			r = shca_llq_pop(&q, idx, &p);
			want = idx >= n_index ? SHCA_LLQ_EINVAL :
			       !m.len[idx] ? SHCA_LLQ_ENOENT :
			       !m.l[idx][0].ready ? SHCA_LLQ_EAGAIN : 0;
			if (r != want) {
				why = "pop code";
				break;
			}
			if (r)
				break;
			it = m_pop(&m, idx, false);
			if (memcmp(&it.p, &p, sizeof(p)))
				why = "pop payload";
			hits[op]++;
			break;
		}
		case OP_POP_READY: {
			struct m_item it;
			u32 got = SHCA_LLQ_NIL;

			r = shca_llq_pop_ready(&q, &got, &p);
			if (!m.n_rq) {
				if (r != SHCA_LLQ_EAGAIN)
					why = "pop_ready on empty";
				break;
			}
			if (r || got != m.rq[0]) {
				why = "pop_ready index";
				break;
			}
			it = m_pop(&m, got, true);
			if (memcmp(&it.p, &p, sizeof(p)))
				why = "pop_ready payload";
			hits[op]++;
			break;
		}
		case OP_PEEK:
			r = shca_llq_peek(&q, idx, &p);
			want = idx >= n_index ? SHCA_LLQ_EINVAL :
			       !m.len[idx] ? SHCA_LLQ_ENOENT :
			       m.peek[idx] >= m.len[idx] ? SHCA_LLQ_EAGAIN :
			       (int)m.l[idx][m.peek[idx]].id;
			if (r != want) {
				why = "peek result";
				break;
			}
			if (r < 0)
				break;
			if (memcmp(&m.l[idx][m.peek[idx]].p, &p, sizeof(p)))
				why = "peek payload";
			m.peek[idx]++;
			hits[op]++;
			break;
		case OP_RESET_PEEK:
			r = shca_llq_reset_peek(&q, idx);
			want = idx >= n_index ? SHCA_LLQ_EINVAL :
			       !m.len[idx] ? SHCA_LLQ_ENOENT : 0;
			if (r != want) {
				why = "reset_peek code";
			} else if (!r) {
				m.peek[idx] = 0;
				hits[op]++;
			}
			break;
		case OP_RECLAIM:
			r = shca_llq_reclaim(&q, idx, NULL, NULL);
			want = idx >= n_index ? SHCA_LLQ_EINVAL :
			       (int)m.len[idx];
			if (r != want) {
				why = "reclaim count";
				break;
			}
			if (r <= 0)
				break;
			for (j = 0; j < m.len[idx]; j++)
				m.fused[m.l[idx][j].func]--;
			m.used -= m.len[idx];
			m.len[idx] = 0;
			m.peek[idx] = 0;
			m.lists--;
			m_rq_del(&m, idx);
			hits[op]++;
			break;
		case OP_CREDIT:
			f = rnd(n_funcs + 1);
			k = rnd(n_entries / 2 + 2);
			r = shca_llq_set_credit(&q, f, k);
			if (r != (f >= n_funcs ? SHCA_LLQ_EINVAL : 0)) {
				why = "set_credit code";
			} else if (!r) {
				m.flimit[f] = k;
				hits[op]++;
			}
			break;
		}
		if (!why)
			why = m_compare(&m, &q);
		if (why) {
			diag("seed %llu step %d op %d idx %u: %s",
			     (unsigned long long)seed, step, op, idx, why);
			fails++;
		}
	}
	/* drain: pop_ready + reclaim_all must leave an empty queue */
	for (i = 0; i < n_funcs; i++)
		shca_llq_set_credit(&q, i, n_entries);
	shca_llq_reclaim_all(&q, NULL, NULL);
	if (!shca_llq_empty(&q) || shca_llq_check(&q) ||
	    shca_llq_stats(&q)->lists_used) {
		diag("seed %llu: not empty after reclaim_all",
		     (unsigned long long)seed);
		fails++;
	}
	for (i = 0; i < SHCA_LLQ_REFUSE_NR; i++)
		refused[i] += m.refused[i];
	free(mem);
	return fails;
}

static void test_random(void)
{
	static const struct {
		u32 n_entries, n_lists, n_index, n_funcs;
	} shapes[] = {
		{ 64, 12, 20, 3 },	/* lists scarce */
		{ 32, 32, 24, 2 },	/* entries scarce */
		{ 8, 4, 6, 1 },		/* tiny */
		{ 64, 64, 16, 8 },	/* many functions */
	};
	u64 hits[OP_NR], refused[SHCA_LLQ_REFUSE_NR] = { 0 };
	unsigned int s, i;

	for (s = 0; s < ARRAY_SIZE(shapes); s++) {
		u64 seed = 0x9e3779b97f4a7c15ull + s;
		int steps = 5000, fails, missing = 0;

		memset(hits, 0, sizeof(hits));
		fails = run_random(seed, shapes[s].n_entries,
				   shapes[s].n_lists, shapes[s].n_index,
				   shapes[s].n_funcs, steps, hits, refused);
		ok_eq(fails, 0, "random %u/%u/%u/%u: %d ops match the model",
		      shapes[s].n_entries, shapes[s].n_lists,
		      shapes[s].n_index, shapes[s].n_funcs, steps);
		for (i = 0; i < OP_NR; i++)
			missing += hits[i] == 0;
		ok_eq(missing, 0, "random %u: every operation succeeded",
		      s);
	}
	ok(refused[0] && refused[1] && refused[2],
	   "random runs hit every refusal: entry %llu list %llu credit %llu",
	   (unsigned long long)refused[0], (unsigned long long)refused[1],
	   (unsigned long long)refused[2]);
}

int main(void)
{
	tap_start();
	test_config();
	test_fifo();
	test_ready();
	test_no_hol_blocking();
	test_round_robin();
	test_full();
	test_no_list();
	test_credit();
	test_bad_args();
	test_peek();
	test_reclaim();
	test_counters();
	test_check_detects();
	test_random();
	return tap_done();
}
