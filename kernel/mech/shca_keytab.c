// SPDX-License-Identifier: GPL-2.0
/*
 * Key table and per-QP remote-key slots.  See shca_keytab.h.
 *
 * The caller's memory block holds cap + 1 struct shca_kt_slot; slot i
 * describes index i and slot 0 is never used, so a key's index is the slot
 * number with no arithmetic.  Free slots form a FIFO threaded through
 * slot.next.  A slot is in use iff its owner is not NULL.
 *
 * Pure C: no kernel calls, no allocation, no locking.
 */
#include "shca_keytab.h"

/**
 * shca_keytab_mem_size() - bytes of memory a table of @cap keys needs
 * @cap: capacity, 1..SHCA_KT_MAX_CAP
 *
 * Return: the size, or 0 if @cap is out of range.
 */
size_t shca_keytab_mem_size(u32 cap)
{
	if (!cap || cap > SHCA_KT_MAX_CAP)
		return 0;
	return ((size_t)cap + 1) * sizeof(struct shca_kt_slot);
}

/**
 * shca_keytab_init() - set up an empty table
 * @kt: the table
 * @cap: capacity, 1..SHCA_KT_MAX_CAP
 * @mem: shca_keytab_mem_size(@cap) bytes, 8-byte aligned, any content
 *
 * Every slot starts free with generation 0, so the first key handed out
 * for an index has generation 1.
 *
 * Return: 0, or SHCA_KT_EINVAL for a bad argument.
 */
int shca_keytab_init(struct shca_keytab *kt, u32 cap, void *mem)
{
	struct shca_kt_slot *slot = mem;
	u32 i;

	if (!kt || !mem || ((uintptr_t)mem & 7) || !shca_keytab_mem_size(cap))
		return SHCA_KT_EINVAL;

	memset(kt, 0, sizeof(*kt));
	memset(mem, 0, shca_keytab_mem_size(cap));
	for (i = 1; i < cap; i++)
		slot[i].next = i + 1;
	slot[cap].next = SHCA_KT_NIL;
	kt->slot = slot;
	kt->cap = cap;
	kt->free_head = 1;
	kt->free_tail = cap;
	return 0;
}

/**
 * shca_keytab_alloc() - take a free index and give it a new key
 * @kt: the table
 * @owner: object the key names (not NULL), returned by lookups
 * @key: receives the key
 *
 * The generation is the one after the last the slot carried, so the new
 * key differs from every key of the index's previous user's final state.
 *
 * Return: 0, SHCA_KT_EINVAL for a NULL argument or SHCA_KT_ENOSPC when
 * every index is in use.
 */
int shca_keytab_alloc(struct shca_keytab *kt, void *owner, u32 *key)
{
	struct shca_kt_slot *s;
	u32 idx;
	u8 gen;

	if (!kt || !owner || !key)
		return SHCA_KT_EINVAL;
	idx = kt->free_head;
	if (idx == SHCA_KT_NIL || idx > kt->cap) {
		kt->refused++;
		return SHCA_KT_ENOSPC;
	}
	s = &kt->slot[idx];
	kt->free_head = s->next;
	if (kt->free_head == SHCA_KT_NIL)
		kt->free_tail = SHCA_KT_NIL;
	s->next = SHCA_KT_NIL;
	gen = (u8)(s->gen + 1);
	WRITE_ONCE(s->gen, gen);
	WRITE_ONCE(s->owner, owner);
	kt->used++;
	if (kt->used > kt->used_hwm)
		kt->used_hwm = kt->used;
	kt->allocs++;
	*key = shca_key_make(idx, gen);
	return 0;
}

/* The slot @key names if it is current, else NULL.  Writers only. */
static struct shca_kt_slot *kt_current(struct shca_keytab *kt, u32 key)
{
	u32 idx = shca_key_index(key);
	struct shca_kt_slot *s;

