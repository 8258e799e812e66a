// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the key table and R_Key slots (kernel/mech/shca_keytab.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "shca_keytab.h"

static int owners[64];

/* Allocate and init a table; bails out on failure. */
static void *kt_new(struct shca_keytab *kt, u32 cap)
{
	size_t sz = shca_keytab_mem_size(cap);
	void *mem;

	if (!sz)
		tap_bail("shca_keytab_mem_size rejected a valid capacity");
	mem = aligned_alloc(8, (sz + 7) & ~(size_t)7);
	if (!mem)
		tap_bail("out of memory");
	memset(mem, 0xa5, sz);	/* init must not rely on zeroed memory */
	if (shca_keytab_init(kt, cap, mem))
		tap_bail("shca_keytab_init failed");
	return mem;
}

static void test_config(void)
{
	struct shca_keytab kt;
	char *mem;

	ok_eq(shca_keytab_mem_size(0), 0, "mem_size(0) is 0");
	ok_eq(shca_keytab_mem_size(SHCA_KT_MAX_CAP + 1), 0,
	      "mem_size above the maximum is 0");
	ok_eq(shca_keytab_mem_size(4), 5 * sizeof(struct shca_kt_slot),
	      "mem_size(4) covers 5 slots");
	mem = aligned_alloc(8, 64);
	ok_eq(shca_keytab_init(&kt, 2, mem + 4), SHCA_KT_EINVAL,
	      "init rejects misaligned memory");
	ok_eq(shca_keytab_init(&kt, 2, NULL), SHCA_KT_EINVAL,
	      "init rejects NULL memory");
	ok_eq(shca_keytab_init(&kt, 0, mem), SHCA_KT_EINVAL,
	      "init rejects capacity 0");
	ok_eq(shca_keytab_init(NULL, 2, mem), SHCA_KT_EINVAL,
	      "init rejects NULL table");
	ok_eq(shca_keytab_init(&kt, 2, mem), 0, "init accepts a good config");
	ok(shca_keytab_check(&kt) == 0 && kt.used == 0,
	   "fresh table is consistent and empty");
	free(mem);
}

static void test_alloc_lookup(void)
{
	struct shca_keytab kt;
	u32 keys[8], key, i, bad = 0, distinct = 1;
	void *mem = kt_new(&kt, 8);

	ok_eq(shca_keytab_alloc(&kt, NULL, &key), SHCA_KT_EINVAL,
	      "alloc rejects a NULL owner");
	ok_eq(shca_keytab_alloc(&kt, &owners[0], NULL), SHCA_KT_EINVAL,
	      "alloc rejects a NULL key pointer");
	for (i = 0; i < 8; i++)
		bad += shca_keytab_alloc(&kt, &owners[i], &keys[i]) != 0;
	ok_eq(bad, 0, "8 allocations in a table of 8 succeed");
	for (i = 0, bad = 0; i < 8; i++)
		bad += shca_keytab_lookup(&kt, keys[i]) != &owners[i];
	ok_eq(bad, 0, "each key looks up its owner");
	for (i = 0; i < 8; i++)
		distinct &= shca_key_index(keys[i]) == i + 1 &&
			    shca_key_gen(keys[i]) == 1;
	ok(distinct, "indices 1..8 handed out in order with generation 1");
	ok_eq(shca_keytab_alloc(&kt, &owners[9], &key), SHCA_KT_ENOSPC,
	      "alloc in a full table fails with ENOSPC");
	ok_eq(kt.refused, 1, "refusal counted");
	ok_eq(kt.used_hwm, 8, "high-water mark 8");
	ok(shca_keytab_check(&kt) == 0, "full table is consistent");

	/* bad keys */
	ok(!shca_keytab_lookup(&kt, 0), "key 0 is never valid");
	ok(!shca_keytab_lookup(&kt, 0xff), "index 0 is never valid");
	ok(!shca_keytab_lookup(&kt, shca_key_make(9, 1)),
	   "index beyond capacity fails");
	ok(!shca_keytab_lookup(&kt, 0xffffffff), "key 0xffffffff fails");
	ok(!shca_keytab_lookup(&kt, keys[3] ^ 0x80),
	   "wrong generation fails");
	ok(!shca_keytab_lookup(NULL, keys[0]), "NULL table fails");

	/* free, stale keys */
	ok_eq(shca_keytab_free(&kt, keys[3]), 0, "free a key");
	ok(!shca_keytab_lookup(&kt, keys[3]), "freed key no longer looks up");
	ok_eq(shca_keytab_free(&kt, keys[3]), SHCA_KT_ENOENT,
	      "double free fails");
	ok_eq(shca_keytab_free(&kt, keys[2] ^ 1), SHCA_KT_ENOENT,
	      "free with a wrong generation fails");
	ok(shca_keytab_lookup(&kt, keys[2]) == &owners[2],
	   "failed free left the real key alone");
	ok_eq(shca_keytab_free(&kt, shca_key_make(100, 1)), SHCA_KT_ENOENT,
	      "free of an out-of-range key fails");
	ok_eq(shca_keytab_alloc(&kt, &owners[20], &key), 0,
	      "alloc after a free succeeds");
	ok(shca_key_index(key) == shca_key_index(keys[3]) && key != keys[3],
	   "reused index gets a new key");
	ok(!shca_keytab_lookup(&kt, keys[3]), "stale key misses the new owner");
	ok(shca_keytab_lookup(&kt, key) == &owners[20], "new key finds it");
	ok(shca_keytab_check(&kt) == 0, "consistent after reuse");
	free(mem);
}

