// SPDX-License-Identifier: GPL-2.0
/*
 * Hardware linked-list queue (LLQ): the engine's plumbing.
 *
 * Layout of the caller's memory block, each part 8-byte aligned:
 *
 *   entries[n_entries]   payload, next id, owning list id, function, ready
 *   lists[n_lists]       head, tail, peek, index, length, ready queue links
 *   funcs[n_funcs]       credit limit, entries held, refusal counters
 *   map[n_index]         index -> list id
 *
 * Free entries form a stack threaded through entry.next, free list
 * descriptors a stack threaded through list.rq_next.  The ready queue is a
 * doubly linked list of list ids (rq_prev/rq_next) holding exactly the lists
 * whose head entry is ready.  An entry is in use iff entry.list is not
 * SHCA_LLQ_NIL, a descriptor iff list.index is not SHCA_LLQ_NIL.
 *
 * Pure C: no kernel calls, no allocation, no locking (see shca_llq.h).
 */
#include "shca_llq.h"

#define LLQ_ALIGN8(x)	(((x) + 7) & ~(u64)7)

/* Mark a call as rejected for a bad argument. */
static int llq_invalid(struct shca_llq *q)
{
	q->stats.invalid++;
	return SHCA_LLQ_EINVAL;
}

/**
 * llq_layout() - offsets of the parts of the memory block
 * @cfg: the configuration
 * @off_lists: receives the offset of the list descriptors
 * @off_funcs: receives the offset of the function array
 * @off_map: receives the offset of the index map
 * @total: receives the size of the block
 *
 * Return: false if @cfg is out of range or the block would not fit a size_t.
 */
static bool llq_layout(const struct shca_llq_cfg *cfg, u64 *off_lists,
		       u64 *off_funcs, u64 *off_map, u64 *total)
{
	if (!cfg || !cfg->n_entries || cfg->n_entries > SHCA_LLQ_MAX_ENTRIES ||
	    !cfg->n_lists || cfg->n_lists > cfg->n_entries ||
	    !cfg->n_index || cfg->n_index > SHCA_LLQ_MAX_INDEX ||
	    !cfg->n_funcs || cfg->n_funcs > SHCA_LLQ_MAX_FUNCS)
		return false;

	*off_lists = LLQ_ALIGN8((u64)cfg->n_entries *
				sizeof(struct shca_llq_entry));
	*off_funcs = *off_lists + LLQ_ALIGN8((u64)cfg->n_lists *
					     sizeof(struct shca_llq_list));
	*off_map = *off_funcs + LLQ_ALIGN8((u64)cfg->n_funcs *
					   sizeof(struct shca_llq_func_stats));
	*total = *off_map + LLQ_ALIGN8((u64)cfg->n_index * sizeof(u32));
	return *total <= (size_t)-1;
}

size_t shca_llq_mem_size(const struct shca_llq_cfg *cfg)
{
	u64 off_lists, off_funcs, off_map, total;

	if (!llq_layout(cfg, &off_lists, &off_funcs, &off_map, &total))
		return 0;
	return (size_t)total;
}

int shca_llq_init(struct shca_llq *q, const struct shca_llq_cfg *cfg,
		  void *mem)
{
	u64 off_lists, off_funcs, off_map, total;
	u8 *base = mem;
	u32 i;

	if (!q || !mem || ((uintptr_t)mem & 7) ||
	    !llq_layout(cfg, &off_lists, &off_funcs, &off_map, &total))
		return SHCA_LLQ_EINVAL;

	memset(q, 0, sizeof(*q));
	q->cfg = *cfg;
	q->entries = (struct shca_llq_entry *)base;
	q->lists = (struct shca_llq_list *)(base + off_lists);
	q->funcs = (struct shca_llq_func_stats *)(base + off_funcs);
	q->map = (u32 *)(base + off_map);
	memset(mem, 0, (size_t)total);

	/* Free stacks pop in ascending id order. */
	for (i = 0; i < cfg->n_entries; i++) {
		q->entries[i].next = i + 1 < cfg->n_entries ? i + 1 :
							       SHCA_LLQ_NIL;
		q->entries[i].list = SHCA_LLQ_NIL;
	}
	for (i = 0; i < cfg->n_lists; i++) {
		struct shca_llq_list *l = &q->lists[i];

		l->head = SHCA_LLQ_NIL;
		l->tail = SHCA_LLQ_NIL;
		l->peek = SHCA_LLQ_NIL;
		l->index = SHCA_LLQ_NIL;
		l->rq_prev = SHCA_LLQ_NIL;
		l->rq_next = i + 1 < cfg->n_lists ? i + 1 : SHCA_LLQ_NIL;
	}
	for (i = 0; i < cfg->n_funcs; i++)
		q->funcs[i].limit = cfg->n_entries;
	for (i = 0; i < cfg->n_index; i++)
		q->map[i] = SHCA_LLQ_NIL;

	q->free_entry = 0;
	q->free_list = 0;
	q->rq_head = SHCA_LLQ_NIL;
	q->rq_tail = SHCA_LLQ_NIL;
	return 0;
}

