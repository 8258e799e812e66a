/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hardware linked-list queue (LLQ): the engine's plumbing.
 *
 * One LLQ is a single entry memory of n_entries entries shared by up to
 * n_lists FIFO lists at once.  Each list belongs to one index value (a QP's
 * local index, below n_index): the first push for an index takes a free list
 * descriptor and maps the index to it, later pushes append to its tail, and
 * the descriptor and mapping are released when the list empties again.
 *
 * Every entry carries a fixed two-word payload owned by the caller, the
 * underlying function (virtual HCA) that pushed it and a ready bit.  A list
 * is ready when its head entry is ready; ready lists sit on a ready queue
 * that shca_llq_pop_ready() serves round-robin, so a list whose head is not
 * ready never holds back another list.
 *
 * Entries and lists refer to each other by 32-bit ids, never by pointers,
 * and all state lives in one caller-supplied block of memory; nothing is
 * allocated after shca_llq_init().  The LLQ takes no locks: the caller
 * serialises every call on one queue.  Every argument that may come from
 * untrusted input (index, function, entry id) is checked.  All operations
 * are O(1) except reclaim (O(list length)) and shca_llq_check().
 */
#ifndef SHCA_LLQ_H
#define SHCA_LLQ_H

#include "shca_pure.h"

/*
 * Error codes (negative).  In the kernel they are the matching errno values;
 * in userspace, where shca_pure.h provides no errno, the asm-generic numbers.
 */
#if defined(__KERNEL__) && defined(EDQUOT) && defined(EUCLEAN)
#define SHCA_LLQ_EINVAL		(-EINVAL)
#define SHCA_LLQ_ENOENT		(-ENOENT)
#define SHCA_LLQ_EAGAIN		(-EAGAIN)
#define SHCA_LLQ_ENOENTRY	(-ENOSPC)
#define SHCA_LLQ_ENOLIST	(-ENOBUFS)
#define SHCA_LLQ_ENOCREDIT	(-EDQUOT)
#define SHCA_LLQ_ECORRUPT	(-EUCLEAN)
#else
#define SHCA_LLQ_EINVAL		(-22)	/* bad argument */
#define SHCA_LLQ_ENOENT		(-2)	/* no list / entry not in use */
#define SHCA_LLQ_EAGAIN		(-11)	/* not ready / nothing to peek */
#define SHCA_LLQ_ENOENTRY	(-28)	/* no free entry */
#define SHCA_LLQ_ENOLIST	(-105)	/* no free list descriptor */
#define SHCA_LLQ_ENOCREDIT	(-122)	/* function out of credit */
#define SHCA_LLQ_ECORRUPT	(-117)	/* shca_llq_check() failed */
#endif

/* Limits on the configuration (ids must fit in an int return value). */
#define SHCA_LLQ_MAX_ENTRIES	(1u << 24)
#define SHCA_LLQ_MAX_INDEX	(1u << 24)
#define SHCA_LLQ_MAX_FUNCS	(1u << 16)

/* "No entry / no list" marker in the id fields. */
#define SHCA_LLQ_NIL		0xffffffffu

/**
 * enum shca_llq_refusal - why a push was refused
 * @SHCA_LLQ_REFUSE_ENTRY: the free entry list was empty
 * @SHCA_LLQ_REFUSE_LIST: the index had no list and no descriptor was free
 * @SHCA_LLQ_REFUSE_CREDIT: the function had used up its entry credit
 * @SHCA_LLQ_REFUSE_NR: number of reasons
 */
enum shca_llq_refusal {
	SHCA_LLQ_REFUSE_ENTRY,
	SHCA_LLQ_REFUSE_LIST,
	SHCA_LLQ_REFUSE_CREDIT,
	SHCA_LLQ_REFUSE_NR,
};

/**
 * struct shca_llq_cfg - shape of one LLQ
 * @n_entries: entries in the shared entry memory (1..SHCA_LLQ_MAX_ENTRIES)
 * @n_lists: lists that may be active at once (1..n_entries)
 * @n_index: size of the index space (1..SHCA_LLQ_MAX_INDEX)
 * @n_funcs: underlying functions (1..SHCA_LLQ_MAX_FUNCS)
 */
struct shca_llq_cfg {
	u32 n_entries;
	u32 n_lists;
	u32 n_index;
	u32 n_funcs;
};

