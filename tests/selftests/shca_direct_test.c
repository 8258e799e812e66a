// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_direct_test: a direct QP that starts streaming must be watched
 * again, and a ping-pong must keep it direct.
 *
 *   shca_direct_test CLIENT_DEVICE SERVER_DEVICE
 *
 * One RC QP on each device (the devices of two hosts: their traffic goes
 * through the IP stack).  The server thread runs on CPU 0 and the client
 * (this thread) on CPU 1, both busy-polling their CQs, so the engine's
 * poller can only look from its timer.  First a ping-pong of PINGS SENDs
 * and replies: the client's QP must go direct (db_direct) and stay so
 * (db_direct_ends still), every post ringing.  Then the client streams
 * STREAM SENDs, up to DEPTH outstanding, that the server only receives:
 * the QP must be watched again, under one doorbell per 100 messages.
 * Over a veth each message of the stream completes within the doorbell
 * call that sent it, so every post of the stream finds the ring as a
 * ping-pong's would; only the missing answers tell the two apart.  Every
 * message must arrive once, in order, intact.  Prints TAP; exits 0, 1,
 * or 4 (a device missing, or fewer than two CPUs).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "shca_test.h"

#define N_CASES		4
#define PINGS		1000
#define STREAM		10000
#define DEPTH		32
#define SIGNAL_EVERY	8
#define MSG		64
#define RQ_SLOTS	512
#define SQ_SLOTS	(2 * DEPTH)	/* send buffers, none reused in flight */
#define STALL_MS	SCALED_MS(30000)

struct side {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;		/* RQ_SLOTS receive slots, then SQ_SLOTS */
};

static struct test_dev dev[2];
static struct side sd[2];	/* 0: the client, 1: the server */

/* what the server thread saw */
static struct {
	int received;		/* messages, pings and stream */
	int bad;		/* out of order or damaged */
	int errors;		/* error completions, failed posts, stalls */
	char what[256];		/* the first problem */
} srv;

static void srv_problem(int *count, const char *fmt, unsigned long long v)
{
	if (!srv.what[0])
		snprintf(srv.what, sizeof(srv.what), fmt, v);
	(*count)++;
}

static bool pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return !pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static uint8_t *send_buf(struct side *s, uint64_t seq)
{
	return s->buf + (RQ_SLOTS + seq % SQ_SLOTS) * MSG;
}

/* Message @seq: its number, then a pattern made from it. */
static void msg_fill(uint8_t *p, uint64_t seq)
{
	memcpy(p, &seq, sizeof(seq));
	pattern(p + sizeof(seq), MSG - sizeof(seq), (uint32_t)seq + 1);
}

static bool msg_ok(const uint8_t *p, uint64_t seq)
{
	uint8_t want[MSG];

	msg_fill(want, seq);
	return !memcmp(p, want, MSG);
}

static int post_recv_slot(struct side *s, int slot)
{
	struct ibv_sge sg = {
		(uintptr_t)(s->buf + slot * MSG), MSG, s->mr->lkey
	};

	return post_recv1(s->qp, NULL, slot, &sg, 1);
}

static int post_msg(struct side *s, uint64_t seq, bool signaled)
{
	uint8_t *p = send_buf(s, seq);
	struct ibv_sge sg = { (uintptr_t)p, MSG, s->mr->lkey };
	struct send_args a = {
		.wr_id = seq, .op = IBV_WR_SEND, .sg = &sg, .nsge = 1,
		.flags = signaled ? IBV_SEND_SIGNALED : 0,
	};

	msg_fill(p, seq);
	return post_send1(s->qp, &a);
}

/*
 * Busy-poll @s's CQ for one completion (no nap: the CPU must stay busy).
 * Returns 1, or 0 after STALL_MS without one, -1 on an error.
 */
static int spin_one(struct side *s, struct ibv_wc *wc)
{
	double end = now_ms() + STALL_MS;
	unsigned int k = 0;
	int n;

	for (;;) {
		n = ibv_poll_cq(s->cq, 1, wc);
		if (n)
			return n < 0 ? -1 : 1;
		if (!(++k & 1023) && now_ms() > end)
			return 0;
	}
}

/* The server: take every message; answer the pings. */
static void *server(void *arg)
{
	struct side *s = &sd[1];
	struct ibv_wc wc;
	uint64_t seq;
	int n;

	(void)arg;
	pin(0);
	while (srv.received < PINGS + STREAM) {
		n = spin_one(s, &wc);
		if (n <= 0 || wc.status != IBV_WC_SUCCESS) {
			srv_problem(&srv.errors, "server: completion status %llu",
				    n <= 0 ? 999 : wc.status);
			return NULL;
		}
		if (wc.opcode != IBV_WC_RECV)
			continue;	/* a reply's completion */
		seq = srv.received++;
		if (wc.byte_len != MSG ||
		    !msg_ok(s->buf + wc.wr_id * MSG, seq))
			srv_problem(&srv.bad, "message %llu out of order or damaged",
				    seq);
		if (post_recv_slot(s, wc.wr_id) ||
		    (seq < PINGS && post_msg(s, seq, true))) {
			srv_problem(&srv.errors, "server: post failed at %llu",
				    seq);
			return NULL;
		}
	}
	return NULL;
}

struct ctr3 {
	unsigned long long direct, ends, rings;
};

static void ctr3_read(struct ctr3 *c)
{
	const char *name = dev[0].name;

	counters_next_jiffy();
	if (!ctr_read(name, "db_direct", &c->direct))
		failf("%s has no counter db_direct", name);
	if (!ctr_read(name, "db_direct_ends", &c->ends))
		failf("%s has no counter db_direct_ends", name);
	if (!ctr_read(name, "db_rings", &c->rings))
		failf("%s has no counter db_rings", name);
}

