// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_fault_test's building blocks (shca_fault.h): reporting, the two
 * devices and their async events, QPs, posting and waiting.
 */

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "shca_fault.h"

struct dev dv[2];
bool failed;
static unsigned int event_lines;

/* ------------------------------------------------------------------ */
/* reporting, time, patterns                                            */

void fail(const char *fmt, ...)
{
	va_list ap;

	failed = true;
	fputs("# FAIL: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

void nap(void)
{
	struct timespec ts = { 0, 100000 };

	nanosleep(&ts, NULL);
}

/* Does p[0..n) hold pattern(seed)?  Reports the first bad byte. */
bool pattern_ok(const uint8_t *p, size_t n, uint32_t seed,
		const char *what)
{
	uint32_t x = pattern_start(seed);
	size_t i;
	uint8_t want;

	for (i = 0; i < n; i++) {
		want = pattern_next(&x);
		if (p[i] != want) {
			fail("%s: byte %zu of %zu is 0x%02x, expected 0x%02x",
			     what, i, n, p[i], want);
			return false;
		}
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* devices and async events                                             */

int dev_open(struct ibv_device **list, struct dev *d)
{
	struct ibv_device *dev = dev_find(list, d->name);
	int fl;

	if (!dev) {
		diag("no RDMA device %s", d->name);
		return EXIT_SKIP;
	}
	d->ctx = ibv_open_device(dev);
	if (!d->ctx) {
		fail("ibv_open_device(%s): %s", d->name, strerror(errno));
		return EXIT_FAIL;
	}
	fl = fcntl(d->ctx->async_fd, F_GETFL);
	if (fl < 0 || fcntl(d->ctx->async_fd, F_SETFL, fl | O_NONBLOCK)) {
		fail("async fd of %s: %s", d->name, strerror(errno));
		return EXIT_FAIL;
	}
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd) {
		fail("ibv_alloc_pd(%s): %s", d->name, strerror(errno));
		return EXIT_FAIL;
	}
	if (ibv_query_gid(d->ctx, 1, d->gidx, &d->gid)) {
		fail("ibv_query_gid(%s, %d): %s", d->name, d->gidx,
		     strerror(errno));
		return EXIT_FAIL;
	}
	return EXIT_PASS;
}

/* A failed destroy is a failure unless the device died under us. */
void destroy_check(int ret, int dev, const char *what)
{
	if (!ret)
		return;
	if (dv[dev].fatal)
		diag("%s on %s after DEVICE_FATAL: %s", what, dv[dev].name,
		     strerror(ret));
	else
		fail("%s on %s: %s", what, dv[dev].name, strerror(ret));
}

void dev_close(struct dev *d, int dev)
{
	if (d->pd)
		destroy_check(ibv_dealloc_pd(d->pd), dev, "ibv_dealloc_pd");
	d->pd = NULL;
	if (d->ctx && ibv_close_device(d->ctx))
		fail("ibv_close_device(%s): %s", d->name, strerror(errno));
	d->ctx = NULL;
}

static const char *ev_name(enum ibv_event_type t)
{
	switch (t) {
	case IBV_EVENT_DEVICE_FATAL:
		return "DEVICE_FATAL";
	case IBV_EVENT_PORT_ERR:
		return "PORT_ERR";
	case IBV_EVENT_PORT_ACTIVE:
		return "PORT_ACTIVE";
	case IBV_EVENT_QP_FATAL:
		return "QP_FATAL";
	case IBV_EVENT_CQ_ERR:
		return "CQ_ERR";
	case IBV_EVENT_GID_CHANGE:
		return "GID_CHANGE";
	default:
		return ibv_event_type_str(t);
	}
}

/* Read every pending async event of both devices (never blocks). */
void events_poll(void)
{
	struct ibv_async_event ev;
	int i;

	for (i = 0; i < 2; i++) {
		if (!dv[i].ctx)
			continue;
		while (!ibv_get_async_event(dv[i].ctx, &ev)) {
			if (event_lines++ < MAX_EVENT_LINES)
				diag("%s: async event %s", dv[i].name,
				     ev_name(ev.event_type));
			if (ev.event_type == IBV_EVENT_DEVICE_FATAL)
				dv[i].fatal = true;
			else if (ev.event_type == IBV_EVENT_PORT_ERR)
				dv[i].port_err = true;
			ibv_ack_async_event(&ev);
		}
	}
}

bool any_fatal(void)
{
	return dv[0].fatal || dv[1].fatal;
}

bool any_event(void)
{
	return any_fatal() || dv[0].port_err || dv[1].port_err;
}

/* ------------------------------------------------------------------ */
/* QPs                                                                  */

struct ibv_qp *qp_new(int dev, enum ibv_qp_type type,
		      struct ibv_cq *scq, struct ibv_cq *rcq,
		      struct ibv_srq *srq, uint32_t swr, uint32_t rwr)
{
	struct ibv_qp_init_attr ia = {};
	struct ibv_qp *qp;

	ia.send_cq = scq;
	ia.recv_cq = rcq;
	ia.srq = srq;
	ia.qp_type = type;
	ia.cap.max_send_wr = swr;
	ia.cap.max_recv_wr = srq ? 0 : rwr;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	qp = ibv_create_qp(dv[dev].pd, &ia);
	if (!qp)
		fail("ibv_create_qp on %s: %s", dv[dev].name, strerror(errno));
	return qp;
}

static uint32_t psn_of(const struct ibv_qp *qp)
{
	return (qp->qp_num * 2654435761U) & 0xffffff;
}

/* Take an RC QP on device @dev to RTS, connected to @peer. */
int rc_connect_to(struct ibv_qp *qp, int dev,
		  const struct ibv_qp *peer)
{
	struct rc_path path = {
		.access = ACC_REMOTE,
		.mtu = IBV_MTU_1024,
		.dest_qpn = peer->qp_num,
		.rq_psn = psn_of(peer),
		.sq_psn = psn_of(qp),
		.dgid = dv[!dev].gid,
		.sgid_index = dv[dev].gidx,
		.rd_atomic = 16,
		.min_rnr_timer = 12,
		/*
		 * 134 ms: a dead path fails in about a second; stretched on
		 * a slow kernel, where a busy responder takes longer than
		 * that to answer 24 pairs' rounds (scaled_timeout())
		 */
		.timeout = scaled_timeout(15),
		.retry_cnt = 7,
		.rnr_retry = 7,
	};
	enum ibv_qp_state at;
	int ret = rc_connect(qp, &path, &at);

	if (ret)
		fail("ibv_modify_qp(QP %u on %s to state %d): %s", qp->qp_num,
		     dv[dev].name, at, strerror(ret));
	return ret ? -1 : 0;
}

int ud_connect(struct ibv_qp *qp, int dev)
{
	struct ibv_qp_attr a = {};
	int ret;

	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = QKEY;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	if (!ret) {
		a.qp_state = IBV_QPS_RTR;
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	}
	if (!ret) {
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 0;
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	}
	if (ret)
		fail("UD QP %u on %s to state %d: %s", qp->qp_num,
		     dv[dev].name, a.qp_state, strerror(ret));
	return ret ? -1 : 0;
}

int post_send(struct ibv_qp *qp, uint64_t wr_id,
	      enum ibv_wr_opcode op, void *addr, uint32_t len,
	      uint32_t lkey, uint64_t raddr, uint32_t rkey,
	      bool signaled)
{
	struct ibv_sge sg = { (uintptr_t)addr, len, lkey };
	struct send_args a = {
		.wr_id = wr_id, .op = op, .sg = &sg, .nsge = 1,
		.flags = signaled ? IBV_SEND_SIGNALED : 0,
		.raddr = raddr, .rkey = rkey,
		.imm = (uint32_t)wr_id,		/* for RDMA_WRITE_WITH_IMM */
		.cmp_add = 1,			/* for FETCH_AND_ADD */
	};

	return post_send1(qp, &a);
}

int post_recv(struct ibv_qp *qp, struct ibv_srq *srq, uint64_t wr_id,
	      void *addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sg = { (uintptr_t)addr, len, lkey };

	return post_recv1(qp, srq, wr_id, &sg, len ? 1 : 0);
}

/* Wait for one completion on @cq (deadline 20 s, scaled); false on error. */
bool wait_one(struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	double end = now_ms() + SCALED_MS(20000);
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n > 0) {
			if (wc->status == IBV_WC_SUCCESS)
				return true;
			fail("%s: completion status %s", what,
			     ibv_wc_status_str(wc->status));
			return false;
		}
		if (n < 0)
			break;
		nap();
	} while (now_ms() < end);
	fail("%s: no completion within 20 s", what);
	return false;
}
