// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_qplife_test ackwait: a QP reset while the ACK it owes is out.
 *
 * The receive path sends a positive ACK after dropping the QP's lock, and
 * a modify that changes the QP's address, destination or state to RESET
 * must wait for such an ACK to have gone: it is built from them.  The
 * driver's fault injection holds one such ACK for HOLD_MS (rkey_hold_at
 * 3), busy in the softirq of the CPU that received the SEND; a thread on
 * the other CPU sees the hold begin and resets the QP.  The reset must
 * end only after the hold (it waited), and must have slept rather than
 * spun meanwhile.  Both are judged beyond what a reset with no ACK out
 * costs (the sender's QP's, reset next): at least MIN_WAIT_MS more wall
 * time, and of that at most CPU_SHARE more of its thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID); a spinning wait takes all of it.  A try
 * whose hold was over before the reset began is tried again, on new QPs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "shca_qplife.h"
#include "shca_test.h"

#define TRIES		4
#define BUF		256
#define WAIT_MS		SCALED_MS(20000)
#define MIN_WAIT_MS	10.0	/* the reset must have waited at least this */
#define CPU_SHARE	0.6	/* of it spent on a CPU, at most */

/* one try: a connected pair, the receiver's QP reset during the hold */
struct try {
	struct ibv_qp *qp[2];
	struct ibv_cq *cq[2];
	struct ibv_mr *mr[2];
	long holds0, done0;	/* fault counters before the SEND */
	long done_start, done_end; /* holds ended when the reset began, ended */
	int claimed;		/* 1: a thread reset the QP; 2: no SEND */
	int ret;		/* ibv_modify_qp()'s */
	double wall_ms, cpu_ms;
};

static struct test_dev d[2];
static char buf[2][BUF];

/* this thread's time on a CPU (the scheduler's count, not tick samples) */
static double thread_cpu_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return -1;
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

/* reset @qp: ibv_modify_qp()'s return, its wall and CPU time */
static int reset_timed(struct ibv_qp *qp, double *wall_ms, double *cpu_ms)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	double t0, c0;
	int ret;

	c0 = thread_cpu_ms();
	t0 = now_ms();
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	*wall_ms = now_ms() - t0;
	*cpu_ms = thread_cpu_ms() - c0;
	return ret;
}

static void reset_now(struct try *t)
{
	t->done_start = fault_get("rkey_holds_done");
	t->ret = reset_timed(t->qp[1], &t->wall_ms, &t->cpu_ms);
	t->done_end = fault_get("rkey_holds_done");
}

/* on one CPU: wait for the hold to begin; the first to see it resets */
static void *watch(void *arg)
{
	struct try *t = arg;

	if (hold_claim(&t->claimed, t->holds0, WAIT_MS))
		reset_now(t);
	return NULL;
}

