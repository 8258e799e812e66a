// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_keytab.c - libFuzzer harness of kernel/mech/shca_keytab.c.
 *
 * The input picks a small key table (1..12 indices) and three QPs' R_Key
 * slot sets (PD numbers 0..2, 0 being "no PD"), then is read as
 * operations, one opcode byte and its argument bytes each: alloc, lookup,
 * rekey, free on the table, and record, release, slot_valid and the
 * invalidation sweep (shca_rkey_clear() on every set, as shca_rkey.c
 * does) on the slots.  Keys are drawn from the current keys, the earlier
 * keys of each index, index 0, indices past the capacity and any value.
 *
 * A model kept here predicts every result from the contracts in
 * shca_keytab.h and shca_keytab.c: for the table, each index's owner and
 * generation and the FIFO of free indices (an index comes back only after
 * every other free index was used; a fresh table hands them out in
 * ascending order, as the unit tests expect), the generation after the
 * last one an index carried on allocation, lookups that succeed only for
 * the current key; for each slot set, which slots are in use and valid
 * and their R_Keys.  Which free slot shca_rkey_record() takes is not
 * documented: it is only checked to be free.  After every operation
 * shca_keytab_check() must pass and the counters must match.  Any
 * disagreement traps.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "shca_keytab.h"
#include "fuzz_util.h"

#define M_CAP		12
#define M_QPS		3
#define MAX_OPS		2048

/* distinct owner objects: lookups must return exactly these pointers */
static int owners[M_CAP + 1];

struct m_slot {
	void *owner;	/* NULL: free */
	u8 gen;		/* current, or last while free */
	u8 old_gen;	/* some generation the index carried before */
};

struct m_rkeys {
	u32 pdn;
	u16 in_use;
	u16 valid;
	u32 rkey[SHCA_RKEY_NSLOTS];
};

struct model {
	u32 cap;
	struct m_slot slot[M_CAP + 1];	/* 1..cap */
	u32 fifo[M_CAP];		/* free indices, next first */
	u32 nfree;
	u32 used, used_hwm;
	u64 allocs, frees, rekeys, refused;
	struct m_rkeys rk[M_QPS];
};

static struct shca_keytab kt;
static struct shca_rkey_slots rks[M_QPS];
static struct model m;

/*
 * A key argument: the current key of an index, an earlier one, the key
 * of an index out of range, or anything.
 */
static u32 arg_key(struct fuzz_in *in)
{
	u8 b = fuzz_u8(in);
	u32 idx = b % (m.cap + 2);	/* 0 and cap + 1 are never valid */

	switch (b >> 6) {
	case 0:
	case 1:
		return shca_key_make(idx, idx <= m.cap ? m.slot[idx].gen : 1);
	case 2:
		return shca_key_make(idx, idx <= m.cap ?
				     m.slot[idx].old_gen : fuzz_u8(in));
	default:
		return fuzz_u32(in);
	}
}

static void *m_lookup(u32 key)
{
	u32 idx = shca_key_index(key);

	if (idx == 0 || idx > m.cap || !m.slot[idx].owner ||
	    m.slot[idx].gen != shca_key_gen(key))
		return NULL;
	return m.slot[idx].owner;
}

static void do_alloc(u8 b)
{
	void *owner = &owners[b % (M_CAP + 1)];
	bool null_owner = (b & 0xf0) == 0xf0, null_key = (b & 0xf0) == 0xe0;
	u32 key = 0xdeadbeef, idx;
	struct m_slot *s;
	int ret;

	ret = shca_keytab_alloc(&kt, null_owner ? NULL : owner,
				null_key ? NULL : &key);
	if (null_owner || null_key) {
		FUZZ_ASSERT(ret == SHCA_KT_EINVAL);
		return;
	}
	if (!m.nfree) {
		FUZZ_ASSERT(ret == SHCA_KT_ENOSPC);
		m.refused++;
		return;
	}
	FUZZ_ASSERT(ret == 0);
	idx = m.fifo[0];
	memmove(&m.fifo[0], &m.fifo[1], --m.nfree * sizeof(u32));
	s = &m.slot[idx];
	/* the generation after the last one the index carried */
	FUZZ_ASSERT(key == shca_key_make(idx, (u8)(s->gen + 1)));
	s->old_gen = s->gen;
	s->gen++;
	s->owner = owner;
	if (++m.used > m.used_hwm)
		m.used_hwm = m.used;
	m.allocs++;
	FUZZ_ASSERT(shca_keytab_lookup(&kt, key) == owner);
}

