// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_rc_test: RC data path and the error cases a verbs user can cause,
 * between two shca devices (normally in two network namespaces joined by
 * a veth pair, so every packet really crosses the wire).
 *
 *   shca_rc_test [-t FILTER] [-l] [DEV1 GIDX1 DEV2 GIDX2]
 *
 * DEV1/DEV2 default to shca_ns1/shca_ns2; a GID index of -1 (or none
 * given) means the first RoCE v2 GID holding an IPv4 address.  -t runs
 * only the cases whose name contains FILTER, -l lists the cases.  One
 * process drives both devices: side 0 of each QP pair is on DEV1, side 1
 * on DEV2.  Every case builds its own QP pairs and tears them down; every
 * wait for a completion has a deadline.  Prints TAP 13; exits 0 when
 * every case passes, 1 when one fails, 4 when the devices are missing.
 *
 * This file is the driver: the options, the list of cases and the TAP
 * output.  The cases are in shca_rc_*.c by topic, their building blocks
 * in shca_rc_lib.c.
 */

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shca_rc.h"

struct tcase {
	const char *name;
	void (*fn)(long arg);
	long arg;
};

static const struct tcase cases[] = {
	{ "send_0: SEND 0 bytes", t_send_size, 0 },
	{ "send_1: SEND 1 byte", t_send_size, 1 },
	{ "send_4095: SEND 4095 bytes, MTU 1024", t_send_size, 4095 },
	{ "send_4096: SEND 4096 bytes, MTU 1024", t_send_size, 4096 },
	{ "send_4097: SEND 4097 bytes, MTU 1024", t_send_size, 4097 },
	{ "send_64k: SEND 65536 bytes, MTU 1024", t_send_size, 65536 },
	{ "send_1m: SEND 1 MiB, MTU 1024", t_send_size, MIB },
	{ "send_sges: 3 send SGEs into 4 receive SGEs", t_send_sges, 0 },
	{ "send_inline: inline SEND of max_inline_data bytes", t_inline, 0 },
	{ "send_imm: SEND_WITH_IMM", t_send_imm, 0 },
	{ "write_0: RDMA WRITE 0 bytes", t_write, 0 },
	{ "write_1: RDMA WRITE 1 byte", t_write, 1 },
	{ "write_1m: RDMA WRITE 1 MiB", t_write, MIB },
	{ "write_sges: RDMA WRITE from 3 SGEs", t_write, -1 },
	{ "write_scatter: RDMA WRITE from 30 scattered 40-byte SGEs", t_write_scatter, 30 },
	{ "write_imm: RDMA_WRITE_WITH_IMM", t_write_imm, 0 },
	{ "sqd: SQD finishes the WRITE in flight, holds the next", t_sqd, 0 },
	{ "read_1: RDMA READ 1 byte", t_read, 1 },
	{ "read_4096: RDMA READ 4096 bytes", t_read, 4096 },
	{ "read_1m: RDMA READ 1 MiB", t_read, MIB },
	{ "read_sges: RDMA READ into 3 SGEs", t_read, -1 },
	{ "atomic: fetch-add and compare-swap", t_atomic, 0 },
	{ "atomic_1000: 1000 fetch-adds end at the exact sum", t_atomic_many, 0 },
	{ "atomic_write: ATOMIC WRITE of 8 bytes, after a WRITE", t_atomic_write, 0 },
	{ "err_atomic_write_unaligned: ATOMIC WRITE to an unaligned address", t_err_atomic_write, 0 },
	{ "err_atomic_write_noperm: ATOMIC WRITE to an MR without REMOTE_WRITE", t_err_atomic_write, 1 },
	{ "wc_fields: completion fields of every opcode", t_wc_fields, 0 },
	{ "unsignaled: sq_sig_all 0, unsignaled SENDs", t_unsignaled, 0 },
	{ "mw2_inv: type 2 MW, SEND_WITH_INV invalidates it", t_mw2_inv, 0 },
	{ "mw2_stale: type 2 MW unusable by QPs created after its QP", t_mw2_stale, 0 },
	{ "mw1: type 1 MW, WRITE inside and across its end", t_mw1, 0 },
	{ "err_rkey: WRITE with a bad rkey", t_err_bad_rkey, 0 },
	{ "err_past_end: WRITE across the MR's end", t_err_past_end, 0 },
	{ "err_past_end3: 3-packet WRITE across the MR's end", t_err_past_end, 1 },
	{ "err_before_start: WRITE across the MR's start", t_err_past_end, 2 },
	{ "err_read_noperm: READ from an MR without REMOTE_READ", t_err_read_noperm, 0 },
	{ "err_qp_nowrite: WRITE to a QP without REMOTE_WRITE", t_err_qp_access, 0 },
	{ "err_qp_noread: READ from a QP without REMOTE_READ", t_err_qp_access, 1 },
	{ "err_qp_noatomic: ATOMIC to a QP without REMOTE_ATOMIC", t_err_qp_access, 2 },
	{ "err_atomic_unaligned: ATOMIC to an unaligned address", t_err_atomic_unaligned, 0 },
	{ "err_send_long: SEND bigger than the receive buffer", t_err_send_too_long, 0 },
	{ "err_send_long3: 3-packet SEND bigger than the receive buffer", t_err_send_too_long, 1 },
	{ "err_lkey: SEND with a bad lkey", t_err_lkey, 0 },
	{ "err_lkey_range: SEND with an SGE past its MR", t_err_lkey, 1 },
	{ "err_read_ro: READ into an MR without LOCAL_WRITE", t_err_lkey, 2 },
	{ "err_recv_lkey: receive WR with a bad lkey", t_err_recv_lkey, 0 },
	{ "err_rnr0: no receive, rnr_retry 0", t_err_rnr0, 0 },
	{ "rnr7_late: rnr_retry 7, receive posted 200 ms late", t_rnr7_late, 0 },
	{ "rnr7_late3: same, 3-packet SEND", t_rnr7_late, 1 },
	{ "rnr7_late_pipe: same, 8 pipelined SENDs", t_rnr7_late, 2 },
	{ "err_peer_gone: destination QP destroyed, retry_cnt 2", t_err_peer_gone, 0 },
	{ "post_reset: post_send before RTS, unknown send flags", t_post_reset, 0 },
	{ "post_sges: more SGEs than max_send_sge/max_recv_sge", t_post_sges, 0 },
	{ "post_sges_1000: 1000 SGEs", t_post_sges, 1 },
	{ "post_inline_big: inline SEND longer than max_inline_data", t_post_inline_big, 0 },
	{ "post_overflow: more WRs than max_send_wr/max_recv_wr", t_post_overflow, 0 },
	{ "create_absurd: ibv_create_qp with absurd caps", t_create_absurd, 0 },
	{ "modify_invalid: invalid transitions and attributes", t_modify_invalid, 0 },
	{ "modify_range: out-of-range fields", t_modify_range, 0 },
	{ "destroy_busy: destroy a CQ/PD in use", t_destroy_busy, 0 },
	{ "hol: an RNR-blocked QP does not block another", t_hol, 0 },
};

