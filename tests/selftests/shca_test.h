/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Helpers shared by the shca selftest programs (shca_test_lib.c, linked
 * into each of them): failure reasons collected per case, TAP results and
 * diagnostics, monotonic time, test data, and finding a device's RoCE v2
 * IPv4 GID.
 */
#ifndef SHCA_TEST_H
#define SHCA_TEST_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

/* ---- failures and TAP ------------------------------------------------ */

/* reasons the current case failed, one a line; the program clears it */
extern char why[4096];
/* failf() calls so far: a case failed when this moved during it */
extern unsigned int nfail;
/* case_result() lines so far, and how many said "not ok" */
extern int n_cases, n_failed;

/* Record a reason the current case fails (kept while there is room). */
void failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "# ..." (a TAP diagnostic line) at once. */
void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print every line of why[] as a diagnostic and clear it. */
void why_flush(void);

/*
 * Print the next TAP result line, "ok" when @cond holds; on a failure,
 * the reasons collected in why[] follow as diagnostics.  why[] is cleared.
 */
void case_result(int cond, const char *what);

/* ---- time, test data ------------------------------------------------- */

/* CLOCK_MONOTONIC in milliseconds */
double now_ms(void);
void sleep_ms(int ms);

/*
 * Test data: pattern(seed) is the top bytes of successive xorshift32
 * states, started from a state made of SEED (never 0).
 */
uint32_t pattern_start(uint32_t seed);
uint8_t pattern_next(uint32_t *x);
void pattern(uint8_t *p, size_t n, uint32_t seed);

/* ---- devices and QPs ------------------------------------------------- */

/* Index of port 1's first RoCE v2 GID holding an IPv4 address, or -1. */
int find_v4_gid(struct ibv_context *ctx);

/* Destroy a QP and its two CQs (any of them NULL); failf() what fails. */
void qp_cqs_destroy(struct ibv_qp *qp, struct ibv_cq *scq,
		    struct ibv_cq *rcq, const char *dev);

/* ---- counters ---------------------------------------------------------- */

/*
 * Make reads of DEV's port 1 counters fresh: the RDMA core caches them for
 * "lifespan" ms (10 by default), and a transfer faster than that reads
 * as no change.  Best effort (needs root).  Even with lifespan 0 a read
 * in the same jiffy as the previous one gets the cached figures: see
 * counters_next_jiffy().
 */
void counters_uncached(const char *dev);

/*
 * Wait until a counter read refreshes the RDMA core's cache: it keeps the
 * figures while jiffies has not passed the last read's plus the lifespan
 * (0 after counters_uncached()), so a read in the same jiffy as the one
 * before an operation (4 ms at HZ=250, 10 ms at HZ=100) reads no change.
 */
void counters_next_jiffy(void);

#endif /* SHCA_TEST_H */
