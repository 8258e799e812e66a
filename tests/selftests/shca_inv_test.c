// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_inv_test: an invalidation fences the RDMA in flight (seed 003).
 *
 *   shca_inv_test [-t FILTER[,FILTER...]] [-n TRIES]
 *                 [-m timing|hold|all] [-l] OWNER GIDX PEER GIDX
 *
 * OWNER, an shca device, owns target memory that PEER (shca or rdma_rxe)
 * reads or writes with one large multi-packet RDMA READ or WRITE, through
 * a type 1 window, a type 2 window or a plain MR.  While the transfer
 * runs, OWNER takes the memory back: LOCAL_INV on the QP the transfer
 * uses or on another one, SEND_WITH_INV from the peer on another
 * connection, window deallocation, rebind (through either QP), MR
 * deregistration or re-registration without remote rights.  The moment
 * the invalidation has completed (its completion polled, or the verb
 * returned):
 *   - WRITE: the target is snapshotted; once the WRITE has ended, not
 *     one byte of the target may differ from the snapshot;
 *   - READ: OWNER overwrites the target with the complement of what it
 *     held; not one overwritten byte may reach the reader.
 * The peer's transfer ends with success (then every byte was moved
 * before the invalidation completed) or a remote access error.
 *
 * Mode "timing" invalidates after a random delay within the transfer's
 * measured duration, TRIES times per case.  Mode "hold" uses the
 * driver's fault injection (debugfs shca/fault/) to stop one packet of
 * the transfer between its R_Key slot check and its copy ("copy"), or a
 * built READ response before it leaves ("xmit"), and invalidates while
 * it is held: a "copy" hold must end before the invalidation completes
 * (the fence), an "xmit" hold is still on when an invalidation that does
 * not need the transfer's QP completes.
 *
 * The read_queued cases post a 64 KiB READ of other memory first and
 * hold its last response ("xmit"): the large READ is accepted but none
 * of its responses is built when the invalidation completes, and it must
 * fail with a remote access error.  That is the race rdma_rxe as the
 * reader can take: its completer treats any NAK that arrives after a
 * READ's first response as the end of the READ, completes it as
 * successful with part of its data and WARNs (rxe_comp.c, check_ack()),
 * so with rxe as PEER only the write_ and read_queued cases are run.
 *
 * Last, the refusals: a stale key generation, and remote invalidation of
 * a type 1 window, each moving its counter on OWNER.
 *
 * One process drives both devices.  Prints TAP 13; exits 0 when every
 * case passes, 1 when one fails, 4 when the devices are missing.
 *
 * This file holds the cases, the refusals and main(); the race is in
 * shca_inv_race.c, its building blocks in shca_inv_lib.c.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "shca_inv.h"

/* ------------------------------------------------------------------ */
/* the cases                                                            */

static struct tcase cases[64];
static unsigned int ncases;

static void add_case(enum op op, enum tgt tgt, enum inv inv)
{
	struct tcase *tc = &cases[ncases++];

	tc->op = op;
	tc->tgt = tgt;
	tc->inv = inv;
	snprintf(tc->name, sizeof(tc->name), "%s_%s_%s", op_name[op],
		 tgt_name[tgt], inv_name[inv]);
}

static void build_cases(void)
{
	static const struct { enum tgt t; enum inv i; } combos[] = {
		{ T_MW2, I_LINV_SAME }, { T_MW2, I_LINV_OTHER },
		{ T_MW2, I_SINV }, { T_MW2, I_DEALLOC },
		{ T_MW1, I_REBIND_SAME }, { T_MW1, I_REBIND_OTHER },
		{ T_MW1, I_DEALLOC }, { T_MR, I_DEREG }, { T_MR, I_REREG },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(combos); i++) {
		add_case(OP_WRITE, combos[i].t, combos[i].i);
		add_case(OP_READ, combos[i].t, combos[i].i);
		if (combos[i].i != I_LINV_SAME &&
		    combos[i].i != I_REBIND_SAME)
			add_case(OP_READ_QUEUED, combos[i].t, combos[i].i);
	}
}

