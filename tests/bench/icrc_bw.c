// SPDX-License-Identifier: GPL-2.0
/*
 * icrc_bw: per-byte costs of a software RoCE data path in this machine,
 * measured in user space with the instructions the kernel uses:
 *
 *   icrc   the ICRC's CRC-32, slice-by-8 (shca_crc32_le() built from
 *          kernel/mech/shca_icrc.c, the algorithm of the kernel's crc32_le()
 *          with CONFIG_CRC32_SLICEBY8, which Debian's kernels use)
 *   movsb  a copy by "rep movsb": how a 6.1 kernel copies (memcpy(), and
 *          to and from user space) when the CPU has ERMS, and how 6.12
 *          does with FSRM
 *   movsq  a copy by "rep movsq": how a 6.1 kernel's memcpy() copies
 *          without ERMS
 *   copycrc  shca_crc32_copy(): a copy and its CRC-32 in one pass, how
 *          the READ responder puts a payload into its packet
 *
 *   icrc_bw [-s MIB] [-r ROUNDS]
 *
 * Each is run over a buffer of MIB MiB (default 64, larger than any cache)
 * in 4096-byte pieces (one RoCE packet of MTU 4096), ROUNDS times (default
 * 3); the best round is printed, in MiB/s (2^20 bytes per second):
 *
 *   icrc_bw size_mib=64 icrc_mibps=... movsb_mibps=... movsq_mibps=...
 *           copycrc_mibps=...
 *
 * On x86 only (the copies are inline assembly).  Exits 0, or 1 on bad
 * arguments, when memory cannot be had, or when a copy or the CRC gives
 * a wrong result.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "shca_icrc.h"

#define PIECE		4096
#define MAX_ROUNDS	100

enum { T_ICRC, T_MOVSB, T_MOVSQ, T_COPYCRC, T_NUM };

static const char *const t_name[T_NUM] = { "icrc", "movsb", "movsq",
					    "copycrc" };

static void copy_movsb(void *dst, const void *src, size_t len)
{
	asm volatile("rep movsb"
		     : "+D"(dst), "+S"(src), "+c"(len) : : "memory");
}

static void copy_movsq(void *dst, const void *src, size_t len)
{
	size_t words = len / 8;

	asm volatile("rep movsq"
		     : "+D"(dst), "+S"(src), "+c"(words) : : "memory");
}

/* One pass of test @t over @size bytes; returns the CRC state (icrc). */
static uint32_t pass(int t, unsigned char *dst, const unsigned char *src,
		     size_t size)
{
	uint32_t crc = ~0U;
	size_t off;

	for (off = 0; off < size; off += PIECE) {
		switch (t) {
		case T_ICRC:
			crc = shca_crc32_le(crc, src + off, PIECE);
			break;
		case T_MOVSB:
			copy_movsb(dst + off, src + off, PIECE);
			break;
		case T_COPYCRC:
			crc = shca_crc32_copy(crc, dst + off, src + off, PIECE);
			break;
		default:
			copy_movsq(dst + off, src + off, PIECE);
			break;
		}
	}
	return crc;
}

/* The CRC-32 check value of IEEE 802.3: that of the 9 bytes "123456789". */
static int crc_works(void)
{
	return ~shca_crc32_le(~0U, "123456789", 9) == 0xcbf43926U;
}

/* Best rate of @rounds passes of test @t, in MiB/s; -1 on a wrong result. */
static double measure(int t, unsigned char *dst, const unsigned char *src,
		      size_t size, long rounds)
{
	double best = 0, t0, rate;
	volatile uint32_t crc;
	long r;

	for (r = 0; r < rounds; r++) {
		memset(dst, 0, size);
		t0 = bench_now();
		crc = pass(t, dst, src, size);
		rate = (double)size / (1 << 20) / (bench_now() - t0);
		if (rate > best)
			best = rate;
	}
	(void)crc;
	if (t == T_ICRC)
		return crc_works() ? best : -1;
	return memcmp(dst, src, size) ? -1 : best;
}

static void bad_usage(void)
{
	fprintf(stderr, "usage: icrc_bw [-s MIB] [-r ROUNDS]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	long mib = 64, rounds = 3;
	const struct bench_opt opts[] = {
		{ 's', 1, 4096, &mib },
		{ 'r', 1, MAX_ROUNDS, &rounds },
	};
	double rate[T_NUM];
	unsigned char *src, *dst;
	size_t size;
	int t;

	if (bench_getopt(argc, argv, opts, sizeof(opts) / sizeof(opts[0])))
		bad_usage();

	size = bench_buffers("icrc_bw", mib, &src, &dst);
	if (!size)
		return 1;
	shca_icrc_init_tables();

	for (t = 0; t < T_NUM; t++) {
		rate[t] = measure(t, dst, src, size, rounds);
		if (rate[t] < 0) {
			fprintf(stderr, "icrc_bw: %s gave a wrong result\n",
				t_name[t]);
			return 1;
		}
	}
	printf("icrc_bw size_mib=%ld icrc_mibps=%.1f movsb_mibps=%.1f movsq_mibps=%.1f copycrc_mibps=%.1f\n",
	       mib, rate[T_ICRC], rate[T_MOVSB], rate[T_MOVSQ],
	       rate[T_COPYCRC]);
	free(src);
	free(dst);
	return 0;
}
