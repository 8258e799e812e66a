// SPDX-License-Identifier: GPL-2.0
/*
 * Multicast replication: member sets and flow control (see shca_mcast.h).
 */
#include "shca_mcast.h"

/* Order of members: by function, then by QPN. */
static int shca_mcast_cmp(const struct shca_mcast_member *m, u16 func,
			  u32 qpn)
{
	if (m->func != func)
		return m->func < func ? -1 : 1;
	if (m->qpn != qpn)
		return m->qpn < qpn ? -1 : 1;
	return 0;
}

/* Index of the first member not below (func, qpn): binary search. */
static u32 shca_mcast_lower(const struct shca_mcast_member *set, u32 n,
			    u16 func, u32 qpn)
{
	u32 lo = 0, hi = n;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (shca_mcast_cmp(&set[mid], func, qpn) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int shca_mcast_find(const struct shca_mcast_member *set, u32 n, u16 func,
		    u32 qpn)
{
	u32 i;

	if ((!set && n) || n > SHCA_MC_MAX_MEMBERS)
		return SHCA_MC_EINVAL;
	i = shca_mcast_lower(set, n, func, qpn);
	if (i < n && !shca_mcast_cmp(&set[i], func, qpn))
		return (int)i;
	return SHCA_MC_ENOENT;
}

int shca_mcast_add(const struct shca_mcast_member *set, u32 n,
		   const struct shca_mcast_member *m,
		   struct shca_mcast_member *out, u32 cap)
{
	u32 i;

	if ((!set && n) || !m || !out || n >= SHCA_MC_MAX_MEMBERS ||
	    (m->flags & ~SHCA_MC_FLAGS))
		return SHCA_MC_EINVAL;
	i = shca_mcast_lower(set, n, m->func, m->qpn);
	if (i < n && !shca_mcast_cmp(&set[i], m->func, m->qpn))
		return SHCA_MC_EEXIST;
	if (cap < n + 1)
		return SHCA_MC_ENOSPC;
	if (i)
		memcpy(out, set, i * sizeof(*set));
	out[i] = *m;
	if (n - i)
		memcpy(out + i + 1, set + i, (n - i) * sizeof(*set));
	return (int)(n + 1);
}

int shca_mcast_del(const struct shca_mcast_member *set, u32 n, u16 func,
		   u32 qpn, struct shca_mcast_member *out, u32 cap)
{
	int i = shca_mcast_find(set, n, func, qpn);

	if (i < 0)
		return i;
	if (n > 1 && !out)
		return SHCA_MC_EINVAL;
	if (cap < n - 1)
		return SHCA_MC_ENOSPC;
	if (i)
		memcpy(out, set, i * sizeof(*set));
	if (n - 1 - i)
		memcpy(out + i, set + i + 1, (n - 1 - i) * sizeof(*set));
	return (int)(n - 1);
}

int shca_mcast_flow_init(struct shca_mcast_flow *f, u32 threshold,
			 u32 credit)
{
	if (!f || !threshold || !credit)
		return SHCA_MC_EINVAL;
	memset(f, 0, sizeof(*f));
	f->threshold = threshold;
	f->credit = credit;
	return 0;
}

int shca_mcast_admit(struct shca_mcast_flow *f)
{
	if (f->pkts >= f->threshold) {
		f->drop_threshold++;
		return SHCA_MC_ENOBUFS;
	}
	f->pkts++;
	f->admitted++;
	return 0;
}

/* Does member @m get a copy of a packet from @src? */
static bool shca_mcast_wants(const struct shca_mcast_member *m,
			     const struct shca_mcast_src *src)
{
	if (m->func < 32 && (src->skip_funcs >> m->func) & 1)
		return false;
	return !(src->local && (m->flags & SHCA_MC_BLOCK_SELF) &&
		 m->func == src->func && m->qpn == src->qpn);
}

/* First member at or after @i that gets a copy, or r->n. */
static u32 shca_mcast_skip(const struct shca_mcast_rep *r, u32 i)
{
	while (i < r->n && !shca_mcast_wants(&r->set[i], &r->src))
		i++;
	return i;
}

void shca_mcast_rep_start(struct shca_mcast_rep *r,
			  const struct shca_mcast_member *set, u32 n,
			  const struct shca_mcast_src *src)
{
	r->set = set;
	r->n = set ? n : 0;
	r->copies = 0;
	r->src = *src;
	r->next = shca_mcast_skip(r, 0);
}

int shca_mcast_rep_next(struct shca_mcast_flow *f, struct shca_mcast_rep *r,
			bool *last)
{
	u32 i = r->next;

	if (i >= r->n)
		return SHCA_MC_ENOENT;
	if (f->descs >= f->credit) {
		f->credit_stalls++;
		return SHCA_MC_EAGAIN;
	}
	/* the member after this one decides whether this copy is the last */
	r->next = shca_mcast_skip(r, i + 1);
	*last = r->next >= r->n;
	r->copies++;
	f->descs++;
	f->copies++;
	return (int)i;
}

int shca_mcast_rep_end(struct shca_mcast_flow *f)
{
	if (!f->pkts)
		return SHCA_MC_EINVAL;
	f->pkts--;
	return 0;
}

int shca_mcast_consumed(struct shca_mcast_flow *f)
{
	if (!f->descs)
		return SHCA_MC_EINVAL;
	f->descs--;
	return 0;
}

int shca_mcast_check_set(const struct shca_mcast_member *set, u32 n)
{
	u32 i;

	if ((!set && n) || n > SHCA_MC_MAX_MEMBERS)
		return SHCA_MC_ECORRUPT;
	for (i = 0; i < n; i++) {
		if (set[i].flags & ~SHCA_MC_FLAGS)
			return SHCA_MC_ECORRUPT;
		if (i && shca_mcast_cmp(&set[i - 1], set[i].func,
					set[i].qpn) >= 0)
			return SHCA_MC_ECORRUPT;
	}
	return 0;
}

int shca_mcast_check_flow(const struct shca_mcast_flow *f)
{
	if (!f->threshold || !f->credit || f->pkts > f->threshold ||
	    f->descs > f->credit || f->copies < f->descs ||
	    f->admitted < f->pkts)
		return SHCA_MC_ECORRUPT;
	return 0;
}
