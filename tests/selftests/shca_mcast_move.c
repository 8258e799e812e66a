// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_mcast_test --move RXDEV TXDEV GOFILE [NQP [MSGS]]: members stay
 * attached while their device's netdev moves into another network
 * namespace.  NQP members on RXDEV join an IPv4 group and get MSGS
 * messages from TXDEV; the program then prints "# ready" and waits for
 * GOFILE to exist (the caller moves RXDEV's netdev meanwhile and gives
 * it its addresses back); the same members, never detached, must then
 * get MSGS more: the device has joined the group's IP address again in
 * the new namespace.  MC_MOVE_PLAN results.
 */
#include <unistd.h>
#include "shca_mcast.h"

static union ibv_gid move_group(void)
{
	union ibv_gid g = { .raw = { [10] = 0xff, [11] = 0xff, 239, 1, 6,
				     1 } };

	return g;
}

/* Wait for @path to exist, at most @ms; true when it does. */
static bool move_wait_go(const char *path, int ms)
{
	double end = now_ms() + ms;

	while (access(path, F_OK)) {
		if (now_ms() > end)
			return false;
		sleep_ms(50);
	}
	return true;
}

/**
 * mc_move - the --move cases
 * @d: d[0] the members' device (its netdev moves), d[1] the sender's
 * @gofile: the file whose existence says the move is done
 * @nqp: members
 * @msgs: messages a round
 */
void mc_move(struct test_dev d[2], const char *gofile, int nqp, int msgs)
{
	union ibv_gid g = move_group();
	struct mc_qps rx = {}, tx = {};
	bool ok;

	ok = !mc_qps_create(&rx, &d[0], nqp, msgs, 0) &&
	     !mc_qps_create(&tx, &d[1], 1, 2 * msgs, 0) &&
	     mc_attach(&rx, &g, 0, nqp, true) == nqp &&
	     mc_round_trip(&tx, 0, d[1].gidx, &g, &rx, 0, nqp, 1100);
	case_result(ok, "members attached before the move get every message once");
	if (!ok) {
		case_result(false, "after the move: not run");
		goto out;
	}
	mc_qps_reset(&rx);
	if (mc_qps_post(&rx, 0, nqp))
		goto fail;
	printf("# ready\n");
	fflush(stdout);
	if (!move_wait_go(gofile, SCALED_MS(120000))) {
		diag("%s never came", gofile);
		goto fail;
	}
	sleep_ms(500);		/* the join reaches the netdev */
	ok = mc_round_trip(&tx, 0, d[1].gidx, &g, &rx, 0, nqp, 1200) &&
	     mc_ctr(&d[0], "mcast_attached") == (unsigned long long)nqp;
	case_result(ok, "the same members get every message once after their netdev moved to another namespace");
	mc_attach(&rx, &g, 0, nqp, false);
	goto out;
fail:
	case_result(false, "the same members get every message once after their netdev moved to another namespace");
out:
	mc_qps_destroy(&rx);
	mc_qps_destroy(&tx);
}