	if (!kt || idx == SHCA_KT_NIL || idx > kt->cap)
		return NULL;
	s = &kt->slot[idx];
	if (!s->owner || s->gen != shca_key_gen(key))
		return NULL;
	return s;
}

/**
 * shca_keytab_lookup() - the owner of a key
 * @kt: the table
 * @key: untrusted key
 *
 * May run concurrently with writers (see shca_keytab.h): each field is read
 * once, and the caller must re-validate the key against the owner.
 *
 * Return: the owner if @key is current, else NULL.
 */
void *shca_keytab_lookup(const struct shca_keytab *kt, u32 key)
{
	u32 idx = shca_key_index(key);
	const struct shca_kt_slot *s;

	if (unlikely(!kt || idx == SHCA_KT_NIL || idx > kt->cap))
		return NULL;
	s = &kt->slot[idx];
	if (READ_ONCE(s->gen) != shca_key_gen(key))
		return NULL;
	return READ_ONCE(s->owner);
}

/**
 * shca_keytab_rekey() - change the generation of a key in use
 * @kt: the table
 * @key: the current key
 * @new_key: the new key: same index, any generation (the consumer's choice,
 *	which may equal the current one)
 *
 * After this, lookups of @key fail (unless @new_key == @key) and lookups
 * of @new_key succeed.
 *
 * Return: 0, SHCA_KT_ENOENT if @key is not current, SHCA_KT_EINVAL if
 * @new_key names another index.
 */
int shca_keytab_rekey(struct shca_keytab *kt, u32 key, u32 new_key)
{
	struct shca_kt_slot *s = kt_current(kt, key);

	if (!s)
		return SHCA_KT_ENOENT;
	if (shca_key_index(new_key) != shca_key_index(key))
		return SHCA_KT_EINVAL;
	WRITE_ONCE(s->gen, shca_key_gen(new_key));
	kt->rekeys++;
	return 0;
}

/**
 * shca_keytab_free() - release a key's index
 * @kt: the table
 * @key: the current key
 *
 * The index goes to the tail of the free list and keeps its generation,
 * so its next key will differ from @key.
 *
 * Return: 0, or SHCA_KT_ENOENT if @key is not current (stale, never
 * allocated or already freed).
 */
int shca_keytab_free(struct shca_keytab *kt, u32 key)
{
	struct shca_kt_slot *s = kt_current(kt, key);
	u32 idx = shca_key_index(key);

	if (!s)
		return SHCA_KT_ENOENT;
	WRITE_ONCE(s->owner, NULL);
	s->next = SHCA_KT_NIL;
	if (kt->free_tail == SHCA_KT_NIL)
		kt->free_head = idx;
	else
		kt->slot[kt->free_tail].next = idx;
	kt->free_tail = idx;
	kt->used--;
	kt->frees++;
	return 0;
}

/**
 * shca_keytab_check() - verify the table's invariants (tests, debugging)
 * @kt: the table
 *
 * Walks the free list (bounded by the capacity): every index on it is in
 * range and free, the tail is its last element, and free + used slots add
 * up to the capacity.
 *
 * Return: 0 if consistent, SHCA_KT_EINVAL otherwise.
 */
int shca_keytab_check(const struct shca_keytab *kt)
{
	u32 idx, last = SHCA_KT_NIL, n_free = 0, n_used = 0, i;

	if (!kt || !kt->slot || !kt->cap || kt->cap > SHCA_KT_MAX_CAP)
		return SHCA_KT_EINVAL;
	for (i = 1; i <= kt->cap; i++)
		n_used += kt->slot[i].owner != NULL;
	for (idx = kt->free_head; idx != SHCA_KT_NIL; idx = kt->slot[idx].next) {
		if (idx > kt->cap || kt->slot[idx].owner || n_free >= kt->cap)
			return SHCA_KT_EINVAL;
		n_free++;
		last = idx;
	}
	if (last != kt->free_tail || n_used != kt->used ||
	    n_free + n_used != kt->cap)
		return SHCA_KT_EINVAL;
	return 0;
}

