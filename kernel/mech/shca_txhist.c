// SPDX-License-Identifier: GPL-2.0
/*
 * Transmit history: a bounded FIFO of per-message records.
 *
 * The records live in a ring of h->cap slots in caller memory: the oldest
 * at h->head_slot, h->count of them in order.  A record's id is h->head
 * plus its distance from the oldest, modulo 2^31, so an id names one
 * record for as long as it is held and is refused afterwards.
 *
 * Pure C: no kernel calls, no allocation, no locking (see shca_txhist.h).
 */
#include "shca_txhist.h"

/* The FIFO's own indices are sane: every other check relies on this. */
static bool txh_ok(const struct shca_txhist *h)
{
	return h && h->rec && h->cap && h->cap <= SHCA_TXH_MAX_CAP &&
	       h->head_slot < h->cap && h->count <= h->cap &&
	       h->head <= SHCA_TXH_ID_MASK;
}

static int txh_corrupt(struct shca_txhist *h)
{
	if (h)
		h->stats.corrupt++;
	return SHCA_TXH_ECORRUPT;
}

static int txh_invalid(struct shca_txhist *h)
{
	h->stats.invalid++;
	return SHCA_TXH_EINVAL;
}

static int txh_refuse(struct shca_txhist *h, int err)
{
	h->stats.refused++;
	return err;
}

/* The @k-th record from the oldest (@k < h->count). */
static struct shca_txhist_rec *txh_at(const struct shca_txhist *h, u32 k)
{
	u32 s = h->head_slot + k;

	if (s >= h->cap)
		s -= h->cap;
	return &h->rec[s];
}

/*
 * Distance of @id from the oldest record, or h->count if not held.  Ids are
 * 31 bits: one with bit 31 set names no record (masking it would alias it
 * to a live one).
 */
static u32 txh_index(const struct shca_txhist *h, u32 id)
{
	u32 k = (id - h->head) & SHCA_TXH_ID_MASK;

	if (id > SHCA_TXH_ID_MASK)
		return h->count;

	return k < h->count ? k : h->count;
}

static bool txh_mtu_ok(u32 mtu)
{
	return mtu >= SHCA_TXH_MIN_MTU && mtu <= SHCA_TXH_MAX_MTU &&
	       !(mtu & (mtu - 1));
}

static void txh_drop_oldest(struct shca_txhist *h)
{
	h->head = (h->head + 1) & SHCA_TXH_ID_MASK;
	h->head_slot = h->head_slot + 1 == h->cap ? 0 : h->head_slot + 1;
	h->count--;
	h->stats.used = h->count;
}

int shca_txhist_init(struct shca_txhist *h, struct shca_txhist_rec *mem,
		     u32 cap)
{
	if (!h || !mem || !cap || cap > SHCA_TXH_MAX_CAP)
		return SHCA_TXH_EINVAL;
	memset(h, 0, sizeof(*h));
	memset(mem, 0, (size_t)cap * sizeof(*mem));
	h->rec = mem;
	h->cap = cap;
	return 0;
}

u32 shca_txhist_npkts(u32 length, u32 mtu)
{
	u32 n;

	if (!txh_mtu_ok(mtu))
		return 0;
	n = length / mtu + !!(length % mtu);
	return n ? n : 1;
}

/* Is @r a record push may take?  Returns its packet count, or 0. */
static u32 txh_rec_valid(const struct shca_txhist_rec *r)
{
	u32 flags = r->flags & ~SHCA_TXH_F_BUILT;
	u32 npkts = shca_txhist_npkts(r->length, r->mtu);

	if (!npkts || (flags & ~(SHCA_TXH_F_SIGNALED | SHCA_TXH_F_REPLY)) ||
	    (flags & SHCA_TXH_F_REPLY) == SHCA_TXH_F_REPLY ||
	    r->first_psn > SHCA_PSN_MASK || r->last_psn > SHCA_PSN_MASK)
		return 0;
	if ((flags & SHCA_TXH_F_ATOMIC) && npkts != 1)
		return 0;
	if (npkts > SHCA_TXH_MAX_SPAN ||
	    shca_psn_add(r->first_psn, npkts - 1) != r->last_psn)
		return 0;
	return npkts;
}

