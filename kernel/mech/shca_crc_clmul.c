// SPDX-License-Identifier: GPL-2.0
/*
 * shca_crc_clmul.c - CRC-32 by carry-less multiplication, see
 * shca_crc_clmul.h.
 *
 * Notation.  A 128-bit lane holds 16 message bytes loaded little-endian;
 * bit j of the lane (bit j % 8 of byte j / 8) is the coefficient of
 * x^(127 - j), since the reflected CRC takes each byte's bit 0 first.
 * Its low 64 bits are then the high half H of the lane's polynomial and
 * its high 64 bits the low half L: lane = H * x^64 + L.
 *
 * Folding.  A lane that lies D bits before the lane it is added to must
 * be multiplied by x^D; modulo P it is replaced by
 *	H * (x^(D + 64) mod P) + L * (x^D mod P),
 * a 96-bit value congruent to it.  PCLMULQDQ of a 64-bit half with a
 * constant k gives bit i + m for every pair of bits i, m; with the half's
 * bit i standing for x^(63 - i) and the constant's bit m for x^(32 - m),
 * product bit i + m stands for x^(95 - i - m), which is lane bit i + m
 * scaled by x^-32.  So the constants are kept as 33-bit reflections
 * (bit m for x^(32 - m)) of x^(D + 32) mod P for H and x^(D - 32) mod P
 * for L, and the two products XORed are the folded lane, in the lane's
 * own notation.  The values (D = 128, 512, 2048) are checked in the unit
 * test against a computation of x^n mod P bit by bit.
 *
 * Finish.  The CRC of the whole message is that of the last lane alone
 * (the folded lanes add up to it) followed by the tail: the table code
 * takes the lane's 16 bytes from state 0, then the last len % 16 bytes.
 * The starting state is XORed into the first 4 bytes, as the table code
 * XORs the state into each byte it takes.
 *
 * Each function carries its own target attribute, so the file builds
 * with the compiler's default (kernel) flags and nothing outside these
 * functions uses the vector registers.
 */
#include "shca_pure.h"
#include "shca_crc_clmul.h"
#include "shca_crc_table.h"

#ifdef SHCA_CRC_CLMUL

#define SHCA_CLMUL_TARGET	__attribute__((target("sse2,pclmul")))
#define SHCA_VCLMUL_TARGET \
	__attribute__((target("avx512f,vpclmulqdq,pclmul,sse2")))

/*
 * The vector types: 2 and 8 lanes of 64 bits (macros, not typedefs; the
 * data is moved in and out with memcpy(), which the compiler turns into
 * unaligned vector loads and stores).
 */
#define SHCA_V2DI	long long __attribute__((vector_size(16)))
#define SHCA_V8DI	long long __attribute__((vector_size(64)))

/* the 512-bit carry-less multiply, as each compiler names it */
#ifdef __clang__
#define shca_vpclmul(a, b, imm)	__builtin_ia32_pclmulqdq512(a, b, imm)
#else
#define shca_vpclmul(a, b, imm)	__builtin_ia32_vpclmulqdq_v8di(a, b, imm)
#endif

/* (x^(D + 32) mod P, x^(D - 32) mod P), reflected in 33 bits */
#define SHCA_K128_H	0x1751997d0LL
#define SHCA_K128_L	0x0ccaa009eLL
#define SHCA_K512_H	0x154442bd4LL
#define SHCA_K512_L	0x1c6e41596LL
#define SHCA_K2048_H	0x11542778aLL
#define SHCA_K2048_L	0x1322d1430LL

/* @x carried D bits forward, D as in the constants @k */
static __always_inline SHCA_CLMUL_TARGET SHCA_V2DI
shca_fold(SHCA_V2DI x, SHCA_V2DI k)
{
	return __builtin_ia32_pclmulqdq128(x, k, 0x00) ^
	       __builtin_ia32_pclmulqdq128(x, k, 0x11);
}

/* the 16 bytes at @src + @off, also stored at @dst + @off unless NULL */
static __always_inline SHCA_CLMUL_TARGET SHCA_V2DI shca_ld(const u8 *src,
							u8 *dst, size_t off)
{
	SHCA_V2DI v;

	memcpy(&v, src + off, sizeof(v));
	if (dst)
		memcpy(dst + off, &v, sizeof(v));
	return v;
}

/* the table code's finish: the lane @x, then @len bytes at @src + @off */
static __always_inline u32 shca_finish(const void *x, const u8 *src,
				       u8 *dst, size_t off, size_t len)
{
	u32 crc = shca_crc32_table(0, x, 16);

	if (dst)
		return shca_crc32_copy_table(crc, dst + off, src + off,
					     len - off);
	return shca_crc32_table(crc, src + off, len - off);
}

/*
 * Fold @x (the lanes so far, ending at @off) over the 16-byte pieces
 * from @off on, then finish.
 */
static __always_inline SHCA_CLMUL_TARGET u32
shca_fold16(SHCA_V2DI x, const u8 *src, u8 *dst, size_t off, size_t len)
{
	const SHCA_V2DI k1 = { SHCA_K128_H, SHCA_K128_L };
	u8 last[16];

	for (; len - off >= 16; off += 16)
		x = shca_fold(x, k1) ^ shca_ld(src, dst, off);
	memcpy(last, &x, sizeof(x));
	return shca_finish(last, src, dst, off, len);
}