static void do_rekey(struct fuzz_in *in)
{
	u32 key = arg_key(in);
	u8 b = fuzz_u8(in);
	/* the same index with any generation, or another index */
	u32 new_key = (b & 0x80) ? arg_key(in) :
		      shca_key_make(shca_key_index(key), fuzz_u8(in));
	bool cur = m_lookup(key) != NULL;
	bool other = shca_key_index(new_key) != shca_key_index(key);
	struct m_slot *s;
	int ret;

	ret = shca_keytab_rekey(&kt, key, new_key);
	if (!cur || other) {
		/* which error wins when both apply is not documented */
		FUZZ_ASSERT((ret == SHCA_KT_ENOENT && !cur) ||
			    (ret == SHCA_KT_EINVAL && other));
		return;
	}
	FUZZ_ASSERT(ret == 0);
	s = &m.slot[shca_key_index(key)];
	if (s->gen != shca_key_gen(new_key))
		s->old_gen = s->gen;
	s->gen = shca_key_gen(new_key);
	m.rekeys++;
	FUZZ_ASSERT(shca_keytab_lookup(&kt, new_key) == s->owner);
	if (new_key != key)
		FUZZ_ASSERT(shca_keytab_lookup(&kt, key) == NULL);
}

static void do_free(u32 key)
{
	int ret = shca_keytab_free(&kt, key);
	u32 idx = shca_key_index(key);

	if (!m_lookup(key)) {
		FUZZ_ASSERT(ret == SHCA_KT_ENOENT);
		return;
	}
	FUZZ_ASSERT(ret == 0);
	/* to the tail of the free FIFO, keeping its generation */
	m.slot[idx].owner = NULL;
	m.fifo[m.nfree++] = idx;
	m.used--;
	m.frees++;
	FUZZ_ASSERT(shca_keytab_lookup(&kt, key) == NULL);
}

static void do_lookup(u32 key)
{
	FUZZ_ASSERT(shca_keytab_lookup(&kt, key) == m_lookup(key));
}

/* A slot number argument: mostly 0..15, sometimes out of range. */
static int arg_slot(struct fuzz_in *in)
{
	static const int bad[] = { -1, 16, 17, -0x7fffffff - 1, 0x7fffffff };
	u8 b = fuzz_u8(in);

	if ((b & 0xe0) == 0xe0)
		return bad[b % ARRAY_SIZE(bad)];
	return b % SHCA_RKEY_NSLOTS;
}

/* An R_Key for the slots: one of a few, so sweeps hit them. */
static u32 arg_rkey(struct fuzz_in *in)
{
	u8 b = fuzz_u8(in);

	if (b & 0x80)
		return arg_key(in);
	return shca_key_make(1 + (b & 3), 1 + ((b >> 2) & 1));
}

static void do_record(struct fuzz_in *in)
{
	struct m_rkeys *r = &m.rk[fuzz_pick(in, M_QPS)];
	struct shca_rkey_slots *s = &rks[r - m.rk];
	u32 rkey = arg_rkey(in);
	int ret = shca_rkey_record(s, rkey);
	u16 bit;

	if (!r->pdn) {
		FUZZ_ASSERT(ret == SHCA_KT_EINVAL);
		return;
	}
	if (r->in_use == 0xffff) {
		FUZZ_ASSERT(ret == SHCA_KT_ENOSPC);
		return;
	}
	FUZZ_ASSERT(ret >= 0 && ret < SHCA_RKEY_NSLOTS);
	bit = (u16)(1u << ret);
	FUZZ_ASSERT(!(r->in_use & bit));
	r->in_use |= bit;
	r->valid |= bit;
	r->rkey[ret] = rkey;
	FUZZ_ASSERT(shca_rkey_slot_valid(s, ret));
}

static void do_release(struct fuzz_in *in)
{
	u32 q = fuzz_pick(in, M_QPS);
	int slot = arg_slot(in);
	int ret = shca_rkey_release(&rks[q], slot);
	u16 bit;

	if (slot < 0 || slot >= SHCA_RKEY_NSLOTS ||
	    !(m.rk[q].in_use & (1u << slot))) {
		FUZZ_ASSERT(ret == SHCA_KT_EINVAL);
		return;
	}
	FUZZ_ASSERT(ret == 0);
	bit = (u16)(1u << slot);
	m.rk[q].in_use &= ~bit;
	m.rk[q].valid &= ~bit;
	FUZZ_ASSERT(!shca_rkey_slot_valid(&rks[q], slot));
}

/* The invalidation sweep over every QP, as shca_rkey.c runs it. */
static void do_sweep(struct fuzz_in *in)
{
	u32 pdn = fuzz_pick(in, 4);
	u32 rkey = arg_rkey(in);
	u32 q;
	int i;

	for (q = 0; q < M_QPS; q++) {
		struct m_rkeys *r = &m.rk[q];
		u16 want = 0;

		if (pdn && r->pdn == pdn)
			for (i = 0; i < SHCA_RKEY_NSLOTS; i++)
				if ((r->in_use & r->valid & (1u << i)) &&
				    r->rkey[i] == rkey)
					want |= (u16)(1u << i);
		FUZZ_ASSERT(shca_rkey_clear(&rks[q], pdn, rkey) == want);
		r->valid &= ~want;
	}
}

