// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_txhist.c - libFuzzer harness of kernel/mech/shca_txhist.c.
 *
 * The input picks a small history (1..8 records, ids starting at 0 or
 * just below the 2^31 wrap, PSNs anywhere in the 24-bit space) and is
 * then read as operations, one opcode byte and its argument bytes each:
 * push (mostly well-formed and contiguous records, sometimes a PSN gap,
 * a wrong last PSN, a bad MTU, bad flags, a length that spans more PSNs
 * than SHCA_TXH_MAX_SPAN allows), get, oldest/newest, find, built,
 * frontier, retire, pop, pos_at, replay, pos_next, flush, reset and
 * npkts.  Ids and PSNs are drawn around the records held, so stale,
 * future and foreign ones come up.
 *
 * A model kept here (an array of the records held, the id of the oldest,
 * the next MSN and every counter) predicts each return code, id, record
 * and position from the contract in shca_txhist.h.  After every operation
 * shca_txhist_check() must pass, every counter must match, and every id
 * must resolve (or not) to the record the model holds.
 *
 * Two operations damage the history on purpose and put it back after:
 * one breaks the FIFO's own indices (count above the capacity, head slot
 * out of range, a capacity of 0 or above the maximum, no record array),
 * after which every call must refuse with SHCA_TXH_ECORRUPT (or NULL,
 * or 0) without touching memory outside the records; the other breaks
 * one record, which shca_txhist_check() must notice.
 *
 * Any disagreement traps.
 */
/* fuzz-sources: shca_txhist.c */
#include <stdbool.h>
#include <stdlib.h>

#include "shca_txhist.h"
#include "fuzz_util.h"

#define M_CAP		8
#define MAX_OPS		2048
#define PSN_MASK	0xffffffu
#define ID_MASK		0x7fffffffu

struct model {
	u32 cap;
	u32 count;
	u32 head;		/* id of the oldest record */
	u32 msn;		/* MSN of the next push */
	struct shca_txhist_rec rec[M_CAP];	/* oldest first */
	struct shca_txhist_stats st;
};

static struct shca_txhist h;
static struct shca_txhist_rec *mem;
static struct model m;

static bool mtu_ok(u32 mtu)
{
	return mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 ||
	       mtu == 4096;
}

/* packets of a message: max(1, ceil(length / mtu)), 0 for a bad MTU */
static u32 ref_npkts(u32 length, u32 mtu)
{
	u64 n;

	if (!mtu_ok(mtu))
		return 0;
	n = ((u64)length + mtu - 1) / mtu;
	return n ? (u32)n : 1;
}

/* @psn is one of the PSNs @r covers */
static bool holds(const struct shca_txhist_rec *r, u32 psn)
{
	return psn <= PSN_MASK &&
	       ((psn - r->first_psn) & PSN_MASK) <=
	       ((r->last_psn - r->first_psn) & PSN_MASK);
}

/* The model's record with @id, or NULL. */
static struct shca_txhist_rec *m_get(u32 id)
{
	u32 k;

	if (id > ID_MASK)
		return NULL;
	k = (id - m.head) & ID_MASK;
	return k < m.count ? &m.rec[k] : NULL;
}

static bool same_rec(const struct shca_txhist_rec *a,
		     const struct shca_txhist_rec *b)
{
	return a->wqe == b->wqe && a->first_psn == b->first_psn &&
	       a->last_psn == b->last_psn && a->msn == b->msn &&
	       a->length == b->length && a->offset == b->offset &&
	       a->mtu == b->mtu && a->opcode == b->opcode &&
	       a->flags == b->flags;
}

static void m_drop_oldest(void)
{
	memmove(&m.rec[0], &m.rec[1], (m.count - 1) * sizeof(m.rec[0]));
	m.count--;
	m.head = (m.head + 1) & ID_MASK;
	m.st.used = m.count;
}

