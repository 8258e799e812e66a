// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_stream_test: RC data integrity on a lossy, reordering, duplicating
 * or corrupting network, and what a requester does when the receiver is
 * slow (RNR) or gone.
 *
 *   shca_stream_test [options] DEV1 GIDX1 DEV2 GIDX2
 *
 * Side 0 of the QP pair (the requester) is on DEV1, side 1 (the
 * responder) on DEV2; a GID index of -1 means the first RoCE v2 GID
 * holding an IPv4 address.  One process drives both devices (except in
 * peer mode, where the responder runs in a child process so its device
 * can disappear).  Modes (-m):
 *
 *   stream  (default) move -b MiB with SEND, SEND_WITH_IMM, RDMA WRITE,
 *           RDMA WRITE_WITH_IMM and RDMA READ; message sizes from 0 bytes
 *           to -z bytes (many MTUs), up to -q WRs outstanding.  Every
 *           byte carries a pattern derived from (message number, offset)
 *           and is verified, with guard bytes behind every message; every
 *           completion (send and receive side) must arrive exactly once,
 *           in order, with the right wr_id, status, opcode, byte_len and
 *           immediate data.
 *   atomic  -n fetch-adds and compare-swaps (some of them failing their
 *           compare) on one remote 64-bit word: every returned original
 *           value must be the one in-order execution gives (so each
 *           fetch-add sees a distinct previous value) and the word must
 *           end at the exact sum.
 *   rnr     -n messages (SEND, SEND_WITH_IMM, WRITE_WITH_IMM, 1 byte to 3
 *           MTUs) to a receiver that has -P receives posted and posts one
 *           more every -I ms (0: never).  With rnr_retry (-R) 7 every
 *           message must arrive, verified; with a finite rnr_retry and no
 *           late receives, the first message without a receive must fail
 *           with RNR_RETRY_EXC_ERR and every later WR be flushed.
 *   peer    keep -q RDMA WRITEs and READs outstanding, then make the
 *           peer disappear: kill the responder's process (-k) and/or run
 *           the shell command -x (e.g. delete its device, take its link
 *           down).  The oldest outstanding WR must fail with
 *           RETRY_EXC_ERR within (retry_cnt + 1) x the ACK timeout (plus
 *           -S ms of slack, times the time scale), after at least
 *           retry_cnt + 1 timeouts, and
 *           every later WR (and every receive) be flushed, in order.
 *
 * Prints TAP 13 and the device counters that moved; exits 0 when every
 * check passed, 1 when one failed, 4 when the devices are missing.
 *
 * This file holds the options and main(); the modes are in
 * shca_stream_data.c (stream, rnr), shca_stream_atomic.c and
 * shca_stream_peer.c, their building blocks in shca_stream_lib.c.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>

#include "shca_stream.h"

struct stream_opts opt = {
	.mode = M_STREAM,
	.bytes = 64ULL * MIB,
	.depth = 64,
	.max_msg = 256 * 1024,
	.mtu = 1024,
	.timeout = 14,
	.retry_cnt = 7,
	.rnr_retry = 7,
	.min_rnr_timer = 12,
	.prepost = 0,
	.trickle_ms = 10,
	.slack_ms = 750,
	.ops = 0x1f,
	.deadline_s = 600,
};

/* ------------------------------------------------------------------ */

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-m stream|atomic|rnr|peer] [-b MIB] [-n COUNT] [-q DEPTH]\n"
		"          [-z MAXMSG] [-M MTU] [-T TIMEOUT] [-r RETRY_CNT] [-R RNR_RETRY]\n"
		"          [-t MIN_RNR_TIMER] [-P PREPOST] [-I TRICKLE_MS] [-x CMD] [-k]\n"
		"          [-S SLACK_MS] [-d DEADLINE_S] [-s SEED] [-O OP,...] [-Z]\n"
		"          DEV1 GIDX1 DEV2 GIDX2\n"
		"  OP: send, send_imm, write, write_imm, read (stream mode)\n"
		"  -Z: no zero-byte RDMA WRITE/READ (stream mode)\n",
		prog);
	exit(2);
}

static unsigned long num(const char *s, unsigned long lo, unsigned long hi)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (*s == '\0' || *end || v < lo || v > hi) {
		fprintf(stderr, "bad number '%s' (%lu..%lu)\n", s, lo, hi);
		exit(2);
	}
	return v;
}

/* "send,read,..." -> mask of enum sop; 0 when a name is unknown */
static unsigned int parse_ops(char *list)
{
	static const char *const names[S_NOPS] = {
		"send", "send_imm", "write", "write_imm", "read",
	};
	unsigned int mask = 0, i;
	char *tok, *save = NULL;

	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < S_NOPS && strcmp(tok, names[i]); i++)
			;
		if (i == S_NOPS)
			return 0;
		mask |= 1u << i;
	}
	return mask;
}

