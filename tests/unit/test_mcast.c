// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of multicast member sets and replication flow control
 * (kernel/mech/shca_mcast.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "shca_mcast.h"

#define CAP	64

static const struct shca_mcast_src remote = { .local = false };

static struct shca_mcast_member mem(u16 func, u32 qpn, u16 flags)
{
	struct shca_mcast_member m = { .qpn = qpn, .func = func,
				       .flags = flags,
				       .cookie = 1000 * func + qpn };

	return m;
}

/* Add (func, qpn) to set[*n], copying through a scratch set. */
static int add(struct shca_mcast_member *set, u32 *n, u16 func, u32 qpn,
	       u16 flags)
{
	struct shca_mcast_member out[CAP], m = mem(func, qpn, flags);
	int ret = shca_mcast_add(set, *n, &m, out, CAP);

	if (ret > 0) {
		memcpy(set, out, ret * sizeof(*out));
		*n = ret;
	}
	return ret;
}

static int del(struct shca_mcast_member *set, u32 *n, u16 func, u32 qpn)
{
	struct shca_mcast_member out[CAP];
	int ret = shca_mcast_del(set, *n, func, qpn, out, CAP);

	if (ret >= 0) {
		memcpy(set, out, ret * sizeof(*out));
		*n = ret;
	}
	return ret;
}

static void test_sets(void)
{
	struct shca_mcast_member set[CAP], out[CAP], m = mem(0, 5, 0);
	u32 n = 0, i, sorted = 1;

	ok_eq(add(set, &n, 1, 7, 0), 1, "add to the empty set");
	ok_eq(add(set, &n, 0, 9, 0), 2, "add a member of function 0");
	ok_eq(add(set, &n, 1, 3, SHCA_MC_BLOCK_SELF), 3,
	      "add a member that blocks its own packets");
	ok_eq(add(set, &n, 0, 2, 0), 4, "add a fourth");
	ok_eq(add(set, &n, 1, 7, SHCA_MC_BLOCK_SELF), SHCA_MC_EEXIST,
	      "adding a member twice is EEXIST, whatever its flags");
	ok_eq(n, 4, "the refused add left the set alone");
	for (i = 1; i < n; i++)
		sorted &= set[i - 1].func < set[i].func ||
			  (set[i - 1].func == set[i].func &&
			   set[i - 1].qpn < set[i].qpn);
	ok(sorted && set[0].qpn == 2 && set[3].qpn == 7,
	   "the set is sorted by function, then QPN");
	ok_eq(shca_mcast_check_set(set, n), 0, "the set passes its check");
	ok_eq(shca_mcast_find(set, n, 1, 3), 2, "find (1, 3)");
	ok_eq(shca_mcast_find(set, n, 0, 3), SHCA_MC_ENOENT,
	      "same QPN, other function: not a member");
	ok_eq(shca_mcast_find(set, n, 2, 0), SHCA_MC_ENOENT,
	      "find past the end");
	ok_eq(shca_mcast_add(set, n, &m, out, n), SHCA_MC_ENOSPC,
	      "add into too small a set is ENOSPC");
	m.flags = 0x80;
	ok_eq(shca_mcast_add(set, n, &m, out, CAP), SHCA_MC_EINVAL,
	      "unknown flags are EINVAL");
	ok_eq(shca_mcast_add(NULL, 1, &m, out, CAP), SHCA_MC_EINVAL,
	      "a NULL set with members is EINVAL");
	ok_eq(del(set, &n, 0, 3), SHCA_MC_ENOENT,
	      "removing a non-member is ENOENT");
	ok_eq(shca_mcast_del(set, n, 0, 9, out, 2), SHCA_MC_ENOSPC,
	      "remove into too small a set is ENOSPC");
	ok_eq(shca_mcast_del(set, n, 0, 9, NULL, 0), SHCA_MC_EINVAL,
	      "remove into no memory with members left is EINVAL");
	ok_eq(del(set, &n, 0, 9), 3, "remove (0, 9)");
	ok(shca_mcast_find(set, n, 0, 9) == SHCA_MC_ENOENT &&
	   shca_mcast_find(set, n, 1, 7) == 2 &&
	   shca_mcast_check_set(set, n) == 0,
	   "the rest is still there, sorted");
	ok(set[0].cookie == 2 && set[1].cookie == 1003 &&
	   set[1].flags == SHCA_MC_BLOCK_SELF && set[2].cookie == 1007,
	   "each member kept its flags and cookie");
	ok_eq(del(set, &n, 0, 2), 2, "remove the first");
	ok_eq(del(set, &n, 1, 7), 1, "remove the last");
	ok_eq(shca_mcast_del(set, n, 1, 3, NULL, 0), 0,
	      "removing the only member needs no memory");
	set[0] = mem(1, 4, 0);
	set[1] = mem(1, 4, 0);
	ok_eq(shca_mcast_check_set(set, 2), SHCA_MC_ECORRUPT,
	      "check finds a duplicate");
	set[1] = mem(0, 9, 0);
	ok_eq(shca_mcast_check_set(set, 2), SHCA_MC_ECORRUPT,
	      "check finds members out of order");
	set[1] = mem(1, 5, 4);
	ok_eq(shca_mcast_check_set(set, 2), SHCA_MC_ECORRUPT,
	      "check finds unknown flags");
}

static void test_admit(void)
{
	struct shca_mcast_flow f;

	ok_eq(shca_mcast_flow_init(&f, 0, 4), SHCA_MC_EINVAL,
	      "a zero threshold is EINVAL");
	ok_eq(shca_mcast_flow_init(&f, 4, 0), SHCA_MC_EINVAL,
	      "a zero credit is EINVAL");
	ok_eq(shca_mcast_flow_init(&f, 2, 4), 0, "init");
	ok(shca_mcast_admit(&f) == 0 && shca_mcast_admit(&f) == 0,
	   "two packets are admitted below the threshold of 2");
	ok_eq(shca_mcast_admit(&f), SHCA_MC_ENOBUFS,
	      "the third is refused at the threshold");
	ok(f.drop_threshold == 1 && f.pkts == 2 && f.admitted == 2,
	   "and counted as a threshold drop");
	ok_eq(shca_mcast_rep_end(&f), 0, "one packet leaves replication");
	ok_eq(shca_mcast_admit(&f), 0, "then the next is admitted");
	ok(shca_mcast_rep_end(&f) == 0 && shca_mcast_rep_end(&f) == 0,
	   "both leave");
	ok_eq(shca_mcast_rep_end(&f), SHCA_MC_EINVAL,
	      "ending with nothing in replication is EINVAL");
	ok_eq(shca_mcast_consumed(&f), SHCA_MC_EINVAL,
	      "returning credit never taken is EINVAL");
	ok_eq(shca_mcast_check_flow(&f), 0, "the flow state is consistent");
}

/*
 * Replicate one packet to a set with a payload reference count (PRC)
 * model: it starts at 1, a copy that is not last adds one, each consumed
 * copy drops one.  Records which members got a copy.
 */
static void test_replicate(void)
{
	struct shca_mcast_member set[CAP];
	struct shca_mcast_flow f;
	struct shca_mcast_rep r;
	int got[CAP] = { 0 }, idx, prc = 1, lasts = 0, stalls = 0, i;
	bool last, early_zero = false;
	u32 n = 0, copies = 0;

	for (i = 0; i < 10; i++)
		add(set, &n, i % 2, 100 + i, 0);
	shca_mcast_flow_init(&f, 4, 3);
	shca_mcast_admit(&f);
	shca_mcast_rep_start(&r, set, n, &remote);
	for (i = 0; i < 100; i++) {
		idx = shca_mcast_rep_next(&f, &r, &last);
		if (idx == SHCA_MC_ENOENT)
			break;
		if (idx == SHCA_MC_EAGAIN) {
			/* the pipeline consumes one copy: credit returns */
			stalls++;
			shca_mcast_consumed(&f);
			prc--;
			early_zero |= prc == 0;
			continue;
		}
		got[idx]++;
		copies++;
		if (last)
			lasts++;
		else
			prc++;
	}
	ok_eq(copies, 10, "ten members, ten copies");
	ok_eq(lasts, 1, "exactly one copy is marked last");
	ok(!early_zero, "the payload count never reached 0 early");
	for (i = 0; i < (int)n; i++)
		if (got[i] != 1)
			break;
	ok_eq(i, (int)n, "every member got one copy");
	ok(stalls > 0 && f.credit_stalls == (u64)stalls,
	   "a credit of 3 stalled the stage, and it resumed each time");
	ok(f.descs <= f.credit && shca_mcast_check_flow(&f) == 0,
	   "descriptors in flight stayed within the credit");
	while (f.descs) {
		shca_mcast_consumed(&f);
		prc--;
	}
	ok_eq(prc, 0, "the payload is freed when the last copy is consumed");
	ok_eq(shca_mcast_rep_end(&f), 0, "the packet leaves replication");
	ok_eq(f.copies, 10, "copies counted");
}

/* Copies of a packet a local QP sent, to a set it may be a member of. */
static int copies_for(const struct shca_mcast_member *set, u32 n,
		      const struct shca_mcast_src *src, int *lasts)
{
	struct shca_mcast_flow f;
	struct shca_mcast_rep r;
	int c = 0, idx;
	bool last;

	*lasts = 0;
	shca_mcast_flow_init(&f, 1, 1000);
	shca_mcast_admit(&f);
	shca_mcast_rep_start(&r, set, n, src);
	while ((idx = shca_mcast_rep_next(&f, &r, &last)) >= 0) {
		c++;
		*lasts += last;
	}
	return idx == SHCA_MC_ENOENT ? c : -1;
}

static void test_block_self(void)
{
	struct shca_mcast_member set[CAP];
	struct shca_mcast_src src = { .local = true, .func = 1, .qpn = 20 };
	u32 n = 0;
	int lasts;

	add(set, &n, 0, 20, SHCA_MC_BLOCK_SELF);
	add(set, &n, 1, 10, 0);
	add(set, &n, 1, 20, SHCA_MC_BLOCK_SELF);
	ok(copies_for(set, n, &src, &lasts) == 2 && lasts == 1,
	   "the blocking sender is skipped, though it sorts last; one last");
	src.qpn = 10;
	ok(copies_for(set, n, &src, &lasts) == 3 && lasts == 1,
	   "a sender that does not block gets its copy");
	src.local = false;
	src.qpn = 20;
	ok(copies_for(set, n, &src, &lasts) == 3,
	   "a remote packet goes to every member");
	n = 0;
	add(set, &n, 1, 20, SHCA_MC_BLOCK_SELF);
	src.local = true;
	ok(copies_for(set, n, &src, &lasts) == 0 && lasts == 0,
	   "the sender alone: no copy, the payload stays the caller's");
	ok(copies_for(set, 0, &src, &lasts) == 0 &&
	   copies_for(NULL, 5, &src, &lasts) == 0,
	   "an empty or absent set: no copy");
}

/* A packet arrives for some functions: the others' members get nothing. */
static void test_skip_funcs(void)
{
	struct shca_mcast_member set[CAP];
	struct shca_mcast_src src = { .local = false };
	u32 n = 0;
	int lasts;

	add(set, &n, 0, 20, 0);
	add(set, &n, 1, 10, 0);
	add(set, &n, 1, 30, 0);
	add(set, &n, 2, 5, 0);
	add(set, &n, 40, 7, 0);
	src.skip_funcs = 1u << 1;
	ok(copies_for(set, n, &src, &lasts) == 3 && lasts == 1,
	   "members of a skipped function get no copy");
	src.skip_funcs = (1u << 2) | 1u;
	ok(copies_for(set, n, &src, &lasts) == 3 && lasts == 1,
	   "skipping the last function moves the last mark back");
	src.skip_funcs = 0xffffffffu;
	ok(copies_for(set, n, &src, &lasts) == 1 && lasts == 1,
	   "a function past the mask is never skipped");
	n = 0;
	add(set, &n, 3, 9, 0);
	src.skip_funcs = 1u << 3;
	ok(copies_for(set, n, &src, &lasts) == 0 && lasts == 0,
	   "every member skipped: no copy, the payload stays the caller's");
	src.local = true;
	src.func = 1;
	src.qpn = 9;
	src.skip_funcs = 0;
	add(set, &n, 1, 9, SHCA_MC_BLOCK_SELF);
	ok(copies_for(set, n, &src, &lasts) == 1 && lasts == 1,
	   "blocking and skipping combine");
}

int main(void)
{
	tap_start();
	test_sets();
	test_admit();
	test_replicate();
	test_block_self();
	test_skip_funcs();
	return tap_done();
}
