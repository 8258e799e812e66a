// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_llq.c - libFuzzer harness of kernel/mech/shca_llq.c.
 *
 * The input picks a small queue (1..16 entries, 1..n_entries lists,
 * 1..8 indices, 1..4 functions, so full, empty and refusals come
 * quickly), then is read as operations, one opcode byte and its argument
 * bytes each: push, set_ready, pop, pop_ready, peek, reset_peek,
 * reclaim (with a callback that pushes or sets ready bits in the queue
 * while the reclaim runs, as shca_llq.h allows), reclaim_all, set_credit
 * and the queries.  Arguments range a little past the valid values, so
 * the EINVAL paths run too.
 *
 * A model kept here (per index the FIFO of entries with its peek
 * position, the ready queue order, credits and every counter) predicts
 * each return code and payload from the contract in shca_llq.h: FIFO
 * order per index, a list is ready when its head entry is, pop_ready
 * serves ready lists round-robin, a list and its index mapping go away
 * when it empties.  Entry ids are not predicted (the contract does not
 * say which free entry a push takes), only checked to be free and in
 * range.  After every operation shca_llq_check() must pass and every
 * counter, length and query must agree with the model.  Any
 * disagreement traps.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "shca_llq.h"
#include "fuzz_util.h"

#define M_ENTRIES	16
#define M_INDEX		8
#define M_FUNCS		4
#define MAX_OPS		2048

struct m_entry {
	bool used;
	bool ready;
	u32 index;
	u32 func;
	struct shca_llq_payload pl;
};

/* the list of one index, in FIFO order */
struct m_list {
	bool active;
	u32 len;
	u32 peeked;	/* entries from the head that peek has returned */
	u32 ent[M_ENTRIES];
};

struct model {
	struct shca_llq_cfg cfg;
	struct m_entry ent[M_ENTRIES];
	struct m_list list[M_INDEX];
	u32 rq[M_INDEX];	/* ready queue: indices, first served first */
	u32 rq_len;
	/* descriptors held by lists a running reclaim has detached */
	u32 detached;
	u32 limit[M_FUNCS];
	u32 used[M_FUNCS];
	u64 refused_f[M_FUNCS][SHCA_LLQ_REFUSE_NR];
	struct shca_llq_stats st;
	u64 seq;	/* makes every pushed payload unique */
};

static struct shca_llq q;
static struct model m;

static u32 m_lists_used(void)
{
	u32 i, n = m.detached;

	for (i = 0; i < m.cfg.n_index; i++)
		n += m.list[i].active;
	return n;
}

static int m_rq_find(u32 index)
{
	u32 i;

	for (i = 0; i < m.rq_len; i++)
		if (m.rq[i] == index)
			return (int)i;
	return -1;
}

static void m_rq_remove(u32 index)
{
	int at = m_rq_find(index);

	FUZZ_ASSERT(at >= 0);
	memmove(&m.rq[at], &m.rq[at + 1], (m.rq_len - at - 1) * sizeof(u32));
	m.rq_len--;
}

static void m_rq_append(u32 index)
{
	FUZZ_ASSERT(m_rq_find(index) < 0 && m.rq_len < M_INDEX);
	m.rq[m.rq_len++] = index;
}

/* Free an entry in the model, as popping or reclaiming does. */
static void m_entry_free(u32 e)
{
	m.used[m.ent[e].func]--;
	m.st.entries_used--;
	m.ent[e].used = false;
	m.ent[e].ready = false;
}

static void m_hw(void)
{
	u32 lu = m_lists_used();

	if (m.st.entries_used > m.st.entries_hw)
		m.st.entries_hw = m.st.entries_used;
	m.st.lists_used = lu;
	if (lu > m.st.lists_hw)
		m.st.lists_hw = lu;
}

static bool same_pl(const struct shca_llq_payload *a,
		    const struct shca_llq_payload *b)
{
	return a->w[0] == b->w[0] && a->w[1] == b->w[1];
}

/* An index argument: mostly in range, sometimes one past, or huge. */
static u32 arg_index(struct fuzz_in *in)
{
	u8 b = fuzz_u8(in);

	return b == 0xff ? SHCA_LLQ_NIL : b % (m.cfg.n_index + 1);
}

