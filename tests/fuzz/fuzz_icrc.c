// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_icrc.c - libFuzzer harness of kernel/mech/shca_icrc.c and the
 * CRC-32 implementations under it (shca_crc*.c).
 *
 * The reference is a bitwise CRC-32 (reflected polynomial 0xEDB88320, one
 * shift per bit: crc_ref() of tests/unit/crc_impls.h); the code under
 * test is each implementation this CPU can run (crc_impls(): the
 * slice-by-8 tables, and on x86-64 the carry-less multiply folds), every
 * input through each.  Input: a few control bytes (start state, split
 * points, buffer alignment, zero counts, IP version and header length),
 * the rest is the data.  Checked:
 *
 * - shca_crc32_le() over the data, at every alignment 0..7, in one pass
 *   and in up to four pieces split at fuzzed points, equals the reference;
 * - shca_crc32_copy() returns the same state, copies the data exactly into
 *   a buffer of exactly its size (ASan sees an overrun), also in pieces;
 * - shca_crc32_shift(): against the reference fed zero bytes for short
 *   lengths; for any 32-bit length, the composition rule of shca_icrc.h
 *   (state after A then B is shift(state after A, |B|) ^ crc32_le(0, B)),
 *   shift(shift(c, a), b) == shift(c, a + b), and linearity in the state;
 * - shca_icrc_compute() and shca_icrc_begin() + shca_icrc_update() in
 *   pieces, for an IPv4 (any IHL, including the refused ones below 5) or
 *   IPv6 packet made of the data, equal the reference ICRC computed over
 *   the masked copy that shca_icrc.h describes; the packet is not
 *   written; shca_icrc_store(), shca_icrc_load() and shca_icrc_check()
 *   agree.
 */
/* fuzz-sources: shca_icrc.c shca_hdr.c shca_crc.c shca_crc_table.c shca_crc_clmul.c */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "shca_icrc.h"
#include "crc_impls.h"
#include "fuzz_util.h"

/* The same over @len zero bytes. */
static u32 ref_crc_zeros(u32 crc, size_t len)
{
	size_t k;

	for (k = 0; k < 8 * len; k++)
		crc = crc & 1 ? (crc >> 1) ^ 0xedb88320U : crc >> 1;
	return crc;
}

/* Most bytes of data one input uses (the rest is ignored). */
#define DATA_MAX	2048
/*
 * Control bytes at the start of an input, as many as the checks below
 * read at most: start state 5, check_crc() 8, check_shift() 14,
 * check_icrc() 73.
 */
#define CTL_LEN		100
/* Longest zero run checked bit by bit against shca_crc32_shift(). */
#define ZEROS_MAX	1024

/* shca_crc32_le() and shca_crc32_copy() over @data, whole and in pieces */
static void check_crc(struct fuzz_in *in, u32 crc0, const u8 *data,
		      size_t len)
{
	u8 al_buf[DATA_MAX + 8];
	size_t cut[5], i;
	u32 ref, c, c2, split_state;
	u8 *dst, *src;
	int npieces, align;

	ref = crc_ref(crc0, data, len);

	/* one pass from a buffer at each alignment mod 8 */
	align = fuzz_pick(in, 8);
	src = al_buf + align;
	memcpy(src, data, len);
	FUZZ_ASSERT(shca_crc32_le(crc0, src, len) == ref);
	FUZZ_ASSERT(crc_ref(crc0, src, len) == ref);

	/* up to four pieces, cut at sorted fuzzed points */
	npieces = 1 + fuzz_pick(in, 4);
	cut[0] = 0;
	for (i = 1; i < (size_t)npieces; i++) {
		size_t at = len ? fuzz_u16(in) % (len + 1) : 0;

		cut[i] = at > cut[i - 1] ? at : cut[i - 1];
	}
	cut[npieces] = len;

	c = crc0;
	for (i = 0; i < (size_t)npieces; i++)
		c = shca_crc32_le(c, src + cut[i], cut[i + 1] - cut[i]);
	FUZZ_ASSERT(c == ref);

	/* the copying version, into a buffer of exactly @len bytes */
	dst = malloc(len ? len : 1);
	FUZZ_ASSERT(dst);
	FUZZ_ASSERT(shca_crc32_copy(crc0, dst, src, len) == ref);
	FUZZ_ASSERT(!memcmp(dst, data, len));
	memset(dst, 0, len);
	c = crc0;
	for (i = 0; i < (size_t)npieces; i++)
		c = shca_crc32_copy(c, dst + cut[i], src + cut[i],
				    cut[i + 1] - cut[i]);
	FUZZ_ASSERT(c == ref);
	FUZZ_ASSERT(!memcmp(dst, data, len));
	free(dst);

	/* two parts put together with shca_crc32_shift() */
	split_state = shca_crc32_le(crc0, data, cut[1]);
	c2 = shca_crc32_le(0, data + cut[1], len - cut[1]);
	FUZZ_ASSERT((shca_crc32_shift(split_state, len - cut[1]) ^ c2) == ref);
}