/* An id around the ones held: held, stale, not yet given, or not an id. */
static u32 arg_id(struct fuzz_in *in)
{
	u8 b = fuzz_u8(in);
	u32 id = (m.head + (b & 15) - 4) & ID_MASK;

	switch (b >> 6) {
	case 3:
		/* ids are 31 bits: one with bit 31 set is never held */
		return id | 0x80000000U;
	case 2:
		return fuzz_u32(in);
	default:
		return id;
	}
}

/* A PSN around the records held, or anywhere, or not a PSN at all. */
static u32 arg_psn(struct fuzz_in *in)
{
	u8 b = fuzz_u8(in);
	u32 base = m.count ? m.rec[0].first_psn : 0;
	u32 span = m.count ?
		   ((m.rec[m.count - 1].last_psn - base) & PSN_MASK) + 1 : 1;

	switch (b >> 6) {
	case 0:
		/* inside the records, or just around them */
		return (base + fuzz_u16(in) % (span + 4) - 2) & PSN_MASK;
	case 1:
		/* the last PSN of a record, or the one after it */
		if (!m.count)
			return base;
		return (m.rec[(b & 7) % m.count].last_psn + ((b >> 3) & 1)) &
		       PSN_MASK;
	case 2:
		return fuzz_u32(in) & PSN_MASK;
	default:
		return fuzz_u32(in);
	}
}

static u32 arg_mtu(struct fuzz_in *in)
{
	static const u32 bad[] = { 0, 128, 300, 768, 8192, 0x8000 };
	u8 b = fuzz_u8(in);

	if ((b & 0xf0) == 0xf0)
		return bad[b % ARRAY_SIZE(bad)];
	return 256u << (b % 5);
}

/* A message length: mostly a few MTUs, sometimes anything. */
static u32 arg_length(struct fuzz_in *in, u32 mtu)
{
	u8 b = fuzz_u8(in);

	switch (b >> 6) {
	case 0:
		return b & 63;
	case 1:
		return (b & 3) * (mtu ? mtu : 256) + (b >> 2 & 1);
	case 2:
		return fuzz_u16(in);
	default:
		return fuzz_u32(in);
	}
}

static void do_push(struct fuzz_in *in)
{
	struct shca_txhist_rec r, *slot;
	const struct shca_txhist_rec *newest = m.count ?
		&m.rec[m.count - 1] : NULL;
	bool einval, efull, erange, e2big;
	u8 how = fuzz_u8(in);
	u32 npkts, id = 0xdeadbeef;
	int ret;

	memset(&r, 0, sizeof(r));
	r.wqe = fuzz_u16(in);
	r.opcode = fuzz_u8(in);
	r.mtu = (u16)arg_mtu(in);
	r.length = arg_length(in, r.mtu);
	/* SIGNALED/READ/ATOMIC, sometimes BUILT or an unknown flag too */
	r.flags = how & 0x07;
	if ((how & 0x18) == 0x18)
		r.flags |= (how & 0x20) ? SHCA_TXH_F_BUILT : 0x40;
	/* the fields the history sets itself must be ignored */
	r.msn = fuzz_u8(in);
	r.offset = r.msn;
	if (r.flags & SHCA_TXH_F_ATOMIC && (how & 0x40))
		r.length = 8;

	/* the next PSN, now and then a gap or a fresh start */
	if (newest && (how & 0x80))
		r.first_psn = (newest->last_psn + 1) & PSN_MASK;
	else
		r.first_psn = arg_psn(in);
	npkts = ref_npkts(r.length, r.mtu);
	r.last_psn = (r.first_psn + npkts - 1) & PSN_MASK;
	if ((how & 0x60) == 0x60)
		r.last_psn = (r.last_psn + 1 + (how & 1)) & PSN_MASK;

	einval = !npkts || (r.flags & ~(SHCA_TXH_F_SIGNALED |
					SHCA_TXH_F_REPLY |
					SHCA_TXH_F_BUILT)) ||
		 (r.flags & SHCA_TXH_F_REPLY) == SHCA_TXH_F_REPLY ||
		 r.first_psn > PSN_MASK || r.last_psn > PSN_MASK ||
		 ((r.flags & SHCA_TXH_F_ATOMIC) && npkts != 1) ||
		 npkts > SHCA_TXH_MAX_SPAN ||
		 r.last_psn != ((r.first_psn + npkts - 1) & PSN_MASK);
	efull = m.count == m.cap;
	erange = newest &&
		 r.first_psn != ((newest->last_psn + 1) & PSN_MASK);
	/* with no record held, the span is the new record's own */
	e2big = (m.count ? ((r.last_psn - m.rec[0].first_psn) & PSN_MASK) + 1 :
		 npkts) > SHCA_TXH_MAX_SPAN;

	ret = shca_txhist_push(&h, &r, &id);
	if (einval || efull || erange || e2big) {
		/* which error wins when several apply is not documented */
		FUZZ_ASSERT((ret == SHCA_TXH_EINVAL && einval) ||
			    (ret == SHCA_TXH_EFULL && efull) ||
			    (ret == SHCA_TXH_ERANGE && erange) ||
			    (ret == SHCA_TXH_E2BIG && e2big));
		m.st.refused++;
		return;
	}
	FUZZ_ASSERT(ret == 0);
	FUZZ_ASSERT(id == ((m.head + m.count) & ID_MASK));
	slot = &m.rec[m.count++];
	*slot = r;
	slot->flags &= ~SHCA_TXH_F_BUILT;
	slot->offset = 0;
	slot->msn = m.msn;
	m.msn = (m.msn + 1) & PSN_MASK;
	m.st.pushed++;
	m.st.used = m.count;
	if (m.count > m.st.hwm)
		m.st.hwm = m.count;
}

