/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca_crc.h - the CRC-32 every pass of the data path computes with: one
 * dispatch over interchangeable implementations.
 *
 * Each implementation computes the same raw reflected CRC-32 (the
 * kernel's crc32_le(): no inversion in or out) and a copy with its CRC.
 * Which one runs is set once, before any CRC is computed: the module
 * times the candidates its CPU has at load (wire/shca_crcsel.c); the
 * userspace tests set each in turn.  Until then, and for pieces shorter
 * than SHCA_CRC_SHORT, the table code (shca_crc_table.h) runs.
 *
 * Pure code, see shca_pure.h: the implementations are supplied by the
 * caller, which also supplies whatever context they need (the kernel
 * wraps its vector ones in kernel_fpu_begin() and kernel_fpu_end()).
 */
#ifndef SHCA_CRC_H
#define SHCA_CRC_H

#include "shca_pure.h"

/*
 * Pieces shorter than this (packet headers, pads) always take the table
 * code: every accelerated implementation would fall back to it there.
 */
#define SHCA_CRC_SHORT	64

/**
 * struct shca_crc_impl - one way of computing the data path's CRC-32
 * @name: its name, as dmesg and the module parameters spell it
 * @crc: raw CRC-32 update, as shca_crc32_table()
 * @copy: copy and CRC-32 in one call, as shca_crc32_copy_table()
 */
struct shca_crc_impl {
	const char *name;
	u32 (*crc)(u32 crc, const void *buf, size_t len);
	u32 (*copy)(u32 crc, void *dst, const void *src, size_t len);
};

/* the table code as an implementation: the default */
extern const struct shca_crc_impl shca_crc_table_impl;

/**
 * shca_crc_use() - choose the implementation the dispatch calls
 * @impl: its functions (copied); NULL for the table code
 *
 * Not while a CRC is being computed: the module calls it at load, before
 * it registers a device.
 */
void shca_crc_use(const struct shca_crc_impl *impl);

/**
 * shca_crc_name() - the name of the implementation in use
 *
 * Return: the @name of the last shca_crc_use(), "table" by default.
 */
const char *shca_crc_name(void);

/**
 * shca_crc32_le() - raw reflected CRC-32 update, by the chosen code
 * @crc: state before @buf (~0 to start a standard CRC-32)
 * @buf: data, any alignment
 * @len: length of @buf
 *
 * The standard CRC-32 of a buffer is ~shca_crc32_le(~0, buf, len).
 *
 * Return: the state after @buf.
 */
u32 shca_crc32_le(u32 crc, const void *buf, size_t len);

/**
 * shca_crc32_copy() - copy a buffer and add it to a raw CRC-32 state
 * @crc: state before the bytes (0 to start a CRC of the bytes alone)
 * @dst: where the bytes go (may not overlap @src)
 * @src: the bytes, any alignment
 * @len: how many
 *
 * A packet built by copy need not be read again for its ICRC (see
 * shca_crc32_shift()).
 *
 * Return: shca_crc32_le(@crc, @src, @len).
 */
u32 shca_crc32_copy(u32 crc, void *dst, const void *src, size_t len);

#endif /* SHCA_CRC_H */