/**
 * shca_rkey_slots_init() - empty a QP's slot set
 * @s: the set
 * @pdn: the QP's PD number (0: no PD yet; such a set records nothing)
 */
void shca_rkey_slots_init(struct shca_rkey_slots *s, u32 pdn)
{
	memset(s, 0, sizeof(*s));
	s->pdn = pdn;
}

/**
 * shca_rkey_record() - note an R_Key used by an operation starting now
 * @s: the QP's set
 * @rkey: the R_Key the operation was validated with
 *
 * The slot is in use and valid until shca_rkey_release(); a sweep for
 * @rkey in the QP's PD clears its valid bit in between.
 *
 * Return: the slot number (0..SHCA_RKEY_NSLOTS - 1), SHCA_KT_ENOSPC when
 * every slot is in use, SHCA_KT_EINVAL if the set has no PD.
 */
int shca_rkey_record(struct shca_rkey_slots *s, u32 rkey)
{
	int i;

	if (!s || !s->pdn)
		return SHCA_KT_EINVAL;
	for (i = 0; i < SHCA_RKEY_NSLOTS; i++) {
		u16 bit = (u16)(1u << i);

		if (s->in_use & bit)
			continue;
		s->rkey[i] = rkey;
		s->in_use |= bit;
		WRITE_ONCE(s->valid, s->valid | bit);
		return i;
	}
	return SHCA_KT_ENOSPC;
}

/**
 * shca_rkey_release() - the operation using a slot has ended
 * @s: the QP's set
 * @slot: a number returned by shca_rkey_record()
 *
 * Return: 0, or SHCA_KT_EINVAL if @slot is out of range or not in use.
 */
int shca_rkey_release(struct shca_rkey_slots *s, int slot)
{
	u16 bit;

	if (!s || slot < 0 || slot >= SHCA_RKEY_NSLOTS)
		return SHCA_KT_EINVAL;
	bit = (u16)(1u << slot);
	if (!(s->in_use & bit))
		return SHCA_KT_EINVAL;
	s->in_use &= ~bit;
	WRITE_ONCE(s->valid, s->valid & ~bit);
	return 0;
}

/**
 * shca_rkey_slot_valid() - may the operation holding @slot go on?
 * @s: the QP's set
 * @slot: a number returned by shca_rkey_record()
 *
 * Return: true if the slot is in use and its R_Key was not invalidated.
 */
bool shca_rkey_slot_valid(const struct shca_rkey_slots *s, int slot)
{
	u16 bit;

	if (!s || slot < 0 || slot >= SHCA_RKEY_NSLOTS)
		return false;
	bit = (u16)(1u << slot);
	return (s->in_use & bit) && (READ_ONCE(s->valid) & bit);
}

/**
 * shca_rkey_clear() - the sweep step for one QP
 * @s: the QP's set
 * @pdn: PD of the R_Key being invalidated
 * @rkey: the R_Key
 *
 * A set of another PD (or with no PD) is skipped whole, as the
 * mechanism's PD compare does; otherwise every in-use slot holding @rkey
 * loses its valid bit.  The slots stay in use: the operations holding
 * them see the cleared bit at their next packet and release them.
 *
 * Return: the slots whose valid bit was cleared, bit n for slot n.
 */
u16 shca_rkey_clear(struct shca_rkey_slots *s, u32 pdn, u32 rkey)
{
	u16 clear = 0;
	int i;

	if (!s || !pdn || s->pdn != pdn)
		return 0;
	for (i = 0; i < SHCA_RKEY_NSLOTS; i++) {
		u16 bit = (u16)(1u << i);

		if ((s->in_use & s->valid & bit) && s->rkey[i] == rkey)
			clear |= bit;
	}
	if (clear)
		WRITE_ONCE(s->valid, s->valid & ~clear);
	return clear;
}