static void do_get(u32 id)
{
	const struct shca_txhist_rec *got = shca_txhist_get(&h, id);
	const struct shca_txhist_rec *want = m_get(id);

	FUZZ_ASSERT(!got == !want);
	if (got)
		FUZZ_ASSERT(same_rec(got, want));
}

static void do_ends(void)
{
	u32 id = 0xdeadbeef;
	int ret;

	ret = shca_txhist_oldest(&h, &id);
	FUZZ_ASSERT(ret == (m.count ? 0 : SHCA_TXH_ENOENT));
	if (!ret)
		FUZZ_ASSERT(id == m.head);
	ret = shca_txhist_newest(&h, &id);
	FUZZ_ASSERT(ret == (m.count ? 0 : SHCA_TXH_ENOENT));
	if (!ret)
		FUZZ_ASSERT(id == ((m.head + m.count - 1) & ID_MASK));
}

/* the model's index of the record holding @psn, or -1 */
static int m_find(u32 psn)
{
	u32 k;

	for (k = 0; k < m.count; k++)
		if (holds(&m.rec[k], psn))
			return (int)k;
	return -1;
}

static void do_find(u32 psn)
{
	u32 id = 0xdeadbeef;
	int ret = shca_txhist_find(&h, psn, &id);
	int k = m_find(psn);

	if (k < 0) {
		FUZZ_ASSERT(ret == SHCA_TXH_ENOENT);
		return;
	}
	FUZZ_ASSERT(ret == 0 && id == ((m.head + k) & ID_MASK));
}

