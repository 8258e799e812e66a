// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_mcast_test - UD multicast through ibv_attach_mcast between two
 * devices (usually on two namespaces of the test VM joined by a veth),
 * every message checked in every member QP.
 *
 *   shca_mcast_test RXDEV TXDEV [NQP [MSGS]]
 *   shca_mcast_test --storm RXDEV TXDEV	(shca_mcast_storm.c)
 *   shca_mcast_test --rate RXDEV TXDEV [NQP [MSGS]]
 *					(shca_mcast_rate.c: a measurement)
 *   shca_mcast_test --funcs RXDEV RXDEV2 TXDEV [NQP [MSGS]]
 *					(shca_mcast_funcs.c: RXDEV and
 *					RXDEV2 share one engine)
 *   shca_mcast_test --move RXDEV TXDEV GOFILE [NQP [MSGS]]
 *					(shca_mcast_move.c: RXDEV's
 *					netdev moves meanwhile)
 *
 * NQP receivers on RXDEV (default 16) join an IPv4 group and a UD QP of
 * TXDEV sends MSGS messages (default 8) to it; then half of them leave;
 * a sender posts and at once destroys its AH and QP (as mckey's does);
 * QPs of RXDEV send to a group they are members of themselves (one
 * created with IBV_QP_CREATE_BLOCK_SELF_MCAST_LB); an IPv6 group; the
 * bad calls; attach, detach and destroy racing a flood of the group's
 * packets; and a process that exits with QPs attached.  TAP output, exit 0 when every case passed.
 */
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/wait.h>
#include "shca_mcast.h"

#define PLAN	14

static union ibv_gid group_v4(uint8_t last)
{
	union ibv_gid g = { .raw = { [10] = 0xff, [11] = 0xff, 239, 1, 2,
				     last } };

	return g;
}

static union ibv_gid group_v6(uint8_t last)
{
	union ibv_gid g = { .raw = { 0xff, 0x0e, [13] = 1, [15] = last } };

	return g;
}

static void limits(const struct test_dev d[2], int nqp)
{
	int i, ok = 1;

	for (i = 0; i < 2; i++) {
		diag("%s: max_mcast_grp %d max_mcast_qp_attach %d max_total_mcast_qp_attach %d",
		     d[i].name, d[i].attr.max_mcast_grp,
		     d[i].attr.max_mcast_qp_attach,
		     d[i].attr.max_total_mcast_qp_attach);
		ok &= d[i].attr.max_mcast_grp >= 8192 &&
		      d[i].attr.max_mcast_qp_attach >= 1024 &&
		      d[i].attr.max_total_mcast_qp_attach >= nqp;
	}
	case_result(ok, "multicast limits reported: 8192 groups, 1024 QPs a group");
}

/* The calls that must fail, on QP 0 of @r (attached to @g). */
static void bad_calls(const struct test_dev *d, struct mc_qps *r,
		      const union ibv_gid *g)
{
	union ibv_gid uni = d->gid, other = group_v4(99);
	struct qp_spec spec = qp_spec_simple(4, 2);
	struct ibv_cq *scq = NULL, *rcq = NULL;
	struct ibv_qp *rc;
	int e1, e2, e3, e4, dbl;

	e1 = ibv_attach_mcast(r->qp[0], &uni, 0);
	e2 = ibv_detach_mcast(r->qp[0], &other, 0);
	rc = qp_create(d, &spec, &scq, &rcq);
	e3 = rc ? ibv_attach_mcast(rc, g, 0) : -1;
	qp_cqs_destroy(rc, scq, rcq, d->name);
	/* a second attach changes nothing; one detach undoes both */
	dbl = !ibv_attach_mcast(r->qp[0], g, 0) &&
	      mc_ctr(d, "mcast_attached") == (unsigned long long)r->n &&
	      !ibv_detach_mcast(r->qp[0], g, 0) &&
	      mc_ctr(d, "mcast_attached") == (unsigned long long)r->n - 1 &&
	      !ibv_attach_mcast(r->qp[0], g, 0);
	e4 = ibv_attach_mcast(r->qp[0], &other, 0) ||
	     ibv_detach_mcast(r->qp[0], &other, 0);
	diag("unicast GID %d, not attached %d, RC QP %d", e1, e2, e3);
	case_result(e1 && e2 && e3 && dbl && !e4,
		    "refused: a unicast GID, a group not attached, an RC QP; a second attach changes nothing, one detach undoes it");
}

static void loopback(const struct test_dev *d, int msgs)
{
	union ibv_gid g = group_v4(6);
	struct mc_qps blk = {}, nrm = {};
	bool ok;

	ok = !mc_qps_create(&blk, d, 1, msgs,
			    IBV_QP_CREATE_BLOCK_SELF_MCAST_LB) &&
	     !mc_qps_create(&nrm, d, 2, msgs, 0) &&
	     mc_attach(&blk, &g, 0, 1, true) == 1 &&
	     mc_attach(&nrm, &g, 0, 2, true) == 2;
	/* the blocking QP sends: both others get it, it does not */
	ok = ok && mc_round_trip(&blk, 0, d->gidx, &g, &nrm, 0, 2, 300) &&
	     mc_collect(&blk, 0, 0, 0, 0) == 0;
	case_result(ok, "a QP with BLOCK_SELF_MCAST_LB sends to its group: the two other members get each message once, it gets none");
	/* a QP without the flag gets its own messages, as does the other */
	mc_qps_reset(&nrm);
	ok = ok && !mc_qps_post(&nrm, 0, 2) &&
	     mc_round_trip(&nrm, 0, d->gidx, &g, &nrm, 0, 2, 400) &&
	     mc_collect(&blk, msgs, nrm.qp[0]->qp_num, 400,
			SCALED_MS(10000)) == msgs && mc_all_once(&blk, 0, 1);
	case_result(ok, "a QP without the flag gets its own messages; the blocking one gets the other's");
	mc_attach(&blk, &g, 0, blk.n, false);
	mc_attach(&nrm, &g, 0, nrm.n, false);
	mc_qps_destroy(&blk);
	mc_qps_destroy(&nrm);
}

static void ipv6_group(struct test_dev d[2], struct mc_qps *tx, int msgs)
{
	int g6rx = find_v6_gid(d[0].ctx), g6tx = find_v6_gid(d[1].ctx);
	union ibv_gid g = group_v6(7);
	struct mc_qps r6 = {};
	bool ok;

	if (g6rx < 0 || g6tx < 0) {
		case_result(true, "IPv6 group # SKIP no IPv6 GID");
		return;
	}
	ok = !mc_qps_create(&r6, &d[0], 2, msgs, 0) &&
	     mc_attach(&r6, &g, 0, 2, true) == 2 &&
	     mc_round_trip(tx, 0, g6tx, &g, &r6, 0, 2, 500);
	case_result(ok, "IPv6 group ff0e::1:7: two members get each message once");
	mc_attach(&r6, &g, 0, r6.n, false);
	mc_qps_destroy(&r6);
}

/* Membership changes racing a flood of the group's packets. */
static void race(const struct test_dev d[2], struct mc_qps *tx)
{
	unsigned long long att = mc_ctr(&d[0], "mcast_attached");
	unsigned long long grp = mc_ctr(&d[0], "mcast_groups");
	union ibv_gid g = group_v4(9);
	struct mc_qps r = {};
	bool ok;

	ok = !mc_qps_create(&r, &d[0], 16, 8, 0) &&
	     !mc_race(&r, tx, &g, d[1].gidx, 2000, SCALED_MS(30000));
	mc_qps_destroy(&r);
	/* the other groups' members are still there */
	ok = ok && mc_ctr(&d[0], "mcast_attached") == att &&
	     mc_ctr(&d[0], "mcast_groups") == grp;
	case_result(ok, "attach, detach, destroy and the group's removal racing 2000 packets: every call succeeds, nothing of it left");
}

/* A process that exits with QPs attached leaves nothing behind. */
static void exit_attached(const struct test_dev *d, int msgs)
{
	union ibv_gid g = group_v4(8), g6 = group_v6(8);
	int status = -1;
	pid_t pid;
	bool ok;

	fflush(stdout);
	pid = fork();
	if (!pid) {
		struct test_dev c = { .name = d->name, .gidx = -1 };
		struct mc_qps s = {};

		/* attached to two groups, then gone without a word */
		if (tdev_open(&c) || mc_qps_create(&s, &c, 4, msgs, 0) ||
		    mc_attach(&s, &g, 0, 4, true) != 4 ||
		    mc_attach(&s, &g6, 0, 2, true) != 2)
			_exit(1);
		_exit(mc_ctr(&c, "mcast_attached") == 6 ? 0 : 1);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	ok = pid > 0 && WIFEXITED(status) && !WEXITSTATUS(status) &&
	     mc_ctr(d, "mcast_attached") == 0 && mc_ctr(d, "mcast_groups") == 0;
	case_result(ok, "a process that exits with 6 attachments in 2 groups leaves none");
}

/* --rate RXDEV TXDEV [NQP [MSGS]]: one "# rate:" line, exit 0 if it ran */
static int rate_main(int argc, char **argv)
{
	struct test_dev d[2] = { { .gidx = -1 }, { .gidx = -1 } };
	int nqp = argc > 4 ? atoi(argv[4]) : 56;
	int msgs = argc > 5 ? atoi(argv[5]) : 500;
	int rc;

	if (nqp < 1 || msgs < 1)
		return 2;
	d[0].name = argv[2];
	d[1].name = argv[3];
	rc = tdev_open_pair(d);
	if (rc)
		return rc;
	rc = mc_rate(d, nqp, msgs) ? KSFT_FAIL : KSFT_PASS;
	tdev_close(&d[0]);
	tdev_close(&d[1]);
	return rc;
}

/* --funcs RXDEV RXDEV2 TXDEV [NQP [MSGS]] */
static int funcs_main(int argc, char **argv)
{
	struct test_dev d[3] = { { .gidx = -1 }, { .gidx = -1 },
				 { .gidx = -1 } };
	int nqp = argc > 5 ? atoi(argv[5]) : 16;
	int msgs = argc > 6 ? atoi(argv[6]) : 8;
	int rc;

	if (nqp < 2 || msgs < 1)
		return 2;
	d[0].name = argv[2];
	d[2].name = argv[3];
	d[1].name = argv[4];
	printf("TAP version 13\n1..%d\n", MC_FUNCS_PLAN);
	rc = tdev_open_pair(d);
	if (!rc)
		rc = tdev_open(&d[2]);
	if (rc)
		return tap_skip_all(MC_FUNCS_PLAN, rc, d);
	mc_funcs(d, nqp, msgs);
	tdev_close(&d[2]);
	tdev_close(&d[0]);
	tdev_close(&d[1]);
	return n_failed ? KSFT_FAIL : KSFT_PASS;
}

/* --move RXDEV TXDEV GOFILE [NQP [MSGS]] */
static int move_main(int argc, char **argv)
{
	struct test_dev d[2] = { { .gidx = -1 }, { .gidx = -1 } };
	int nqp = argc > 5 ? atoi(argv[5]) : 8;
	int msgs = argc > 6 ? atoi(argv[6]) : 4;
	int rc;

	if (nqp < 1 || msgs < 1)
		return 2;
	d[0].name = argv[2];
	d[1].name = argv[3];
	printf("TAP version 13\n1..%d\n", MC_MOVE_PLAN);
	rc = tdev_open_pair(d);
	if (rc)
		return tap_skip_all(MC_MOVE_PLAN, rc, d);
	mc_move(d, argv[4], nqp, msgs);
	tdev_close(&d[0]);
	tdev_close(&d[1]);
	return n_failed ? KSFT_FAIL : KSFT_PASS;
}

int main(int argc, char **argv)
{
	struct test_dev d[2] = { { .gidx = -1 }, { .gidx = -1 } };
	int nqp = argc > 3 ? atoi(argv[3]) : 16;
	int msgs = argc > 4 ? atoi(argv[4]) : 8;
	union ibv_gid g = group_v4(5);
	unsigned long long c0[6];
	struct mc_qps rx = {}, tx = {}, tx2 = {};
	uint32_t src2;
	int rc, half = nqp / 2;
	bool ok;

	if (argc > 3 && !strcmp(argv[1], "--storm")) {
		d[0].name = argv[2];
		d[1].name = argv[3];
		printf("TAP version 13\n1..1\n");
		rc = tdev_open_pair(d);
		if (rc)
			return tap_skip_all(1, rc, d);
		rc = mc_storm(d);
		tdev_close(&d[0]);
		tdev_close(&d[1]);
		return rc ? KSFT_FAIL : KSFT_PASS;
	}
	if (argc > 4 && !strcmp(argv[1], "--funcs"))
		return funcs_main(argc, argv);
	if (argc > 3 && !strcmp(argv[1], "--rate"))
		return rate_main(argc, argv);
	if (argc > 4 && !strcmp(argv[1], "--move"))
		return move_main(argc, argv);
	if (argc < 3 || nqp < 2 || msgs < 1) {
		fprintf(stderr, "usage: %s RXDEV TXDEV [NQP [MSGS]]\n"
			"       %s --storm RXDEV TXDEV\n"
			"       %s --funcs RXDEV RXDEV2 TXDEV [NQP [MSGS]]\n"
			"       %s --rate RXDEV TXDEV [NQP [MSGS]]\n"
			"       %s --move RXDEV TXDEV GOFILE [NQP [MSGS]]\n",
			argv[0], argv[0], argv[0], argv[0], argv[0]);
		return 2;
	}
	d[0].name = argv[1];
	d[1].name = argv[2];
	printf("TAP version 13\n1..%d\n", PLAN);
	rc = tdev_open_pair(d);
	if (rc)
		return tap_skip_all(PLAN, rc, d);
	limits(d, nqp);

	ok = !mc_qps_create(&rx, &d[0], nqp, msgs, 0) &&
	     !mc_qps_create(&tx, &d[1], 1, msgs, 0);
	case_result(ok, "receivers and a sender created");
	if (!ok)
		return 1;
	ok = mc_attach(&rx, &g, 0, nqp, true) == nqp &&
	     mc_ctr(&d[0], "mcast_attached") == (unsigned long long)nqp &&
	     mc_ctr(&d[0], "mcast_groups") == 1;
	case_result(ok, "every receiver attached to 239.1.2.5 (mcast_attached, mcast_groups)");
	bad_calls(&d[0], &rx, &g);

	c0[0] = mc_ctr(&d[0], "rx_pkts");
	c0[1] = mc_ctr(&d[0], "mcast_rx_pkts");
	c0[2] = mc_ctr(&d[0], "mcast_copies");
	c0[3] = mc_ctr(&d[0], "payload_copy_bytes");
	c0[4] = mc_ctr(&d[1], "mcast_tx_pkts");
	c0[5] = mc_ctr(&d[0], "mcast_drop_queue") +
		mc_ctr(&d[0], "mcast_drop_threshold");
	ok = mc_round_trip(&tx, 0, d[1].gidx, &g, &rx, 0, nqp, 100);
	case_result(ok, "every message reaches every member once, payload intact");
	ok = mc_ctr(&d[0], "rx_pkts") - c0[0] == (unsigned long long)msgs &&
	     mc_ctr(&d[0], "mcast_rx_pkts") - c0[1] == (unsigned long long)msgs &&
	     mc_ctr(&d[0], "mcast_copies") - c0[2] ==
		(unsigned long long)nqp * msgs &&
	     mc_ctr(&d[0], "payload_copy_bytes") - c0[3] ==
		(unsigned long long)nqp * msgs * MC_SLOT &&
	     mc_ctr(&d[1], "mcast_tx_pkts") - c0[4] == (unsigned long long)msgs &&
	     mc_ctr(&d[0], "mcast_drop_queue") +
		mc_ctr(&d[0], "mcast_drop_threshold") == c0[5];
	if (!ok)
		diag("rx_pkts +%llu mcast_rx_pkts +%llu mcast_copies +%llu payload_copy_bytes +%llu mcast_tx_pkts +%llu",
		     mc_ctr(&d[0], "rx_pkts") - c0[0],
		     mc_ctr(&d[0], "mcast_rx_pkts") - c0[1],
		     mc_ctr(&d[0], "mcast_copies") - c0[2],
		     mc_ctr(&d[0], "payload_copy_bytes") - c0[3],
		     mc_ctr(&d[1], "mcast_tx_pkts") - c0[4]);
	case_result(ok, "counters: one packet received per message, one copy per member, each byte copied once per member");

	mc_qps_reset(&rx);
	ok = mc_attach(&rx, &g, half, nqp, false) == nqp - half &&
	     !mc_qps_post(&rx, 0, half) &&
	     mc_round_trip(&tx, 0, d[1].gidx, &g, &rx, 0, half, 200);
	case_result(ok, "after half the members detach, only the rest receive");

	/* a sender that posts, destroys its AH and its QP at once */
	mc_qps_reset(&rx);
	ok = !mc_qps_post(&rx, 0, half) &&
	     !mc_qps_create(&tx2, &d[1], 1, msgs, 0);
	src2 = ok ? tx2.qp[0]->qp_num : 0;
	ok = ok && !mc_send_and_go(&tx2, 0, &g, d[1].gidx, msgs, 250);
	ok = ok && mc_collect(&rx, half * msgs, src2, 250,
			      SCALED_MS(10000)) == half * msgs &&
	     mc_all_once(&rx, 0, half);
	case_result(ok, "sends posted right before their AH and QP are destroyed all arrive");
	mc_qps_destroy(&tx2);

	loopback(&d[0], msgs);
	ipv6_group(d, &tx, msgs);
	race(d, &tx);

	/* the RDMA core refuses to destroy a QP a process left attached */
	ok = ibv_destroy_qp(rx.qp[0]) == EBUSY &&
	     mc_attach(&rx, &g, 0, half, false) == half;
	mc_qps_destroy(&rx);
	mc_qps_destroy(&tx);
	ok = ok && mc_ctr(&d[0], "mcast_attached") == 0 &&
	     mc_ctr(&d[0], "mcast_groups") == 0 &&
	     mc_ctr(&d[1], "mcast_attached") == 0;
	case_result(ok, "an attached QP cannot be destroyed (EBUSY); detached it can; no group or attachment left");
	exit_attached(&d[0], msgs);
	tdev_close(&d[0]);
	tdev_close(&d[1]);
	return n_failed ? KSFT_FAIL : KSFT_PASS;
}