static void parse(int argc, char **argv)
{
	int c;

	opt.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	opt.count = 0;
	while ((c = getopt(argc, argv, "m:b:n:q:z:M:T:r:R:t:P:I:x:kS:d:s:O:Z")) !=
	       -1) {
		switch (c) {
		case 'm':
			opt.mode = !strcmp(optarg, "atomic") ? M_ATOMIC :
				   !strcmp(optarg, "rnr") ? M_RNR :
				   !strcmp(optarg, "peer") ? M_PEER :
				   !strcmp(optarg, "stream") ? M_STREAM : 99;
			if (opt.mode == 99)
				usage(argv[0]);
			break;
		case 'b':
			opt.bytes = num(optarg, 1, 4096) * (unsigned long long)MIB;
			break;
		case 'n':
			opt.count = num(optarg, 1, 10000000);
			break;
		case 'q':
			opt.depth = num(optarg, 1, 1024);
			break;
		case 'z':
			opt.max_msg = num(optarg, 1, 16 * MIB);
			break;
		case 'M':
			opt.mtu = num(optarg, 256, 4096);
			break;
		case 'T':
			opt.timeout = num(optarg, 1, 24);
			break;
		case 'r':
			opt.retry_cnt = num(optarg, 0, 7);
			break;
		case 'R':
			opt.rnr_retry = num(optarg, 0, 7);
			break;
		case 't':
			opt.min_rnr_timer = num(optarg, 0, 31);
			break;
		case 'P':
			opt.prepost = num(optarg, 0, 100000);
			break;
		case 'I':
			opt.trickle_ms = num(optarg, 0, 10000);
			break;
		case 'x':
			opt.cmd = optarg;
			break;
		case 'Z':
			opt.no_zero_rdma = true;
			break;
		case 'O':
			opt.ops = parse_ops(optarg);
			if (!opt.ops)
				usage(argv[0]);
			break;
		case 'k':
			opt.kill_peer = true;
			break;
		case 'S':
			opt.slack_ms = num(optarg, 0, 100000);
			break;
		case 'd':
			opt.deadline_s = num(optarg, 1, 100000);
			break;
		case 's':
			opt.seed = num(optarg, 0, ~0UL);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (argc - optind != 4)
		usage(argv[0]);
	g.dev[0].name = argv[optind];
	g.dev[0].gidx = atoi(argv[optind + 1]);
	g.dev[1].name = argv[optind + 2];
	g.dev[1].gidx = atoi(argv[optind + 3]);
	if (!opt.count)
		opt.count = opt.mode == M_RNR ? 24 : 10000;
	if (opt.mode == M_RNR) {
		/* finite retries meet late receives: no defined outcome */
		if (opt.rnr_retry != 7)
			opt.trickle_ms = 0;
		if (opt.prepost > opt.count)
			opt.prepost = opt.count;
	}
	if (opt.mode == M_PEER && !opt.cmd && !opt.kill_peer)
		usage(argv[0]);
	/*
	 * deadlines and slack stretch with the time scale (shca_test.h), and
	 * so does the ACK timeout (-T or the default), by the scale rounded
	 * up to a power of two: a timeout that fires spuriously on a slow
	 * kernel spends the retry count before the event a test times.
	 * The late receives' interval (-I) stretches too: rnr under loss
	 * needs a message to arrive before its receive, and with the
	 * interval fixed one stretched timeout early in the stream outlasts
	 * the whole trickle, so no RNR NAK is ever sent.
	 */
	opt.slack_ms = SCALED_MS(opt.slack_ms);
	opt.trickle_ms = SCALED_MS(opt.trickle_ms);
	opt.deadline_s = SCALED_MS(opt.deadline_s);
	opt.timeout = scaled_timeout(opt.timeout);
}

int main(int argc, char **argv)
{
	struct ctrs c0[2];
	int rc, i;

	parse(argc, argv);
	srandom((unsigned int)opt.seed);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	printf("TAP version 13\n");
	diag("seed %llu", (unsigned long long)opt.seed);
	if (opt.mode == M_PEER) {
		run_peer();
		goto done;
	}
	rc = tdev_open_pair(g.dev);
	if (rc) {
		printf("1..0 # SKIP devices %s/%s not usable\n", g.dev[0].name,
		       g.dev[1].name);
		return rc;
	}
	for (i = 0; i < 2; i++)
		ctrs_read(g.dev[i].name, &c0[i]);
	if (opt.mode == M_STREAM)
		run_stream();
	else if (opt.mode == M_ATOMIC)
		run_atomic();
	else
		run_rnr();
	for (i = 0; i < 2; i++)
		ctrs_diag(g.dev[i].name, &c0[i]);
	tdev_close(&g.dev[0]);
	tdev_close(&g.dev[1]);
done:
	printf("1..%u\n", tap_n);
	return tap_failed ? KSFT_FAIL : KSFT_PASS;
}

