// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_abifuzz_test: an ABI fuzzer.  Random sequences of verbs calls with
 * random and boundary arguments against shca devices, looking for kernel
 * faults at the verbs boundary and in the rings shared with the kernel:
 * the kernel log (crash, WARN, KASAN, lockdep) and the module's unload
 * (leaks) are checked by the script that runs it (abi_fuzz.sh); this
 * program checks that nothing hangs and that every call's result makes
 * sense (an error is always fine; a success past a device limit is not).
 *
 *   shca_abifuzz_test [--seed N] [--calls N] [--threads N] [--trace] DEV...
 *
 * Phases: a single-threaded run of random calls (the same seed makes the
 * same calls), then (a) threads creating, using and destroying objects,
 * some destroyed while others post and poll on them through the rings,
 * (b) fork children that use and destroy the parent's objects and exit
 * without cleaning up, (c) garbage written into the rings with a
 * bystander QP pair whose data must stay intact, (d) children killed
 * with SIGKILL while holding many objects and traffic.  Each phase prints
 * "# calls: N"; the exit status is 0 when no check failed, 1 otherwise,
 * 4 when a device is missing.
 */

#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shca_abifuzz.h"

#define HANG_SECS	40	/* no call returned for this long: a hang */
#define MAX_THREADS	16

struct fz_global G;

/* what each thread is doing, for the watchdog */
static const char *volatile doing[MAX_THREADS + 1];
static __thread int my_slot;
static atomic_int next_slot;
static atomic_ulong progress;

void fz_doing(const char *what)
{
	if (!my_slot)
		my_slot = 1 + atomic_fetch_add(&next_slot, 1) % MAX_THREADS;
	doing[my_slot] = what;
	atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
}

void fz_bad(const char *fmt, ...)
{
	unsigned int n = atomic_fetch_add(&G.sanity, 1);
	char line[512];
	va_list ap;

	if (n >= 50)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	printf("# SANITY (%s, seed %llu): %s\n", G.phase,
	       (unsigned long long)G.seed, line);
	fflush(stdout);
}

/* Print a /proc file as diagnostics, at most 24 lines. */
static void show_file(const char *path)
{
	char line[256];
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f)
		return;
	while (n++ < 24 && fgets(line, sizeof(line), f))
		printf("#     %s", line);
	fclose(f);
}

/* The process's mappings (diagnostics), all of them. */
static void show_maps(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		printf("#     %s", line);
	if (f)
		fclose(f);
}

/* The user stacks of every thread, from gdb (diagnostics). */
static void show_gdb(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd),
		 "gdb -p %d -batch -ex 'thread apply all bt' 2>&1 | sed 's/^/#     /'",
		 (int)getpid());
	fflush(stdout);
	if (system(cmd) < 0)
		printf("# gdb: %s\n", strerror(errno));
}

/* Each of this process's threads: its state and kernel stack (root). */
static void dump_blocked(void)
{
	char path[300];
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		printf("#   task %s:\n", e->d_name);
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat",
			 e->d_name);
		show_file(path);
		snprintf(path, sizeof(path), "/proc/self/task/%s/stack",
			 e->d_name);
		show_file(path);
		snprintf(path, sizeof(path), "/proc/self/task/%s/syscall",
			 e->d_name);
		show_file(path);
	}
	if (d)
		closedir(d);
	if (getenv("SHCA_ABIFUZZ_MAPS"))
		show_maps();
	if (getenv("SHCA_ABIFUZZ_GDB"))
		show_gdb();
}

/* A call that has not returned for HANG_SECS: say where and give up. */
static void *watchdog(void *arg)
{
	unsigned long last = 0, now;
	int still = 0, i;

	(void)arg;
	for (;;) {
		sleep(1);
		now = atomic_load(&progress);
		still = now == last ? still + 1 : 0;
		last = now;
		if (still < HANG_SECS)
			continue;
		printf("# HANG in phase %s (seed %llu): no call returned for %d s\n",
		       G.phase, (unsigned long long)G.seed, HANG_SECS);
		for (i = 1; i <= MAX_THREADS; i++)
			if (doing[i])
				printf("#   thread %d: in %s\n", i, doing[i]);
		dump_blocked();
		fflush(stdout);
		_exit(KSFT_FAIL);
	}
	return NULL;
}

