// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * SRQ selftest: a UD QP receiving through an SRQ from itself; the SRQ
 * limit event fires once the queue drops below the armed limit, then the
 * limit is disarmed; bad SRQ arguments are refused; an RC QP on the SRQ
 * raises the last WQE reached event when it enters the error state, and
 * one with its own receive queue does not.  Each receive
 * completion says, as a RoCE device does, that a GRH area precedes the
 * data and, in its SL, that the packet came in UDP over IPv4 (0xa).
 *
 * Usage: shca_srq_test DEVICE GID_INDEX
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <infiniband/verbs.h>

#include "shca_test.h"

#define SRQ_WR		16
#define POSTED		10
#define LIMIT		5
#define SENDS		6
#define MSG		64
#define QKEY		0x11111111

/*
 * Wait up to @ms for one async event; returns its type (and in @qp, when
 * not NULL, its QP) or -1.
 */
static int wait_async(struct ibv_context *ctx, int ms, struct ibv_qp **qp)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int type;

	if (poll(&p, 1, ms) <= 0 || ibv_get_async_event(ctx, &ev))
		return -1;
	type = ev.event_type;
	if (qp)
		*qp = ev.element.qp;
	ibv_ack_async_event(&ev);
	return type;
}

/*
 * An RC QP, on @srq or (NULL) with its own receive queue, moved through
 * INIT to ERR: the last WQE reached event must come for the one on the SRQ
 * (it tells its consumer that the QP takes no more of the SRQ's WQEs),
 * and no event for the other.
 */
static void last_wqe(struct ibv_context *ctx, struct ibv_pd *pd,
		     struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.srq = srq,
		.cap = { .max_send_wr = 1, .max_send_sge = 1,
			 .max_recv_wr = srq ? 0 : 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr init = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
	}, err = { .qp_state = IBV_QPS_ERR }, q;
	struct ibv_qp *qp = ibv_create_qp(pd, &a), *evqp = NULL;
	struct ibv_qp_init_attr qi;
	int ev = -1, st = -1;

	if (qp && !ibv_modify_qp(qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) &&
	    !ibv_modify_qp(qp, &err, IBV_QP_STATE)) {
		if (!ibv_query_qp(qp, &q, IBV_QP_STATE, &qi))
			st = q.qp_state;
		ev = wait_async(ctx, srq ? SCALED_MS(5000) : 300, &evqp);
	}
	if (st != IBV_QPS_ERR)
		failf("INIT, then ERR: state %d (%s)", st, strerror(errno));
	if (srq)
		case_result(st == IBV_QPS_ERR &&
			    ev == IBV_EVENT_QP_LAST_WQE_REACHED && evqp == qp,
			    "RC QP on the SRQ, INIT -> ERR: IBV_EVENT_QP_LAST_WQE_REACHED for it");
	else
		case_result(st == IBV_QPS_ERR && ev == -1,
			    "RC QP with its own RQ, INIT -> ERR: no event");
	if (qp)
		ibv_destroy_qp(qp);
}

/* receive completions without the GRH flag or without 0xa in the SL */
static int bad_recv_wcs;

/* Poll @cq until @n completions arrived or 10 s passed. */
static int poll_n(struct ibv_cq *cq, int n)
{
	struct ibv_wc wc;
	int got = 0, spins = 0, r;

	while (got < n && spins++ < 10000000) {
		r = ibv_poll_cq(cq, 1, &wc);
		if (r < 0 || (r == 1 && wc.status != IBV_WC_SUCCESS))
			return -1;
		if (r == 1 && wc.opcode == IBV_WC_RECV &&
		    (!(wc.wc_flags & IBV_WC_GRH) || wc.sl != 0xa))
			bad_recv_wcs++;
		got += r;
	}
	return got;
}

static void bad_args(struct ibv_pd *pd, struct ibv_srq *srq, struct ibv_mr *mr)
{
	struct ibv_srq_init_attr big = { .attr = { .max_wr = 1 << 30,
						   .max_sge = 1 } };
	struct ibv_srq_attr lim = { .srq_limit = SRQ_WR * 4 };
	struct ibv_sge sge[64];
	struct ibv_recv_wr wr = { .sg_list = sge, .num_sge = 64 }, *bad;
	int i;

	case_result(ibv_create_srq(pd, &big) == NULL, "create_srq with max_wr 2^30 fails");
	case_result(ibv_modify_srq(srq, &lim, IBV_SRQ_LIMIT) != 0,
	   "modify_srq: a limit above max_wr is refused");
	for (i = 0; i < 64; i++) {
		sge[i].addr = (uintptr_t)mr->addr;
		sge[i].length = 1;
		sge[i].lkey = mr->lkey;
	}
	case_result(ibv_post_srq_recv(srq, &wr, &bad) != 0 && bad == &wr,
	   "post_srq_recv with more SGEs than max_sge is refused");
}

