// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_cqts_test: completion timestamps and the device clock.
 *
 *   shca_cqts_test DEVICE
 *
 * The device clock is CLOCK_MONOTONIC in nanoseconds (hca_core_clock
 * 1 GHz).  On one device talking to itself: ibv_query_rt_values_ex reads
 * it between two reads of CLOCK_MONOTONIC; an RC pair whose send and
 * receive CQs were created with IBV_WC_EX_WITH_COMPLETION_TIMESTAMP and
 * _WALLCLOCK exchanges SENDs, and every completion's stamp lies between
 * its post and its poll (in both clocks) and never goes back on its CQ.
 * A completion field shca cannot fill is refused.  Prints TAP; exits 0, 1 or 4
 * (no such device).
 */

#include <errno.h>
#include <stdlib.h>
#include <infiniband/verbs.h>

#include "shca_test.h"

#define N_CASES		6
#define N_MSGS		64
#define MSG_LEN		256
#define TS_FLAGS	(IBV_WC_STANDARD_FLAGS | \
			 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
			 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
/* slack for the wall clock, converted at the read with the offset then */
#define WALL_SLACK_NS	1000000ULL

struct state {
	struct test_dev d;
	struct ibv_cq_ex *cq[2];	/* 0: sends, 1: receives */
	struct ibv_qp *qp[2];
	struct ibv_mr *mr;
	uint8_t *buf;
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + t.tv_nsec;
}

static void case_clock(struct state *s)
{
	struct ibv_device_attr_ex ax = {};
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	uint64_t t0, t1, raw;
	int ret;

	ret = ibv_query_device_ex(s->d.ctx, NULL, &ax);
	if (ret || ax.hca_core_clock != 1000000)
		failf("ibv_query_device_ex: %d, hca_core_clock %llu kHz", ret,
		      (unsigned long long)ax.hca_core_clock);
	case_result(!why[0], "hca_core_clock is 1000000 kHz (1 ns per tick)");

	t0 = clock_ns(CLOCK_MONOTONIC);
	ret = ibv_query_rt_values_ex(s->d.ctx, &v);
	t1 = clock_ns(CLOCK_MONOTONIC);
	raw = (uint64_t)v.raw_clock.tv_sec * 1000000000ULL +
	      v.raw_clock.tv_nsec;
	if (ret || !(v.comp_mask & IBV_VALUES_MASK_RAW_CLOCK))
		failf("ibv_query_rt_values_ex: %d, comp_mask %#x", ret,
		      v.comp_mask);
	else if (raw < t0 || raw > t1)
		failf("raw clock %llu outside [%llu, %llu]",
		      (unsigned long long)raw, (unsigned long long)t0,
		      (unsigned long long)t1);
	case_result(!why[0], "ibv_query_rt_values_ex: the raw clock lies between two reads of CLOCK_MONOTONIC");
}

static struct ibv_cq_ex *cq_create(struct state *s, uint64_t wc_flags)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 2 * N_MSGS,
					  .wc_flags = wc_flags };

	return ibv_create_cq_ex(s->d.ctx, &ca);
}

static bool make_pair(struct state *s)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = N_MSGS, .max_recv_wr = N_MSGS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct test_dev pair[2] = { s->d, s->d };
	int i;

	for (i = 0; i < 2; i++) {
		s->cq[i] = cq_create(s, TS_FLAGS);
		if (!s->cq[i]) {
			failf("ibv_create_cq_ex with timestamps: errno %d",
			      errno);
			return false;
		}
	}
	qa.send_cq = ibv_cq_ex_to_cq(s->cq[0]);
	qa.recv_cq = ibv_cq_ex_to_cq(s->cq[1]);
	for (i = 0; i < 2; i++) {
		s->qp[i] = ibv_create_qp(s->d.pd, &qa);
		if (!s->qp[i]) {
			failf("ibv_create_qp: errno %d", errno);
			return false;
		}
	}
	s->buf = zalloc(2 * N_MSGS * MSG_LEN);
	if (!s->buf)
		return false;
	s->mr = ibv_reg_mr(s->d.pd, s->buf, 2 * N_MSGS * MSG_LEN,
			   IBV_ACCESS_LOCAL_WRITE);
	if (!s->mr) {
		failf("ibv_reg_mr: errno %d", errno);
		return false;
	}
	return !rc_pair_connect(pair, s->qp, 1000, IBV_MTU_1024);
}

/*
 * Poll @n completions from @cq; each must be a success whose two stamps
 * lie in [@mono0, now] and [@real0, now + slack] and do not go back.
 */