/* four lanes 64 bytes apart, then one; @len >= SHCA_CLMUL_MIN */
static __always_inline SHCA_CLMUL_TARGET u32
shca_clmul_run(u32 crc, const u8 *src, u8 *dst, size_t len)
{
	const SHCA_V2DI k4 = { SHCA_K512_H, SHCA_K512_L };
	const SHCA_V2DI k1 = { SHCA_K128_H, SHCA_K128_L };
	const SHCA_V2DI init = { crc, 0 };
	SHCA_V2DI x0, x1, x2, x3;
	size_t off;

	x0 = shca_ld(src, dst, 0) ^ init;
	x1 = shca_ld(src, dst, 16);
	x2 = shca_ld(src, dst, 32);
	x3 = shca_ld(src, dst, 48);
	for (off = 64; len - off >= 64; off += 64) {
		x0 = shca_fold(x0, k4) ^ shca_ld(src, dst, off);
		x1 = shca_fold(x1, k4) ^ shca_ld(src, dst, off + 16);
		x2 = shca_fold(x2, k4) ^ shca_ld(src, dst, off + 32);
		x3 = shca_fold(x3, k4) ^ shca_ld(src, dst, off + 48);
	}
	x0 = shca_fold(x0, k1) ^ x1;
	x0 = shca_fold(x0, k1) ^ x2;
	x0 = shca_fold(x0, k1) ^ x3;
	return shca_fold16(x0, src, dst, off, len);
}

SHCA_CLMUL_TARGET
u32 shca_crc32_clmul(u32 crc, const void *buf, size_t len)
{
	if (len < SHCA_CLMUL_MIN)
		return shca_crc32_table(crc, buf, len);
	return shca_clmul_run(crc, buf, NULL, len);
}

SHCA_CLMUL_TARGET
u32 shca_crc32_copy_clmul(u32 crc, void *dst, const void *src, size_t len)
{
	if (len < SHCA_CLMUL_MIN)
		return shca_crc32_copy_table(crc, dst, src, len);
	return shca_clmul_run(crc, src, dst, len);
}

static __always_inline SHCA_VCLMUL_TARGET SHCA_V8DI
shca_vfold(SHCA_V8DI x, SHCA_V8DI k)
{
	return shca_vpclmul(x, k, 0x00) ^ shca_vpclmul(x, k, 0x11);
}

static __always_inline SHCA_VCLMUL_TARGET SHCA_V8DI
shca_vld(const u8 *src, u8 *dst, size_t off)
{
	SHCA_V8DI v;

	memcpy(&v, src + off, sizeof(v));
	if (dst)
		memcpy(dst + off, &v, sizeof(v));
	return v;
}

/*
 * Four 512-bit registers of four lanes each, 256 bytes a step; then one
 * register 64 bytes a step; then its four lanes into one.
 * @len >= SHCA_VCLMUL_MIN.
 */
static __always_inline SHCA_VCLMUL_TARGET u32
shca_vclmul_run(u32 crc, const u8 *src, u8 *dst, size_t len)
{
	const SHCA_V8DI k16 = { SHCA_K2048_H, SHCA_K2048_L, SHCA_K2048_H,
				SHCA_K2048_L, SHCA_K2048_H, SHCA_K2048_L,
				SHCA_K2048_H, SHCA_K2048_L };
	const SHCA_V8DI k4 = { SHCA_K512_H, SHCA_K512_L, SHCA_K512_H,
			       SHCA_K512_L, SHCA_K512_H, SHCA_K512_L,
			       SHCA_K512_H, SHCA_K512_L };
	const SHCA_V2DI k1 = { SHCA_K128_H, SHCA_K128_L };
	const SHCA_V8DI init = { crc };
	SHCA_V8DI z0, z1, z2, z3;
	SHCA_V2DI x, lane[4];
	size_t off;

	z0 = shca_vld(src, dst, 0) ^ init;
	z1 = shca_vld(src, dst, 64);
	z2 = shca_vld(src, dst, 128);
	z3 = shca_vld(src, dst, 192);
	for (off = 256; len - off >= 256; off += 256) {
		z0 = shca_vfold(z0, k16) ^ shca_vld(src, dst, off);
		z1 = shca_vfold(z1, k16) ^ shca_vld(src, dst, off + 64);
		z2 = shca_vfold(z2, k16) ^ shca_vld(src, dst, off + 128);
		z3 = shca_vfold(z3, k16) ^ shca_vld(src, dst, off + 192);
	}
	z0 = shca_vfold(z0, k4) ^ z1;
	z0 = shca_vfold(z0, k4) ^ z2;
	z0 = shca_vfold(z0, k4) ^ z3;
	for (; len - off >= 64; off += 64)
		z0 = shca_vfold(z0, k4) ^ shca_vld(src, dst, off);
	memcpy(lane, &z0, sizeof(z0));
	x = shca_fold(lane[0], k1) ^ lane[1];
	x = shca_fold(x, k1) ^ lane[2];
	x = shca_fold(x, k1) ^ lane[3];
	return shca_fold16(x, src, dst, off, len);
}

SHCA_VCLMUL_TARGET
u32 shca_crc32_vclmul(u32 crc, const void *buf, size_t len)
{
	if (len < SHCA_VCLMUL_MIN)
		return shca_crc32_clmul(crc, buf, len);
	return shca_vclmul_run(crc, buf, NULL, len);
}

SHCA_VCLMUL_TARGET
u32 shca_crc32_copy_vclmul(u32 crc, void *dst, const void *src, size_t len)
{
	if (len < SHCA_VCLMUL_MIN)
		return shca_crc32_copy_clmul(crc, dst, src, len);
	return shca_vclmul_run(crc, src, dst, len);
}

#endif /* SHCA_CRC_CLMUL */
