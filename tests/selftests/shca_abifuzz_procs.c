// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_abifuzz_test phases (b) and (d): other processes.
 *
 * (b) fork: a child inherits the parent's contexts and objects, runs
 * random calls on them (posting, polling, modifying, destroying) and
 * exits without cleaning up; the parent then carries on with objects
 * some of which the kernel no longer has, and cleans up what it can.
 *
 * (d) SIGKILL: a child opens devices of its own, creates many objects,
 * starts traffic between two RC QP pairs and many other WRs, and is
 * killed at a random moment, set-up included; the kernel must free
 * everything (the script checks the object counts and the unload).
 * Afterwards a fresh pair in this process must still move verified data.
 */

#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shca_abifuzz.h"

#define CHILD_SECS	30	/* a child that takes longer has hung */

/* Wait for @pid up to @secs; kill it when it overstays.  Its status. */
static int reap(pid_t pid, int secs, const char *what)
{
	double end = now_ms() + secs * 1000.0;
	int st = 0;

	fz_doing("waitpid");
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (now_ms() > end) {
			fz_bad("%s: child %d still running after %d s", what,
			       (int)pid, secs);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(2000);
		fz_doing("waitpid");
	}
	return st;
}

uint64_t phase_fork(uint64_t calls)
{
	uint64_t total = 0, per = calls / 6 + 1;
	int round = 0;

	while (total < calls) {
		struct fz_pool p;
		unsigned int bad0;
		pid_t pid;
		int st;

		pool_init(&p, G.seed ^ (0xf0f0ULL + (uint64_t)round), "fork", 0,
			  FZ_ARENA);
		while (p.calls < per && !p.broken)
			pool_step(&p);
		fflush(stdout);
		bad0 = atomic_load(&G.sanity);
		pid = fork();
		if (pid == 0) {
			/* the child: the parent's objects, then no cleanup */
			p.tainted = true;
			p.no_events = true;
			p.tag = "fork-child";
			p.seed ^= 0xc41dULL;
			p.calls = 0;
			while (p.calls < per && !p.broken)
				pool_step(&p);
			_exit(atomic_load(&G.sanity) != bad0 ? KSFT_FAIL : 0);
		}
		if (pid < 0) {
			fz_bad("fork: %s", strerror(errno));
			break;
		}
		st = reap(pid, CHILD_SECS, "fork");
		if (st >= 0 && (!WIFEXITED(st) || WEXITSTATUS(st)))
			fz_bad("fork child (round %d): %s %d", round,
			       WIFEXITED(st) ? "exit" : "signal",
			       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		/*
		 * The parent goes on with what the child left, reading no
		 * events and destroying no QP, SRQ or CQ (keep_waiting).
		 */
		p.tainted = true;
		p.no_events = true;
		p.keep_waiting = true;
		while (p.calls < 2 * per && !p.broken)
			pool_step(&p);
		pool_drain(&p);
		total += p.calls + per;
		round++;
	}
	/* every object the rounds left goes with the old contexts */
	if (fz_devs_reopen())
		fz_bad("fork: reopening the devices failed");
	printf("# fork: %d children used and destroyed their parent's objects\n",
	       round);
	return total;
}

/* ---- (d) -------------------------------------------------------------- */

#define KILL_PAIRS	4
#define KILL_MRS	48

/*
 * The doomed child: never returns.  Writes a byte to @ready when busy;
 * counts its calls in *@calls (shared with the parent).
 */
static void doomed(int ready, uint64_t seed, atomic_ulong *calls)
{
	struct fz_rng r = { seed };
	struct fz_pair pr[KILL_PAIRS];
	struct ibv_context *ctx[2];
	struct ibv_device **list;
	struct ibv_pd *pd;
	uint8_t *mem;
	int i, k, n;

	/* own contexts: a kill closes them, the parent's stay open */
	list = ibv_get_device_list(NULL);
	for (i = 0; i < 2; i++) {
		ctx[i] = ibv_open_device(dev_find(list, G.dev[i % G.ndev].name));
		if (!ctx[i])
			_exit(3);
		G.dev[i].ctx = ctx[i];
	}
	pd = ibv_alloc_pd(ctx[0]);
	mem = zalloc(1 << 20);
	if (!pd || !mem)
		_exit(3);
	*calls += 4;
	for (i = 0; i < KILL_MRS; i++, (*calls)++)
		ibv_reg_mr(pd, mem + rnd(&r, 1 << 19), 1 + rnd(&r, 1 << 19),
				   IBV_ACCESS_LOCAL_WRITE | QP_ACC_ALL);
	for (i = 0; i < 16; i++) {
		ibv_create_cq(ctx[i % 2], 1 + (int)rnd(&r, 4096), NULL, NULL, 0);
		ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		*calls += 2;
	}
	for (i = 0; i < KILL_PAIRS; i++)
		if (!pair_open(&pr[i], 64 << 10, 64, 64))
			_exit(3);
	*calls += KILL_PAIRS * 16;
	if (write(ready, "r", 1) != 1)
		_exit(3);
	/* traffic until the end: large WRITEs, READs and SENDs both ways */
	for (n = 0;; n++) {
		struct fz_pair *p = &pr[n % KILL_PAIRS];
		int s = (int)rnd(&r, 2);
		struct ibv_sge sg = { (uintptr_t)p->buf[s], (uint32_t)p->len,
				      p->mr[s]->lkey };
		struct ibv_sge rg = { (uintptr_t)p->buf[1 - s] + p->len,
				      (uint32_t)p->len, p->mr[1 - s]->lkey };
		struct send_args a = {
			.wr_id = (uint64_t)n, .sg = &sg, .nsge = 1,
			.raddr = (uintptr_t)p->buf[1 - s], .rkey = p->mr[1 - s]->rkey,
		};
		struct ibv_wc wc[16];

		a.op = rnd(&r, 3) == 0 ? IBV_WR_RDMA_READ :
		       rnd(&r, 2) ? IBV_WR_RDMA_WRITE : IBV_WR_SEND;
		a.flags = n % 8 ? 0 : IBV_SEND_SIGNALED;
		if (a.op == IBV_WR_SEND &&
		    !post_recv1(p->qp[1 - s], NULL, (uint64_t)n, &rg, 1))
			(*calls)++;
		if (!post_send1(p->qp[s], &a))
			(*calls)++;
		/* polls count when they find something */
		for (k = 0; k < 2; k++)
			if (ibv_poll_cq(p->cq[k], 16, wc) > 0)
				(*calls)++;
	}
}

uint64_t phase_kill(uint64_t calls)
{
	struct fz_rng r = { G.seed ^ 0x5ec1ULL };
	int rounds = (int)(calls / 2000) + 3, i, killed_busy = 0;
	atomic_ulong *calls_done = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint64_t total = 0;
	struct fz_pair by;

	if (calls_done == MAP_FAILED)
		return 0;
	*calls_done = 0;

	if (rounds > 20)
		rounds = 20;
	for (i = 0; i < rounds; i++) {
		int fd[2], st;
		char c;
		pid_t pid;

		if (pipe(fd))
			break;
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			close(fd[0]);
			doomed(fd[1], G.seed + (uint64_t)i, calls_done);
		}
		close(fd[1]);
		if (pid < 0) {
			close(fd[0]);
			fz_bad("fork: %s", strerror(errno));
			break;
		}
		/* a third of the kills come during the set-up */
		if (chance(&r, 33)) {
			usleep(rnd(&r, 100000));
		} else {
			fz_doing("kill: wait for traffic");
			if (read(fd[0], &c, 1) == 1)
				killed_busy++;
			usleep(rnd(&r, 200000));
		}
		close(fd[0]);
		kill(pid, SIGKILL);
		st = reap(pid, CHILD_SECS, "kill");
		if (st >= 0 && !(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL))
			fz_bad("child %d to be killed ended by itself: %s %d", i,
			       WIFEXITED(st) ? "exit" : "signal",
			       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	}
	total = *calls_done;
	munmap(calls_done, 4096);
	fz_doing("kill: bystander");
	if (!pair_open(&by, 64 << 10, 16, 16) || !pair_verify(&by, 77))
		fz_bad("kill: a new QP pair does not work after the kills");
	pair_close(&by);
	fz_async_drain();
	printf("# kill: %d children killed, %d of them with traffic running\n",
	       rounds, killed_busy);
	return total;
}