/**
 * struct shca_llq_payload - caller-owned data carried by one entry
 * @w: two opaque words, e.g. a pointer and a cookie
 */
struct shca_llq_payload {
	u64 w[2];
};

/**
 * struct shca_llq_entry - one slot of the entry memory
 * @payload: the caller's data
 * @next: next entry of the same list, or of the free list; SHCA_LLQ_NIL ends
 * @list: list holding the entry, SHCA_LLQ_NIL while the entry is free
 * @func: underlying function charged for the entry
 * @ready: ready bit
 * @pad: unused
 */
struct shca_llq_entry {
	struct shca_llq_payload payload;
	u32 next;
	u32 list;
	u16 func;
	u8 ready;
	u8 pad[5];
};

/**
 * struct shca_llq_list - one list descriptor
 * @head: first entry
 * @tail: last entry
 * @peek: next entry shca_llq_peek() returns, SHCA_LLQ_NIL once all are seen
 * @index: index mapped to this list, SHCA_LLQ_NIL while the descriptor is free
 * @len: entries in the list
 * @rq_prev: previous list on the ready queue
 * @rq_next: next list on the ready queue, or on the free descriptor list
 * @in_rq: the list is on the ready queue (its head entry is ready)
 */
struct shca_llq_list {
	u32 head;
	u32 tail;
	u32 peek;
	u32 index;
	u32 len;
	u32 rq_prev;
	u32 rq_next;
	u32 in_rq;
};

/**
 * struct shca_llq_func_stats - per underlying function state and counters
 * @limit: entry credit limit (entries it may hold at once)
 * @used: entries it holds now
 * @scan: scratch count for shca_llq_check()
 * @pad: unused
 * @refused: pushes refused, by &enum shca_llq_refusal
 */
struct shca_llq_func_stats {
	u32 limit;
	u32 used;
	u32 scan;
	u32 pad;
	u64 refused[SHCA_LLQ_REFUSE_NR];
};

/**
 * struct shca_llq_stats - counters of one LLQ
 * @entries_used: entries in use
 * @entries_hw: high-water mark of @entries_used
 * @lists_used: lists in use
 * @lists_hw: high-water mark of @lists_used
 * @ready_lists: lists on the ready queue
 * @pad: unused
 * @pushes: successful pushes
 * @pops: entries removed by pop or pop_ready
 * @reclaimed: entries removed by reclaim
 * @refused: pushes refused, by &enum shca_llq_refusal
 * @invalid: calls that change the queue rejected with SHCA_LLQ_EINVAL (bad
 *	index/func/entry); read-only calls (peeks, queries) take a const
 *	queue and are not counted
 */
struct shca_llq_stats {
	u32 entries_used;
	u32 entries_hw;
	u32 lists_used;
	u32 lists_hw;
	u32 ready_lists;
	u32 pad;
	u64 pushes;
	u64 pops;
	u64 reclaimed;
	u64 refused[SHCA_LLQ_REFUSE_NR];
	u64 invalid;
};

/**
 * struct shca_llq - one linked-list queue; the arrays live in caller memory
 * @cfg: the configuration given to shca_llq_init()
 * @entries: entry memory, @cfg.n_entries slots
 * @lists: list descriptors, @cfg.n_lists slots
 * @funcs: per function state, @cfg.n_funcs slots
 * @map: index to list id, @cfg.n_index slots (SHCA_LLQ_NIL: no list)
 * @free_entry: top of the free entry stack
 * @free_list: top of the free list descriptor stack
 * @rq_head: first list on the ready queue
 * @rq_tail: last list on the ready queue
 * @stats: counters
 */
struct shca_llq {
	struct shca_llq_cfg cfg;
	struct shca_llq_entry *entries;
	struct shca_llq_list *lists;
	struct shca_llq_func_stats *funcs;
	u32 *map;
	u32 free_entry;
	u32 free_list;
	u32 rq_head;
	u32 rq_tail;
	struct shca_llq_stats stats;
};

/**
 * typedef shca_llq_reclaim_fn - receives each entry a reclaim removes
 * @ctx: the caller's context
 * @index: index of the list the entry was on
 * @func: function the entry was charged to
 * @payload: copy of the entry's payload
 *
 * The entry has already been freed when this is called, so the callback
 * may call into the same LLQ (for instance to push elsewhere).
 */
