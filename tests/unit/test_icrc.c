// SPDX-License-Identifier: GPL-2.0
/*
 * test_icrc.c - unit tests of kernel/mech/shca_icrc.c (RoCEv2 invariant CRC).
 *
 * The packet vectors and their ICRC values come from
 * vectors/icrc_vectors.py, an independent computation with python's
 * zlib.crc32; two of them are public third-party packets (a CNP captured
 * from a ConnectX-4 Lx and scapy's UC example), see that script.
 */
/* unit-sources: shca_icrc.c shca_hdr.c shca_crc.c shca_crc_table.c shca_crc_clmul.c */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shca_icrc.h"
#include "crc_impls.h"
#include "shca_hdr.h"
#include "tap.h"
#include "vectors/icrc_vectors.h"

static u64 rng_state = 0x1c2c3c4c5c6c7c8dULL;

static u32 rnd32(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (u32)((rng_state * 0x2545f4914f6cdd1dULL) >> 32);
}

static u32 std_crc32(const void *p, size_t len)
{
	return ~shca_crc32_le(~0U, p, len);
}

static void test_crc32(void)
{
	static const u8 ones[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const char fox[] = "The quick brown fox jumps over the lazy dog";
	u8 buf[300 + 8];
	int bad = 0, align, len, cut;

	ok_eq(std_crc32("123456789", 9), 0xcbf43926,
	      "CRC-32 check value of \"123456789\"");
	ok_eq(std_crc32("", 0), 0, "CRC-32 of nothing");
	ok_eq(std_crc32("a", 1), 0xe8b7be43, "CRC-32 of \"a\"");
	ok_eq(std_crc32(fox, sizeof(fox) - 1), 0x414fa339,
	      "CRC-32 of the quick brown fox");
	ok_eq(shca_crc32_le(~0U, ones, 8), SHCA_ICRC_SEED,
	      "seed 0xdebb20e3 is the state after the 8 bytes of ones");
	ok_eq(crc_ref(~0U, ones, 8), SHCA_ICRC_SEED,
	      "bitwise reference agrees on the seed");

	for (align = 0; align < 8; align++) {
		for (len = 0; len <= 300; len++) {
			u32 init = rnd32();
			int i;

			for (i = 0; i < len; i++)
				buf[align + i] = (u8)rnd32();
			if (shca_crc32_le(init, buf + align, len) !=
			    crc_ref(init, buf + align, len))
				bad++;
		}
	}
	ok_eq(bad, 0, "shca_crc32_le() == bitwise, alignments 0..7, lengths 0..300");

	bad = 0;
	for (cut = 0; cut <= 300; cut++) {
		u32 c = shca_crc32_le(~0U, buf, cut);

		c = shca_crc32_le(c, buf + cut, 300 - cut);
		bad += c != crc_ref(~0U, buf, 300);
	}
	ok_eq(bad, 0, "split at every point of 300 bytes == one pass");
}

/* IP header length of a vector packet */
static size_t ip_len(const struct icrc_vector *v)
{
	return v->ipv6 ? SHCA_IPV6_HDR_LEN : (v->pkt[0] & 0x0f) * 4U;
}

/*
 * ICRC of a packet laid out like the vectors, via shca_icrc_compute();
 * ~0 (not the ICRC of any vector) if the IPv4 IHL is invalid.
 */
static u32 icrc_of(const u8 *pkt, size_t len, bool ipv6)
{
	size_t ipl = ipv6 ? SHCA_IPV6_HDR_LEN : (pkt[0] & 0x0f) * 4U;
	const u8 *udp = pkt + ipl;
	u32 icrc = 0;

	if (ipl + SHCA_UDP_HDR_LEN + SHCA_BTH_LEN + SHCA_ICRC_LEN > len)
		return ~0U;
	if (shca_icrc_compute(pkt, ipv6, udp, udp + SHCA_UDP_HDR_LEN,
			      len - ipl - SHCA_UDP_HDR_LEN - SHCA_ICRC_LEN,
			      &icrc))
		return ~0U;
	return icrc;
}

/* is bit @bit of byte @i of a packet excluded from the ICRC */
static bool masked(bool ipv6, size_t ipl, size_t i, int bit)
{
	if (ipv6) {
		if (i == 0)
			return bit < 4;	/* traffic class high nibble */
		if (i == 1 || i == 2 || i == 3 || i == 7)
			return true;
	} else if (i == 1 || i == 8 || i == 10 || i == 11) {
		return true;
	}
	if (i == ipl + 6 || i == ipl + 7)	/* UDP checksum */
		return true;
	return i == ipl + SHCA_UDP_HDR_LEN + 4;	/* BTH FECN/BECN/resv6 */
}

/*
 * What rdma_rxe does, modelled in userspace: start crc32_le() from the
 * seed, run it over a masked copy of the headers and the rest, then store
 * ~crc as a native u32 (on this little-endian host).
 */
/*
 * shca_crc32_copy() copies exactly the bytes and returns what
 * shca_crc32_le() does; shca_crc32_shift() puts a CRC computed in two
 * parts together.
 */
static void test_copy_shift(void)
{
	static u8 src[4200 + 8], dst[4200 + 16];
	static const size_t lens[] = { 0, 1, 7, 8, 9, 63, 64, 65, 1023, 4096,
				       4099, 4200 };
	int bad_crc = 0, bad_data = 0, bad_guard = 0, bad_shift = 0;
	size_t i, k, n, a;

	for (i = 0; i < sizeof(src); i++)
		src[i] = (u8)rnd32();
	for (k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		for (a = 0; a < 8; a++) {
			u32 init = rnd32();

			n = lens[k];
			memset(dst, 0x5a, sizeof(dst));
			if (shca_crc32_copy(init, dst + 8 - a, src + a, n) !=
			    crc_ref(init, src + a, n))
				bad_crc++;
			if (memcmp(dst + 8 - a, src + a, n))
				bad_data++;
			for (i = 0; i < 8 - a; i++)
				bad_guard += dst[i] != 0x5a;
			for (i = 8 - a + n; i < sizeof(dst); i++)
				bad_guard += dst[i] != 0x5a;
		}
	}
	ok_eq(bad_crc, 0, "shca_crc32_copy() returns the CRC of what it copies");
	ok_eq(bad_data, 0, "shca_crc32_copy() copies every byte");
	ok_eq(bad_guard, 0, "shca_crc32_copy() writes nothing else");

	for (i = 0; i < 200; i++) {
		size_t la = rnd32() % 100, lb = rnd32() % 4200;
		u32 seed = rnd32(), whole, part;

		if (la + lb > sizeof(src))
			lb = sizeof(src) - la;
		whole = crc_ref(seed, src, la + lb);
		part = shca_crc32_shift(crc_ref(seed, src, la), lb) ^
		       crc_ref(0, src + la, lb);
		bad_shift += whole != part;
	}
	ok_eq(bad_shift, 0,
	      "crc(A then B) = shift(crc(A), |B|) ^ crc(0, B), 200 splits");
	ok_eq(shca_crc32_shift(0x12345678, 0), 0x12345678,
	      "a shift by nothing changes nothing");
	for (i = 0, bad_shift = 0; i < 300; i++) {
		static const u8 zero[9000];
		size_t n = i < 100 ? i : rnd32() % sizeof(zero);
		u32 c = rnd32();

		bad_shift += shca_crc32_shift(c, n) !=
			     crc_ref(c, zero, n);
	}
	ok_eq(bad_shift, 0,
	      "shca_crc32_shift(c, n) is the CRC over n zero bytes (300 n)");
}

static void rxe_model_trailer(const struct icrc_vector *v, u8 out[4])
{
	size_t ipl = ip_len(v), n = v->len - SHCA_ICRC_LEN;
	u8 *copy = malloc(n);
	u32 crc;

	if (!copy)
		tap_bail("out of memory");
	memcpy(copy, v->pkt, n);
	if (v->ipv6) {
		copy[0] |= 0x0f;
		memset(copy + 1, 0xff, 3);
		copy[7] = 0xff;
	} else {
		copy[1] = 0xff;
		copy[8] = 0xff;
		copy[10] = 0xff;
		copy[11] = 0xff;
	}
	copy[ipl + 6] = 0xff;
	copy[ipl + 7] = 0xff;
	copy[ipl + SHCA_UDP_HDR_LEN + 4] = 0xff;
	crc = crc_ref(SHCA_ICRC_SEED, copy, n);
	crc = ~crc;
	memcpy(out, &crc, 4);
	free(copy);
}

static void test_vector(const struct icrc_vector *v)
{
	size_t ipl = ip_len(v);
	size_t n = v->len - SHCA_ICRC_LEN;	/* bytes covered by the ICRC */
	u8 *pkt = malloc(v->len);
	const u8 *udp, *bth;
	struct shca_pkt_hdr h;
	struct shca_icrc st;
	u8 trailer[4], rxe[4];
	int hl, bad, ret, i;
	size_t off;

	if (!pkt)
		tap_bail("out of memory");
	memcpy(pkt, v->pkt, v->len);
	udp = pkt + ipl;
	bth = udp + SHCA_UDP_HDR_LEN;

	ok_eq(icrc_of(pkt, v->len, v->ipv6), v->icrc,
	      "%s: ICRC of the linear packet", v->name);
	ok(shca_icrc_check(pkt + n, v->icrc) &&
	   shca_icrc_load(pkt + n) == v->icrc,
	   "%s: trailer holds the ICRC, least significant byte first",
	   v->name);
	shca_icrc_store(trailer, v->icrc);
	ok(!memcmp(trailer, pkt + n, 4), "%s: shca_icrc_store() image",
	   v->name);
	rxe_model_trailer(v, rxe);
	ok(!memcmp(rxe, pkt + n, 4), "%s: same trailer as the rxe model",
	   v->name);

	/* streaming: headers via begin(), payload in random pieces */
	hl = shca_hdr_parse(bth, v->len - ipl - SHCA_UDP_HDR_LEN, &h);
	bad = hl < 0;
	for (i = 0; i < 50 && hl >= 0; i++) {
		ret = shca_icrc_begin(&st, pkt, v->ipv6, udp, bth, hl);
		bad += ret != 0;
		off = ipl + SHCA_UDP_HDR_LEN + hl;
		while (off < n) {
			size_t piece = rnd32() % 9;

			if (piece > n - off)
				piece = n - off;
			shca_icrc_update(&st, pkt + off, piece);
			off += piece;
		}
		bad += shca_icrc_final(&st) != v->icrc;
	}
	ok_eq(bad, 0, "%s: begin(%d header bytes) + random pieces", v->name,
	      hl);

	/* every bit outside the masked fields matters, those inside not */
	bad = 0;
	for (off = 0; off < n; off++) {
		int bit;

		for (bit = 0; bit < 8; bit++) {
			u32 c;

			pkt[off] ^= 1 << bit;
			c = icrc_of(pkt, v->len, v->ipv6);
			pkt[off] ^= 1 << bit;
			if ((c == v->icrc) != masked(v->ipv6, ipl, off, bit)) {
				if (bad < 5)
					diag("byte %zu bit %d", off, bit);
				bad++;
			}
		}
	}
	ok_eq(bad, 0,
	      "%s: only TOS/TC, flow label, TTL/hop limit, checksums and BTH byte 4 are ignored",
	      v->name);

	/* all masked fields at once */
	if (v->ipv6) {
		pkt[0] ^= 0x0f;
		pkt[1] ^= 0x5a;
		pkt[2] ^= 0xa5;
		pkt[3] ^= 0x3c;
		pkt[7] = 3;
	} else {
		pkt[1] = 0x00;
		pkt[8] = 1;
		pkt[10] ^= 0x77;
		pkt[11] ^= 0x88;
	}
	pkt[ipl + 6] = 0;
	pkt[ipl + 7] = 0;
	pkt[ipl + SHCA_UDP_HDR_LEN + 4] ^= 0xc0;	/* FECN, BECN */
	ok_eq(icrc_of(pkt, v->len, v->ipv6), v->icrc,
	      "%s: rewriting ECN/DSCP, TTL, checksums, FECN/BECN keeps ICRC",
	      v->name);
	free(pkt);
}

static void test_ipv4_options(void)
{
	const struct icrc_vector *v = &icrc_vectors[0];
	size_t len = v->len + 4;
	u8 *pkt = malloc(len);
	u32 a, b;

	if (!pkt)
		tap_bail("out of memory");
	/* insert one 4-byte option (NOP, NOP, NOP, EOL) */
	memcpy(pkt, v->pkt, 20);
	pkt[0] = 0x46;
	memcpy(pkt + 20, "\x01\x01\x01\x00", 4);
	memcpy(pkt + 24, v->pkt + 20, v->len - 20);
	a = icrc_of(pkt, len, false);
	pkt[22] = 0x07;
	b = icrc_of(pkt, len, false);
	pkt[8] = 3;	/* TTL */
	ok(a != v->icrc && a != b && icrc_of(pkt, len, false) == b,
	   "IPv4 options are covered, TTL still masked");
	free(pkt);
}

static void test_errors(void)
{
	const struct icrc_vector *v = &icrc_vectors[0];
	u8 ip[20];
	struct shca_icrc st;

	ok_eq(shca_icrc_begin(&st, v->pkt, false, v->pkt + 20, v->pkt + 28,
			      SHCA_BTH_LEN - 1), -EINVAL,
	      "begin() rejects less than a BTH");
	memcpy(ip, v->pkt, 20);
	ip[0] = 0x44;
	ok_eq(shca_icrc_begin(&st, ip, false, v->pkt + 20, v->pkt + 28,
			      SHCA_BTH_LEN), -EINVAL,
	      "begin() rejects an IPv4 IHL below 5");
	ok_eq(shca_icrc_begin(&st, v->pkt, false, v->pkt + 20, v->pkt + 28,
			      SHCA_BTH_LEN), 0, "begin() with only the BTH");
}

int main(void)
{
	size_t i;

	const struct shca_crc_impl *im[CRC_IMPLS_MAX];
	unsigned int n, k;

	tap_start();
	n = crc_impls(im);
	for (k = 0; k < n; k++) {
		diag("CRC-32 by %s", im[k]->name);
		shca_crc_use(im[k]);
		test_crc32();
		test_copy_shift();
		for (i = 0; i < ARRAY_SIZE(icrc_vectors); i++)
			test_vector(&icrc_vectors[i]);
		test_ipv4_options();
	}
	test_errors();
	return tap_done();
}
