// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The helpers of shca_test.h, linked into every selftest program.
 */

#define _GNU_SOURCE
#include <stdlib.h>

#include "shca_test.h"

/* ---- failures and TAP ------------------------------------------------ */

char why[4096];
unsigned int nfail;
int n_cases, n_failed;

void failf(const char *fmt, ...)
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

void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

void why_flush(void)
{
	char *line, *save = NULL;

	for (line = strtok_r(why, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		printf("# %s\n", line);
	why[0] = '\0';
}

void case_result(int cond, const char *what)
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

/* ---- time, test data ------------------------------------------------- */

double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

uint32_t pattern_start(uint32_t seed)
{
	return (seed * 2654435761U) | 1;
}

uint8_t pattern_next(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return (uint8_t)(*x >> 24);
}

void pattern(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = pattern_start(seed);
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = pattern_next(&x);
}

/* ---- devices and QPs ------------------------------------------------- */

int find_v4_gid(struct ibv_context *ctx)
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

void qp_cqs_destroy(struct ibv_qp *qp, struct ibv_cq *scq,
		    struct ibv_cq *rcq, const char *dev)
{
	if (qp && ibv_destroy_qp(qp))
		failf("ibv_destroy_qp on %s: %s", dev, strerror(errno));
	if (scq && ibv_destroy_cq(scq))
		failf("ibv_destroy_cq: %s", strerror(errno));
	if (rcq && ibv_destroy_cq(rcq))
		failf("ibv_destroy_cq: %s", strerror(errno));
}

/* ---- counters ---------------------------------------------------------- */

#define HW_COUNTERS	"/sys/class/infiniband/%s/ports/1/hw_counters"

void counters_uncached(const char *dev)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), HW_COUNTERS "/lifespan", dev);
	f = fopen(path, "w");
	if (!f)
		return;
	fputs("0\n", f);
	fclose(f);
}

void counters_next_jiffy(void)
{
	sleep_ms(11);
}
