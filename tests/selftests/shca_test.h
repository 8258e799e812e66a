/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Helpers shared by the shca selftest programs: failure reasons collected
 * per case, TAP results and diagnostics, monotonic time, and finding a device's RoCE v2
 * IPv4 GID.  Each program is one translation unit, so the state here is
 * the program's own.
 */
#ifndef SHCA_TEST_H
#define SHCA_TEST_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#define SHCA_TEST_UNUSED __attribute__((unused))

/* reasons the current case failed, one a line; the program clears it */
static char why[4096];
/* failf() calls so far: a case failed when this moved during it */
static unsigned int nfail SHCA_TEST_UNUSED;

/* Record a reason the current case fails (kept while there is room). */
static void failf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), unused));
static void failf(const char *fmt, ...)
{
	size_t used = strlen(why);
	va_list ap;

	nfail++;
	if (used && used + 2 < sizeof(why)) {
		why[used++] = '\n';
		why[used] = '\0';
	}
	if (used + 1 >= sizeof(why))
		return;
	va_start(ap, fmt);
	vsnprintf(why + used, sizeof(why) - used, fmt, ap);
	va_end(ap);
}

/* Print "# ..." (a TAP diagnostic line) at once. */
static void diag(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), unused));
static void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

/* Print every line of why[] as a diagnostic and clear it. */
static void SHCA_TEST_UNUSED why_flush(void)
{
	char *line, *save = NULL;

	for (line = strtok_r(why, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		printf("# %s\n", line);
	why[0] = '\0';
}

/* results so far, and how many failed */
static int n_cases SHCA_TEST_UNUSED;
static int n_failed SHCA_TEST_UNUSED;

/*
 * Print the next TAP result line, "ok" when @cond holds; on a failure,
 * the reasons collected in why[] follow as diagnostics.  why[] is cleared.
 */
static void SHCA_TEST_UNUSED case_result(int cond, const char *what)
{
	n_cases++;
	if (!cond)
		n_failed++;
	printf("%sok %d - %s\n", cond ? "" : "not ", n_cases, what);
	if (cond)
		why[0] = '\0';
	else
		why_flush();
	fflush(stdout);
}

static double SHCA_TEST_UNUSED now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void SHCA_TEST_UNUSED sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Test data: pattern(seed) is the top bytes of successive xorshift32
 * states, started from a state made of SEED (never 0).
 */
static uint32_t SHCA_TEST_UNUSED pattern_start(uint32_t seed)
{
	return (seed * 2654435761U) | 1;
}

static uint8_t SHCA_TEST_UNUSED pattern_next(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return (uint8_t)(*x >> 24);
}

static void SHCA_TEST_UNUSED pattern(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = pattern_start(seed);
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = pattern_next(&x);
}

/* Destroy a QP and its two CQs (any of them NULL); failf() what fails. */
static void SHCA_TEST_UNUSED qp_cqs_destroy(struct ibv_qp *qp,
					    struct ibv_cq *scq,
					    struct ibv_cq *rcq,
					    const char *dev)
{
	if (qp && ibv_destroy_qp(qp))
		failf("ibv_destroy_qp on %s: %s", dev, strerror(errno));
	if (scq && ibv_destroy_cq(scq))
		failf("ibv_destroy_cq: %s", strerror(errno));
	if (rcq && ibv_destroy_cq(rcq))
		failf("ibv_destroy_cq: %s", strerror(errno));
}

/*
 * Make reads of DEV's port 1 counters fresh: the RDMA core caches them for
 * "lifespan" ms (10 by default), and a transfer faster than that reads
 * as no change.  Best effort (needs root).  Even with lifespan 0 a read
 * in the same jiffy as the previous one gets the cached figures: see
 * counters_next_jiffy().
 */
static void SHCA_TEST_UNUSED counters_uncached(const char *dev)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/lifespan", dev);
	f = fopen(path, "w");
	if (!f)
		return;
	fputs("0\n", f);
	fclose(f);
}

/*
 * Wait until a counter read refreshes the RDMA core's cache: it keeps the
 * figures while jiffies has not passed the last read's plus the lifespan
 * (0 after counters_uncached()), so a read in the same jiffy as the one
 * before an operation (4 ms at HZ=250, 10 ms at HZ=100) reads no change.
 */
static void SHCA_TEST_UNUSED counters_next_jiffy(void)
{
	sleep_ms(11);
}

/* Index of port 1's first RoCE v2 GID holding an IPv4 address, or -1. */
static int SHCA_TEST_UNUSED find_v4_gid(struct ibv_context *ctx)
{
	static const uint8_t v4pfx[12] = { [10] = 0xff, [11] = 0xff };
	struct ibv_port_attr pa;
	struct ibv_gid_entry e;
	int i;

	if (ibv_query_port(ctx, 1, &pa))
		return -1;
	for (i = 0; i < pa.gid_tbl_len; i++) {
		if (ibv_query_gid_ex(ctx, 1, i, &e, 0))
			continue;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    !memcmp(e.gid.raw, v4pfx, sizeof(v4pfx)))
			return i;
	}
	return -1;
}

#endif /* SHCA_TEST_H */