static u32 arg_func(struct fuzz_in *in)
{
	u8 b = fuzz_u8(in);

	return b == 0xff ? 0x10000 : b % (m.cfg.n_funcs + 1);
}

static u32 arg_entry(struct fuzz_in *in)
{
	u8 b = fuzz_u8(in);

	return b == 0xff ? SHCA_LLQ_NIL : b % (m.cfg.n_entries + 1);
}

/* push with the model's prediction; returns the entry id or the error */
static int do_push(u32 index, u32 func, bool ready, bool null_payload)
{
	struct shca_llq_payload pl = {
		.w = { m.seq, ~m.seq * 0x9e3779b97f4a7c15ULL }
	};
	bool credit, entry, list;
	struct m_entry *me;
	struct m_list *l;
	int ret;

	m.seq++;
	ret = shca_llq_push(&q, index, func, null_payload ? NULL : &pl,
			    ready);
	if (index >= m.cfg.n_index || func >= m.cfg.n_funcs || null_payload) {
		FUZZ_ASSERT(ret == SHCA_LLQ_EINVAL);
		m.st.invalid++;
		return ret;
	}
	l = &m.list[index];
	credit = m.used[func] >= m.limit[func];
	entry = m.st.entries_used == m.cfg.n_entries;
	list = !l->active && m_lists_used() == m.cfg.n_lists;
	if (credit || entry || list) {
		/* which refusal wins when several apply is not documented */
		enum shca_llq_refusal why;

		if (ret == SHCA_LLQ_ENOCREDIT && credit)
			why = SHCA_LLQ_REFUSE_CREDIT;
		else if (ret == SHCA_LLQ_ENOENTRY && entry)
			why = SHCA_LLQ_REFUSE_ENTRY;
		else if (ret == SHCA_LLQ_ENOLIST && list)
			why = SHCA_LLQ_REFUSE_LIST;
		else
			FUZZ_ASSERT(!"push refused for a wrong reason");
		m.st.refused[why]++;
		m.refused_f[func][why]++;
		return ret;
	}

	FUZZ_ASSERT(ret >= 0 && (u32)ret < m.cfg.n_entries);
	me = &m.ent[ret];
	FUZZ_ASSERT(!me->used);
	me->used = true;
	me->ready = ready;
	me->index = index;
	me->func = func;
	me->pl = pl;
	if (!l->active) {
		l->active = true;
		l->len = 0;
		l->peeked = 0;
	}
	l->ent[l->len++] = (u32)ret;
	if (l->len == 1 && ready)
		m_rq_append(index);
	m.used[func]++;
	m.st.entries_used++;
	m.st.pushes++;
	m_hw();
	return ret;
}

static void do_set_ready(u32 e)
{
	int ret = shca_llq_set_ready(&q, e);
	struct m_list *l;

	if (e >= m.cfg.n_entries) {
		FUZZ_ASSERT(ret == SHCA_LLQ_EINVAL);
		m.st.invalid++;
		return;
	}
	if (!m.ent[e].used) {
		FUZZ_ASSERT(ret == SHCA_LLQ_ENOENT);
		return;
	}
	FUZZ_ASSERT(ret == 0);
	if (m.ent[e].ready)
		return;
	m.ent[e].ready = true;
	/* the head of a list (not one a reclaim detached) makes it ready */
	l = &m.list[m.ent[e].index];
	if (l->active && l->ent[0] == e)
		m_rq_append(m.ent[e].index);
}

/* Remove the head of a ready list; @rotate as pop_ready does. */
static void m_pop_head(u32 index, bool rotate,
		       const struct shca_llq_payload *got)
{
	struct m_list *l = &m.list[index];
	u32 e = l->ent[0];

	if (got)
		FUZZ_ASSERT(same_pl(got, &m.ent[e].pl));
	memmove(&l->ent[0], &l->ent[1], (l->len - 1) * sizeof(u32));
	l->len--;
	if (l->peeked)
		l->peeked--;
	m_entry_free(e);
	m.st.pops++;
	if (!l->len) {
		l->active = false;
		m_rq_remove(index);
	} else if (!m.ent[l->ent[0]].ready) {
		m_rq_remove(index);
	} else if (rotate && m.rq[m.rq_len - 1] != index) {
		m_rq_remove(index);
		m_rq_append(index);
	}
	m_hw();
}