static void do_built(struct fuzz_in *in)
{
	u32 id = arg_id(in);
	u8 b = fuzz_u8(in);
	struct shca_txhist_rec *r = m_get(id);
	bool all = b & 0x80;
	u32 offset, len = r ? r->length : fuzz_u16(in);
	u32 mtu = r ? r->mtu : 256;
	int ret;

	/* a packet edge, the end, one off either, or anything */
	switch ((b >> 4) & 7) {
	case 0:
	case 1:
		offset = (b & 15) * mtu;
		break;
	case 2:
	case 3:
		offset = len;
		break;
	case 4:
		offset = len + 1;
		break;
	case 5:
		offset = r ? r->offset - 1 : 0;
		break;
	default:
		offset = (u32)(fuzz_u32(in) % ((u64)len + 2));
		break;
	}

	ret = shca_txhist_built(&h, id, offset, all);
	/*
	 * Refused: a stale id, an offset beyond the length or moving back,
	 * @all short of the length (shca_txhist.h); and two rules only
	 * shca_txhist.c states: short of the end the offset is a packet
	 * edge, and a record built completely takes no partial update.
	 */
	if (!r || offset > r->length || offset < r->offset ||
	    (all && offset != r->length) ||
	    (!all && offset % r->mtu) ||
	    ((r->flags & SHCA_TXH_F_BUILT) && !all)) {
		FUZZ_ASSERT(ret == SHCA_TXH_EINVAL);
		m.st.invalid++;
		return;
	}
	FUZZ_ASSERT(ret == 0);
	r->offset = offset;
	if (all)
		r->flags |= SHCA_TXH_F_BUILT;
}

static void check_frontier(void)
{
	u32 k;

	for (k = 0; k < m.count; k++) {
		const struct shca_txhist_rec *r = &m.rec[k];
		u32 want = r->flags & SHCA_TXH_F_BUILT ?
			   (r->last_psn + 1) & PSN_MASK :
			   (r->first_psn + r->offset / r->mtu) & PSN_MASK;

		FUZZ_ASSERT(shca_txhist_frontier(r) == want);
		FUZZ_ASSERT(shca_txhist_frontier(
			shca_txhist_get(&h, (m.head + k) & ID_MASK)) == want);
	}
}

static void do_retire(struct fuzz_in *in)
{
	struct shca_txhist_rec out[M_CAP + 2];
	u32 psn = arg_psn(in);
	u8 b = fuzz_u8(in);
	u32 max = b % (M_CAP + 2), flags = (b >> 4) & 3, n = 0;
	bool use_out = !(b & 0x80);
	int ret;

	ret = shca_txhist_retire(&h, psn, flags, use_out ? out : NULL, max);
	/* from the oldest: acknowledged, built, and needing no reply */
	while (n < max && m.count) {
		const struct shca_txhist_rec *r = &m.rec[0];
		u32 d = (psn - r->last_psn) & PSN_MASK;

		/*
		 * last PSN at or before @psn: shca_psn_diff(last, psn) <= 0,
		 * so a distance of exactly 2^23 counts as before
		 */
		if (d > 0x800000u)
			break;
		if (!(r->flags & SHCA_TXH_F_BUILT) ||
		    ((r->flags & SHCA_TXH_F_REPLY) &&
		     !(flags & SHCA_TXH_RETIRE_REPLY)))
			break;
		if (use_out)
			FUZZ_ASSERT(same_rec(&out[n], r));
		m_drop_oldest();
		m.st.retired++;
		n++;
	}
	FUZZ_ASSERT(ret == (int)n);
}

static void do_pop(bool use_out)
{
	struct shca_txhist_rec out;
	int ret = shca_txhist_pop(&h, use_out ? &out : NULL);

	if (!m.count) {
		FUZZ_ASSERT(ret == SHCA_TXH_ENOENT);
		return;
	}
	FUZZ_ASSERT(ret == 0);
	if (use_out)
		FUZZ_ASSERT(same_rec(&out, &m.rec[0]));
	m_drop_oldest();
	m.st.popped++;
}

/* The position of packet @psn of the model's record @id (held). */
static struct shca_txhist_pos m_pos(u32 id, u32 psn)
{
	const struct shca_txhist_rec *r = m_get(id);
	struct shca_txhist_pos p;
	u32 k = (psn - r->first_psn) & PSN_MASK;

	p.id = id;
	p.psn = psn;
	p.off = k * r->mtu;
	if (r->flags & SHCA_TXH_F_ATOMIC) {
		p.off = 0;
		p.len = 0;
	} else if (r->flags & SHCA_TXH_F_READ) {
		p.len = r->length - p.off;
	} else {
		p.len = r->length - p.off < r->mtu ? r->length - p.off :
						     r->mtu;
	}
	return p;
}