void fz_async_drain(void)
{
	struct ibv_async_event ev;
	int d, k;

	for (d = 0; d < G.ndev; d++)
		for (k = 0; k < 64; k++) {
			if (ibv_get_async_event(G.dev[d].ctx, &ev))
				break;
			ibv_ack_async_event(&ev);
		}
}

static int dev_open(struct fz_dev *dv)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_device *dev = dev_find(list, dv->name);
	int ret = KSFT_FAIL;

	if (!dev) {
		fprintf(stderr, "device %s not found\n", dv->name);
		ret = KSFT_SKIP;
		goto out;
	}
	dv->ctx = ibv_open_device(dev);
	if (!dv->ctx || ibv_query_device(dv->ctx, &dv->attr) ||
	    ibv_query_port(dv->ctx, 1, &dv->port)) {
		fprintf(stderr, "%s: open or query: %s\n", dv->name,
			strerror(errno));
		goto out;
	}
	dv->gidx = find_v4_gid(dv->ctx);
	if (dv->gidx < 0 || ibv_query_gid(dv->ctx, 1, dv->gidx, &dv->gid)) {
		fprintf(stderr, "%s: no RoCE v2 IPv4 GID\n", dv->name);
		goto out;
	}
	fcntl(dv->ctx->async_fd, F_SETFL,
	      fcntl(dv->ctx->async_fd, F_GETFL) | O_NONBLOCK);
	ret = 0;
out:
	ibv_free_device_list(list);
	return ret;
}

/**
 * fz_devs_reopen - close every device context and open it again
 *
 * The kernel destroys whatever the old contexts still held, without
 * libibverbs waiting for events (after the fork phase).
 *
 * Return: 0 or the first dev_open() error.
 */
int fz_devs_reopen(void)
{
	int d, ret = 0;

	for (d = 0; d < G.ndev; d++) {
		ibv_close_device(G.dev[d].ctx);
		G.dev[d].ctx = NULL;
		if (!ret)
			ret = dev_open(&G.dev[d]);
	}
	return ret;
}

/* The arena, then a PROT_NONE page; a read-only page apart. */
static bool arena_init(void)
{
	uint8_t *m = mmap(NULL, FZ_ARENA + 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);

	if (m == MAP_FAILED || ro == MAP_FAILED)
		return false;
	memset(m, 0x5a, FZ_ARENA);
	G.arena = m;
	G.none_page = m + FZ_ARENA;
	G.ro_page = ro;
	return !mprotect(G.none_page, 4096, PROT_NONE);
}

static void phase_report(const char *name, uint64_t calls, double t0)
{
	double s = (now_ms() - t0) / 1000;

	printf("# phase %s: %.1f s, %.0f calls/s\n", name, s,
	       s > 0 ? (double)calls / s : 0.0);
	printf("# calls: %llu\n", (unsigned long long)calls);
	fflush(stdout);
}

