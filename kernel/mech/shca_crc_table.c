// SPDX-License-Identifier: GPL-2.0
/*
 * shca_crc_table.c - CRC-32 by slice-by-8 tables, see shca_crc_table.h.
 */
#include "shca_pure.h"
#include "shca_crc_table.h"

/*
 * shca_crc_tab[0][b] is the CRC state change of byte b; shca_crc_tab[k][b]
 * that of byte b followed by k zero bytes, so eight table lookups advance
 * the state by eight bytes at once.
 */
static u32 shca_crc_tab[8][256];
/* shca_crc_x8[k] is x^(8 * 2^k) mod P, for shca_crc32_shift() */
static u32 shca_crc_x8[32];
static bool shca_crc_tab_ready;

/*
 * @a times @b modulo the CRC polynomial P, both in the reflected form of
 * the CRC register (bit 31 holds the x^0 coefficient, bit 0 x^31).  A
 * zero bit fed to the register multiplies it by x: that is the step
 * (b >> 1) ^ (P if the x^31 bit fell off).
 */
static u32 shca_crc_mulmod(u32 a, u32 b)
{
	u32 prod = 0;
	int i;

	for (i = 0; i < 32; i++) {
		if (a & (0x80000000U >> i))
			prod ^= b;
		b = (b >> 1) ^ (SHCA_CRC32_POLY_LE & (0U - (b & 1)));
	}
	return prod;
}

void shca_crc_table_init(void)
{
	unsigned int i, k;
	u32 c;

	if (READ_ONCE(shca_crc_tab_ready))
		return;
	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (SHCA_CRC32_POLY_LE & (0U - (c & 1)));
		shca_crc_tab[0][i] = c;
	}
	for (i = 0; i < 256; i++) {
		c = shca_crc_tab[0][i];
		for (k = 1; k < 8; k++) {
			c = (c >> 8) ^ shca_crc_tab[0][c & 0xff];
			shca_crc_tab[k][i] = c;
		}
	}
	shca_crc_x8[0] = 0x80000000U >> 8;	/* x^8 */
	for (k = 1; k < 32; k++)
		shca_crc_x8[k] = shca_crc_mulmod(shca_crc_x8[k - 1],
						 shca_crc_x8[k - 1]);
	WRITE_ONCE(shca_crc_tab_ready, true);
}

u32 shca_crc32_shift(u32 crc, size_t len)
{
	int k;

	if (unlikely(!READ_ONCE(shca_crc_tab_ready)))
		shca_crc_table_init();
	for (k = 0; len && k < 32; k++, len >>= 1)
		if (len & 1)
			crc = shca_crc_mulmod(shca_crc_x8[k], crc);
	return crc;
}

static inline u32 shca_load_le32(const u8 *p)
{
	return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 |
	       (u32)p[3] << 24;
}

/* One slice-by-8 step: the state after the 8 bytes (lo, hi). */
static inline u32 shca_crc_step8(u32 crc, u32 lo, u32 hi)
{
	const u32 (*t)[256] = shca_crc_tab;

	lo ^= crc;
	return t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^
	       t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
	       t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^
	       t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
}

static inline u32 shca_crc_step1(u32 crc, u8 b)
{
	return (crc >> 8) ^ shca_crc_tab[0][(crc ^ b) & 0xff];
}

u32 shca_crc32_copy_table(u32 crc, void *dst, const void *src, size_t len)
{
	const u8 *s = src;
	u8 *d = dst;
	u64 w;

	if (unlikely(!READ_ONCE(shca_crc_tab_ready)))
		shca_crc_table_init();
	for (; len >= 8; len -= 8, s += 8, d += 8) {
		memcpy(&w, s, 8);
		memcpy(d, &w, 8);
		w = le64_to_cpu(w);
		crc = shca_crc_step8(crc, (u32)w, (u32)(w >> 32));
	}
	for (; len; len--)
		crc = shca_crc_step1(crc, *d++ = *s++);
	return crc;
}

u32 shca_crc32_table(u32 crc, const void *buf, size_t len)
{
	const u8 *p = buf;

	if (unlikely(!READ_ONCE(shca_crc_tab_ready)))
		shca_crc_table_init();
	for (; len >= 8; len -= 8, p += 8)
		crc = shca_crc_step8(crc, shca_load_le32(p),
				     shca_load_le32(p + 4));
	for (; len; len--, p++)
		crc = shca_crc_step1(crc, *p);
	return crc;
}