int shca_txhist_push(struct shca_txhist *h, const struct shca_txhist_rec *r,
		     u32 *id)
{
	const struct shca_txhist_rec *oldest, *newest;
	struct shca_txhist_rec *slot;
	u32 span;

	if (!txh_ok(h))
		return txh_corrupt(h);
	if (!r || !id || !txh_rec_valid(r))
		return txh_refuse(h, SHCA_TXH_EINVAL);
	if (h->count >= h->cap)
		return txh_refuse(h, SHCA_TXH_EFULL);
	if (h->count) {
		oldest = txh_at(h, 0);
		newest = txh_at(h, h->count - 1);
		if (r->first_psn != shca_psn_add(newest->last_psn, 1))
			return txh_refuse(h, SHCA_TXH_ERANGE);
		/* both parts are at most SHCA_TXH_MAX_SPAN: no wrap */
		span = ((r->last_psn - oldest->first_psn) & SHCA_PSN_MASK) + 1;
		if (span > SHCA_TXH_MAX_SPAN)
			return txh_refuse(h, SHCA_TXH_E2BIG);
	}

	slot = txh_at(h, h->count);
	*slot = *r;
	slot->flags &= ~SHCA_TXH_F_BUILT;
	slot->offset = 0;
	slot->msn = h->msn;
	h->msn = (h->msn + 1) & SHCA_MSN_MASK;
	*id = (h->head + h->count) & SHCA_TXH_ID_MASK;
	h->count++;
	h->stats.pushed++;
	h->stats.used = h->count;
	if (h->count > h->stats.hwm)
		h->stats.hwm = h->count;
	return 0;
}

const struct shca_txhist_rec *shca_txhist_get(const struct shca_txhist *h,
					      u32 id)
{
	u32 k;

	if (!txh_ok(h))
		return NULL;
	k = txh_index(h, id);
	return k < h->count ? txh_at(h, k) : NULL;
}

int shca_txhist_oldest(const struct shca_txhist *h, u32 *id)
{
	if (!txh_ok(h))
		return SHCA_TXH_ECORRUPT;
	if (!h->count)
		return SHCA_TXH_ENOENT;
	*id = h->head;
	return 0;
}

int shca_txhist_newest(const struct shca_txhist *h, u32 *id)
{
	if (!txh_ok(h))
		return SHCA_TXH_ECORRUPT;
	if (!h->count)
		return SHCA_TXH_ENOENT;
	*id = (h->head + h->count - 1) & SHCA_TXH_ID_MASK;
	return 0;
}

static bool txh_holds(const struct shca_txhist_rec *r, u32 psn)
{
	return shca_psn_diff(psn, r->first_psn) >= 0 &&
	       shca_psn_diff(psn, r->last_psn) <= 0;
}

int shca_txhist_find(const struct shca_txhist *h, u32 psn, u32 *id)
{
	u32 lo = 0, hi, mid, first;

	if (!txh_ok(h))
		return SHCA_TXH_ECORRUPT;
	if (!h->count || psn > SHCA_PSN_MASK)
		return SHCA_TXH_ENOENT;
	first = txh_at(h, 0)->first_psn;
	if (shca_psn_diff(psn, first) < 0 ||
	    shca_psn_diff(psn, txh_at(h, h->count - 1)->last_psn) > 0)
		return SHCA_TXH_ENOENT;
	/* the answer is in [lo, hi]; hi - lo halves every turn */
	hi = h->count - 1;
	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (shca_psn_diff(txh_at(h, mid)->first_psn, first) <=
		    shca_psn_diff(psn, first))
			lo = mid;
		else
			hi = mid - 1;
	}
	if (!txh_holds(txh_at(h, lo), psn))
		return SHCA_TXH_ECORRUPT;	/* a gap between records */
	*id = (h->head + lo) & SHCA_TXH_ID_MASK;
	return 0;
}