int main(int argc, char **argv)
{
	struct ibv_device **list, *dev;
	struct ibv_context *ctx = NULL;
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = SRQ_WR,
						   .max_sge = 1 } };
	struct ibv_srq_attr sa;
	struct ibv_qp_init_attr qia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = SENDS, .max_send_sge = 1 },
		.sq_sig_all = 1,
	};
	struct ibv_ah_attr aha = { .is_global = 1, .port_num = 1 };
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	char *buf;
	int i, ev;

	if (argc < 3) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX\n", argv[0]);
		return 2;
	}
	printf("TAP version 13\n1..14\n");
	list = ibv_get_device_list(NULL);
	dev = dev_find(list, argv[1]);
	if (dev)
		ctx = ibv_open_device(dev);
	if (!ctx) {
		printf("not ok 1 - open %s\n", argv[1]);
		return 1;
	}
	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) |
	      O_NONBLOCK);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	buf = calloc(POSTED + SENDS + 1, 40 + MSG);
	mr = ibv_reg_mr(pd, buf, (POSTED + SENDS + 1) * (40 + MSG),
			IBV_ACCESS_LOCAL_WRITE);
	srq = ibv_create_srq(pd, &sia);
	case_result(pd && cq && mr && srq, "PD, CQ, MR and an SRQ of 16 WRs");
	if (!srq)
		return 1;
	qia.send_cq = cq;
	qia.recv_cq = cq;
	qia.srq = srq;
	qp = ibv_create_qp(pd, &qia);
	case_result(qp && !ud_to_rts(qp, QKEY), "UD QP on the SRQ, in RTS");
	if (!qp)
		return 1;

	for (i = 0; i < POSTED; i++) {
		struct ibv_sge s = {
			.addr = (uintptr_t)buf + i * (40 + MSG),
			.length = 40 + MSG, .lkey = mr->lkey,
		};
		struct ibv_recv_wr w = { .wr_id = i, .sg_list = &s,
					 .num_sge = 1 }, *bad;

		if (ibv_post_srq_recv(srq, &w, &bad))
			break;
	}
	case_result(i == POSTED, "10 receives posted to the SRQ");
	sa.srq_limit = LIMIT;
	case_result(!ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), "limit 5 armed");
	case_result(wait_async(ctx, 300, NULL) == -1,
		    "no event while 10 WQEs remain");

	if (ibv_query_gid(ctx, 1, atoi(argv[2]), &aha.grh.dgid))
		return 1;
	aha.grh.sgid_index = atoi(argv[2]);
	aha.grh.hop_limit = 64;
	ah = ibv_create_ah(pd, &aha);
	for (i = 0; ah && i < SENDS; i++) {
		struct ibv_sge s = {
			.addr = (uintptr_t)buf + POSTED * (40 + MSG),
			.length = MSG, .lkey = mr->lkey,
		};
		struct ibv_send_wr w = {
			.wr_id = 100 + i, .sg_list = &s, .num_sge = 1,
			.opcode = IBV_WR_SEND,
			.wr.ud = { .ah = ah, .remote_qpn = qp->qp_num,
				   .remote_qkey = QKEY },
		}, *bad;

		if (ibv_post_send(qp, &w, &bad))
			break;
	}
	case_result(ah && i == SENDS && poll_n(cq, 2 * SENDS) == 2 * SENDS,
	   "6 UD sends to itself: 6 send and 6 receive completions");
	case_result(i == SENDS && !bad_recv_wcs,
	   "UD receive completions: GRH, RoCEv2 over IPv4 in the SL (0xa)");
	ev = wait_async(ctx, SCALED_MS(5000), NULL);
	case_result(ev == IBV_EVENT_SRQ_LIMIT_REACHED,
	   "IBV_EVENT_SRQ_LIMIT_REACHED once 4 WQEs remain");
	case_result(!ibv_query_srq(srq, &sa) && sa.srq_limit == 0,
	   "the limit is disarmed after the event (query_srq limit 0)");
	bad_args(pd, srq, mr);
	last_wqe(ctx, pd, cq, srq);
	last_wqe(ctx, pd, cq, NULL);

	ibv_destroy_qp(qp);
	if (ah)
		ibv_destroy_ah(ah);
	ibv_destroy_srq(srq);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(buf);
	return n_failed ? 1 : 0;
}
