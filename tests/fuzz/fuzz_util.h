/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fuzz_util.h - what the libFuzzer harnesses of tests/fuzz/ share.
 *
 * A harness reads its input through a struct fuzz_in cursor: every read
 * succeeds, and once the input is used up it yields zeros, so a harness
 * never has to check how much is left (it stops its operation loop on
 * fuzz_in_done() instead).  FUZZ_ASSERT() names the failed condition on
 * stderr and traps, which libFuzzer reports as a crash and saves as an
 * artifact.
 */
#ifndef SHCA_FUZZ_UTIL_H
#define SHCA_FUZZ_UTIL_H

#include <stdio.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#define FUZZ_ASSERT(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: %s: assertion failed: %s\n",	\
			__FILE__, __LINE__, __func__, #cond);		\
		__builtin_trap();					\
	}								\
} while (0)

struct fuzz_in {
	const uint8_t *p;
	size_t left;
};

static inline void fuzz_in_init(struct fuzz_in *in, const uint8_t *data,
				size_t size)
{
	in->p = data;
	in->left = size;
}

static inline int fuzz_in_done(const struct fuzz_in *in)
{
	return in->left == 0;
}

static inline uint8_t fuzz_u8(struct fuzz_in *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

static inline uint16_t fuzz_u16(struct fuzz_in *in)
{
	uint16_t v = fuzz_u8(in);

	return (uint16_t)(v | fuzz_u8(in) << 8);
}

static inline uint32_t fuzz_u32(struct fuzz_in *in)
{
	uint32_t v = fuzz_u16(in);

	return v | (uint32_t)fuzz_u16(in) << 16;
}

static inline uint64_t fuzz_u64(struct fuzz_in *in)
{
	uint64_t v = fuzz_u32(in);

	return v | (uint64_t)fuzz_u32(in) << 32;
}

/* Up to @n bytes into @dst; the rest of @dst is zeroed.  Returns @n. */
static inline size_t fuzz_bytes(struct fuzz_in *in, void *dst, size_t n)
{
	size_t k = n < in->left ? n : in->left;

	memcpy(dst, in->p, k);
	memset((uint8_t *)dst + k, 0, n - k);
	in->p += k;
	in->left -= k;
	return n;
}

/*
 * A value in [0, @n) for @n > 0 from one byte: small ranges are what
 * the operation harnesses need, and one byte per choice keeps the inputs
 * short and the mutations local.
 */
static inline uint32_t fuzz_pick(struct fuzz_in *in, uint32_t n)
{
	return fuzz_u8(in) % n;
}

#endif /* SHCA_FUZZ_UTIL_H */
