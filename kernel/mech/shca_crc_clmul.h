/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca_crc_clmul.h - CRC-32 by carry-less multiplication on x86-64:
 * PCLMULQDQ on 128-bit registers, and VPCLMULQDQ on 512-bit ones with
 * AVX-512.
 *
 * The same raw reflected CRC-32 as shca_crc32_table() (no inversion in
 * or out), computed by folding: the data is taken 16 bytes at a time
 * into 128-bit lanes, and a lane is carried forward over the bytes that
 * follow it by two carry-less products with constants x^n mod P, so the
 * work per byte is a few vector instructions with no table lookups.  The
 * last 16 bytes of the fold and the tail are finished by the table code.
 *
 * Pure code (shca_pure.h), but it uses the vector registers: the caller
 * makes sure that the CPU has the instructions (shca_crc_clmul_cpu()) and,
 * in the kernel, that the code runs between kernel_fpu_begin() and
 * kernel_fpu_end().  On other architectures the functions are not built
 * and SHCA_CRC_CLMUL is not defined.
 */
#ifndef SHCA_CRC_CLMUL_H
#define SHCA_CRC_CLMUL_H

#include "shca_pure.h"

#if defined(__x86_64__)
#define SHCA_CRC_CLMUL	1

/* shortest buffer each folds (shorter ones go to the table code) */
#define SHCA_CLMUL_MIN		64
#define SHCA_VCLMUL_MIN		256

/**
 * shca_crc32_clmul() - raw CRC-32 update with PCLMULQDQ
 * @crc: state before @buf
 * @buf: data, any alignment
 * @len: length of @buf; below SHCA_CLMUL_MIN the table code does it
 *
 * Needs SSE2 and PCLMULQDQ.
 *
 * Return: the state after @buf, as shca_crc32_table().
 */
u32 shca_crc32_clmul(u32 crc, const void *buf, size_t len);

/**
 * shca_crc32_copy_clmul() - copy a buffer and add it to a CRC-32 state
 * @crc: state before the bytes
 * @dst: where the bytes go (may not overlap @src)
 * @src: the bytes, any alignment
 * @len: how many
 *
 * One pass: each 16-byte piece is stored as it is folded.  Needs SSE2 and
 * PCLMULQDQ.
 *
 * Return: shca_crc32_clmul(@crc, @src, @len).
 */
u32 shca_crc32_copy_clmul(u32 crc, void *dst, const void *src, size_t len);

/**
 * shca_crc32_vclmul() - raw CRC-32 update with AVX-512 VPCLMULQDQ
 * @crc: state before @buf
 * @buf: data, any alignment
 * @len: length of @buf; below SHCA_VCLMUL_MIN shca_crc32_clmul() does it
 *
 * Needs AVX512F, VPCLMULQDQ and PCLMULQDQ.
 *
 * Return: the state after @buf, as shca_crc32_table().
 */
u32 shca_crc32_vclmul(u32 crc, const void *buf, size_t len);

/**
 * shca_crc32_copy_vclmul() - copy and CRC-32 with AVX-512 VPCLMULQDQ
 * @crc: state before the bytes
 * @dst: where the bytes go (may not overlap @src)
 * @src: the bytes, any alignment
 * @len: how many
 *
 * Needs what shca_crc32_vclmul() needs.
 *
 * Return: shca_crc32_vclmul(@crc, @src, @len).
 */
u32 shca_crc32_copy_vclmul(u32 crc, void *dst, const void *src, size_t len);

#endif /* __x86_64__ */

#endif /* SHCA_CRC_CLMUL_H */
