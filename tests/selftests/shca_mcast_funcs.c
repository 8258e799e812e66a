// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_mcast_test --funcs: one group with members on two functions (two
 * shca devices sharing one netdev's engine), a sender on another host.
 * Every member of both functions gets every message once; the engine
 * receives each packet once (mcast_rx_pkts, summed over the functions)
 * and each function counts the copies its own members got.  Then a member
 * of the second function sends: the members of both functions on this
 * host get it, through the engine.
 */
#include "shca_mcast.h"

static union ibv_gid funcs_group(void)
{
	union ibv_gid g = { .raw = { [10] = 0xff, [11] = 0xff, 239, 1, 2,
				     10 } };

	return g;
}

/* Collect @msgs messages from @src at every QP of @a and @b. */
static bool collect_both(struct mc_qps *a, struct mc_qps *b, uint32_t src,
			 int msgs, uint32_t seed)
{
	int ga = mc_collect(a, a->n * msgs, src, seed, SCALED_MS(20000));
	int gb = mc_collect(b, b->n * msgs, src, seed, SCALED_MS(20000));

	if (ga != a->n * msgs || gb != b->n * msgs)
		diag("completions: %d of %d on %s, %d of %d on %s", ga,
		     a->n * msgs, a->d->name, gb, b->n * msgs, b->d->name);
	return ga == a->n * msgs && gb == b->n * msgs &&
	       mc_all_once(a, 0, a->n) && mc_all_once(b, 0, b->n);
}

/* The counters after a remote sender's @msgs messages. */
static bool counted(const struct test_dev *f0, const struct test_dev *f1,
		    const unsigned long long c0[4], int n0, int n1, int msgs)
{
	unsigned long long rx = mc_ctr(f0, "mcast_rx_pkts") - c0[0] +
				mc_ctr(f1, "mcast_rx_pkts") - c0[1];
	unsigned long long cp0 = mc_ctr(f0, "mcast_copies") - c0[2];
	unsigned long long cp1 = mc_ctr(f1, "mcast_copies") - c0[3];

	diag("mcast_rx_pkts +%llu (both), mcast_copies +%llu on %s, +%llu on %s",
	     rx, cp0, f0->name, cp1, f1->name);
	return rx == (unsigned long long)msgs &&
	       cp0 == (unsigned long long)n0 * msgs &&
	       cp1 == (unsigned long long)n1 * msgs;
}

/**
 * mc_funcs - the --funcs cases
 * @d: d[0] and d[2] the two functions of one netdev (receivers), d[1] the
 *	sender's device on another host
 * @nqp: members in all, split between the functions
 * @msgs: messages a round
 *
 * FUNCS_PLAN results.
 */
void mc_funcs(struct test_dev d[3], int nqp, int msgs)
{
	union ibv_gid g = funcs_group();
	struct mc_qps a = {}, b = {}, tx = {};
	int n0 = nqp / 2, n1 = nqp - n0;
	unsigned long long c0[4];
	bool ok;

	ok = !mc_qps_create(&a, &d[0], n0, msgs, 0) &&
	     !mc_qps_create(&b, &d[2], n1, msgs, 0) &&
	     !mc_qps_create(&tx, &d[1], 1, msgs, 0) &&
	     mc_attach(&a, &g, 0, n0, true) == n0 &&
	     mc_attach(&b, &g, 0, n1, true) == n1 &&
	     mc_ctr(&d[0], "mcast_attached") == (unsigned long long)n0 &&
	     mc_ctr(&d[2], "mcast_attached") == (unsigned long long)n1;
	case_result(ok, "members on two functions of one engine attached, each function counts its own");
	if (!ok) {
		case_result(false, "a remote sender's messages: not run, no members");
		case_result(false, "counters: not run, no members");
		case_result(false, "a member sends: not run, no members");
		goto out;
	}

	c0[0] = mc_ctr(&d[0], "mcast_rx_pkts");
	c0[1] = mc_ctr(&d[2], "mcast_rx_pkts");
	c0[2] = mc_ctr(&d[0], "mcast_copies");
	c0[3] = mc_ctr(&d[2], "mcast_copies");
	ok = !mc_send(&tx, 0, &g, d[1].gidx, msgs, 700) &&
	     collect_both(&a, &b, tx.qp[0]->qp_num, msgs, 700);
	case_result(ok, "a remote sender's messages reach every member of both functions once");
	case_result(counted(&d[0], &d[2], c0, n0, n1, msgs),
			       "the engine received each packet once; each function counted its members' copies");

	/* a member of the second function sends to its own group */
	mc_qps_reset(&a);
	mc_qps_reset(&b);
	ok = !mc_qps_post(&a, 0, n0) && !mc_qps_post(&b, 0, n1) &&
	     !mc_send(&b, 0, &g, d[2].gidx, msgs, 800) &&
	     collect_both(&a, &b, b.qp[0]->qp_num, msgs, 800);
	case_result(ok, "a member of one function sends: the members of both get it once, itself included");
	mc_attach(&a, &g, 0, n0, false);
	mc_attach(&b, &g, 0, n1, false);
out:
	mc_qps_destroy(&a);
	mc_qps_destroy(&b);
	mc_qps_destroy(&tx);
}