/* shca_crc32_shift() on its own */
static void check_shift(struct fuzz_in *in, u32 crc0)
{
	u32 c1 = fuzz_u32(in);
	size_t z = fuzz_u16(in) % (ZEROS_MAX + 1);
	u32 a = fuzz_u32(in), b = fuzz_u32(in);
	u64 sum = (u64)a + b;

	FUZZ_ASSERT(shca_crc32_shift(crc0, 0) == crc0);
	FUZZ_ASSERT(shca_crc32_shift(crc0, z) == ref_crc_zeros(crc0, z));
	/* lengths below 2^32, as shca_icrc.h allows */
	if (sum < (1ULL << 32))
		FUZZ_ASSERT(shca_crc32_shift(shca_crc32_shift(crc0, a), b) ==
			    shca_crc32_shift(crc0, (size_t)sum));
	FUZZ_ASSERT((shca_crc32_shift(crc0, a) ^ shca_crc32_shift(c1, a)) ==
		    shca_crc32_shift(crc0 ^ c1, a));
}

/* The ICRC of shca_icrc.h, computed from the masked packet by hand. */
static u32 ref_icrc(const u8 *ip, bool ipv6, size_t ip_len, const u8 *udp,
		    const u8 *bth, size_t len)
{
	static const u8 ones[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
	};
	u8 m[60 + 8 + 12];
	u32 c;

	memcpy(m, ip, ip_len);
	if (ipv6) {
		/* traffic class, flow label (after the version), hop limit */
		m[0] |= 0x0f;
		m[1] = m[2] = m[3] = 0xff;
		m[7] = 0xff;
	} else {
		/* TOS, TTL, header checksum */
		m[1] = 0xff;
		m[8] = 0xff;
		m[10] = m[11] = 0xff;
	}
	memcpy(m + ip_len, udp, 8);
	m[ip_len + 6] = m[ip_len + 7] = 0xff;	/* UDP checksum */
	memcpy(m + ip_len + 8, bth, 12);
	m[ip_len + 8 + 4] = 0xff;		/* FECN, BECN, reserved */

	c = crc_ref(0xffffffffU, ones, 8);
	c = crc_ref(c, m, ip_len + 8 + 12);
	c = crc_ref(c, bth + 12, len - 12);
	return ~c;
}

static void check_icrc(struct fuzz_in *in, const u8 *data, size_t len)
{
	u8 ip[60], ip_copy[60], udp[8], udp_copy[8], trailer[4];
	const u8 *bth = data;
	struct shca_icrc st;
	bool ipv6 = fuzz_u8(in) & 1;
	size_t ip_len, hdr_len, cut;
	u32 icrc, ref;
	int ret;

	fuzz_bytes(in, ip, sizeof(ip));
	fuzz_bytes(in, udp, sizeof(udp));
	memcpy(ip_copy, ip, sizeof(ip));
	memcpy(udp_copy, udp, sizeof(udp));
	ip_len = ipv6 ? 40 : (ip[0] & 0x0f) * 4u;
	hdr_len = fuzz_u16(in) % (len + 1);

	ret = shca_icrc_compute(ip, ipv6, udp, bth, len, &icrc);
	if (len < 12 || (!ipv6 && ip_len < 20)) {
		FUZZ_ASSERT(ret == -EINVAL);
		return;
	}
	FUZZ_ASSERT(ret == 0);
	ref = ref_icrc(ip, ipv6, ip_len, udp, bth, len);
	FUZZ_ASSERT(icrc == ref);

	/* begin with part of the packet, then the rest in two updates */
	ret = shca_icrc_begin(&st, ip, ipv6, udp, bth, hdr_len);
	if (hdr_len < 12) {
		FUZZ_ASSERT(ret == -EINVAL);
	} else {
		FUZZ_ASSERT(ret == 0);
		cut = hdr_len + (len > hdr_len ?
				 fuzz_u16(in) % (len - hdr_len + 1) : 0);
		shca_icrc_update(&st, bth + hdr_len, cut - hdr_len);
		shca_icrc_update(&st, bth + cut, len - cut);
		FUZZ_ASSERT(shca_icrc_final(&st) == ref);
	}
	FUZZ_ASSERT(!memcmp(ip, ip_copy, sizeof(ip)));
	FUZZ_ASSERT(!memcmp(udp, udp_copy, sizeof(udp)));

	/* the trailer: least significant byte first */
	shca_icrc_store(trailer, ref);
	FUZZ_ASSERT(trailer[0] == (u8)ref && trailer[3] == (u8)(ref >> 24));
	FUZZ_ASSERT(shca_icrc_load(trailer) == ref);
	FUZZ_ASSERT(shca_icrc_check(trailer, ref));
	FUZZ_ASSERT(!shca_icrc_check(trailer, ref ^ (1U << (ref % 32))));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct shca_crc_impl *im[CRC_IMPLS_MAX];
	static unsigned int nimpl;
	struct fuzz_in ctl, ctl_crc;
	const u8 *body;
	unsigned int k;
	size_t len;
	u32 crc0;

	if (!nimpl)
		nimpl = crc_impls(im);

	if (size < CTL_LEN)
		return 0;
	fuzz_in_init(&ctl, data, CTL_LEN);
	body = data + CTL_LEN;
	len = size - CTL_LEN < DATA_MAX ? size - CTL_LEN : DATA_MAX;

	/* start state: ~0 as for a standard CRC, 0, or any */
	switch (fuzz_pick(&ctl, 4)) {
	case 0:
		crc0 = 0xffffffffU;
		break;
	case 1:
		crc0 = 0;
		break;
	default:
		crc0 = fuzz_u32(&ctl);
		break;
	}
	/* the same control bytes for each implementation */
	for (k = 0; k < nimpl; k++) {
		shca_crc_use(im[k]);
		ctl_crc = ctl;
		check_crc(&ctl_crc, crc0, body, len);
		check_icrc(&ctl_crc, body, len);
	}
	check_shift(&ctl, crc0);
	return 0;
}
