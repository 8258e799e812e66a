/* SPDX-License-Identifier: GPL-2.0 */
/*
 * crc_impls.h - the CRC-32 implementations of kernel/mech/ that this
 * machine's CPU can run, for the unit tests, the fuzz harness and the
 * benchmark, and the bitwise reference they are checked against.  Userspace may use the vector registers anywhere, so the
 * implementations go in as they are (the module wraps them in
 * kernel_fpu_begin() and kernel_fpu_end()).
 */
#ifndef SHCA_TEST_CRC_IMPLS_H
#define SHCA_TEST_CRC_IMPLS_H

#include "shca_crc.h"
#include "shca_crc_clmul.h"
#include "shca_crc_table.h"

#define CRC_IMPLS_MAX	3

#ifdef SHCA_CRC_CLMUL
static const struct shca_crc_impl crc_impl_clmul = {
	.name = "clmul",
	.crc = shca_crc32_clmul,
	.copy = shca_crc32_copy_clmul,
};

static const struct shca_crc_impl crc_impl_vclmul = {
	.name = "vclmul",
	.crc = shca_crc32_vclmul,
	.copy = shca_crc32_copy_vclmul,
};
#endif

/**
 * crc_impls() - the implementations this CPU has, the table code first
 * @out: CRC_IMPLS_MAX entries
 *
 * Return: how many were put in @out.
 */
static inline unsigned int crc_impls(const struct shca_crc_impl **out)
{
	unsigned int n = 0;

	shca_crc_table_init();
	out[n++] = &shca_crc_table_impl;
#ifdef SHCA_CRC_CLMUL
	__builtin_cpu_init();
	if (__builtin_cpu_supports("sse2") && __builtin_cpu_supports("pclmul"))
		out[n++] = &crc_impl_clmul;
	if (n == 2 && __builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("vpclmulqdq"))
		out[n++] = &crc_impl_vclmul;
#endif
	return n;
}

/**
 * crc_ref() - the reference: the kernel's crc32_le(), one bit at a time
 * @crc: raw state (reflected polynomial 0xedb88320, no inversion)
 * @p: bytes
 * @len: how many
 *
 * Return: the state after @p.
 */
static inline u32 crc_ref(u32 crc, const u8 *p, size_t len)
{
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc & 1) ? (crc >> 1) ^ 0xedb88320U : crc >> 1;
	}
	return crc;
}

#endif /* SHCA_TEST_CRC_IMPLS_H */