static void do_pop(u32 index, bool null_payload)
{
	struct shca_llq_payload pl;
	int ret = shca_llq_pop(&q, index, null_payload ? NULL : &pl);
	struct m_list *l;

	if (index >= m.cfg.n_index) {
		FUZZ_ASSERT(ret == SHCA_LLQ_EINVAL);
		m.st.invalid++;
		return;
	}
	l = &m.list[index];
	if (!l->active) {
		FUZZ_ASSERT(ret == SHCA_LLQ_ENOENT);
		return;
	}
	if (!m.ent[l->ent[0]].ready) {
		FUZZ_ASSERT(ret == SHCA_LLQ_EAGAIN);
		return;
	}
	FUZZ_ASSERT(ret == 0);
	m_pop_head(index, false, null_payload ? NULL : &pl);
}

static void do_pop_ready(bool null_index, bool null_payload)
{
	struct shca_llq_payload pl;
	u32 index = SHCA_LLQ_NIL, want;
	int ret = shca_llq_pop_ready(&q, null_index ? NULL : &index,
				     null_payload ? NULL : &pl);

	if (!m.rq_len) {
		FUZZ_ASSERT(ret == SHCA_LLQ_EAGAIN);
		return;
	}
	FUZZ_ASSERT(ret == 0);
	want = m.rq[0];
	if (!null_index)
		FUZZ_ASSERT(index == want);
	m_pop_head(want, true, null_payload ? NULL : &pl);
}

static void do_peek(u32 index, bool null_payload)
{
	struct shca_llq_payload pl;
	int ret = shca_llq_peek(&q, index, null_payload ? NULL : &pl);
	struct m_list *l;
	u32 e;

	if (index >= m.cfg.n_index) {
		FUZZ_ASSERT(ret == SHCA_LLQ_EINVAL);
		m.st.invalid++;
		return;
	}
	l = &m.list[index];
	if (!l->active) {
		FUZZ_ASSERT(ret == SHCA_LLQ_ENOENT);
		return;
	}
	if (l->peeked == l->len) {
		FUZZ_ASSERT(ret == SHCA_LLQ_EAGAIN);
		return;
	}
	e = l->ent[l->peeked++];
	FUZZ_ASSERT(ret == (int)e);
	if (!null_payload)
		FUZZ_ASSERT(same_pl(&pl, &m.ent[e].pl));
}

static void do_reset_peek(u32 index)
{
	int ret = shca_llq_reset_peek(&q, index);

	if (index >= m.cfg.n_index) {
		FUZZ_ASSERT(ret == SHCA_LLQ_EINVAL);
		m.st.invalid++;
		return;
	}
	if (!m.list[index].active) {
		FUZZ_ASSERT(ret == SHCA_LLQ_ENOENT);
		return;
	}
	FUZZ_ASSERT(ret == 0);
	m.list[index].peeked = 0;
}

/*
 * What a reclaim callback expects and does: the entries of the detached
 * list in order, and optionally one call back into the queue per entry.
 */
enum cb_action { CB_NONE, CB_PUSH, CB_PUSH_SAME, CB_SET_READY, CB_NR };

struct reclaim_ctx {
	u32 index;		/* list being reclaimed */
	u32 n;			/* entries seen so far */
	u32 len;
	u32 ent[M_ENTRIES];	/* the detached list, in order */
	enum cb_action action;
	u32 arg_index, arg_func, arg_entry;
	bool arg_ready;
	/* reclaim_all: expected entries per index, and how far each got */
	bool all;
	struct m_list snap[M_INDEX];
	u32 pos[M_INDEX];
};

static void reclaim_cb(void *ctx, u32 index, u32 func,
		       const struct shca_llq_payload *payload)
{
	struct reclaim_ctx *rc = ctx;
	u32 e;

	if (rc->all) {
		FUZZ_ASSERT(index < m.cfg.n_index);
		FUZZ_ASSERT(rc->pos[index] < rc->snap[index].len);
		e = rc->snap[index].ent[rc->pos[index]++];
	} else {
		FUZZ_ASSERT(index == rc->index && rc->n < rc->len);
		e = rc->ent[rc->n];
	}
	rc->n++;
	FUZZ_ASSERT(m.ent[e].used && func == m.ent[e].func);
	FUZZ_ASSERT(same_pl(payload, &m.ent[e].pl));
	/* "The entry has already been freed when this is called" */
	m_entry_free(e);
	m.st.reclaimed++;
	FUZZ_ASSERT(q.stats.entries_used == m.st.entries_used);

	switch (rc->action) {
	case CB_PUSH:
		do_push(rc->arg_index, rc->arg_func, rc->arg_ready, false);
		break;
	case CB_PUSH_SAME:
		do_push(index, rc->arg_func, rc->arg_ready, false);
		break;
	case CB_SET_READY:
		do_set_ready(rc->arg_entry);
		break;
	default:
		break;
	}
}

