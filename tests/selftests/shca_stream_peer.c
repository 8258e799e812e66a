// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_stream_test's peer mode: the responder runs in a child process
 * and disappears while WRs are outstanding.
 */

#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
#include <arpa/inet.h>

#include "shca_stream.h"

/* ------------------------------------------------------------------ */
/* peer mode                                                            */

#define PEER_MSG	(16 * 1024)
#define PEER_RECVS	4

static int xfer(int fd, void *buf, size_t n, bool wr)
{
	uint8_t *p = buf;

	while (n) {
		ssize_t r = wr ? write(fd, p, n) : read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/*
 * The responder's process: set up its QP and a buffer for the WRITEs and
 * READs, exchange connection details over the pipes, then wait until the
 * parent closes its end (or kills it).
 */
static void __attribute__((noreturn)) peer_child(int rfd, int wfd)
{
	size_t len = (size_t)opt.depth * PEER_MSG;
	struct conn me, them;
	struct ibv_mr *mr;
	struct ep e;
	uint8_t *buf;
	char c = 'R';

	if (tdev_open(&g.dev[1]))
		_exit(1);
	buf = zalloc(len);
	mr = buf ? reg(1, buf, len, MR_ACC_ALL) : NULL;
	if (!mr || ep_create(&e, 1, 1, 1)) {
		fprintf(stderr, "peer: %s\n", why);
		_exit(1);
	}
	conn_of(&e, &me);
	me.addr = (uintptr_t)buf;
	me.rkey = mr->rkey;
	if (xfer(wfd, &me, sizeof(me), true) ||
	    xfer(rfd, &them, sizeof(them), false) || ep_connect(&e, &them) ||
	    xfer(wfd, &c, 1, true)) {
		fprintf(stderr, "peer: set-up failed %s\n", why);
		_exit(1);
	}
	while (read(rfd, &c, 1) > 0)
		;
	ep_destroy(&e);
	ibv_dereg_mr(mr);
	tdev_close(&g.dev[1]);
	_exit(0);
}

struct peer {
	pid_t pid;
	int rfd, wfd;
	struct ep e;
	struct conn them;
	uint8_t *buf;
	struct ibv_mr *mr;
	uint64_t posted, done;
	double t_err;		/* when the error completion was polled */
};

static int peer_start(struct peer *p)
{
	int p2c[2], c2p[2];
	struct conn me;
	unsigned int i;
	char c;

	if (pipe(p2c) || pipe(c2p)) {
		failf("pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	p->pid = fork();
	if (p->pid < 0) {
		failf("fork: %s", strerror(errno));
		return -1;
	}
	if (!p->pid) {
		close(p2c[1]);
		close(c2p[0]);
		peer_child(p2c[0], c2p[1]);
	}
	close(p2c[0]);
	close(c2p[1]);
	p->rfd = c2p[0];
	p->wfd = p2c[1];
	if (tdev_open(&g.dev[0])) {
		failf("cannot open %s", g.dev[0].name);
		return -1;
	}
	p->buf = zalloc((size_t)opt.depth * PEER_MSG);
	if (!p->buf)
		return -1;
	p->mr = reg(0, p->buf, (size_t)opt.depth * PEER_MSG,
		    IBV_ACCESS_LOCAL_WRITE);
	if (!p->mr || ep_create(&p->e, 0, opt.depth + 4, PEER_RECVS))
		return -1;
	if (xfer(p->rfd, &p->them, sizeof(p->them), false)) {
		failf("the peer process failed to set up");
		return -1;
	}
	conn_of(&p->e, &me);
	if (xfer(p->wfd, &me, sizeof(me), true) ||
	    ep_connect(&p->e, &p->them) || xfer(p->rfd, &c, 1, false)) {
		failf("connecting to the peer process failed");
		return -1;
	}
	for (i = 0; i < PEER_RECVS; i++)
		if (post_recv(&p->e, i, p->buf, 64, p->mr->lkey))
			return -1;
	return 0;
}

static void peer_stop(struct peer *p)
{
	int st;

	if (p->wfd > 0)
		close(p->wfd);
	if (p->rfd > 0)
		close(p->rfd);
	if (p->pid > 0)
		waitpid(p->pid, &st, 0);
	ep_destroy(&p->e);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	free(p->buf);
}

/* WRITEs and READs alternate, each with its own 16 KiB slot. */
static int peer_post(struct peer *p)
{
	uint64_t k = p->posted++;
	size_t off = (k % opt.depth) * PEER_MSG;

	return post_send(&p->e, k, k % 2 ? IBV_WR_RDMA_READ :
			 IBV_WR_RDMA_WRITE, p->buf + off, PEER_MSG,
			 p->mr->lkey, p->them.addr + off, p->them.rkey, 0);
}

/* Keep the queue full until WARM WRs completed successfully. */
static bool peer_warm(struct peer *p, uint64_t warm)
{
	double last = now_ms();
	unsigned int rounds = 0;
	struct ibv_wc wc;
	int r;

	while (p->done < warm) {
		while (p->posted - p->done < opt.depth)
			if (peer_post(p))
				return false;
		r = cq_poll(p->e.scq, &wc, 1);
		if (r < 0)
			return false;
		if (r && !wc_ok(&wc, "send queue", p->done, IBV_WC_SUCCESS,
				p->e.qp))
			return false;
		if (r) {
			p->done++;
			last = now_ms();
			rounds = 0;
			continue;
		}
		idle(&rounds);
		if (now_ms() - last > STALL_MS) {
			failf("stalled before the peer went away");
			return false;
		}
	}
	return true;
}

/*
 * One completion while the peer goes away: successes (answered before it
 * went) in order, then RETRY_EXC_ERR for the oldest WR, then every other
 * WR flushed, in order.
 */
static bool peer_wc(struct peer *p, const struct ibv_wc *wc)
{
	enum ibv_wc_status want = IBV_WC_WR_FLUSH_ERR;

	if (!p->t_err)
		want = wc->status == IBV_WC_SUCCESS ? IBV_WC_SUCCESS :
		       IBV_WC_RETRY_EXC_ERR;
	if (!wc_ok(wc, "send queue", p->done, want, p->e.qp))
		return false;
	if (want == IBV_WC_RETRY_EXC_ERR)
		p->t_err = now_ms();
	p->done++;
	return true;
}

/* Start the command that makes the peer disappear; its pid, or 0. */
static pid_t peer_cmd_start(void)
{
	pid_t pid;

	if (!opt.cmd)
		return 0;
	fflush(NULL);
	pid = fork();
	if (!pid) {
		execl("/bin/sh", "sh", "-c", opt.cmd, (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		failf("fork: %s", strerror(errno));
	return pid;
}

/*
 * Make the peer disappear (kill its process, run the command) while the
 * queue stays full, until the error came and every WR completed.  Sets
 * *T0 (start) and *T1 (the peer is gone: process dead, command done).
 */
static bool peer_disappear(struct peer *p, double *t0, double *t1)
{
	double tmo = 4.096e-3 * (1u << opt.timeout), limit = 0;
	unsigned int rounds = 0;
	struct ibv_wc wc;
	pid_t cmd;
	int st, r;

	*t0 = now_ms();
	if (opt.kill_peer) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, &st, 0);
		p->pid = 0;
	}
	cmd = peer_cmd_start();
	if (cmd < 0)
		return false;
	*t1 = cmd ? 0 : now_ms();
	while (!p->t_err || p->done < p->posted) {
		if (cmd && waitpid(cmd, &st, WNOHANG) == cmd) {
			*t1 = now_ms();
			cmd = 0;
			if (!WIFEXITED(st) || WEXITSTATUS(st))
				failf("'%s' failed (status 0x%x)", opt.cmd, st);
		}
		if (*t1 && !limit)
			limit = *t1 + (opt.retry_cnt + 1) * tmo + opt.slack_ms +
				10000;
		/* the queue stays full until the error comes */
		while (!p->t_err && p->posted - p->done < opt.depth)
			if (peer_post(p))
				return false;
		r = cq_poll(p->e.scq, &wc, 1);
		if (r < 0 || (r && !peer_wc(p, &wc)))
			return false;
		if (r)
			rounds = 0;
		else
			idle(&rounds);
		if (!r && (limit ? now_ms() > limit :
			   now_ms() > *t0 + 60000)) {
			failf("%s: %llu of %llu WRs completed, QP state %d",
			      !*t1 ? "the command still runs after 60 s" :
			      p->t_err ? "not every WR flushed 10 s late" :
			      "no RETRY_EXC_ERR 10 s late",
			      (unsigned long long)p->done,
			      (unsigned long long)p->posted, qp_state(p->e.qp));
			return false;
		}
	}
	if (cmd)
		waitpid(cmd, &st, 0);
	if (!*t1)
		*t1 = now_ms();
	return true;
}

/* WRs posted to the QP in error and its receives are flushed. */
static void peer_flushed(struct peer *p)
{
	struct ibv_wc wc;
	uint64_t i;

	for (i = 0; i < 2; i++)
		if (peer_post(p))
			return;
	for (; p->done < p->posted; p->done++)
		if (poll_one(p->e.scq, &wc, 2000) != 1 ||
		    !wc_ok(&wc, "send queue (posted after the error)", p->done,
			   IBV_WC_WR_FLUSH_ERR, p->e.qp))
			return;
	for (i = 0; i < PEER_RECVS; i++)
		if (poll_one(p->e.rcq, &wc, 2000) != 1 ||
		    !wc_ok(&wc, "receive queue", i, IBV_WC_WR_FLUSH_ERR,
			   p->e.qp))
			return;
	if (qp_state(p->e.qp) != IBV_QPS_ERR)
		failf("QP state %d, expected ERR", qp_state(p->e.qp));
}

/* The error arrived in time, after the retries. */
static void peer_timing(struct peer *p, double t0, double t1,
			const struct ctrs *c0)
{
	double tmo = 4.096e-3 * (1u << opt.timeout);
	double hi = (opt.retry_cnt + 1) * tmo + opt.slack_ms;
	double lo = opt.retry_cnt * tmo / 2;
	unsigned long long to;
	struct ctrs c1;

	ctrs_read(g.dev[0].name, &c1);
	to = ctrs_get(&c1, "timeouts") - ctrs_get(c0, "timeouts");
	diag("peer gone in %.0f ms; RETRY_EXC_ERR %.0f ms after it was gone (%.0f ms after it started going); ACK timeout %.1f ms x (retry_cnt %u + 1) = %.0f ms; %llu timeouts; %llu WRs",
	     t1 - t0, p->t_err - t1, p->t_err - t0, tmo, opt.retry_cnt,
	     (opt.retry_cnt + 1) * tmo, to, (unsigned long long)p->posted);
	if (p->t_err - t1 > hi)
		failf("RETRY_EXC_ERR %.0f ms after the peer was gone: later than (retry_cnt + 1) x timeout + %u ms slack = %.0f ms",
		      p->t_err - t1, opt.slack_ms, hi);
	if (p->t_err - t0 < lo)
		failf("RETRY_EXC_ERR %.0f ms after the peer started going: sooner than retry_cnt x timeout / 2 = %.0f ms",
		      p->t_err - t0, lo);
	if (ctrs_get(&c1, "timeouts") && to < opt.retry_cnt + 1)
		failf("%llu ACK timeouts counted, retry_cnt %u needs at least %u",
		      to, opt.retry_cnt, opt.retry_cnt + 1);
}

void run_peer(void)
{
	struct peer p = {};
	double t0, t1;
	struct ctrs c0;

	if (peer_start(&p) || !peer_warm(&p, 2 * opt.depth)) {
		tap_result("traffic flows before the peer goes away");
		goto out;
	}
	tap_result("traffic flows before the peer goes away (%llu WRITE/READs of %u bytes, %u outstanding)",
		   (unsigned long long)p.done, PEER_MSG, opt.depth);
	ctrs_read(g.dev[0].name, &c0);
	if (peer_disappear(&p, &t0, &t1))
		peer_timing(&p, t0, t1, &c0);
	tap_result("the oldest WR fails with RETRY_EXC_ERR in time, every other outstanding WR is flushed in order");
	peer_flushed(&p);
	tap_result("QP in ERR; WRs posted afterwards and the receives are flushed");
	ctrs_diag(g.dev[0].name, &c0);
out:
	peer_stop(&p);
	tdev_close(&g.dev[0]);
}