static void poll_check(struct ibv_cq_ex *cq, int n, uint64_t mono0,
		       uint64_t real0, const char *what)
{
	struct ibv_poll_cq_attr pa = {};
	uint64_t last = 0, ts, wall, mono1, real1;
	double end = now_ms() + SCALED_MS(5000);
	int got = 0, ret;

	while (got < n && now_ms() < end) {
		ret = ibv_start_poll(cq, &pa);
		if (ret == ENOENT)
			continue;
		if (ret) {
			failf("%s: ibv_start_poll: %d", what, ret);
			return;
		}
		do {
			mono1 = clock_ns(CLOCK_MONOTONIC);
			real1 = clock_ns(CLOCK_REALTIME);
			ts = ibv_wc_read_completion_ts(cq);
			wall = ibv_wc_read_completion_wallclock_ns(cq);
			if (cq->status != IBV_WC_SUCCESS)
				failf("%s %d: %s", what, got,
				      st_str(cq->status));
			if (ts < mono0 || ts > mono1 || ts < last)
				failf("%s %d: stamp %llu, posted from %llu, polled at %llu, previous %llu",
				      what, got, (unsigned long long)ts,
				      (unsigned long long)mono0,
				      (unsigned long long)mono1,
				      (unsigned long long)last);
			if (wall + WALL_SLACK_NS < real0 ||
			    wall > real1 + WALL_SLACK_NS)
				failf("%s %d: wall clock stamp %llu outside [%llu, %llu]",
				      what, got, (unsigned long long)wall,
				      (unsigned long long)real0,
				      (unsigned long long)real1);
			last = ts;
			got++;
		} while (got < n && ibv_next_poll(cq) == 0);
		ibv_end_poll(cq);
	}
	if (got != n)
		failf("%s: %d completions of %d", what, got, n);
}

static void case_traffic(struct state *s)
{
	struct ibv_sge sg = { .length = MSG_LEN, .lkey = s->mr->lkey };
	struct send_args a = { .op = IBV_WR_SEND, .sg = &sg, .nsge = 1,
			       .flags = IBV_SEND_SIGNALED };
	uint64_t mono0, real0;
	int i;

	for (i = 0; i < N_MSGS; i++) {
		sg.addr = (uintptr_t)s->buf + (N_MSGS + i) * MSG_LEN;
		if (post_recv1(s->qp[1], NULL, i, &sg, 1))
			failf("post_recv %d failed", i);
	}
	mono0 = clock_ns(CLOCK_MONOTONIC);
	real0 = clock_ns(CLOCK_REALTIME);
	for (i = 0; i < N_MSGS; i++) {
		sg.addr = (uintptr_t)s->buf + i * MSG_LEN;
		a.wr_id = i;
		if (post_send1(s->qp[0], &a))
			failf("post_send %d failed", i);
	}
	poll_check(s->cq[0], N_MSGS, mono0, real0, "send completion");
	poll_check(s->cq[1], N_MSGS, mono0, real0, "receive completion");
	case_result(!why[0], "64 SENDs: each send and receive completion stamped between its post and its poll in both clocks, never going back");
}

static void case_refused(struct state *s)
{
	struct ibv_cq_ex *cq = cq_create(s, IBV_WC_EX_WITH_FLOW_TAG);

	if (cq) {
		failf("created");
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	} else if (errno != EOPNOTSUPP) {
		failf("errno %d, expected EOPNOTSUPP", errno);
	}
	case_result(!why[0], "an extended CQ asking for a flow tag is refused (EOPNOTSUPP)");
}

static void destroy(struct state *s)
{
	int i;

	mr_dereg(s->mr);
	qps_destroy(s->qp, 2);
	for (i = 0; i < 2; i++)
		if (s->cq[i] && ibv_destroy_cq(ibv_cq_ex_to_cq(s->cq[i])))
			failf("destroying CQ %d failed", i);
	free(s->buf);
	case_result(!why[0], "everything destroyed");
}

int main(int argc, char **argv)
{
	struct state s = {};
	bool ok;
	int rc;

	rc = tdev_main_open(&s.d, argc, argv, N_CASES);
	if (rc)
		return rc;

	case_clock(&s);
	ok = make_pair(&s);
	case_result(ok, "an RC pair whose CQs report both completion timestamps");
	if (ok)
		case_traffic(&s);
	else
		case_result(0, "64 SENDs with timestamps: not run");
	case_refused(&s);
	destroy(&s);
	tdev_close(&s.d);
	return n_failed ? KSFT_FAIL : KSFT_PASS;
}