#define NUM_CASES ARRAY_SIZE(cases)

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-t FILTER] [-l] [DEV1 GIDX1 DEV2 GIDX2]\n",
		prog);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *filter = NULL;
	struct ctrs snap0[2];
	unsigned int i, n = 0, failed = 0;
	int opt, rc;

	g.dev[0].name = "shca_ns1";
	g.dev[1].name = "shca_ns2";
	g.dev[0].gidx = g.dev[1].gidx = -1;
	while ((opt = getopt(argc, argv, "t:l")) != -1) {
		switch (opt) {
		case 't':
			filter = optarg;
			break;
		case 'l':
			for (i = 0; i < NUM_CASES; i++)
				printf("%s\n", cases[i].name);
			return 0;
		default:
			usage(argv[0]);
		}
	}
	if (argc - optind == 4) {
		g.dev[0].name = argv[optind];
		g.dev[0].gidx = atoi(argv[optind + 1]);
		g.dev[1].name = argv[optind + 2];
		g.dev[1].gidx = atoi(argv[optind + 3]);
	} else if (argc != optind) {
		usage(argv[0]);
	}
	srandom((unsigned int)time(NULL) ^ (unsigned int)getpid());
	setvbuf(stdout, NULL, _IOLBF, 0);

	for (i = 0; i < NUM_CASES; i++)
		if (!filter || strstr(cases[i].name, filter))
			n++;
	printf("TAP version 13\n1..%u\n", n);
	rc = tdev_open_pair(g.dev);
	if (rc)
		return tap_skip_all(n, rc, g.dev);
	diag("%s gid %d, %s gid %d; max_qp_rd_atom %d, max_sge %d",
	     g.dev[0].name, g.dev[0].gidx, g.dev[1].name, g.dev[1].gidx,
	     g.dev[0].attr.max_qp_rd_atom, g.dev[0].attr.max_sge);

	n = 0;
	for (i = 0; i < NUM_CASES; i++) {
		const struct tcase *tc = &cases[i];
		unsigned int f0 = nfail;
		double t0 = now_ms();

		if (filter && !strstr(tc->name, filter))
			continue;
		n++;
		why[0] = '\0';
		skip_why = NULL;
		ctr_snap(snap0);
		tc->fn(tc->arg);
		if (nfail != f0) {
			failed++;
			printf("not ok %u - %s\n", n, tc->name);
			why_flush();
			ctr_diag(snap0);
		} else if (skip_why) {
			printf("ok %u - %s # SKIP %s\n", n, tc->name, skip_why);
		} else {
			printf("ok %u - %s (%.0f ms)\n", n, tc->name,
			       now_ms() - t0);
		}
		fflush(stdout);
	}
	tdev_close(&g.dev[0]);
	tdev_close(&g.dev[1]);
	printf("# %u of %u cases failed\n", failed, n);
	return failed ? KSFT_FAIL : KSFT_PASS;
}