typedef void (*shca_llq_reclaim_fn)(void *ctx, u32 index, u32 func,
				    const struct shca_llq_payload *payload);

/**
 * shca_llq_mem_size() - bytes of memory shca_llq_init() needs
 * @cfg: the configuration
 *
 * Return: the size (the memory must be 8-byte aligned), or 0 if @cfg is
 * out of range.
 */
size_t shca_llq_mem_size(const struct shca_llq_cfg *cfg);

/**
 * shca_llq_init() - set up an empty LLQ in caller memory
 * @q: the queue
 * @cfg: its configuration
 * @mem: shca_llq_mem_size(@cfg) bytes, 8-byte aligned, owned by the caller
 *	 until the queue is no longer used
 *
 * Every function starts with a credit limit of @cfg->n_entries.
 *
 * Return: 0, or SHCA_LLQ_EINVAL for a bad configuration or misaligned @mem.
 */
int shca_llq_init(struct shca_llq *q, const struct shca_llq_cfg *cfg,
		  void *mem);

/**
 * shca_llq_set_credit() - set how many entries a function may hold at once
 * @q: the queue
 * @func: the function
 * @limit: the new limit; below the current use, pushes are refused until
 *	   enough entries are popped
 *
 * Return: 0 or SHCA_LLQ_EINVAL.
 */
int shca_llq_set_credit(struct shca_llq *q, u32 func, u32 limit);

/**
 * shca_llq_func_reset() - zero a function's refusal counters (a new
 * function takes its number)
 * @q: the queue
 * @func: the function
 *
 * Its limit and the entries charged to it stay.
 *
 * Return: 0 or SHCA_LLQ_EINVAL.
 */
int shca_llq_func_reset(struct shca_llq *q, u32 func);

/**
 * shca_llq_push() - append an entry to the list of an index
 * @q: the queue
 * @index: the list's index
 * @func: function charged for the entry
 * @payload: data to store
 * @ready: initial ready bit
 *
 * Return: the entry id (>= 0), SHCA_LLQ_EINVAL, or a refusal:
 * SHCA_LLQ_ENOCREDIT, SHCA_LLQ_ENOENTRY or SHCA_LLQ_ENOLIST.
 */
int shca_llq_push(struct shca_llq *q, u32 index, u32 func,
		  const struct shca_llq_payload *payload, bool ready);

/**
 * shca_llq_set_ready() - set the ready bit of an entry
 * @q: the queue
 * @entry: entry id from shca_llq_push() or shca_llq_peek()
 *
 * Setting an already set bit does nothing.
 *
 * Return: 0, SHCA_LLQ_EINVAL (id out of range) or SHCA_LLQ_ENOENT (free).
 */
int shca_llq_set_ready(struct shca_llq *q, u32 entry);

/**
 * shca_llq_pop() - remove the head entry of one list if it is ready
 * @q: the queue
 * @index: the list's index
 * @payload: receives the payload (may be NULL)
 *
 * A list that stays ready keeps its place on the ready queue.
 *
 * Return: 0, SHCA_LLQ_EINVAL, SHCA_LLQ_ENOENT (no list) or SHCA_LLQ_EAGAIN
 * (head not ready).
 */
int shca_llq_pop(struct shca_llq *q, u32 index,
		 struct shca_llq_payload *payload);

/**
 * shca_llq_pop_ready() - remove the head entry of the first ready list
 * @q: the queue
 * @index: receives the list's index (may be NULL)
 * @payload: receives the payload (may be NULL)
 *
 * If the list is still ready afterwards it moves to the tail of the ready
 * queue, so ready lists are served round-robin.
 *
 * Return: 0 or SHCA_LLQ_EAGAIN (no ready list).
 */
int shca_llq_pop_ready(struct shca_llq *q, u32 *index,
		       struct shca_llq_payload *payload);

/**
 * shca_llq_first_ready() - index of the list pop_ready would serve next
 * @q: the queue
 * @index: receives the index
 *
 * Return: 0 or SHCA_LLQ_EAGAIN (no ready list).
 */
int shca_llq_first_ready(const struct shca_llq *q, u32 *index);