static void test_fifo(void)
{
	struct shca_keytab kt;
	u32 k[4], key;
	void *mem = kt_new(&kt, 4);
	int i;

	for (i = 0; i < 4; i++)
		shca_keytab_alloc(&kt, &owners[i], &k[i]);
	shca_keytab_free(&kt, k[1]);
	shca_keytab_free(&kt, k[3]);
	shca_keytab_free(&kt, k[0]);
	shca_keytab_alloc(&kt, &owners[5], &key);
	ok_eq(shca_key_index(key), 2, "free list is FIFO (first freed first)");
	shca_keytab_alloc(&kt, &owners[6], &key);
	ok_eq(shca_key_index(key), 4, "FIFO second");
	shca_keytab_free(&kt, key);
	shca_keytab_alloc(&kt, &owners[7], &key);
	ok_eq(shca_key_index(key), 1, "just-freed index goes to the tail");
	ok(shca_keytab_check(&kt) == 0, "consistent");
	free(mem);
}

static void test_generation_wrap(void)
{
	struct shca_keytab kt;
	void *mem = kt_new(&kt, 1);
	u32 key, prev = 0, i;
	int differ = 1, stale_hit = 0, wrapped = 0;

	for (i = 0; i < 600; i++) {
		if (shca_keytab_alloc(&kt, &owners[0], &key))
			tap_bail("alloc failed");
		differ &= key != prev;
		if (i && shca_keytab_lookup(&kt, prev))
			stale_hit++;
		wrapped |= i && shca_key_gen(key) == 0;
		prev = key;
		shca_keytab_free(&kt, key);
	}
	ok(differ, "600 reuses of one index: each key differs from the last");
	ok_eq(stale_hit, 0, "the previous key never looks up");
	ok(wrapped, "generation wrapped through 0");
	ok_eq(shca_key_index(key), 1, "always index 1");
	ok_eq(kt.allocs, 600, "600 allocs counted");
	ok_eq(kt.frees, 600, "600 frees counted");
	ok(shca_keytab_check(&kt) == 0, "consistent after wrap");
	free(mem);
}