static void do_reclaim(struct fuzz_in *in)
{
	struct reclaim_ctx rc;
	u32 index = arg_index(in);
	u8 how = fuzz_u8(in);
	struct m_list *l;
	int ret;

	memset(&rc, 0, sizeof(rc));
	rc.index = index;
	rc.action = how % CB_NR;
	rc.arg_index = arg_index(in);
	rc.arg_func = arg_func(in);
	rc.arg_entry = arg_entry(in);
	rc.arg_ready = how & 0x10;

	if (index >= m.cfg.n_index) {
		ret = shca_llq_reclaim(&q, index, reclaim_cb, &rc);
		FUZZ_ASSERT(ret == SHCA_LLQ_EINVAL);
		m.st.invalid++;
		return;
	}
	l = &m.list[index];
	if (!l->active) {
		ret = shca_llq_reclaim(&q, index, reclaim_cb, &rc);
		FUZZ_ASSERT(ret == 0 && rc.n == 0);
		return;
	}
	/* detach the list in the model: its index has no list any more */
	rc.len = l->len;
	memcpy(rc.ent, l->ent, l->len * sizeof(u32));
	if (m_rq_find(index) >= 0)
		m_rq_remove(index);
	l->active = false;
	l->len = 0;
	l->peeked = 0;
	m.detached++;

	/* without a callback the model frees the entries itself */
	if (how & 0x80) {
		u32 i;

		ret = shca_llq_reclaim(&q, index, NULL, NULL);
		for (i = 0; i < rc.len; i++) {
			m_entry_free(rc.ent[i]);
			m.st.reclaimed++;
		}
	} else {
		ret = shca_llq_reclaim(&q, index, reclaim_cb, &rc);
		FUZZ_ASSERT(rc.n == rc.len);
	}
	FUZZ_ASSERT(ret == (int)rc.len);
	m.detached--;
	m_hw();
}

static void do_reclaim_all(bool with_cb)
{
	static struct reclaim_ctx rc;
	u32 i, total = 0;
	int ret;

	memset(&rc, 0, sizeof(rc));
	rc.all = true;
	rc.action = CB_NONE;
	for (i = 0; i < m.cfg.n_index; i++) {
		rc.snap[i] = m.list[i];
		if (!m.list[i].active)
			rc.snap[i].len = 0;
		total += rc.snap[i].len;
	}
	ret = shca_llq_reclaim_all(&q, with_cb ? reclaim_cb : NULL, &rc);
	FUZZ_ASSERT(ret == (int)total);
	for (i = 0; i < m.cfg.n_index; i++) {
		struct m_list *l = &m.list[i];
		u32 k;

		if (with_cb) {
			FUZZ_ASSERT(rc.pos[i] == rc.snap[i].len);
		} else {
			for (k = 0; k < rc.snap[i].len; k++) {
				m_entry_free(rc.snap[i].ent[k]);
				m.st.reclaimed++;
			}
		}
		l->active = false;
		l->len = 0;
		l->peeked = 0;
	}
	m.rq_len = 0;
	m_hw();
}

static void do_set_credit(u32 func, u32 limit)
{
	int ret = shca_llq_set_credit(&q, func, limit);

	if (func >= m.cfg.n_funcs) {
		FUZZ_ASSERT(ret == SHCA_LLQ_EINVAL);
		m.st.invalid++;
		return;
	}
	FUZZ_ASSERT(ret == 0);
	m.limit[func] = limit;
}

/*
 * The read-only queries.  They take a const queue, so their EINVAL
 * cannot be counted in stats.invalid.
 */