/*
 * An "xmit" hold is meaningful when the invalidation needs no lock of
 * QP a (the held response holds it).
 */
static bool xmit_applies(const struct tcase *tc)
{
	return tc->op != OP_WRITE && tc->inv != I_LINV_SAME &&
	       tc->inv != I_REBIND_SAME;
}

/*
 * Hold tries: retried when the hold ran on our CPU, or ended before the
 * invalidation got in (a vCPU descheduled on a busy host), each retry
 * with twice the hold, up to the module's limit.
 */
static void hold_tries(struct rig *r, enum hold h, const char *what)
{
	int attempt;

	r->hold_ms = HOLD_MS;
	for (attempt = 0; attempt < HOLD_TRIES; attempt++) {
		bool landed;

		landed = one_try(r, h, 1000 + attempt);
		r->hold_ms = r->hold_ms * 2 > HOLD_MAX_MS ? HOLD_MAX_MS :
			     r->hold_ms * 2;
		if (!rig_recover(r))
			return;
		if (landed)
			return;
		r->missed++;
	}
	failf("%s: the invalidation never completed inside the %s hold (%d attempts; the last: %s)",
	      r->tc->name, what, HOLD_TRIES, r->miss);
}

static void run_case(const struct tcase *tc, unsigned int tries, bool timing,
		     bool hold)
{
	unsigned long long sweeps0 = ctr(OWNER, "rkey_sweeps");
	struct rig r;
	unsigned int i;

	if (!rig_open(&r, tc) || !rig_measure(&r))
		goto out;
	/* a queued READ is raced only in an xmit hold: see the top */
	for (i = 0; timing && tc->op != OP_READ_QUEUED && i < tries; i++) {
		one_try(&r, H_NONE, i);
		if (!rig_recover(&r))
			goto out;
	}
	if (hold && tc->op != OP_READ_QUEUED)
		hold_tries(&r, H_COPY, "copy");
	if (hold && xmit_applies(tc))
		hold_tries(&r, H_XMIT, "xmit");
	diag("%s: transfer %.1f ms; %u cut short, %u completed first, %u holds missed; rkey_sweeps +%llu",
	     tc->name, r.xfer_ms, r.cut, r.whole, r.missed,
	     ctr(OWNER, "rkey_sweeps") - sweeps0);
	if (r.missed)
		diag("%s: the last hold missed: %s", tc->name, r.miss);
	if (ctr(OWNER, "rkey_sweeps") == sweeps0)
		failf("%s: rkey_sweeps did not move", tc->name);
out:
	rig_close(&r);
}

/* ------------------------------------------------------------------ */
/* refusals                                                             */

/*
 * A key with a stale generation, and a key used after LOCAL_INV, are
 * refused (rkey_refused_key); SEND_WITH_INV naming a type 1 window is
 * refused (inv_refused) and leaves the window working.
 */
