// SPDX-License-Identifier: GPL-2.0
/*
 * shca_icrc.c - RoCEv2 invariant CRC, see shca_icrc.h.
 */
#include "shca_pure.h"
#include "shca_icrc.h"

#if defined(__KERNEL__) && !defined(SHCA_ICRC_USE_TABLES)
#define SHCA_ICRC_KERNEL_CRC32 1
#include <linux/crc32.h>
#endif

#ifndef __KERNEL__
#include <errno.h>	/* shca_pure.h does not provide the E* codes */
#endif

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

void shca_icrc_init_tables(void)
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
		shca_icrc_init_tables();
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

u32 shca_crc32_copy(u32 crc, void *dst, const void *src, size_t len)
{
	const u8 *s = src;
	u8 *d = dst;
	u64 w;

	if (unlikely(!READ_ONCE(shca_crc_tab_ready)))
		shca_icrc_init_tables();
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

#ifdef SHCA_ICRC_KERNEL_CRC32

u32 shca_crc32_le(u32 crc, const void *buf, size_t len)
{
	return crc32_le(crc, buf, len);
}

#else /* slice-by-8 */

u32 shca_crc32_le(u32 crc, const void *buf, size_t len)
{
	const u8 *p = buf;

	if (unlikely(!READ_ONCE(shca_crc_tab_ready)))
		shca_icrc_init_tables();
	for (; len >= 8; len -= 8, p += 8)
		crc = shca_crc_step8(crc, shca_load_le32(p),
				     shca_load_le32(p + 4));
	for (; len; len--, p++)
		crc = shca_crc_step1(crc, *p);
	return crc;
}

#endif /* SHCA_ICRC_KERNEL_CRC32 */

/* IPv4 header bytes replaced by ones: TOS, TTL, header checksum */
#define SHCA_IPV4_TOS		1
#define SHCA_IPV4_TTL		8
#define SHCA_IPV4_CSUM		10
/* IPv6: version(4) traffic class(8) flow label(20) ... hop limit at 7 */
#define SHCA_IPV6_HOP_LIMIT	7
#define SHCA_UDP_CSUM		6
#define SHCA_BTH_FECN_BYTE	4

int shca_icrc_begin(struct shca_icrc *st, const void *ip_hdr, bool ipv6,
		    const void *udp_hdr, const void *bth, size_t hdr_len)
{
	u8 ph[SHCA_IPV4_HDR_MAX + SHCA_UDP_HDR_LEN + SHCA_BTH_LEN];
	size_t ip_len;
	u8 *u;

	if (unlikely(hdr_len < SHCA_BTH_LEN))
		return -EINVAL;

	if (ipv6) {
		ip_len = SHCA_IPV6_HDR_LEN;
		memcpy(ph, ip_hdr, ip_len);
		/* keep the version nibble, traffic class + flow label -> 1s */
		ph[0] |= 0x0f;
		ph[1] = 0xff;
		ph[2] = 0xff;
		ph[3] = 0xff;
		ph[SHCA_IPV6_HOP_LIMIT] = 0xff;
	} else {
		ip_len = (*(const u8 *)ip_hdr & 0x0f) * 4;
		if (unlikely(ip_len < SHCA_IPV4_HDR_MIN))
			return -EINVAL;
		memcpy(ph, ip_hdr, ip_len);
		ph[SHCA_IPV4_TOS] = 0xff;
		ph[SHCA_IPV4_TTL] = 0xff;
		ph[SHCA_IPV4_CSUM] = 0xff;
		ph[SHCA_IPV4_CSUM + 1] = 0xff;
	}

	u = ph + ip_len;
	memcpy(u, udp_hdr, SHCA_UDP_HDR_LEN);
	u[SHCA_UDP_CSUM] = 0xff;
	u[SHCA_UDP_CSUM + 1] = 0xff;

	u += SHCA_UDP_HDR_LEN;
	memcpy(u, bth, SHCA_BTH_LEN);
	u[SHCA_BTH_FECN_BYTE] = 0xff;

	st->crc = shca_crc32_le(SHCA_ICRC_SEED, ph,
				ip_len + SHCA_UDP_HDR_LEN + SHCA_BTH_LEN);
	if (hdr_len > SHCA_BTH_LEN)
		shca_icrc_update(st, (const u8 *)bth + SHCA_BTH_LEN,
				 hdr_len - SHCA_BTH_LEN);
	return 0;
}

int shca_icrc_compute(const void *ip_hdr, bool ipv6, const void *udp_hdr,
		      const void *bth, size_t len, u32 *icrc)
{
	struct shca_icrc st;
	int ret;

	ret = shca_icrc_begin(&st, ip_hdr, ipv6, udp_hdr, bth, len);
	if (ret)
		return ret;
	*icrc = shca_icrc_final(&st);
	return 0;
}