int shca_llq_set_credit(struct shca_llq *q, u32 func, u32 limit)
{
	if (func >= q->cfg.n_funcs)
		return llq_invalid(q);
	q->funcs[func].limit = limit;
	return 0;
}

int shca_llq_func_reset(struct shca_llq *q, u32 func)
{
	u32 i;

	if (func >= q->cfg.n_funcs)
		return llq_invalid(q);
	for (i = 0; i < SHCA_LLQ_REFUSE_NR; i++)
		q->funcs[func].refused[i] = 0;
	return 0;
}

/* Append list @id to the tail of the ready queue. */
static void llq_rq_link(struct shca_llq *q, u32 id)
{
	struct shca_llq_list *l = &q->lists[id];

	l->rq_prev = q->rq_tail;
	l->rq_next = SHCA_LLQ_NIL;
	if (q->rq_tail == SHCA_LLQ_NIL)
		q->rq_head = id;
	else
		q->lists[q->rq_tail].rq_next = id;
	q->rq_tail = id;
	l->in_rq = 1;
	q->stats.ready_lists++;
}

/* Remove list @id from the ready queue. */
static void llq_rq_unlink(struct shca_llq *q, u32 id)
{
	struct shca_llq_list *l = &q->lists[id];

	if (l->rq_prev == SHCA_LLQ_NIL)
		q->rq_head = l->rq_next;
	else
		q->lists[l->rq_prev].rq_next = l->rq_next;
	if (l->rq_next == SHCA_LLQ_NIL)
		q->rq_tail = l->rq_prev;
	else
		q->lists[l->rq_next].rq_prev = l->rq_prev;
	l->rq_prev = SHCA_LLQ_NIL;
	l->rq_next = SHCA_LLQ_NIL;
	l->in_rq = 0;
	q->stats.ready_lists--;
}

/* Return entry @e to the free stack and release its function's credit. */
static void llq_entry_free(struct shca_llq *q, u32 e)
{
	struct shca_llq_entry *ent = &q->entries[e];

	q->funcs[ent->func].used--;
	q->stats.entries_used--;
	ent->list = SHCA_LLQ_NIL;
	ent->ready = 0;
	ent->next = q->free_entry;
	q->free_entry = e;
}

/**
 * llq_list_free() - return a list descriptor to the free stack
 * @q: the queue
 * @id: the descriptor, already off the ready queue
 *
 * Its index mapping is dropped unless the index already maps to another
 * list (after a reclaim whose callback pushed to the same index).
 */
static void llq_list_free(struct shca_llq *q, u32 id)
{
	struct shca_llq_list *l = &q->lists[id];

	if (q->map[l->index] == id)
		q->map[l->index] = SHCA_LLQ_NIL;
	l->index = SHCA_LLQ_NIL;
	l->head = SHCA_LLQ_NIL;
	l->tail = SHCA_LLQ_NIL;
	l->peek = SHCA_LLQ_NIL;
	l->len = 0;
	l->rq_prev = SHCA_LLQ_NIL;
	l->rq_next = q->free_list;
	q->free_list = id;
	q->stats.lists_used--;
}

/* Take a descriptor for @index; the caller checked that one is free. */
static u32 llq_list_alloc(struct shca_llq *q, u32 index)
{
	u32 id = q->free_list;
	struct shca_llq_list *l = &q->lists[id];

	q->free_list = l->rq_next;
	l->head = SHCA_LLQ_NIL;
	l->tail = SHCA_LLQ_NIL;
	l->peek = SHCA_LLQ_NIL;
	l->index = index;
	l->len = 0;
	l->rq_prev = SHCA_LLQ_NIL;
	l->rq_next = SHCA_LLQ_NIL;
	l->in_rq = 0;
	q->map[index] = id;
	if (++q->stats.lists_used > q->stats.lists_hw)
		q->stats.lists_hw = q->stats.lists_used;
	return id;
}

/* Count a refused push against @func. */
static int llq_refuse(struct shca_llq *q, u32 func, enum shca_llq_refusal why,
		      int err)
{
	q->stats.refused[why]++;
	q->funcs[func].refused[why]++;
	return err;
}

