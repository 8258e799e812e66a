/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca_crc_table.h - CRC-32 by table lookups (slice-by-8), the portable
 * implementation, and the state shift that joins CRCs of pieces.
 *
 * The CRC is that of IEEE 802.3 in its reflected form (polynomial
 * 0xEDB88320), as the kernel's crc32_le(): raw states, no inversion in
 * or out.  Eight tables of 256 entries (8 KiB) advance the state by
 * eight bytes per step.  Pure code, see shca_pure.h; the tables are
 * static and built once by shca_crc_table_init().
 */
#ifndef SHCA_CRC_TABLE_H
#define SHCA_CRC_TABLE_H

#include "shca_pure.h"

#define SHCA_CRC32_POLY_LE	0xedb88320U

/**
 * shca_crc_table_init() - build the tables
 *
 * Every function of this file calls it on first use; call it before
 * they can be used from more than one thread (the module does at load).
 * Idempotent.
 */
void shca_crc_table_init(void);

/**
 * shca_crc32_table() - raw reflected CRC-32 update, slice-by-8
 * @crc: state before @buf (~0 to start a standard CRC-32)
 * @buf: data, any alignment
 * @len: length of @buf
 *
 * The standard CRC-32 of a buffer is ~shca_crc32_table(~0, buf, len).
 *
 * Return: the state after @buf.
 */
u32 shca_crc32_table(u32 crc, const void *buf, size_t len);

/**
 * shca_crc32_copy_table() - copy a buffer and add it to a raw CRC-32 state
 * @crc: state before the bytes (0 to start a CRC of the bytes alone)
 * @dst: where the bytes go (may not overlap @src)
 * @src: the bytes, any alignment
 * @len: how many
 *
 * One pass: each 8-byte word is stored as its CRC step reads it.
 *
 * Return: shca_crc32_table(@crc, @src, @len).
 */
u32 shca_crc32_copy_table(u32 crc, void *dst, const void *src, size_t len);

/**
 * shca_crc32_shift() - a raw CRC-32 state advanced over zero bytes
 * @crc: state
 * @len: zero bytes
 *
 * With it a CRC computed in two parts is put together: the state after
 * A then B is shca_crc32_shift(state after A, |B|) ^ CRC(0, B).
 * A multiplication by x^(8 * @len) modulo the polynomial, from powers
 * kept in a table: one 32-step product per bit set in @len (one for a
 * power of two).  Lengths below 2^32.
 *
 * Return: the state after @crc and @len zero bytes.
 */
u32 shca_crc32_shift(u32 crc, size_t len);

#endif /* SHCA_CRC_TABLE_H */