static void do_queries(u32 index, u32 func)
{
	struct shca_llq_func_stats fs;
	const struct m_list *l;
	int ret, k;
	u32 first;

	ret = shca_llq_len(&q, index);
	if (index < m.cfg.n_index) {
		l = &m.list[index];
		FUZZ_ASSERT(ret == (int)(l->active ? l->len : 0));
		FUZZ_ASSERT(shca_llq_peek_pending(&q, index) ==
			    (l->active && l->peeked < l->len));
	} else {
		FUZZ_ASSERT(ret == SHCA_LLQ_EINVAL);
		FUZZ_ASSERT(shca_llq_peek_pending(&q, index) ==
			    SHCA_LLQ_EINVAL);
	}
	ret = shca_llq_func_stats(&q, func, &fs);
	if (func >= m.cfg.n_funcs) {
		FUZZ_ASSERT(ret == SHCA_LLQ_EINVAL);
	} else {
		FUZZ_ASSERT(ret == 0 && fs.limit == m.limit[func] &&
			    fs.used == m.used[func]);
		for (k = 0; k < SHCA_LLQ_REFUSE_NR; k++)
			FUZZ_ASSERT(fs.refused[k] == m.refused_f[func][k]);
	}
	ret = shca_llq_first_ready(&q, &first);
	FUZZ_ASSERT(ret == (m.rq_len ? 0 : SHCA_LLQ_EAGAIN));
	if (!ret)
		FUZZ_ASSERT(first == m.rq[0]);
}

/*
 * Damage the queue in one of the ways shca_llq_check() is there to see,
 * then repair it: the check must fail, and its walks must stay bounded
 * and in range (a list made circular, a ready queue that lost its head).
 */
static void do_corrupt(u8 b)
{
	struct shca_llq saved = q;
	u32 i, e = SHCA_LLQ_NIL, tail_next = 0, list_of = 0, map_of = 0;
	u32 index = SHCA_LLQ_NIL;

	/* the first index that has a list, and its head entry */
	for (i = 0; i < m.cfg.n_index; i++) {
		if (m.list[i].active) {
			index = i;
			e = m.list[i].ent[0];
			break;
		}
	}
	switch (b % 5) {
	case 0:
		q.stats.entries_used++;
		break;
	case 1:
		q.stats.ready_lists++;
		break;
	case 2:
		if (index == SHCA_LLQ_NIL)
			return;
		/* the tail points back at the head: a cycle */
		tail_next = q.entries[m.list[index].ent[m.list[index].len -
							1]].next;
		q.entries[m.list[index].ent[m.list[index].len - 1]].next = e;
		break;
	case 3:
		if (index == SHCA_LLQ_NIL)
			return;
		list_of = q.entries[e].list;
		q.entries[e].list = SHCA_LLQ_NIL;
		break;
	default:
		if (index == SHCA_LLQ_NIL)
			return;
		map_of = q.map[index];
		q.map[index] = SHCA_LLQ_NIL;
		break;
	}
	FUZZ_ASSERT(shca_llq_check(&q) == SHCA_LLQ_ECORRUPT);
	switch (b % 5) {
	case 2:
		q.entries[m.list[index].ent[m.list[index].len - 1]].next =
			tail_next;
		break;
	case 3:
		q.entries[e].list = list_of;
		break;
	case 4:
		q.map[index] = map_of;
		break;
	default:
		break;
	}
	/* the counters; the arrays were repaired above */
	q = saved;
}

/* After every operation: the queue's own check and the model agree. */
static void check_all(void)
{
	const struct shca_llq_stats *st = shca_llq_stats(&q);
	u32 i;
	int k;

	FUZZ_ASSERT(shca_llq_check(&q) == 0);
	FUZZ_ASSERT(st->entries_used == m.st.entries_used);
	FUZZ_ASSERT(st->entries_hw == m.st.entries_hw);
	FUZZ_ASSERT(st->lists_used == m.st.lists_used);
	FUZZ_ASSERT(st->lists_hw == m.st.lists_hw);
	FUZZ_ASSERT(st->ready_lists == m.rq_len);
	FUZZ_ASSERT(st->pushes == m.st.pushes);
	FUZZ_ASSERT(st->pops == m.st.pops);
	FUZZ_ASSERT(st->reclaimed == m.st.reclaimed);
	FUZZ_ASSERT(st->invalid == m.st.invalid);
	for (k = 0; k < SHCA_LLQ_REFUSE_NR; k++)
		FUZZ_ASSERT(st->refused[k] == m.st.refused[k]);
	FUZZ_ASSERT(shca_llq_empty(&q) == !m.st.entries_used);
	FUZZ_ASSERT(shca_llq_has_ready(&q) == !!m.rq_len);
	FUZZ_ASSERT(shca_llq_free_entries(&q) ==
		    m.cfg.n_entries - m.st.entries_used);
	for (i = 0; i < m.cfg.n_index; i++)
		FUZZ_ASSERT(shca_llq_len(&q, i) ==
			    (int)(m.list[i].active ? m.list[i].len : 0));
}