/* The client's ping-pong: each SEND waits for the server's reply. */
static bool pings(void)
{
	struct side *s = &sd[0];
	struct ibv_wc wc;
	int i, n;

	for (i = 0; i < PINGS; i++) {
		if (post_msg(s, i, true)) {
			failf("ping %d: post failed", i);
			return false;
		}
		do {
			n = spin_one(s, &wc);
			if (n <= 0 || wc.status != IBV_WC_SUCCESS) {
				failf("ping %d: %s", i, n <= 0 ?
				      "no completion" : st_str(wc.status));
				return false;
			}
			if (wc.opcode == IBV_WC_RECV &&
			    post_recv_slot(s, wc.wr_id)) {
				failf("ping %d: repost failed", i);
				return false;
			}
		} while (wc.opcode != IBV_WC_RECV);
	}
	return true;
}

/* The client's stream: DEPTH outstanding, every SIGNAL_EVERY-th signaled */
static bool stream(void)
{
	struct side *s = &sd[0];
	int posted = 0, done = 0, n;
	struct ibv_wc wc;

	while (done < STREAM) {
		while (posted < STREAM && posted - done < DEPTH) {
			if (post_msg(s, PINGS + posted,
				     (posted + 1) % SIGNAL_EVERY == 0)) {
				failf("stream: post %d failed", posted);
				return false;
			}
			posted++;
		}
		n = spin_one(s, &wc);
		if (n <= 0 || wc.status != IBV_WC_SUCCESS) {
			failf("stream after %d: %s", done, n <= 0 ?
			      "no completion" : st_str(wc.status));
			return false;
		}
		/* a ping's late send completion is not the stream's */
		if (wc.wr_id >= PINGS)
			done += SIGNAL_EVERY;
	}
	return true;
}

static int setup(void)
{
	struct qp_spec spec = qp_spec_simple(4 * RQ_SLOTS, RQ_SLOTS);
	struct ibv_qp *qp[2];
	struct ibv_cq *cq[2];
	size_t len = (RQ_SLOTS + SQ_SLOTS) * MSG;
	int i, k;

	if (qp_pair_create(dev, &spec, qp, cq))
		return -1;
	for (i = 0; i < 2; i++) {
		sd[i].qp = qp[i];
		sd[i].cq = cq[i];
		sd[i].buf = zalloc(len);
		if (!sd[i].buf)
			return -1;
		sd[i].mr = ibv_reg_mr(dev[i].pd, sd[i].buf, len,
				      IBV_ACCESS_LOCAL_WRITE);
		if (!sd[i].mr) {
			failf("ibv_reg_mr: %s", strerror(errno));
			return -1;
		}
	}
	if (rc_pair_connect(dev, qp, 0x100, IBV_MTU_1024))
		return -1;
	for (i = 0; i < 2; i++)
		for (k = 0; k < RQ_SLOTS; k++)
			if (post_recv_slot(&sd[i], k)) {
				failf("posting receives: %s", strerror(errno));
				return -1;
			}
	return 0;
}

static void teardown(void)
{
	int i;

	for (i = 0; i < 2; i++) {
		qp_cqs_destroy(sd[i].qp, sd[i].cq, NULL, dev[i].name);
		mr_dereg(sd[i].mr);
		free(sd[i].buf);
	}
	tdev_close(&dev[0]);
	tdev_close(&dev[1]);
}

int main(int argc, char **argv)
{
	struct ctr3 c0 = {}, c1 = {}, c2 = {};
	bool ok = false;
	pthread_t th;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: %s CLIENT_DEVICE SERVER_DEVICE\n",
			argv[0]);
		return 2;
	}
	printf("TAP version 13\n1..%d\n", N_CASES);
	dev[0] = (struct test_dev){ .name = argv[1], .gidx = -1 };
	dev[1] = (struct test_dev){ .name = argv[2], .gidx = -1 };
	rc = tdev_open_pair(dev);
	if (!rc && (sysconf(_SC_NPROCESSORS_ONLN) < 2 || !pin(1))) {
		fprintf(stderr, "two CPUs are needed\n");
		rc = KSFT_SKIP;
	}
	if (rc)
		return tap_skip_all(N_CASES, rc, dev);

	if (!setup() && !pthread_create(&th, NULL, server, NULL)) {
		ctr3_read(&c0);
		ok = pings();
		ctr3_read(&c1);
		ok = ok && stream();
		pthread_join(th, NULL);
		ctr3_read(&c2);
	}
	diag("ping-pong: db_direct +%llu, db_direct_ends +%llu, %llu doorbells for %d messages",
	     c1.direct - c0.direct, c1.ends - c0.ends, c1.rings - c0.rings,
	     PINGS);
	diag("stream: db_direct +%llu, db_direct_ends +%llu, %llu doorbells for %d messages",
	     c2.direct - c1.direct, c2.ends - c1.ends, c2.rings - c1.rings,
	     STREAM);
	if (!ok)
		failf("the run did not complete");
	case_result(ok && c1.direct > c0.direct,
		    "a ping-pong with both CPUs busy made the client's QP direct");
	case_result(ok && c1.direct > c0.direct && c1.ends == c0.ends,
		    "the ping-pong's answers kept it direct");
	case_result(ok && c2.ends > c1.ends &&
		    c2.rings - c1.rings < STREAM / 100,
		    "a stream on the direct QP: watched again, < 1 doorbell per 100 messages");
	if (srv.what[0])
		failf("%s (%d damaged, %d errors)", srv.what, srv.bad,
		      srv.errors);
	case_result(ok && srv.received == PINGS + STREAM && !srv.bad &&
		    !srv.errors, "every message arrived once, in order, intact");
	teardown();
	return n_failed ? KSFT_FAIL : KSFT_PASS;
}