int shca_llq_push(struct shca_llq *q, u32 index, u32 func,
		  const struct shca_llq_payload *payload, bool ready)
{
	struct shca_llq_func_stats *fs;
	struct shca_llq_entry *ent;
	struct shca_llq_list *l;
	u32 id, e;

	if (index >= q->cfg.n_index || func >= q->cfg.n_funcs || !payload)
		return llq_invalid(q);

	fs = &q->funcs[func];
	if (fs->used >= fs->limit)
		return llq_refuse(q, func, SHCA_LLQ_REFUSE_CREDIT,
				  SHCA_LLQ_ENOCREDIT);
	if (q->free_entry == SHCA_LLQ_NIL)
		return llq_refuse(q, func, SHCA_LLQ_REFUSE_ENTRY,
				  SHCA_LLQ_ENOENTRY);
	id = q->map[index];
	if (id == SHCA_LLQ_NIL) {
		if (q->free_list == SHCA_LLQ_NIL)
			return llq_refuse(q, func, SHCA_LLQ_REFUSE_LIST,
					  SHCA_LLQ_ENOLIST);
		id = llq_list_alloc(q, index);
	}
	l = &q->lists[id];

	e = q->free_entry;
	ent = &q->entries[e];
	q->free_entry = ent->next;
	ent->payload = *payload;
	ent->next = SHCA_LLQ_NIL;
	ent->list = id;
	ent->func = (u16)func;
	ent->ready = ready;

	if (l->len == 0) {
		l->head = e;
		if (ready)
			llq_rq_link(q, id);
	} else {
		q->entries[l->tail].next = e;
	}
	l->tail = e;
	if (l->peek == SHCA_LLQ_NIL)
		l->peek = e;
	l->len++;

	fs->used++;
	q->stats.pushes++;
	if (++q->stats.entries_used > q->stats.entries_hw)
		q->stats.entries_hw = q->stats.entries_used;
	return (int)e;
}

int shca_llq_set_ready(struct shca_llq *q, u32 entry)
{
	struct shca_llq_entry *ent;
	u32 id;

	if (entry >= q->cfg.n_entries)
		return llq_invalid(q);
	ent = &q->entries[entry];
	id = ent->list;
	if (id == SHCA_LLQ_NIL)
		return SHCA_LLQ_ENOENT;
	if (ent->ready)
		return 0;
	ent->ready = 1;
	if (q->lists[id].head == entry && !q->lists[id].in_rq)
		llq_rq_link(q, id);
	return 0;
}

/**
 * llq_pop_head() - remove the head entry of a ready list
 * @q: the queue
 * @id: the list, which must be on the ready queue
 * @payload: receives the payload (may be NULL)
 * @rotate: move the list to the tail of the ready queue if it stays ready
 *
 * A list whose new head is not ready leaves the ready queue; a list left
 * empty is freed and its index unmapped.  The peek pointer moves on with
 * the head if it pointed at it.
 */
static void llq_pop_head(struct shca_llq *q, u32 id,
			 struct shca_llq_payload *payload, bool rotate)
{
	struct shca_llq_list *l = &q->lists[id];
	u32 e = l->head;
	u32 next = q->entries[e].next;

	if (payload)
		*payload = q->entries[e].payload;
	if (l->peek == e)
		l->peek = next;
	l->head = next;
	l->len--;
	llq_entry_free(q, e);
	q->stats.pops++;

	if (l->len == 0) {
		llq_rq_unlink(q, id);
		llq_list_free(q, id);
	} else if (!q->entries[next].ready) {
		llq_rq_unlink(q, id);
	} else if (rotate && q->rq_tail != id) {
		llq_rq_unlink(q, id);
		llq_rq_link(q, id);
	}
}

int shca_llq_pop(struct shca_llq *q, u32 index,
		 struct shca_llq_payload *payload)
{
	u32 id;

	if (index >= q->cfg.n_index)
		return llq_invalid(q);
	id = q->map[index];
	if (id == SHCA_LLQ_NIL)
		return SHCA_LLQ_ENOENT;
	if (!q->lists[id].in_rq)
		return SHCA_LLQ_EAGAIN;
	llq_pop_head(q, id, payload, false);
	return 0;
}

int shca_llq_pop_ready(struct shca_llq *q, u32 *index,
		       struct shca_llq_payload *payload)
{
	u32 id = q->rq_head;

	if (id == SHCA_LLQ_NIL)
		return SHCA_LLQ_EAGAIN;
	if (index)
		*index = q->lists[id].index;
	llq_pop_head(q, id, payload, true);
	return 0;
}