int shca_txhist_built(struct shca_txhist *h, u32 id, u32 offset, bool all)
{
	struct shca_txhist_rec *r;
	u32 k;

	if (!txh_ok(h))
		return txh_corrupt(h);
	k = txh_index(h, id);
	if (k >= h->count)
		return txh_invalid(h);
	r = txh_at(h, k);
	if (offset > r->length || offset < r->offset ||
	    ((r->flags & SHCA_TXH_F_BUILT) && !all) ||
	    (all && offset != r->length))
		return txh_invalid(h);
	/* short of the end, the first transmission stops at a packet edge */
	if (!all && (!txh_mtu_ok(r->mtu) || offset % r->mtu))
		return txh_invalid(h);
	r->offset = offset;
	if (all)
		r->flags |= SHCA_TXH_F_BUILT;
	return 0;
}

u32 shca_txhist_frontier(const struct shca_txhist_rec *r)
{
	if (r->flags & SHCA_TXH_F_BUILT)
		return shca_psn_add(r->last_psn, 1);
	if (!txh_mtu_ok(r->mtu))
		return r->first_psn;
	return shca_psn_add(r->first_psn, r->offset / r->mtu);
}

int shca_txhist_retire(struct shca_txhist *h, u32 psn, u32 flags,
		       struct shca_txhist_rec *out, u32 max)
{
	const struct shca_txhist_rec *r;
	u32 n = 0;

	if (!txh_ok(h))
		return txh_corrupt(h);
	while (n < max && h->count) {
		r = txh_at(h, 0);
		if (shca_psn_diff(r->last_psn, psn) > 0 ||
		    !(r->flags & SHCA_TXH_F_BUILT) ||
		    ((r->flags & SHCA_TXH_F_REPLY) &&
		     !(flags & SHCA_TXH_RETIRE_REPLY)))
			break;
		if (out)
			out[n] = *r;
		txh_drop_oldest(h);
		h->stats.retired++;
		n++;
	}
	return (int)n;
}

int shca_txhist_pop(struct shca_txhist *h, struct shca_txhist_rec *out)
{
	if (!txh_ok(h))
		return txh_corrupt(h);
	if (!h->count)
		return SHCA_TXH_ENOENT;
	if (out)
		*out = *txh_at(h, 0);
	txh_drop_oldest(h);
	h->stats.popped++;
	return 0;
}

int shca_txhist_pos_at(const struct shca_txhist *h, u32 id, u32 psn,
		       struct shca_txhist_pos *pos)
{
	const struct shca_txhist_rec *r;
	u64 off;
	s32 k;

	if (!txh_ok(h))
		return SHCA_TXH_ECORRUPT;
	r = shca_txhist_get(h, id);
	if (!r || !pos || psn > SHCA_PSN_MASK || !txh_holds(r, psn))
		return SHCA_TXH_EINVAL;
	if (!txh_mtu_ok(r->mtu))
		return SHCA_TXH_ECORRUPT;
	k = shca_psn_diff(psn, r->first_psn);
	off = (u64)k * r->mtu;
	if (off > r->length)
		return SHCA_TXH_ECORRUPT;	/* PSN range and length disagree */
	pos->id = id;
	pos->psn = psn;
	pos->off = (u32)off;
	if (r->flags & SHCA_TXH_F_ATOMIC) {
		pos->off = 0;
		pos->len = 0;
	} else if (r->flags & SHCA_TXH_F_READ) {
		pos->len = r->length - pos->off;
	} else {
		pos->len = r->length - pos->off < r->mtu ?
			   r->length - pos->off : r->mtu;
	}
	return 0;
}

