/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Key table and per-QP remote-key slots.
 *
 * The key table is the device's L_Key/R_Key space, shared by memory regions
 * and memory windows.  A key is (index << 8) | generation: the index names
 * a table slot, the low byte is the IBTA "key" variant that the consumer
 * may choose (ib_update_fast_reg_key(), ibv_inc_rkey()).  A lookup succeeds
 * only if the index is in range, the slot is in use and the generation
 * matches, so a key that outlived its object does not name the slot's next
 * user (its generation is the next one).  The generation is only 8 bits and
 * the consumer may choose it: a key kept through 256 reuses of its slot, or
 * the key an object had before the consumer rekeyed it to a generation just
 * below it, can name a later user.  The FIFO reuse below makes the first
 * slow; the consumer who picks generations owns the second.  Index 0 is
 * never handed out, so no key below 256 is ever valid.
 *
 * Free slots are reused in FIFO order: an index comes back only after every
 * other free index has been used, which keeps stale keys stale as long as
 * possible.  Allocation gives a slot the generation after the last one it
 * carried (whether chosen by allocation or by the consumer through
 * shca_keytab_rekey()).
 *
 * The remote-key slots are the "remote key memory" of the remote key
 * validation mechanism: per QP, its PD number and a few R_Keys in use by
 * RDMA operations in flight, each with a valid bit.  Invalidating or
 * moving an R_Key sweeps every QP (shca_rkey.c walks them and calls
 * shca_rkey_clear() on each set): a QP whose PD differs is skipped,
 * otherwise every in-use slot holding the R_Key loses its valid bit, and
 * the operation using the slot must stop at its next packet.
 *
 * Pure C: no allocation, no locking.  The caller supplies the memory and
 * serialises writers (alloc, rekey, free) on one table.  shca_keytab_lookup()
 * reads each slot field once with READ_ONCE() and may run concurrently with
 * writers, provided the caller keeps the owner objects' memory alive (e.g.
 * RCU) and re-validates the key against the owner it gets back: a lookup
 * racing with a writer may return an owner whose key has just changed.
 * The caller serialises every call on one struct shca_rkey_slots.
 */
#ifndef SHCA_KEYTAB_H
#define SHCA_KEYTAB_H

#include "shca_pure.h"

/*
 * Error codes (negative).  These are the asm-generic errno-base values,
 * which every Linux architecture shares, so they are the kernel's -EINVAL,
 * -ENOENT and -ENOSPC as well.
 */
#define SHCA_KT_EINVAL		(-22)	/* bad argument, index or slot */
#define SHCA_KT_ENOENT		(-2)	/* key not (or no longer) valid */
#define SHCA_KT_ENOSPC		(-28)	/* table or slot set full */

#define SHCA_KEY_GEN_BITS	8
#define SHCA_KEY_GEN_MASK	0xffu
/* indices run 1..capacity; 0 and 0xffffff are never used */
#define SHCA_KT_MAX_CAP		0xfffffeu
/* free-list terminator (index 0 is never a valid slot) */
#define SHCA_KT_NIL		0u

static inline u32 shca_key_index(u32 key)
{
	return key >> SHCA_KEY_GEN_BITS;
}

static inline u8 shca_key_gen(u32 key)
{
	return key & SHCA_KEY_GEN_MASK;
}

static inline u32 shca_key_make(u32 index, u8 gen)
{
	return (index << SHCA_KEY_GEN_BITS) | gen;
}

/**
 * struct shca_kt_slot - one key table entry
 * @owner: the MR/MW holding the slot, NULL while the slot is free
 * @next: next index on the free list (SHCA_KT_NIL ends it)
 * @gen: current generation while in use, last generation while free
 * @pad: unused
 */
struct shca_kt_slot {
	void *owner;
	u32 next;
	u8 gen;
	u8 pad[3];
};

/**
 * struct shca_keytab - a key table; the slot array lives in caller memory
 * @slot: slots, indexed 0..@cap (slot 0 unused)
 * @cap: capacity (usable indices 1..@cap)
 * @used: slots in use
 * @used_hwm: high-water mark of @used
 * @free_head: first free index (SHCA_KT_NIL: table full)
 * @free_tail: last free index
 * @allocs: successful allocations
 * @frees: successful frees
 * @rekeys: successful key changes
 * @refused: allocations refused because the table was full
 */
struct shca_keytab {
	struct shca_kt_slot *slot;
	u32 cap;
	u32 used;
	u32 used_hwm;
	u32 free_head;
	u32 free_tail;
	u64 allocs;
	u64 frees;
	u64 rekeys;
	u64 refused;
};

size_t shca_keytab_mem_size(u32 cap);
int shca_keytab_init(struct shca_keytab *kt, u32 cap, void *mem);
int shca_keytab_alloc(struct shca_keytab *kt, void *owner, u32 *key);
void *shca_keytab_lookup(const struct shca_keytab *kt, u32 key);
int shca_keytab_rekey(struct shca_keytab *kt, u32 key, u32 new_key);
int shca_keytab_free(struct shca_keytab *kt, u32 key);
int shca_keytab_check(const struct shca_keytab *kt);

/* R_Key slots per QP: in-flight multi-packet RDMA operations */
#define SHCA_RKEY_NSLOTS	16

/**
 * struct shca_rkey_slots - one QP's remote key memory
 * @pdn: the QP's PD number; 0 = no PD, the set is skipped by every sweep
 * @in_use: bit n set while slot n belongs to an operation
 * @valid: bit n set while slot n's R_Key has not been invalidated
 * @rkey: R_Key of each slot
 */
struct shca_rkey_slots {
	u32 pdn;
	u16 in_use;
	u16 valid;
	u32 rkey[SHCA_RKEY_NSLOTS];
};

void shca_rkey_slots_init(struct shca_rkey_slots *s, u32 pdn);
int shca_rkey_record(struct shca_rkey_slots *s, u32 rkey);
int shca_rkey_release(struct shca_rkey_slots *s, int slot);
bool shca_rkey_slot_valid(const struct shca_rkey_slots *s, int slot);
u16 shca_rkey_clear(struct shca_rkey_slots *s, u32 pdn, u32 rkey);

#endif /* SHCA_KEYTAB_H */