int shca_llq_first_ready(const struct shca_llq *q, u32 *index)
{
	if (q->rq_head == SHCA_LLQ_NIL)
		return SHCA_LLQ_EAGAIN;
	*index = q->lists[q->rq_head].index;
	return 0;
}

int shca_llq_peek(struct shca_llq *q, u32 index,
		  struct shca_llq_payload *payload)
{
	struct shca_llq_list *l;
	u32 id, e;

	if (index >= q->cfg.n_index)
		return llq_invalid(q);
	id = q->map[index];
	if (id == SHCA_LLQ_NIL)
		return SHCA_LLQ_ENOENT;
	l = &q->lists[id];
	e = l->peek;
	if (e == SHCA_LLQ_NIL)
		return SHCA_LLQ_EAGAIN;
	if (payload)
		*payload = q->entries[e].payload;
	l->peek = q->entries[e].next;
	return (int)e;
}

int shca_llq_reset_peek(struct shca_llq *q, u32 index)
{
	u32 id;

	if (index >= q->cfg.n_index)
		return llq_invalid(q);
	id = q->map[index];
	if (id == SHCA_LLQ_NIL)
		return SHCA_LLQ_ENOENT;
	q->lists[id].peek = q->lists[id].head;
	return 0;
}

int shca_llq_reclaim(struct shca_llq *q, u32 index, shca_llq_reclaim_fn fn,
		     void *ctx)
{
	struct shca_llq_payload p;
	struct shca_llq_list *l;
	u32 id, e, len, func, i;

	if (index >= q->cfg.n_index)
		return llq_invalid(q);
	id = q->map[index];
	if (id == SHCA_LLQ_NIL)
		return 0;
	l = &q->lists[id];

	/*
	 * Detach the list first so that @fn may use the queue: later pushes
	 * to @index start a new list, and the descriptor is not reused until
	 * every entry of this one has been freed.
	 */
	if (l->in_rq)
		llq_rq_unlink(q, id);
	q->map[index] = SHCA_LLQ_NIL;
	e = l->head;
	len = l->len;
	l->head = SHCA_LLQ_NIL;
	l->tail = SHCA_LLQ_NIL;
	l->peek = SHCA_LLQ_NIL;
	l->len = 0;

	for (i = 0; i < len; i++) {
		u32 next = q->entries[e].next;

		p = q->entries[e].payload;
		func = q->entries[e].func;
		llq_entry_free(q, e);
		q->stats.reclaimed++;
		if (fn)
			fn(ctx, index, func, &p);
		e = next;
	}
	llq_list_free(q, id);
	return (int)len;
}

int shca_llq_reclaim_all(struct shca_llq *q, shca_llq_reclaim_fn fn,
			 void *ctx)
{
	int n = 0;
	u32 i;

	for (i = 0; i < q->cfg.n_lists; i++) {
		u32 index = q->lists[i].index;

		if (index != SHCA_LLQ_NIL)
			n += shca_llq_reclaim(q, index, fn, ctx);
	}
	return n;
}

int shca_llq_len(const struct shca_llq *q, u32 index)
{
	u32 id;

	if (index >= q->cfg.n_index)
		return SHCA_LLQ_EINVAL;
	id = q->map[index];
	return id == SHCA_LLQ_NIL ? 0 : (int)q->lists[id].len;
}

int shca_llq_peek_pending(const struct shca_llq *q, u32 index)
{
	u32 id;

	if (index >= q->cfg.n_index)
		return SHCA_LLQ_EINVAL;
	id = q->map[index];
	return id != SHCA_LLQ_NIL && q->lists[id].peek != SHCA_LLQ_NIL;
}

int shca_llq_func_stats(const struct shca_llq *q, u32 func,
			struct shca_llq_func_stats *out)
{
	if (func >= q->cfg.n_funcs)
		return SHCA_LLQ_EINVAL;
	*out = q->funcs[func];
	return 0;
}

/**
 * llq_check_list() - verify one list descriptor in use and its entries
 * @q: the queue
 * @id: the list
 *
 * Adds each entry to its function's scan count.
 *
 * Return: 0 or SHCA_LLQ_ECORRUPT.
 */