/**
 * shca_llq_peek() - read the next not yet peeked entry of a list
 * @q: the queue
 * @index: the list's index
 * @payload: receives the payload (may be NULL)
 *
 * Advances the list's peek pointer; the entry stays in the list.
 *
 * Return: the entry id (>= 0), SHCA_LLQ_EINVAL, SHCA_LLQ_ENOENT (no list)
 * or SHCA_LLQ_EAGAIN (every entry has been peeked).
 */
int shca_llq_peek(struct shca_llq *q, u32 index,
		  struct shca_llq_payload *payload);

/**
 * shca_llq_reset_peek() - move a list's peek pointer back to its head
 * @q: the queue
 * @index: the list's index
 *
 * Return: 0, SHCA_LLQ_EINVAL or SHCA_LLQ_ENOENT (no list).
 */
int shca_llq_reset_peek(struct shca_llq *q, u32 index);

/**
 * shca_llq_reclaim() - return a whole list to the free list
 * @q: the queue
 * @index: the list's index
 * @fn: called once per entry, in list order, after it is freed (may be NULL)
 * @ctx: passed to @fn
 *
 * Return: the number of entries removed (0 if the index had no list) or
 * SHCA_LLQ_EINVAL.
 */
int shca_llq_reclaim(struct shca_llq *q, u32 index, shca_llq_reclaim_fn fn,
		     void *ctx);

/**
 * shca_llq_reclaim_all() - empty the whole queue (teardown)
 * @q: the queue
 * @fn: as for shca_llq_reclaim() (may be NULL)
 * @ctx: passed to @fn
 *
 * O(n_lists + entries in use).
 *
 * Return: the number of entries removed.
 */
int shca_llq_reclaim_all(struct shca_llq *q, shca_llq_reclaim_fn fn,
			 void *ctx);

/**
 * shca_llq_len() - number of entries in a list
 * @q: the queue
 * @index: the list's index
 *
 * Return: the length (0 if the index has no list) or SHCA_LLQ_EINVAL.
 */
int shca_llq_len(const struct shca_llq *q, u32 index);

/**
 * shca_llq_peek_pending() - does a list have entries not yet peeked
 * @q: the queue
 * @index: the list's index
 *
 * Return: 1 when shca_llq_peek() would return an entry, 0 when not (or no
 * list), SHCA_LLQ_EINVAL for a bad index.
 */
int shca_llq_peek_pending(const struct shca_llq *q, u32 index);

/**
 * shca_llq_func_stats() - read one function's state and counters
 * @q: the queue
 * @func: the function
 * @out: receives a copy
 *
 * Return: 0 or SHCA_LLQ_EINVAL.
 */
int shca_llq_func_stats(const struct shca_llq *q, u32 func,
			struct shca_llq_func_stats *out);

/**
 * shca_llq_check() - verify every invariant of the queue
 * @q: the queue
 *
 * Walks the free lists, every list, the ready queue and the index map.
 * O(n_entries + n_lists + n_index + n_funcs); for tests and debugging.
 *
 * Return: 0, or SHCA_LLQ_ECORRUPT (a negative code) at the first violation.
 */
int shca_llq_check(struct shca_llq *q);

/**
 * shca_llq_stats() - the queue's counters
 * @q: the queue
 *
 * Return: a pointer to the live counters (read them under the caller's lock).
 */
static inline const struct shca_llq_stats *
shca_llq_stats(const struct shca_llq *q)
{
	return &q->stats;
}

/**
 * shca_llq_empty() - whether no entry is in use
 * @q: the queue
 *
 * Return: true if the queue holds no entry.
 */
static inline bool shca_llq_empty(const struct shca_llq *q)
{
	return q->stats.entries_used == 0;
}

/**
 * shca_llq_has_ready() - whether some list is ready
 * @q: the queue
 *
 * Return: true if shca_llq_pop_ready() would succeed.
 */
static inline bool shca_llq_has_ready(const struct shca_llq *q)
{
	return q->rq_head != SHCA_LLQ_NIL;
}

/**
 * shca_llq_free_entries() - entries left on the free list
 * @q: the queue
 *
 * Return: n_entries minus the entries in use (the inbound credit).
 */
static inline u32 shca_llq_free_entries(const struct shca_llq *q)
{
	return q->cfg.n_entries - q->stats.entries_used;
}

#endif /* SHCA_LLQ_H */