static int post_send_recv(struct try *t)
{
	struct ibv_sge s = { .addr = (uintptr_t)buf[0], .length = BUF,
			     .lkey = t->mr[0]->lkey };
	struct ibv_sge r = { .addr = (uintptr_t)buf[1], .length = BUF,
			     .lkey = t->mr[1]->lkey };
	struct send_args a = { .wr_id = 1, .op = IBV_WR_SEND, .sg = &s,
			       .nsge = 1, .flags = IBV_SEND_SIGNALED };

	if (post_recv1(t->qp[1], NULL, 2, &r, 1) || post_send1(t->qp[0], &a)) {
		fprintf(stderr, "post: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* the SEND and its receive, watch() running on every CPU meanwhile */
static int send_act(void *arg)
{
	struct try *t = arg;

	if (!post_send_recv(t))
		return 0;
	__atomic_store_n(&t->claimed, 2, __ATOMIC_RELEASE);
	return -1;
}

static int try_open(struct try *t)
{
	struct qp_spec spec = qp_spec_simple(16, 8);
	int i;

	if (qp_pair_create(d, &spec, t->qp, t->cq) ||
	    rc_pair_connect(d, t->qp, 500, IBV_MTU_1024))
		return -1;
	for (i = 0; i < 2; i++) {
		t->mr[i] = ibv_reg_mr(d[i].pd, buf[i], BUF,
				      IBV_ACCESS_LOCAL_WRITE);
		if (!t->mr[i])
			return -1;
	}
	return 0;
}

static void try_close(struct try *t)
{
	int i;

	for (i = 0; i < 2; i++) {
		qp_cqs_destroy(t->qp[i], t->cq[i], NULL, d[i].name);
		mr_dereg(t->mr[i]);
	}
	why_flush();
}

/*
 * Did the reset of @t wait for the held ACK, asleep?  Judged beyond what
 * a reset with no ACK out costs (@base_wall, @base_cpu: the sender's
 * QP's, measured after it), which a debug kernel makes several ms.
 */
static bool waited_asleep(const struct try *t, double base_wall,
			  double base_cpu)
{
	double wait = t->wall_ms - base_wall, cpu = t->cpu_ms - base_cpu;

	printf("beyond a plain reset: %.1f ms waited, %.1f ms of CPU\n",
	       wait, cpu);
	return !t->ret && t->done_end > t->done0 && wait >= MIN_WAIT_MS &&
	       cpu <= CPU_SHARE * wait;
}

/*
 * One try: 1 when the reset ran inside the hold (then *@ok says whether
 * it waited for it, asleep), 0 when it missed the hold, -1 on an error.
 */
static int try_once(int hold_ms, bool *ok)
{
	struct try t = { 0 };
	double base_wall, base_cpu;
	int rc = -1;

	if (try_open(&t)) {
		fprintf(stderr, "RC pair: %s\n", strerror(errno));
		why_flush();
		goto out;
	}
	t.holds0 = fault_get("rkey_holds");
	t.done0 = fault_get("rkey_holds_done");
	if (t.holds0 < 0 || !fault_arm(3, 0, hold_ms)) {
		fprintf(stderr, "cannot arm the hold in %s\n", FAULT_DIR);
		goto out;
	}
	rc = run_with_watchers(watch, send_act, &t);
	fault_set("rkey_hold_arm", 0);
	if (rc)
		goto out;
	printf("reset: %s after %.1f ms, %.1f ms of CPU; holds ended when it began %ld, when it ended %ld\n",
	       t.claimed == 1 ? (t.ret ? strerror(t.ret) : "done") : "not run",
	       t.wall_ms, t.cpu_ms, t.done_start - t.done0,
	       t.done_end - t.done0);
	rc = t.claimed == 1 && t.done_start == t.done0;
	/* for comparison: a reset with no ACK out (the sender's QP) */
	if (reset_timed(t.qp[0], &base_wall, &base_cpu)) {
		fprintf(stderr, "reset: %s\n", strerror(errno));
		rc = -1;
		goto out;
	}
	printf("a reset with no ACK out: %.1f ms, %.1f ms of CPU\n",
	       base_wall, base_cpu);
	*ok = waited_asleep(&t, base_wall, base_cpu);
out:
	try_close(&t);
	return rc;
}

int ack_wait(const char *name, const char *peer, int hold_ms)
{
	bool ok = false;
	int i, rc, got = 0;

	if (hold_ms <= 0)
		return 2;
	d[0].name = name;
	d[1].name = peer;
	d[0].gidx = d[1].gidx = -1;
	rc = tdev_open_pair(d);
	for (i = 0; !rc && i < TRIES && !got; i++) {
		got = try_once(hold_ms, &ok);
		if (got < 0)
			break;
	}
	tdev_close(&d[0]);
	tdev_close(&d[1]);
	if (rc)
		return 1;
	if (got <= 0) {
		fprintf(stderr, "no reset ran inside the hold in %d tries\n", i);
		return 1;
	}
	if (!ok)
		fprintf(stderr, "the reset did not wait for the held ACK asleep\n");
	return !ok;
}