static int llq_check_list(struct shca_llq *q, u32 id)
{
	const struct shca_llq_list *l = &q->lists[id];
	bool peek_seen = l->peek == SHCA_LLQ_NIL;
	u32 e = l->head, last = SHCA_LLQ_NIL, i;

	if (l->index >= q->cfg.n_index || q->map[l->index] != id ||
	    l->len == 0 || l->len > q->stats.entries_used)
		return SHCA_LLQ_ECORRUPT;
	for (i = 0; i < l->len; i++) {
		const struct shca_llq_entry *ent;

		if (e >= q->cfg.n_entries)
			return SHCA_LLQ_ECORRUPT;
		ent = &q->entries[e];
		if (ent->list != id || ent->func >= q->cfg.n_funcs ||
		    ent->ready > 1)
			return SHCA_LLQ_ECORRUPT;
		q->funcs[ent->func].scan++;
		if (e == l->peek)
			peek_seen = true;
		last = e;
		e = ent->next;
	}
	if (e != SHCA_LLQ_NIL || last != l->tail || !peek_seen ||
	    l->in_rq != q->entries[l->head].ready)
		return SHCA_LLQ_ECORRUPT;
	return 0;
}

int shca_llq_check(struct shca_llq *q)
{
	const struct shca_llq_stats *st = &q->stats;
	u32 n_free, n_used, n_rq, prev, i, e;
	u64 n_len;
	int ret;

	if (st->entries_used > q->cfg.n_entries ||
	    st->lists_used > q->cfg.n_lists ||
	    st->entries_hw < st->entries_used ||
	    st->lists_hw < st->lists_used || st->lists_used > st->entries_used)
		return SHCA_LLQ_ECORRUPT;

	/* Free entry stack: acyclic, only free entries, all of them. */
	n_free = 0;
	for (e = q->free_entry; e != SHCA_LLQ_NIL; e = q->entries[e].next) {
		if (e >= q->cfg.n_entries || q->entries[e].list != SHCA_LLQ_NIL ||
		    ++n_free > q->cfg.n_entries - st->entries_used)
			return SHCA_LLQ_ECORRUPT;
	}
	if (n_free != q->cfg.n_entries - st->entries_used)
		return SHCA_LLQ_ECORRUPT;
	n_used = 0;
	for (i = 0; i < q->cfg.n_entries; i++)
		n_used += q->entries[i].list != SHCA_LLQ_NIL;
	if (n_used != st->entries_used)
		return SHCA_LLQ_ECORRUPT;

	/* Free descriptor stack, likewise. */
	n_free = 0;
	for (e = q->free_list; e != SHCA_LLQ_NIL; e = q->lists[e].rq_next) {
		if (e >= q->cfg.n_lists || q->lists[e].index != SHCA_LLQ_NIL ||
		    q->lists[e].in_rq ||
		    ++n_free > q->cfg.n_lists - st->lists_used)
			return SHCA_LLQ_ECORRUPT;
	}
	if (n_free != q->cfg.n_lists - st->lists_used)
		return SHCA_LLQ_ECORRUPT;

	/* Every list in use, its entries and the per function counts. */
	for (i = 0; i < q->cfg.n_funcs; i++)
		q->funcs[i].scan = 0;
	n_used = 0;
	n_len = 0;
	n_rq = 0;
	for (i = 0; i < q->cfg.n_lists; i++) {
		if (q->lists[i].index == SHCA_LLQ_NIL)
			continue;
		ret = llq_check_list(q, i);
		if (ret)
			return ret;
		n_used++;
		n_len += q->lists[i].len;
		n_rq += q->lists[i].in_rq;
	}
	if (n_used != st->lists_used || n_len != st->entries_used ||
	    n_rq != st->ready_lists)
		return SHCA_LLQ_ECORRUPT;
	for (i = 0; i < q->cfg.n_funcs; i++)
		if (q->funcs[i].scan != q->funcs[i].used)
			return SHCA_LLQ_ECORRUPT;

	/* Index map: exactly the lists in use, each pointing back. */
	n_used = 0;
	for (i = 0; i < q->cfg.n_index; i++) {
		u32 id = q->map[i];

		if (id == SHCA_LLQ_NIL)
			continue;
		if (id >= q->cfg.n_lists || q->lists[id].index != i)
			return SHCA_LLQ_ECORRUPT;
		n_used++;
	}
	if (n_used != st->lists_used)
		return SHCA_LLQ_ECORRUPT;

	/* Ready queue: consistent links, only ready lists, all of them. */
	n_rq = 0;
	prev = SHCA_LLQ_NIL;
	for (e = q->rq_head; e != SHCA_LLQ_NIL; e = q->lists[e].rq_next) {
		if (e >= q->cfg.n_lists || !q->lists[e].in_rq ||
		    q->lists[e].index == SHCA_LLQ_NIL ||
		    q->lists[e].rq_prev != prev || ++n_rq > st->ready_lists)
			return SHCA_LLQ_ECORRUPT;
		prev = e;
	}
	if (prev != q->rq_tail || n_rq != st->ready_lists)
		return SHCA_LLQ_ECORRUPT;
	return 0;
}