static bool same_pos(const struct shca_txhist_pos *a,
		     const struct shca_txhist_pos *b)
{
	return a->id == b->id && a->psn == b->psn && a->off == b->off &&
	       a->len == b->len;
}

static void do_pos_at(u32 id, u32 psn)
{
	struct shca_txhist_pos pos, want;
	const struct shca_txhist_rec *r = m_get(id);
	int ret = shca_txhist_pos_at(&h, id, psn, &pos);

	if (!r || !holds(r, psn)) {
		FUZZ_ASSERT(ret == SHCA_TXH_EINVAL);
		return;
	}
	FUZZ_ASSERT(ret == 0);
	want = m_pos(id, psn);
	FUZZ_ASSERT(same_pos(&pos, &want));
}

static void do_replay(u32 psn)
{
	struct shca_txhist_pos pos, want;
	int ret = shca_txhist_replay(&h, psn, &pos);
	int k = m_find(psn);

	if (k < 0) {
		FUZZ_ASSERT(ret == SHCA_TXH_ENOENT);
		return;
	}
	FUZZ_ASSERT(ret == 0);
	want = m_pos((m.head + k) & ID_MASK, psn);
	FUZZ_ASSERT(same_pos(&pos, &want));
	m.st.replays++;
}

static void do_pos_next(struct fuzz_in *in)
{
	struct shca_txhist_pos pos, before, want;
	const struct shca_txhist_rec *r, *next;
	u8 b = fuzz_u8(in);
	u32 nid;
	int ret;

	/* a real position of a record held, or made-up fields */
	memset(&pos, 0, sizeof(pos));
	if (m.count && !(b & 0x80)) {
		u32 k = (b & 7) % m.count;

		r = &m.rec[k];
		pos = m_pos((m.head + k) & ID_MASK,
			    (r->first_psn + fuzz_u16(in) %
			     (((r->last_psn - r->first_psn) & PSN_MASK) + 1)) &
			    PSN_MASK);
	} else {
		pos.id = arg_id(in);
		pos.psn = arg_psn(in);
	}
	before = pos;
	ret = shca_txhist_pos_next(&h, &pos);

	r = m_get(before.id);
	if (!r || !holds(r, before.psn)) {
		FUZZ_ASSERT(ret == SHCA_TXH_EINVAL);
		return;
	}
	if (!(r->flags & SHCA_TXH_F_REPLY) && before.psn != r->last_psn) {
		FUZZ_ASSERT(ret == 0);
		want = m_pos(before.id, (before.psn + 1) & PSN_MASK);
		FUZZ_ASSERT(same_pos(&pos, &want));
		return;
	}
	nid = (before.id + 1) & ID_MASK;
	next = m_get(nid);
	if (!next) {
		FUZZ_ASSERT(ret == SHCA_TXH_ENOENT);
		FUZZ_ASSERT(same_pos(&pos, &before));
		return;
	}
	FUZZ_ASSERT(ret == 0);
	want = m_pos(nid, next->first_psn);
	FUZZ_ASSERT(same_pos(&pos, &want));
}

static void do_flush(bool reset)
{
	u32 n = m.count;

	if (reset)
		shca_txhist_reset(&h);
	else
		FUZZ_ASSERT(shca_txhist_flush(&h) == n);
	m.head = (m.head + n) & ID_MASK;
	m.count = 0;
	m.st.used = 0;
	m.st.flushed += n;
	if (reset)
		m.msn = 0;
}

static void do_npkts(struct fuzz_in *in)
{
	u32 mtu = fuzz_u8(in) & 1 ? fuzz_u32(in) : arg_mtu(in);
	u32 length = arg_length(in, mtu);

	FUZZ_ASSERT(shca_txhist_npkts(length, mtu) == ref_npkts(length, mtu));
}

/*
 * Break the FIFO's own indices: every call must refuse without reading
 * outside the records.  Then put the history back.
 */
