/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * bench_util.h: what the single-thread bandwidth tools of tests/bench/
 * share: a monotonic clock, option parsing and the two large buffers.
 */
#ifndef SHCA_BENCH_UTIL_H
#define SHCA_BENCH_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Seconds on CLOCK_MONOTONIC. */
static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Parse a decimal number in [min, max] from @s into *@v; 0 on success. */
static inline int bench_parse_num(const char *s, long min, long max, long *v)
{
	char *end;

	*v = strtol(s, &end, 10);
	return (*s == '\0' || *end != '\0' || *v < min || *v > max) ? -1 : 0;
}

/* A numeric option: -@name N, N a decimal number in [min, max]. */
struct bench_opt {
	char name;
	long min, max;
	long *val;
};

#define BENCH_MAX_OPTS	8

/*
 * Parse the command line: only the @n options of @opts, each with its
 * number, and no other arguments.  Returns 0, or -1 on anything else.
 */
static inline int bench_getopt(int argc, char **argv,
			       const struct bench_opt *opts, int n)
{
	char spec[2 * BENCH_MAX_OPTS + 1];
	int c, i;

	if (n > BENCH_MAX_OPTS)
		return -1;
	for (i = 0; i < n; i++) {
		spec[2 * i] = opts[i].name;
		spec[2 * i + 1] = ':';
	}
	spec[2 * n] = '\0';
	while ((c = getopt(argc, argv, spec)) != -1) {
		for (i = 0; i < n && opts[i].name != c; i++)
			;
		if (i == n || bench_parse_num(optarg, opts[i].min,
					      opts[i].max, opts[i].val))
			return -1;
	}
	return optind == argc ? 0 : -1;
}

/*
 * Allocate two buffers of @size bytes for program @prog, give the source
 * a non-zero pattern and write the destination once, so that no page
 * fault is timed later.  Returns @size, or 0 (after a message) when
 * memory cannot be had.
 */
static inline size_t bench_buffers(const char *prog, size_t size,
				   unsigned char **src, unsigned char **dst)
{
	size_t i;

	*src = malloc(size);
	*dst = malloc(size);
	if (!*src || !*dst) {
		fprintf(stderr, "%s: cannot allocate 2 x %zu KiB\n", prog,
			size >> 10);
		free(*src);
		free(*dst);
		return 0;
	}
	for (i = 0; i < size / sizeof(uint64_t); i++)
		((uint64_t *)*src)[i] = i * 0x9e3779b97f4a7c15ULL + 7;
	memset(*dst, 0, size);
	return size;
}

#endif /* SHCA_BENCH_UTIL_H */