static void run_refusals(void)
{
	static const struct tcase tc = {
		.name = "refusals", .op = OP_WRITE, .tgt = T_MW1,
		.inv = I_REBIND_SAME,
	};
	unsigned long long k0, i0;
	struct ibv_wc wc;
	struct rig r;
	uint32_t good;

	if (!rig_open(&r, &tc) || !rig_measure(&r) || !expose(&r))
		goto out;
	good = r.rkey;
	k0 = ctr(OWNER, "rkey_refused_key");
	r.rkey = (good & ~0xffU) | ((good + 0x33) & 0xff);
	if (post_rdma(&r) && wc_wait(r.a.cq[PEER], &wc, WAIT_MS, "stale") == 1 &&
	    wc.status != IBV_WC_REM_ACCESS_ERR)
		failf("WRITE with a stale key generation: %s, expected a remote access error",
		      ibv_wc_status_str(wc.status));
	sleep_ms(SETTLE_MS);	/* the core caches counters for 10 ms */
	if (ctr(OWNER, "rkey_refused_key") == k0)
		failf("stale key generation: rkey_refused_key did not move");
	if (!rig_recover(&r))
		goto out;

	i0 = ctr(OWNER, "inv_refused");
	send_inv(&r, good, IBV_WC_REM_INV_REQ_ERR);
	sleep_ms(SETTLE_MS);
	if (ctr(OWNER, "inv_refused") == i0)
		failf("SEND_WITH_INV of a type 1 window: inv_refused did not move");
	cq_drain(r.b.cq[OWNER]);
	cq_drain(r.b.cq[PEER]);
	if (conn_connect(&r.b))
		goto out;
	r.rkey = good;
	if (post_rdma(&r))
		wc_expect(r.a.cq[PEER], 1, IBV_WC_SUCCESS,
			  "WRITE through the type 1 window after the refused invalidation");
	diag("refusals: rkey_refused_key +%llu, inv_refused +%llu",
	     ctr(OWNER, "rkey_refused_key") - k0,
	     ctr(OWNER, "inv_refused") - i0);
out:
	rig_close(&r);
}

/* ------------------------------------------------------------------ */

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-t FILTER] [-n TRIES] [-m timing|hold|all] [-l] OWNER GIDX PEER GIDX\n",
		prog);
	exit(2);
}

/* FILTER: comma-separated substrings, any of which selects a case */
static bool selected(const char *name, const char *filter)
{
	char buf[256], *tok, *save = NULL;

	if (!filter)
		return true;
	snprintf(buf, sizeof(buf), "%s", filter);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		if (strstr(name, tok))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	bool timing = true, hold = true;
	unsigned int tries = 8, i, n = 0, k = 0, failed = 0;
	const char *filter = NULL;
	int opt, rc;

	build_cases();
	while ((opt = getopt(argc, argv, "t:n:m:l")) != -1) {
		switch (opt) {
		case 't':
			filter = optarg;
			break;
		case 'n':
			tries = (unsigned int)atoi(optarg);
			break;
		case 'm':
			timing = !strcmp(optarg, "timing") ||
				 !strcmp(optarg, "all");
			hold = !strcmp(optarg, "hold") || !strcmp(optarg, "all");
			break;
		case 'l':
			for (i = 0; i < ncases; i++)
				printf("%s\n", cases[i].name);
			printf("refusals\n");
			return 0;
		default:
			usage(argv[0]);
		}
	}
	if (argc - optind != 4)
		usage(argv[0]);
	g.dev[OWNER].name = argv[optind];
	g.dev[OWNER].gidx = atoi(argv[optind + 1]);
	g.dev[PEER].name = argv[optind + 2];
	g.dev[PEER].gidx = atoi(argv[optind + 3]);
	srandom((unsigned int)time(NULL) ^ (unsigned int)getpid());
	setvbuf(stdout, NULL, _IOLBF, 0);

	for (i = 0; i < ncases; i++)
		n += selected(cases[i].name, filter);
	n += selected("refusals", filter);
	printf("TAP version 13\n1..%u\n", n);
	rc = tdev_open_pair(g.dev);
	if (rc)
		return tap_skip_all(n, rc, g.dev);
	if (hold && !fault_available()) {
		diag("no %s: hold tries skipped", FAULT_DIR);
		hold = false;
	}
	for (i = 0; i <= ncases; i++) {
		const char *name = i < ncases ? cases[i].name : "refusals";
		unsigned int f0 = nfail;

		if (!selected(name, filter))
			continue;
		if (i < ncases)
			run_case(&cases[i], tries, timing, hold);
		else
			run_refusals();
		why_flush();
		printf("%sok %u - %s\n", nfail == f0 ? "" : "not ", ++k, name);
		failed += nfail != f0;
	}
	tdev_close(&g.dev[OWNER]);
	tdev_close(&g.dev[PEER]);
	return failed ? KSFT_FAIL : KSFT_PASS;
}