/*
 * Damage the table in one of the ways shca_keytab_check() is there to
 * see, then repair it: the check must fail, and its walk of the free
 * list must stay bounded (a free list made circular).
 */
static void do_corrupt(u8 b)
{
	struct shca_keytab saved = kt;
	u32 idx = 1 + b / 8 % m.cap, tail_next = 0;
	void *owner = kt.slot[idx].owner;

	switch (b % 4) {
	case 0:
		kt.used++;
		break;
	case 1:
		/* a used slot looks free, or a free one used */
		kt.slot[idx].owner = owner ? NULL : &owners[0];
		break;
	case 2:
		if (kt.free_tail == SHCA_KT_NIL)
			return;
		tail_next = kt.slot[kt.free_tail].next;
		kt.slot[kt.free_tail].next = kt.free_head;
		break;
	default:
		kt.free_tail = kt.free_tail == SHCA_KT_NIL ? idx :
			       SHCA_KT_NIL;
		break;
	}
	FUZZ_ASSERT(shca_keytab_check(&kt) == SHCA_KT_EINVAL);
	if (b % 4 == 2)
		kt.slot[kt.free_tail].next = tail_next;
	kt.slot[idx].owner = owner;
	kt = saved;
}

/* After every operation: the table's own check and the model agree. */
static void check_all(void)
{
	u32 q;
	int i;

	FUZZ_ASSERT(shca_keytab_check(&kt) == 0);
	FUZZ_ASSERT(kt.used == m.used && kt.used_hwm == m.used_hwm);
	FUZZ_ASSERT(kt.allocs == m.allocs && kt.frees == m.frees);
	FUZZ_ASSERT(kt.rekeys == m.rekeys && kt.refused == m.refused);
	for (q = 0; q < M_QPS; q++) {
		FUZZ_ASSERT(rks[q].pdn == m.rk[q].pdn);
		FUZZ_ASSERT(rks[q].in_use == m.rk[q].in_use);
		for (i = -1; i <= SHCA_RKEY_NSLOTS; i++)
			FUZZ_ASSERT(shca_rkey_slot_valid(&rks[q], i) ==
				    (i >= 0 && i < SHCA_RKEY_NSLOTS &&
				     (m.rk[q].in_use & m.rk[q].valid &
				      (1u << i))));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in;
	size_t msize;
	void *mem;
	u32 i, n;

	fuzz_in_init(&in, data, size);
	memset(&m, 0, sizeof(m));
	m.cap = 1 + fuzz_pick(&in, M_CAP);
	FUZZ_ASSERT(shca_keytab_mem_size(0) == 0);
	FUZZ_ASSERT(shca_keytab_mem_size(SHCA_KT_MAX_CAP + 1) == 0);
	msize = shca_keytab_mem_size(m.cap);
	FUZZ_ASSERT(msize >= (m.cap + 1) * sizeof(struct shca_kt_slot));
	mem = malloc(msize);
	FUZZ_ASSERT(mem);
	memset(mem, 0xa5, msize);	/* init must not need zeroed memory */
	FUZZ_ASSERT(shca_keytab_init(&kt, m.cap, (u8 *)mem + 4) ==
		    SHCA_KT_EINVAL);
	FUZZ_ASSERT(shca_keytab_init(&kt, m.cap, mem) == 0);
	for (i = 1; i <= m.cap; i++)
		m.fifo[m.nfree++] = i;
	for (i = 0; i < M_QPS; i++) {
		m.rk[i].pdn = fuzz_pick(&in, 3);
		shca_rkey_slots_init(&rks[i], m.rk[i].pdn);
	}
	check_all();

	for (n = 0; n < MAX_OPS && !fuzz_in_done(&in); n++) {
		u8 op = fuzz_u8(&in);

		switch (op % 10) {
		case 0:
		case 1:
			do_alloc(fuzz_u8(&in));
			break;
		case 2:
			do_lookup(arg_key(&in));
			break;
		case 3:
			do_rekey(&in);
			break;
		case 4:
			do_free(arg_key(&in));
			break;
		case 5:
		case 6:
			do_record(&in);
			break;
		case 7:
			do_release(&in);
			break;
		case 8:
			do_sweep(&in);
			break;
		default:
			/* now and then a damaged table, else another sweep */
			if ((op & 0xf0) == 0xf0)
				do_corrupt(fuzz_u8(&in));
			else
				do_sweep(&in);
			break;
		}
		check_all();
	}
	free(mem);
	return 0;
}
