// SPDX-License-Identifier: GPL-2.0
/*
 * test_crc.c - unit tests of the CRC-32 implementations (kernel/mech/
 * shca_crc_table.c, shca_crc_clmul.c) and their dispatch (shca_crc.c).
 *
 * Every implementation this CPU can run (crc_impls.h) is compared with a
 * bitwise reference: every length from 0 to 1100 bytes at 16 starting
 * alignments, lengths around the folds' block sizes up to 70 000 bytes,
 * every split of a 1100-byte buffer into two calls, and the copies (the
 * bytes copied exactly, nothing written beside them).  The folding
 * constants are recomputed bit by bit.
 */
/* unit-sources: shca_crc.c shca_crc_table.c shca_crc_clmul.c */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc_impls.h"
#include "tap.h"

#define BIG	70000

static u64 rng_state = 0x9e3779b97f4a7c15ULL;

static u32 rnd32(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (u32)((rng_state * 0x2545f4914f6cdd1dULL) >> 32);
}

static u8 src[BIG + 64], dst[BIG + 128];

static void test_lengths(const struct shca_crc_impl *im)
{
	static const size_t big[] = { 2047, 2048, 2049, 4095, 4096, 4097,
				      8191, 9000, 16383, 32768, 65535, 65536,
				      65537, 69999, BIG };
	int bad = 0, bad_copy = 0, bad_guard = 0;
	size_t a, n, i, k;

	for (a = 0; a < 16; a++) {
		for (n = 0; n <= 1100; n++) {
			u32 init = rnd32();
			u32 want = crc_ref(init, src + a, n);

			bad += im->crc(init, src + a, n) != want;
			if (n % 7 && a % 5)
				continue;
			memset(dst, 0x5a, 1200);
			bad_copy += im->copy(init, dst + 31 - a, src + a, n) !=
				    want || memcmp(dst + 31 - a, src + a, n);
			for (i = 0; i < 1200; i++)
				if (i < 31 - a || i >= 31 - a + n)
					bad_guard += dst[i] != 0x5a;
		}
	}
	for (k = 0; k < ARRAY_SIZE(big); k++) {
		u32 init = rnd32();
		u32 want;

		n = big[k];
		a = k % 16;
		want = crc_ref(init, src + a, n);
		bad += im->crc(init, src + a, n) != want;
		memset(dst, 0x5a, sizeof(dst));
		bad_copy += im->copy(init, dst + 64 + a, src + a, n) != want ||
			    memcmp(dst + 64 + a, src + a, n);
		for (i = 0; i < sizeof(dst); i++)
			if (i < 64 + a || i >= 64 + a + n)
				bad_guard += dst[i] != 0x5a;
	}
	ok_eq(bad, 0, "%s: == bitwise, lengths 0..1100 at 16 alignments and up to %d",
	      im->name, BIG);
	ok_eq(bad_copy, 0, "%s: copy returns the CRC and copies the bytes",
	      im->name);
	ok_eq(bad_guard, 0, "%s: copy writes nothing beside the bytes",
	      im->name);
}

static void test_splits(const struct shca_crc_impl *im)
{
	const size_t n = 1100;
	u32 want = crc_ref(~0U, src + 3, n);
	int bad = 0;
	size_t cut;

	for (cut = 0; cut <= n; cut++) {
		u32 c = im->crc(~0U, src + 3, cut);

		bad += im->crc(c, src + 3 + cut, n - cut) != want;
		c = im->copy(~0U, dst, src + 3, cut);
		bad += im->copy(c, dst + cut, src + 3 + cut, n - cut) != want;
		bad += shca_crc32_shift(im->crc(~0U, src + 3, cut), n - cut) ^
		       im->crc(0, src + 3 + cut, n - cut) ^ want ? 1 : 0;
	}
	ok_eq(bad, 0, "%s: split at every point of %zu bytes == one pass, also by shift",
	      im->name, n);
}

/* x^e mod P as the folds keep it: bit m for x^(32 - m) */
static u64 xpow_refl33(unsigned int e)
{
	u64 r = 1, out = 0;
	int d;

	while (e--) {
		r <<= 1;
		if (r >> 32 & 1)
			r ^= 0x104c11db7ULL;
	}
	for (d = 0; d <= 32; d++)
		out |= ((r >> d) & 1) << (32 - d);
	return out;
}

static void test_constants(void)
{
	/* shca_crc_clmul.c's: D = 128, 512, 2048 */
	ok(xpow_refl33(128 + 32) == 0x1751997d0ULL &&
	   xpow_refl33(128 - 32) == 0x0ccaa009eULL,
	   "fold constants for 128 bits");
	ok(xpow_refl33(512 + 32) == 0x154442bd4ULL &&
	   xpow_refl33(512 - 32) == 0x1c6e41596ULL,
	   "fold constants for 512 bits");
	ok(xpow_refl33(2048 + 32) == 0x11542778aULL &&
	   xpow_refl33(2048 - 32) == 0x1322d1430ULL,
	   "fold constants for 2048 bits");
}

static unsigned int fake_calls;

static u32 fake_crc(u32 crc, const void *buf, size_t len)
{
	fake_calls++;
	return shca_crc32_table(crc, buf, len);
}

static u32 fake_copy(u32 crc, void *d, const void *s, size_t len)
{
	fake_calls++;
	return shca_crc32_copy_table(crc, d, s, len);
}

static void test_dispatch(void)
{
	static const struct shca_crc_impl fake = {
		.name = "fake", .crc = fake_crc, .copy = fake_copy,
	};
	u32 want = crc_ref(7, src, 500);

	ok(!strcmp(shca_crc_name(), "table"), "the table code by default");
	shca_crc_use(&fake);
	ok(!strcmp(shca_crc_name(), "fake"), "shca_crc_use() names its choice");
	fake_calls = 0;
	shca_crc32_le(0, src, SHCA_CRC_SHORT - 1);
	shca_crc32_copy(0, dst, src, SHCA_CRC_SHORT - 1);
	ok_eq(fake_calls, 0, "pieces below %d bytes take the table code",
	      SHCA_CRC_SHORT);
	ok(shca_crc32_le(7, src, 500) == want &&
	   shca_crc32_copy(7, dst, src, 500) == want && fake_calls == 2,
	   "longer ones the chosen code");
	shca_crc_use(NULL);
	ok(!strcmp(shca_crc_name(), "table") &&
	   shca_crc32_le(7, src, 500) == want && fake_calls == 2,
	   "shca_crc_use(NULL) goes back to the table code");
}

int main(void)
{
	const struct shca_crc_impl *im[CRC_IMPLS_MAX];
	unsigned int n, i;
	size_t k;

	tap_start();
	for (k = 0; k < sizeof(src); k++)
		src[k] = (u8)rnd32();
	n = crc_impls(im);
	diag("implementations on this CPU: %u", n);
	ok(~shca_crc32_table(~0U, "123456789", 9) == 0xcbf43926,
	   "CRC-32 check value");
	test_constants();
	test_dispatch();
	for (i = 0; i < n; i++) {
		test_lengths(im[i]);
		test_splits(im[i]);
	}
	return tap_done();
}
