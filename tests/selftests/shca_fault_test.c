// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_fault_test: the load that the fault-survival selftests (faults_*.sh)
 * kill, cut the network under and pull devices from under, and the
 * object churn whose memory they measure.
 *
 *   shca_fault_test [-n N] [-d SECS] [-m MRS] [-r ROUNDS] [-w WAVE] \
 *                   MODE DEV1 GIDX1 DEV2 GIDX2
 *
 * One process drives both devices: side A of every QP pair is on DEV1,
 * side B on DEV2 (normally two namespaces joined by a veth pair, so every
 * packet crosses the wire).  Modes:
 *
 *   traffic  N RC QP pairs (default 16) running verified rounds of RDMA
 *            WRITE (through a type 2 memory window), SEND, RDMA READ and
 *            FETCH_ADD from A, a SEND back from B into an SRQ on A; a UD
 *            pair with an address handle; MRS idle MRs (default 64) and
 *            idle CQs; a type 1 window bound.  Runs for SECS seconds
 *            (default: until killed or something breaks), printing
 *            "# ready" once every pair has completed a verified round.
 *   qps      N RC QP pairs (default 1000): each QP sends and receives
 *            verified data once (A: WRITE + SEND, B: WRITE with immediate),
 *            WAVE pairs at a time (default: all at once), then everything
 *            is destroyed.
 *   mrs      ROUNDS rounds (default 4) of: register N MRs (default 256)
 *            of assorted sizes and alignments, bind type 1 and type 2
 *            windows to some of them and WRITE through each, check that a
 *            window keeps its MR registered, deregister everything.
 *
 * Async events are read without blocking between completions.  Exit
 * status: 0 pass; 1 failure (wrong data, an unexpected error, no progress
 * and no event); 2 a device reported IBV_EVENT_DEVICE_FATAL and the
 * program shut down; 3 a port reported IBV_EVENT_PORT_ERR and every QP
 * pair then failed; 4 a device is missing.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "shca_fault.h"

struct fault_opts opt = { 0, 64, 4, 0, -1 };

/* ------------------------------------------------------------------ */

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-n N] [-d SECS] [-m MRS] [-r ROUNDS] [-w WAVE] traffic|qps|mrs DEV1 GIDX1 DEV2 GIDX2\n",
		prog);
	exit(EXIT_FAIL);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	const char *mode;
	int c, rc, d;

	while ((c = getopt(argc, argv, "n:d:m:r:w:")) != -1) {
		switch (c) {
		case 'n':
			opt.n = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'd':
			opt.secs = atoi(optarg);
			break;
		case 'm':
			opt.mrs = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'r':
			opt.rounds = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'w':
			opt.wave = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (argc - optind != 5 || opt.n > MAX_QPN / 2)
		usage(argv[0]);
	mode = argv[optind];
	dv[0].name = argv[optind + 1];
	dv[0].gidx = atoi(argv[optind + 2]);
	dv[1].name = argv[optind + 3];
	dv[1].gidx = atoi(argv[optind + 4]);
	setvbuf(stdout, NULL, _IOLBF, 0);

	list = ibv_get_device_list(NULL);
	rc = dev_open(list, &dv[0]);
	if (!rc)
		rc = dev_open(list, &dv[1]);
	if (list)
		ibv_free_device_list(list);
	if (!rc) {
		if (!strcmp(mode, "traffic"))
			rc = mode_traffic();
		else if (!strcmp(mode, "qps"))
			rc = mode_qps();
		else if (!strcmp(mode, "mrs"))
			rc = mode_mrs();
		else
			usage(argv[0]);
	}
	events_poll();
	for (d = 1; d >= 0; d--)
		dev_close(&dv[d], d);
	if (failed && rc != EXIT_FATAL && rc != EXIT_PORT)
		rc = EXIT_FAIL;
	diag("exit %d", rc);
	return rc;
}