static void do_corrupt_fifo(struct fuzz_in *in)
{
	struct shca_txhist saved = h;
	struct shca_txhist_rec r, out[2];
	struct shca_txhist_pos pos = { 0 };
	u8 b = fuzz_u8(in);
	u32 id = 0, ncorrupt = 0;

	switch (b % 6) {
	case 0:
		h.count = h.cap + 1 + (b >> 3);
		break;
	case 5:
		h.head |= 0x80000000U;
		break;
	case 1:
		h.head_slot = h.cap + (b >> 3);
		break;
	case 2:
		h.cap = 0;
		break;
	case 3:
		h.cap = SHCA_TXH_MAX_CAP + 1;
		break;
	default:
		h.rec = NULL;
		break;
	}
	memset(&r, 0, sizeof(r));
	r.mtu = 256;
	FUZZ_ASSERT(shca_txhist_push(&h, &r, &id) == SHCA_TXH_ECORRUPT);
	ncorrupt++;
	FUZZ_ASSERT(shca_txhist_get(&h, saved.head) == NULL);
	FUZZ_ASSERT(shca_txhist_oldest(&h, &id) == SHCA_TXH_ECORRUPT);
	FUZZ_ASSERT(shca_txhist_newest(&h, &id) == SHCA_TXH_ECORRUPT);
	FUZZ_ASSERT(shca_txhist_find(&h, 0, &id) == SHCA_TXH_ECORRUPT);
	FUZZ_ASSERT(shca_txhist_built(&h, saved.head, 0, false) ==
		    SHCA_TXH_ECORRUPT);
	ncorrupt++;
	FUZZ_ASSERT(shca_txhist_retire(&h, 0, 1, out, 2) ==
		    SHCA_TXH_ECORRUPT);
	ncorrupt++;
	FUZZ_ASSERT(shca_txhist_pop(&h, out) == SHCA_TXH_ECORRUPT);
	ncorrupt++;
	FUZZ_ASSERT(shca_txhist_pos_at(&h, saved.head, 0, &pos) ==
		    SHCA_TXH_ECORRUPT);
	FUZZ_ASSERT(shca_txhist_replay(&h, 0, &pos) == SHCA_TXH_ECORRUPT);
	ncorrupt++;
	pos.id = saved.head;
	FUZZ_ASSERT(shca_txhist_pos_next(&h, &pos) == SHCA_TXH_ECORRUPT);
	FUZZ_ASSERT(shca_txhist_check(&h) == SHCA_TXH_ECORRUPT);
	ncorrupt++;
	if (h.count > h.cap)
		FUZZ_ASSERT(shca_txhist_count(&h) == 0);
	FUZZ_ASSERT(h.stats.corrupt == saved.stats.corrupt + ncorrupt);

	saved.stats.corrupt = h.stats.corrupt;
	h = saved;
	m.st.corrupt += ncorrupt;
}

/* Break one record: shca_txhist_check() must see it.  Then repair. */
static void do_corrupt_rec(struct fuzz_in *in)
{
	struct shca_txhist_rec *r, saved;
	struct shca_txhist_pos pos;
	u8 b = fuzz_u8(in);
	u32 k, id;

	if (!m.count)
		return;
	k = (b & 7) % m.count;
	id = (m.head + k) & ID_MASK;
	r = (struct shca_txhist_rec *)shca_txhist_get(&h, id);
	FUZZ_ASSERT(r);
	saved = *r;
	switch ((b >> 3) % 5) {
	case 0:
		r->mtu = 300;
		break;
	case 1:
		r->last_psn = (r->last_psn + 1) & PSN_MASK;
		break;
	case 2:
		/* past the length, or not at a packet edge if it cannot be */
		r->offset = r->length == 0xffffffffU ? 1 : r->length + 1;
		break;
	case 3:
		r->msn = (r->msn + 1) & PSN_MASK;
		break;
	default:
		r->first_psn = (r->first_psn - 1) & PSN_MASK;
		break;
	}
	FUZZ_ASSERT(shca_txhist_check(&h) == SHCA_TXH_ECORRUPT);
	m.st.corrupt++;
	/* lookups on the damaged history must stay in bounds */
	(void)shca_txhist_find(&h, saved.first_psn, &id);
	(void)shca_txhist_pos_at(&h, id, saved.first_psn, &pos);
	*r = saved;
}

