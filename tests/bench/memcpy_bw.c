// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * memcpy_bw: single-thread memcpy() bandwidth of a large buffer, the
 * physical limit a software RDMA device's data movement is compared with.
 *
 *   memcpy_bw [-s MIB] [-c COPIES] [-t SECONDS]
 *
 * Copies a buffer of MIB MiB (default 64, larger than any cache) into
 * another, COPIES times (default 11) or until SECONDS (default 20) have
 * passed, whichever comes first, at least 3 times.  Both buffers are
 * written once before timing so no page fault is timed.  Prints one line:
 *
 *   memcpy_bw size_mib=64 copies=11 median_mibps=... min_mibps=... max_mibps=...
 *
 * MiB/s is 2^20 bytes per second (perftest's "MB/sec").  Exits 0, or 1 on
 * bad arguments or when memory cannot be had.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define MAX_COPIES	1000
#define MIN_COPIES	3

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void bad_usage(void)
{
	fprintf(stderr, "usage: memcpy_bw [-s MIB] [-c COPIES] [-t SECONDS]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	long mib = 64, copies = 11, seconds = 20;
	const struct bench_opt opts[] = {
		{ 's', 1, 4096, &mib },
		{ 'c', MIN_COPIES, MAX_COPIES, &copies },
		{ 't', 1, 3600, &seconds },
	};
	double rate[MAX_COPIES], t0, t1, start;
	unsigned char *src, *dst;
	size_t size;
	long n;

	if (bench_getopt(argc, argv, opts, sizeof(opts) / sizeof(opts[0])))
		bad_usage();

	size = bench_buffers("memcpy_bw", (size_t)mib << 20, &src, &dst);
	if (!size)
		return 1;

	start = bench_now();
	for (n = 0; n < copies; n++) {
		t0 = bench_now();
		memcpy(dst, src, size);
		t1 = bench_now();
		rate[n] = (double)size / (1 << 20) / (t1 - t0);
		/* the copy must happen every time: dst is "used" here */
		asm volatile("" : : "r"(dst) : "memory");
		if (n + 1 >= MIN_COPIES && t1 - start >= seconds) {
			n++;
			break;
		}
	}
	if (memcmp(src, dst, size)) {
		fprintf(stderr, "memcpy_bw: copy differs from its source\n");
		return 1;
	}
	qsort(rate, n, sizeof(rate[0]), cmp_double);
	printf("memcpy_bw size_mib=%ld copies=%ld median_mibps=%.1f min_mibps=%.1f max_mibps=%.1f\n",
	       mib, n, n % 2 ? rate[n / 2] : (rate[n / 2 - 1] + rate[n / 2]) / 2,
	       rate[0], rate[n - 1]);
	free(src);
	free(dst);
	return 0;
}
