// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_flood_test: one process that posts its send queues full towards a
 * peer that never answers, and holds them, for isolation.sh.
 *
 *   shca_flood_test DEVICE PEER_IPV4 QPS WRS [reset]
 *
 * QPS RC QPs of WRS send WRs each are connected to QPNs that do not
 * exist at PEER_IPV4 (ACK timeout 22, about 17 s; retry 7), and every
 * one gets WRS signalled 1 KiB SENDs, posted in chains of 64.  Each of
 * these WQEs waits for an ACK that never comes until the retries run
 * out, minutes later.  With "reset", every QP is then moved to RESET,
 * which takes back all it had posted.  Prints "holding N" (N the WRs
 * posted) and sleeps until killed; the process's exit destroys the QPs.
 * Exit status 1 when a step failed before that (said on stderr).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "shca_test.h"

#define MSG	1024
#define CHAIN	64

/* Post @n SENDs of @mr's MSG bytes on @qp, CHAIN a call. */
static int flood(struct ibv_qp *qp, struct ibv_mr *mr, int n)
{
	struct ibv_sge sg = { (uintptr_t)mr->addr, MSG, mr->lkey };
	struct ibv_send_wr wr[CHAIN], *bad;
	int i, k, done = 0;

	while (done < n) {
		k = n - done < CHAIN ? n - done : CHAIN;
		memset(wr, 0, sizeof(wr));
		for (i = 0; i < k; i++) {
			wr[i].wr_id = done + i;
			wr[i].sg_list = &sg;
			wr[i].num_sge = 1;
			wr[i].opcode = IBV_WR_SEND;
			wr[i].send_flags = IBV_SEND_SIGNALED;
			wr[i].next = i + 1 < k ? &wr[i + 1] : NULL;
		}
		if (ibv_post_send(qp, wr, &bad)) {
			fprintf(stderr, "ibv_post_send after %d WRs: %s\n",
				done, strerror(errno));
			return -1;
		}
		done += k;
	}
	return done;
}

/*
 * One QP connected to QPN @qpn at @p->dgid, flooded with @wrs SENDs and
 * then, with @reset, moved to RESET.
 */
static int flood_qp(struct test_dev *d, struct ibv_mr *mr,
		    struct rc_path *p, int wrs, bool reset)
{
	struct qp_spec spec = qp_spec_simple(wrs, wrs);
	struct ibv_cq *scq = NULL, *rcq = NULL;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct ibv_qp *qp;
	int n;

	spec.cap.max_recv_wr = 1;
	qp = qp_create(d, &spec, &scq, &rcq);
	if (!qp || rc_connect(qp, p, NULL)) {
		why_flush();
		fprintf(stderr, "QP to QPN 0x%x: not created or connected\n",
			p->dest_qpn);
		return -1;
	}
	n = flood(qp, mr, wrs);
	if (n >= 0 && reset && ibv_modify_qp(qp, &a, IBV_QP_STATE)) {
		fprintf(stderr, "QP %u to RESET: %s\n", qp->qp_num,
			strerror(errno));
		return -1;
	}
	return n;
}

int main(int argc, char **argv)
{
	struct rc_path p = {
		.mtu = IBV_MTU_1024, .rq_psn = 0, .sq_psn = 0,
		.timeout = 22, .retry_cnt = 7, .rnr_retry = 7,
		.rd_atomic = 1, .min_rnr_timer = 12,
	};
	struct test_dev d = { .gidx = -1 };
	struct ibv_mr *mr;
	int qps, wrs, i, n, total = 0;
	bool reset;

	if (argc < 5 || argc > 6 || gid_of_addr(&p.dgid, argv[2]) ||
	    (argc == 6 && strcmp(argv[5], "reset"))) {
		fprintf(stderr, "usage: %s DEVICE PEER_IPV4 QPS WRS [reset]\n",
			argv[0]);
		return 2;
	}
	reset = argc == 6;
	d.name = argv[1];
	qps = atoi(argv[3]);
	wrs = atoi(argv[4]);
	if (tdev_open(&d))
		return 1;
	p.sgid_index = d.gidx;
	mr = ibv_reg_mr(d.pd, zalloc(MSG), MSG, 0);
	if (!mr) {
		fprintf(stderr, "ibv_reg_mr: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < qps; i++) {
		/* QPNs the peer does not have */
		p.dest_qpn = 0xfff000 + i;
		n = flood_qp(&d, mr, &p, wrs, reset);
		if (n < 0)
			return 1;
		total += n;
	}
	return hold_until_killed(total);
}