/* After every operation: the history's own check and the model agree. */
static void check_all(void)
{
	const struct shca_txhist_stats *st = &h.stats;
	u32 k;

	FUZZ_ASSERT(shca_txhist_check(&h) == 0);
	FUZZ_ASSERT(shca_txhist_count(&h) == m.count);
	FUZZ_ASSERT(shca_txhist_full(&h) == (m.count == m.cap));
	FUZZ_ASSERT(st->used == m.st.used && st->hwm == m.st.hwm);
	FUZZ_ASSERT(st->pushed == m.st.pushed);
	FUZZ_ASSERT(st->retired == m.st.retired);
	FUZZ_ASSERT(st->popped == m.st.popped);
	FUZZ_ASSERT(st->flushed == m.st.flushed);
	FUZZ_ASSERT(st->replays == m.st.replays);
	FUZZ_ASSERT(st->refused == m.st.refused);
	FUZZ_ASSERT(st->invalid == m.st.invalid);
	FUZZ_ASSERT(st->corrupt == m.st.corrupt);
	for (k = 0; k < m.count; k++) {
		const struct shca_txhist_rec *r =
			shca_txhist_get(&h, (m.head + k) & ID_MASK);

		FUZZ_ASSERT(r && same_rec(r, &m.rec[k]));
	}
	/* the ids just outside the held ones resolve to nothing */
	FUZZ_ASSERT(!shca_txhist_get(&h, (m.head - 1) & ID_MASK));
	FUZZ_ASSERT(!shca_txhist_get(&h, (m.head + m.count) & ID_MASK));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in;
	u32 n;
	u8 b;

	fuzz_in_init(&in, data, size);
	memset(&m, 0, sizeof(m));
	m.cap = 1 + fuzz_pick(&in, M_CAP);
	mem = malloc(m.cap * sizeof(*mem));
	FUZZ_ASSERT(mem);
	memset(mem, 0xa5, m.cap * sizeof(*mem));
	FUZZ_ASSERT(shca_txhist_init(&h, mem, 0) == SHCA_TXH_EINVAL);
	FUZZ_ASSERT(shca_txhist_init(&h, NULL, m.cap) == SHCA_TXH_EINVAL);
	FUZZ_ASSERT(shca_txhist_init(&h, mem, m.cap) == 0);
	/* ids about to wrap, as the unit test sets up an empty history */
	b = fuzz_u8(&in);
	if (b & 0x80) {
		h.head = ID_MASK - (b & 7);
		m.head = h.head;
	}
	check_all();

	for (n = 0; n < MAX_OPS && !fuzz_in_done(&in); n++) {
		u8 op = fuzz_u8(&in);
		u32 a;

		switch (op % 16) {
		case 0:
		case 1:
		case 2:
		case 3:
			do_push(&in);
			break;
		case 4:
			do_get(arg_id(&in));
			do_ends();
			break;
		case 5:
			do_find(arg_psn(&in));
			break;
		case 6:
		case 7:
			do_built(&in);
			break;
		case 8:
			do_retire(&in);
			break;
		case 9:
			do_pop(op & 0x80);
			break;
		case 10:
			a = arg_id(&in);
			do_pos_at(a, arg_psn(&in));
			break;
		case 11:
			do_replay(arg_psn(&in));
			break;
		case 12:
			do_pos_next(&in);
			break;
		case 13:
			if ((op & 0xe0) == 0xe0)
				do_flush(op & 0x10);
			else
				do_npkts(&in);
			break;
		case 14:
			check_frontier();
			break;
		default:
			if (op & 0x80)
				do_corrupt_fifo(&in);
			else
				do_corrupt_rec(&in);
			break;
		}
		check_all();
	}
	free(mem);
	return 0;
}