/* Bad configurations are refused by mem_size and init. */
static void check_bad_cfg(struct fuzz_in *in)
{
	struct shca_llq_cfg c = m.cfg;
	struct shca_llq bad;
	u64 mem[4];

	switch (fuzz_pick(in, 6)) {
	case 0:
		c.n_entries = 0;
		break;
	case 1:
		c.n_lists = c.n_entries + 1;
		break;
	case 2:
		c.n_index = 0;
		break;
	case 3:
		c.n_funcs = SHCA_LLQ_MAX_FUNCS + 1;
		break;
	case 4:
		c.n_entries = SHCA_LLQ_MAX_ENTRIES + 1;
		break;
	default:
		/* a good shape in misaligned memory */
		FUZZ_ASSERT(shca_llq_init(&bad, &c, (u8 *)mem + 4) ==
			    SHCA_LLQ_EINVAL);
		FUZZ_ASSERT(shca_llq_init(&bad, &c, NULL) == SHCA_LLQ_EINVAL);
		return;
	}
	FUZZ_ASSERT(shca_llq_mem_size(&c) == 0);
	FUZZ_ASSERT(shca_llq_init(&bad, &c, mem) == SHCA_LLQ_EINVAL);
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
	m.cfg.n_entries = 1 + fuzz_pick(&in, M_ENTRIES);
	m.cfg.n_lists = 1 + fuzz_pick(&in, m.cfg.n_entries);
	m.cfg.n_index = 1 + fuzz_pick(&in, M_INDEX);
	m.cfg.n_funcs = 1 + fuzz_pick(&in, M_FUNCS);
	check_bad_cfg(&in);

	msize = shca_llq_mem_size(&m.cfg);
	FUZZ_ASSERT(msize);
	mem = malloc(msize);
	FUZZ_ASSERT(mem);
	memset(mem, 0xa5, msize);	/* init must not need zeroed memory */
	FUZZ_ASSERT(shca_llq_init(&q, &m.cfg, mem) == 0);
	for (i = 0; i < m.cfg.n_funcs; i++)
		m.limit[i] = m.cfg.n_entries;
	check_all();

	for (n = 0; n < MAX_OPS && !fuzz_in_done(&in); n++) {
		u8 op = fuzz_u8(&in);
		u32 a, b;

		switch (op % 12) {
		case 0:
		case 1:
		case 2:
			a = arg_index(&in);
			b = arg_func(&in);
			op = fuzz_u8(&in);
			/* a NULL payload one time in 64 */
			do_push(a, b, op & 1, (op & 0x7e) == 0x7e);
			break;
		case 3:
			do_set_ready(arg_entry(&in));
			break;
		case 4:
			a = arg_index(&in);
			do_pop(a, op & 0x80);
			break;
		case 5:
		case 6:
			do_pop_ready(op & 0x40, op & 0x80);
			break;
		case 7:
			a = arg_index(&in);
			do_peek(a, op & 0x80);
			break;
		case 8:
			do_reset_peek(arg_index(&in));
			break;
		case 9:
			do_reclaim(&in);
			break;
		case 10:
			if (op & 0x80) {
				do_reclaim_all(op & 0x40);
			} else {
				a = arg_func(&in);
				b = fuzz_u8(&in);
				/* mostly small limits, now and then no limit */
				do_set_credit(a, b == 0xff ? 0xffffffffU :
					      b % (m.cfg.n_entries + 2));
			}
			break;
		default:
			if ((op & 0xc0) == 0xc0) {
				do_corrupt(fuzz_u8(&in));
				break;
			}
			a = arg_index(&in);
			do_queries(a, arg_func(&in));
			break;
		}
		check_all();
	}
	free(mem);
	return 0;
}