static void test_rekey(void)
{
	struct shca_keytab kt;
	void *mem = kt_new(&kt, 4);
	u32 k1, k2, nk, key;

	shca_keytab_alloc(&kt, &owners[1], &k1);
	shca_keytab_alloc(&kt, &owners[2], &k2);
	nk = (k1 & ~SHCA_KEY_GEN_MASK) | 0x42;
	ok_eq(shca_keytab_rekey(&kt, k1, nk), 0, "rekey to a consumer byte");
	ok(!shca_keytab_lookup(&kt, k1), "old key fails after rekey");
	ok(shca_keytab_lookup(&kt, nk) == &owners[1], "new key finds owner");
	ok_eq(shca_keytab_rekey(&kt, k1, nk), SHCA_KT_ENOENT,
	      "rekey from a stale key fails");
	ok_eq(shca_keytab_rekey(&kt, nk, k2), SHCA_KT_EINVAL,
	      "rekey to another index fails");
	ok(shca_keytab_lookup(&kt, nk) == &owners[1],
	   "failed rekey changed nothing");
	ok_eq(shca_keytab_rekey(&kt, nk, nk), 0, "rekey to the same key works");
	ok_eq(shca_keytab_rekey(&kt, 0, 0x100), SHCA_KT_ENOENT,
	      "rekey of key 0 fails");
	ok_eq(kt.rekeys, 2, "two rekeys counted");
	ok_eq(shca_keytab_free(&kt, k1), SHCA_KT_ENOENT,
	      "free with the pre-rekey key fails");
	ok_eq(shca_keytab_free(&kt, nk), 0, "free with the current key works");
	/* drain the other free indices so index 1 comes back */
	shca_keytab_alloc(&kt, &owners[3], &key);
	shca_keytab_alloc(&kt, &owners[4], &key);
	shca_keytab_alloc(&kt, &owners[5], &key);
	ok(shca_key_index(key) == 1 && shca_key_gen(key) == 0x43,
	   "reuse after a consumer rekey continues from its generation");
	ok(!shca_keytab_lookup(&kt, nk), "consumer key is stale after reuse");
	ok(shca_keytab_check(&kt) == 0, "consistent");
	free(mem);
}

static void test_slots(void)
{
	struct shca_rkey_slots s;
	int i, slot[SHCA_RKEY_NSLOTS], bad = 0;

	shca_rkey_slots_init(&s, 0);
	ok_eq(shca_rkey_record(&s, 0x1234), SHCA_KT_EINVAL,
	      "a set with PD 0 records nothing");
	shca_rkey_slots_init(&s, 7);
	for (i = 0; i < SHCA_RKEY_NSLOTS; i++) {
		slot[i] = shca_rkey_record(&s, 0x100 + (i & 3));
		bad += slot[i] != i;
	}
	ok_eq(bad, 0, "all %d slots recorded in order", SHCA_RKEY_NSLOTS);
	ok_eq(shca_rkey_record(&s, 0x999), SHCA_KT_ENOSPC,
	      "record in a full set fails with ENOSPC");
	for (i = 0, bad = 0; i < SHCA_RKEY_NSLOTS; i++)
		bad += !shca_rkey_slot_valid(&s, i);
	ok_eq(bad, 0, "every recorded slot is valid");
	ok(!shca_rkey_slot_valid(&s, -1) && !shca_rkey_slot_valid(&s, 16) &&
	   !shca_rkey_slot_valid(NULL, 0), "bad slot numbers are not valid");

	ok_eq(shca_rkey_clear(&s, 8, 0x101), 0, "clear with another PD: 0");
	ok_eq(shca_rkey_clear(&s, 7, 0x101), 0x2222,
	      "clear with the PD hits every slot holding the key");
	ok(!shca_rkey_slot_valid(&s, 1) && !shca_rkey_slot_valid(&s, 5) &&
	   shca_rkey_slot_valid(&s, 0) && shca_rkey_slot_valid(&s, 2),
	   "only the matching slots lost their valid bit");
	ok_eq(shca_rkey_clear(&s, 7, 0x101), 0, "a second clear finds none");
	ok_eq(shca_rkey_clear(&s, 0, 0x100), 0, "clear with PD 0 is a no-op");
	ok(s.in_use == 0xffff, "cleared slots stay in use until released");
	ok_eq(shca_rkey_record(&s, 0x999), SHCA_KT_ENOSPC,
	      "a cleared slot is not reused before release");

	ok_eq(shca_rkey_release(&s, 5), 0, "release a cleared slot");
	ok_eq(shca_rkey_release(&s, 5), SHCA_KT_EINVAL, "double release fails");
	ok_eq(shca_rkey_release(&s, 16), SHCA_KT_EINVAL,
	      "release out of range fails");
	ok_eq(shca_rkey_release(&s, -3), SHCA_KT_EINVAL,
	      "release of a negative slot fails");
	ok_eq(shca_rkey_record(&s, 0x101), 5, "released slot is reused");
	ok(shca_rkey_slot_valid(&s, 5), "reused slot is valid again");
	ok_eq(shca_rkey_release(&s, 0), 0, "release a valid slot");
	ok(!shca_rkey_slot_valid(&s, 0), "released slot is not valid");
}

