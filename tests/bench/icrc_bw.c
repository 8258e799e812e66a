// SPDX-License-Identifier: GPL-2.0
/*
 * icrc_bw: per-byte costs of a software RoCE data path in this machine,
 * measured in user space with the instructions the kernel uses:
 *
 *   icrc   the ICRC's CRC-32 by slice-by-8 tables (shca_crc32_table(),
 *          kernel/mech/shca_crc_table.c, the algorithm of the kernel's
 *          crc32_le() with CONFIG_CRC32_SLICEBY8, which Debian's kernels
 *          use)
 *   movsb  a copy by "rep movsb": how a 6.1 kernel copies (memcpy(), and
 *          to and from user space) when the CPU has ERMS, and how 6.12
 *          does with FSRM
 *   movsq  a copy by "rep movsq": how a 6.1 kernel's memcpy() copies
 *          without ERMS
 *   copycrc  shca_crc32_copy_table(): a copy and its CRC-32 in one pass
 *   crc_IMPL, copy_IMPL  the CRC-32 and the copy with CRC-32 of every
 *          implementation this CPU can run (tests/unit/crc_impls.h:
 *          table, and on x86-64 clmul and vclmul where the CPU has them),
 *          the candidates the module times at load
 *
 *   icrc_bw [-s MIB | -k KIB] [-r ROUNDS]
 *
 * Each is run over a buffer of MIB MiB (default 64, larger than any
 * cache) or KIB KiB in 4096-byte pieces (one RoCE packet of MTU 4096;
 * the whole buffer if smaller), ROUNDS times (default 3, the rounds of
 * all the tests interleaved), each round repeating passes for at least
 * 50 ms; the best round of each is printed, in MiB/s (2^20 bytes per
 * second):
 *
 *   icrc_bw size_kib=65536 icrc_mibps=... movsb_mibps=... movsq_mibps=...
 *           copycrc_mibps=... crc_table_mibps=... copy_table_mibps=...
 *           [crc_clmul_mibps=... copy_clmul_mibps=... ...]
 *
 * On x86 only (the copies are inline assembly).  Exits 0, or 1 on bad
 * arguments, when memory cannot be had, or when a copy or a CRC gives
 * a wrong result.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "crc_impls.h"

#define PIECE		4096
#define MAX_ROUNDS	100
#define ROUND_S		0.05

enum { T_ICRC, T_MOVSB, T_MOVSQ, T_COPYCRC, T_CRC, T_COPY };

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

/* One pass of test @t (with @im for T_CRC, T_COPY); the CRC state. */
static uint32_t pass(int t, const struct shca_crc_impl *im,
		     unsigned char *dst, const unsigned char *src, size_t size)
{
	size_t piece = size < PIECE ? size : PIECE;
	uint32_t crc = ~0U;
	size_t off;

	for (off = 0; off < size; off += piece) {
		switch (t) {
		case T_ICRC:
			crc = shca_crc32_table(crc, src + off, piece);
			break;
		case T_MOVSB:
			copy_movsb(dst + off, src + off, piece);
			break;
		case T_COPYCRC:
			crc = shca_crc32_copy_table(crc, dst + off, src + off,
						    piece);
			break;
		case T_CRC:
			crc = im->crc(crc, src + off, piece);
			break;
		case T_COPY:
			crc = im->copy(crc, dst + off, src + off, piece);
			break;
		default:
			copy_movsq(dst + off, src + off, piece);
			break;
		}
	}
	return crc;
}

/*
 * One round of test @t: its rate in MiB/s, or -1 on a wrong result (a
 * copy that does not copy, a CRC that is not @want, the table code's).
 */
static double measure(int t, const struct shca_crc_impl *im,
		      unsigned char *dst, const unsigned char *src,
		      size_t size, uint32_t want)
{
	uint32_t crc;
	double t0, dt;
	long n = 0;

	memset(dst, 0, size);
	t0 = bench_now();
	do {
		crc = pass(t, im, dst, src, size);
		n++;
		dt = bench_now() - t0;
	} while (dt < ROUND_S);
	if ((t == T_ICRC || t >= T_CRC) && crc != want)
		return -1;
	if (t != T_ICRC && t != T_CRC && memcmp(dst, src, size))
		return -1;
	return (double)size * n / (1 << 20) / dt;
}

static void bad_usage(void)
{
	fprintf(stderr, "usage: icrc_bw [-s MIB | -k KIB] [-r ROUNDS]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	static const char *const name[] = { "icrc", "movsb", "movsq",
					     "copycrc" };
	const struct shca_crc_impl *im[CRC_IMPLS_MAX];
	long mib = 0, kib = 0, rounds = 3;
	const struct bench_opt opts[] = {
		{ 's', 1, 4096, &mib },
		{ 'k', 4, 4096 * 1024, &kib },
		{ 'r', 1, MAX_ROUNDS, &rounds },
	};
	double rate, best[4 + 2 * CRC_IMPLS_MAX] = { 0 };
	unsigned char *src, *dst;
	unsigned int n, i, k;
	uint32_t want;
	size_t size;
	long r;
	int t;

	if (bench_getopt(argc, argv, opts, sizeof(opts) / sizeof(opts[0])) ||
	    (mib && kib))
		bad_usage();
	if (!kib)
		kib = (mib ? mib : 64) * 1024;
	size = bench_buffers("icrc_bw", (size_t)kib << 10, &src, &dst);
	if (!size)
		return 1;
	n = crc_impls(im);
	want = pass(T_ICRC, NULL, dst, src, size);

	/* rounds interleaved, so that a slow moment of the host spreads */
	for (r = 0; r < rounds; r++) {
		for (k = 0, t = T_ICRC; t <= T_COPY; t++) {
			for (i = 0; i < (t >= T_CRC ? n : 1); i++, k++) {
				rate = measure(t, im[i], dst, src, size, want);
				if (rate < 0) {
					fprintf(stderr, "icrc_bw: %s%s gave a wrong result\n",
						t < T_CRC ? name[t] :
						t == T_CRC ? "crc_" : "copy_",
						t < T_CRC ? "" : im[i]->name);
					return 1;
				}
				if (rate > best[k])
					best[k] = rate;
			}
		}
	}
	printf("icrc_bw size_kib=%ld", kib);
	for (k = 0, t = T_ICRC; t <= T_COPY; t++) {
		for (i = 0; i < (t >= T_CRC ? n : 1); i++, k++) {
			if (t < T_CRC)
				printf(" %s_mibps=%.1f", name[t], best[k]);
			else
				printf(" %s_%s_mibps=%.1f",
				       t == T_CRC ? "crc" : "copy",
				       im[i]->name, best[k]);
		}
	}
	printf("\n");
	free(src);
	free(dst);
	return 0;
}