int shca_txhist_replay(struct shca_txhist *h, u32 psn,
		       struct shca_txhist_pos *pos)
{
	int ret;
	u32 id;

	if (!txh_ok(h))
		return txh_corrupt(h);
	if (!pos)
		return txh_invalid(h);
	ret = shca_txhist_find(h, psn, &id);
	if (ret == SHCA_TXH_ECORRUPT)
		return txh_corrupt(h);
	if (ret)
		return ret;
	ret = shca_txhist_pos_at(h, id, psn, pos);
	if (ret)
		return ret == SHCA_TXH_ECORRUPT ? txh_corrupt(h) : ret;
	h->stats.replays++;
	return 0;
}

int shca_txhist_pos_next(const struct shca_txhist *h,
			 struct shca_txhist_pos *pos)
{
	const struct shca_txhist_rec *r, *next;
	u32 id;

	if (!txh_ok(h))
		return SHCA_TXH_ECORRUPT;
	if (!pos || pos->psn > SHCA_PSN_MASK)
		return SHCA_TXH_EINVAL;
	r = shca_txhist_get(h, pos->id);
	if (!r || !txh_holds(r, pos->psn))
		return SHCA_TXH_EINVAL;
	if (!(r->flags & SHCA_TXH_F_REPLY) && pos->psn != r->last_psn)
		return shca_txhist_pos_at(h, pos->id,
					  shca_psn_add(pos->psn, 1), pos);
	id = (pos->id + 1) & SHCA_TXH_ID_MASK;
	next = shca_txhist_get(h, id);
	if (!next)
		return SHCA_TXH_ENOENT;
	return shca_txhist_pos_at(h, id, next->first_psn, pos);
}

u32 shca_txhist_flush(struct shca_txhist *h)
{
	u32 n;

	if (!txh_ok(h)) {
		/* start over rather than trust the indices */
		if (h && h->rec && h->cap && h->cap <= SHCA_TXH_MAX_CAP) {
			h->stats.corrupt++;
			h->head = 0;
			h->head_slot = 0;
			h->count = 0;
			h->stats.used = 0;
		}
		return 0;
	}
	n = h->count;
	h->head = (h->head + n) & SHCA_TXH_ID_MASK;
	h->head_slot = (h->head_slot + n) % h->cap;
	h->count = 0;
	h->stats.used = 0;
	h->stats.flushed += n;
	return n;
}

void shca_txhist_reset(struct shca_txhist *h)
{
	shca_txhist_flush(h);
	if (h)
		h->msn = 0;
}

/* One record on its own is consistent. */
static bool txh_rec_sane(const struct shca_txhist_rec *r)
{
	if (!txh_rec_valid(r) || r->offset > r->length)
		return false;
	if (r->flags & SHCA_TXH_F_BUILT)
		return r->offset == r->length;
	return !(r->offset % r->mtu);
}

int shca_txhist_check(struct shca_txhist *h)
{
	const struct shca_txhist_rec *r, *prev = NULL;
	u32 k, span;

	if (!txh_ok(h))
		return txh_corrupt(h);
	for (k = 0; k < h->count; k++) {
		r = txh_at(h, k);
		if (!txh_rec_sane(r) || r->msn > SHCA_MSN_MASK)
			return txh_corrupt(h);
		if (prev && (r->first_psn != shca_psn_add(prev->last_psn, 1) ||
			     r->msn != ((prev->msn + 1) & SHCA_MSN_MASK)))
			return txh_corrupt(h);
		prev = r;
	}
	if (h->count) {
		span = ((prev->last_psn - txh_at(h, 0)->first_psn) &
			SHCA_PSN_MASK) + 1;
		if (span > SHCA_TXH_MAX_SPAN)
			return txh_corrupt(h);
		if (h->msn != ((prev->msn + 1) & SHCA_MSN_MASK))
			return txh_corrupt(h);
	}
	return 0;
}