/* The sweep's step on several QPs' sets: PD compare first, then keys. */
static void test_sweep(void)
{
	struct shca_rkey_slots a, b, c, d;
	struct shca_rkey_slots *sets[] = { &a, &b, &c, &d };
	unsigned int i, n;
	u16 m;

	shca_rkey_slots_init(&a, 1);
	shca_rkey_slots_init(&b, 2);
	shca_rkey_slots_init(&c, 1);
	shca_rkey_slots_init(&d, 0);
	shca_rkey_record(&a, 0x500);
	shca_rkey_record(&a, 0x600);
	shca_rkey_record(&a, 0x500);
	shca_rkey_record(&b, 0x500);	/* same key, other PD: left alone */
	shca_rkey_record(&c, 0x500);

	for (i = 0, n = 0; i < 4; i++)
		n += __builtin_popcount(shca_rkey_clear(sets[i], 1, 0x500));
	ok_eq(n, 3, "sweep clears the 3 slots of PD 1 holding the key");
	ok(!shca_rkey_slot_valid(&a, 0) && shca_rkey_slot_valid(&a, 1) &&
	   !shca_rkey_slot_valid(&a, 2) && !shca_rkey_slot_valid(&c, 0),
	   "PD 1 slots with the key cleared, the other key kept");
	ok(shca_rkey_slot_valid(&b, 0), "PD mismatch: slot kept valid");
	for (i = 0, m = 0; i < 4; i++)
		m |= shca_rkey_clear(sets[i], 1, 0x500);
	ok_eq(m, 0, "second sweep clears nothing");
	ok_eq(shca_rkey_clear(&b, 2, 0x500), 1, "sweep of PD 2 clears slot 0");
	ok_eq(shca_rkey_clear(&d, 0, 0x600), 0, "a set of no PD is skipped");
	ok_eq(shca_rkey_clear(&a, 0, 0x600), 0, "PD 0 matches nothing");
	ok_eq(shca_rkey_clear(NULL, 1, 0x600), 0, "NULL set is empty");
	ok(shca_rkey_slot_valid(&a, 1), "0x600 stayed valid throughout");
	ok_eq(shca_rkey_release(&a, 0), 0, "a swept slot is released");
	ok_eq(shca_rkey_record(&a, 0x500), 0,
	      "and recorded again, valid, for a new operation");
	ok(shca_rkey_slot_valid(&a, 0), "the new operation's slot is valid");
}

int main(void)
{
	tap_start();
	test_config();
	test_alloc_lookup();
	test_fifo();
	test_generation_wrap();
	test_rekey();
	test_slots();
	test_sweep();
	return tap_done();
}