/* The single-threaded phase: the seed alone decides every call. */
static uint64_t phase_single(uint64_t calls)
{
	struct fz_pool p;

	pool_init(&p, G.seed, "single", 0, FZ_ARENA);
	p.stats = true;
	while (p.calls < calls && !p.broken) {
		pool_step(&p);
		if (p.calls % 512 == 0)
			fz_async_drain();
	}
	pool_drain(&p);
	fz_async_drain();
	pool_stats();
	printf("# single: %llu connections, %llu WRs taken, %llu completions (%llu with an error)\n",
	       (unsigned long long)p.n_conn, (unsigned long long)p.n_posted,
	       (unsigned long long)p.n_wc, (unsigned long long)p.n_wc_err);
	return p.calls;
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [--seed N] [--calls N] [--threads N] [--trace] [--phases LIST] DEV...\n"
		"  LIST: letters of the phases to run, default \"sabcd\"\n"
		"  (s single-threaded, a threads, b fork, c rings, d SIGKILL)\n",
		prog);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "calls", required_argument, NULL, 'n' },
		{ "threads", required_argument, NULL, 't' },
		{ "trace", no_argument, NULL, 'v' },
		{ "phases", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	const char *phases = "sabcd";
	uint64_t calls = 20000, total = 0, n;
	bool seeded = false;
	pthread_t wd;
	double t0, start;
	int opt, d, ret;

	G.threads = 4;
	while ((opt = getopt_long(argc, argv, "s:n:t:vp:", opts, NULL)) != -1) {
		switch (opt) {
		case 's': G.seed = strtoull(optarg, NULL, 0); seeded = true; break;
		case 'n': calls = strtoull(optarg, NULL, 0); break;
		case 't': G.threads = (unsigned int)atoi(optarg); break;
		case 'v': G.trace = true; break;
		case 'p': phases = optarg; break;
		default: usage(argv[0]); return 2;
		}
	}
	if (G.threads < 3)
		G.threads = 3;
	if (G.threads > MAX_THREADS - 2)
		G.threads = MAX_THREADS - 2;
	if (!seeded)
		G.seed = (uint64_t)time(NULL) * 1000003ULL ^ (uint64_t)getpid();
	for (; optind < argc && G.ndev < FZ_MAX_DEV; optind++)
		G.dev[G.ndev++].name = argv[optind];
	if (!G.ndev) {
		G.dev[0].name = "shca_ns1";
		G.dev[1].name = "shca_ns2";
		G.ndev = 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# seed: %llu (--seed %llu reproduces the single-threaded phase)\n",
	       (unsigned long long)G.seed, (unsigned long long)G.seed);
	printf("# calls: %llu asked, threads %u, devices", (unsigned long long)calls,
	       G.threads);
	for (d = 0; d < G.ndev; d++)
		printf(" %s", G.dev[d].name);
	printf("\n");
	for (d = 0; d < G.ndev; d++) {
		ret = dev_open(&G.dev[d]);
		if (ret)
			return ret;
	}
	if (!arena_init()) {
		fprintf(stderr, "arena: %s\n", strerror(errno));
		return KSFT_FAIL;
	}
	pthread_create(&wd, NULL, watchdog, NULL);
	start = now_ms();

	if (strchr(phases, 's')) {
		G.phase = "single";
		t0 = now_ms();
		n = phase_single(calls / 2);
		phase_report(G.phase, n, t0);
		total += n;
	}
	if (strchr(phases, 'a')) {
		G.phase = "threads";
		t0 = now_ms();
		n = phase_threads(calls / 5);
		phase_report(G.phase, n, t0);
		total += n;
	}
	if (strchr(phases, 'b')) {
		G.phase = "fork";
		t0 = now_ms();
		n = phase_fork(calls / 10);
		phase_report(G.phase, n, t0);
		total += n;
	}
	if (strchr(phases, 'c')) {
		G.phase = "rings";
		t0 = now_ms();
		n = phase_rings(calls / 10);
		phase_report(G.phase, n, t0);
		total += n;
	}
	if (strchr(phases, 'd')) {
		G.phase = "kill";
		t0 = now_ms();
		n = phase_kill(calls / 10);
		phase_report(G.phase, n, t0);
		total += n;
	}
	G.phase = "close";
	fz_doing("close_device");
	for (d = 0; d < G.ndev; d++)
		ibv_close_device(G.dev[d].ctx);
	printf("# total: %llu calls in %.1f s, %u sanity failure(s), seed %llu\n",
	       (unsigned long long)total, (now_ms() - start) / 1000,
	       atomic_load(&G.sanity), (unsigned long long)G.seed);
	return atomic_load(&G.sanity) ? KSFT_FAIL : 0;
}
