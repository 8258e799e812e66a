/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal TAP 13 output for the userspace unit tests
 * (same shape as kselftest: "TAP version 13", "1..N", "ok N - ...").
 *
 *	int main(void)
 *	{
 *		tap_start();			// or tap_plan(n)
 *		ok(x == 1, "x is %d", 1);
 *		ok_eq(f(), 3, "f()");		// prints got/expected on failure
 *		diag("a comment");
 *		return tap_done();		// 0 iff every test passed
 *	}
 *
 * Without tap_plan() the plan "1..N" is printed by tap_done() at the end.
 */
#ifndef SHCA_TAP_H
#define SHCA_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef __printf
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#endif

static int tap_planned = -1;
static int tap_run;
static int tap_failed;

static inline void tap_start(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
}

static inline void tap_plan(int n)
{
	tap_start();
	tap_planned = n;
	printf("1..%d\n", n);
}

static inline void diag(const char *fmt, ...)
	__printf(1, 2);
static inline void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static inline int tap_vok(int cond, const char *fmt, va_list ap)
{
	tap_run++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_run);
	vprintf(fmt, ap);
	printf("\n");
	return cond;
}

static inline int ok(int cond, const char *fmt, ...)
	__printf(2, 3);
static inline int ok(int cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cond = tap_vok(!!cond, fmt, ap);
	va_end(ap);
	return cond;
}

static inline int tap_ok_eq(long long got, long long exp, const char *expr,
			    const char *fmt, ...)
	__printf(4, 5);
static inline int tap_ok_eq(long long got, long long exp, const char *expr,
			    const char *fmt, ...)
{
	va_list ap;
	int cond;

	va_start(ap, fmt);
	cond = tap_vok(got == exp, fmt, ap);
	va_end(ap);
	if (!cond)
		diag("  %s: got %lld, expected %lld", expr, got, exp);
	return cond;
}

/* ok(got == exp), printing both values when they differ. */
#define ok_eq(got, exp, ...) \
	tap_ok_eq((long long)(got), (long long)(exp), #got, __VA_ARGS__)

/* Abort the whole test program (e.g. setup failed). */
static inline void tap_bail(const char *why)
{
	printf("Bail out! %s\n", why);
	exit(2);
}

static inline int tap_done(void)
{
	if (tap_planned < 0)
		printf("1..%d\n", tap_run);
	else if (tap_planned != tap_run)
		diag("planned %d tests but ran %d", tap_planned, tap_run);
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n",
	       tap_run - tap_failed, tap_failed);
	if (tap_failed || (tap_planned >= 0 && tap_planned != tap_run))
		return 1;
	return 0;
}

#endif /* SHCA_TAP_H */
