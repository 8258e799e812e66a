/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca_icrc.h - RoCEv2 invariant CRC (IBA annex A17).
 *
 * The ICRC is the CRC-32 of IEEE 802.3 (reflected polynomial 0xEDB88320,
 * initial value ~0, final inversion) over
 *
 *   8 bytes of 0xff            (stand-in for the InfiniBand LRH)
 *   the IP header              IPv4: TOS, TTL and header checksum set to
 *                              all ones; IPv6: traffic class, flow label
 *                              and hop limit set to all ones
 *   the UDP header             checksum set to all ones
 *   the BTH                    byte 4 (FECN, BECN, reserved) all ones
 *   the extension headers, the payload and the pad bytes.
 *
 * It is sent in the 4 bytes that follow the pad, least significant byte
 * first, like the Ethernet FCS: the CRC value 0x2a00fd82 is sent as
 * 82 fd 00 2a.  This is what rdma_rxe does on a little-endian host, where
 * it stores the inverted crc32_le() state as a native u32.
 *
 * Usage: shca_icrc_begin() with the IP, UDP and transport headers,
 * shca_icrc_update() for each further piece of payload and pad, then
 * shca_icrc_final() and shca_icrc_store() or shca_icrc_check().
 *
 * The CRC-32 passes go through the dispatch of shca_crc.h; the state
 * shift that joins pieces is shca_crc32_shift() (shca_crc_table.h).
 * Pure code: no kernel calls, see shca_pure.h.
 */
#ifndef SHCA_ICRC_H
#define SHCA_ICRC_H

#include "shca_pure.h"
#include "shca_hdr.h"	/* SHCA_BTH_LEN, SHCA_ICRC_LEN */
#include "shca_crc.h"
#include "shca_crc_table.h"

/* raw crc32_le() state after ~0 and the 8 bytes of 0xff */
#define SHCA_ICRC_SEED		0xdebb20e3U
#define SHCA_IPV4_HDR_MIN	20
#define SHCA_IPV4_HDR_MAX	60
#define SHCA_IPV6_HDR_LEN	40
#define SHCA_UDP_HDR_LEN	8

/**
 * struct shca_icrc - running ICRC computation
 * @crc: raw CRC-32 state (as crc32_le() takes and returns it: no inversion)
 */
struct shca_icrc {
	u32 crc;
};

/**
 * shca_icrc_begin() - start an ICRC with the masked packet headers
 * @st: state to initialise
 * @ip_hdr: IPv4 or IPv6 header (IPv4 length taken from its IHL field)
 * @ipv6: @ip_hdr is an IPv6 header
 * @udp_hdr: the 8-byte UDP header
 * @bth: the BTH, followed by the rest of the transport headers
 * @hdr_len: bytes at @bth to include, at least the 12 of the BTH; may
 *	cover the extension headers and any payload that is contiguous
 *
 * Feeds the 8 bytes of ones (as a precomputed seed), then masked copies of
 * the IP header, the UDP header and the BTH, then the remaining
 * @hdr_len - 12 bytes at @bth unmodified.  The packet is not written to.
 *
 * Return: 0, or -EINVAL if @hdr_len is below 12 or the IPv4 header
 * length is below 20 bytes.
 */
int shca_icrc_begin(struct shca_icrc *st, const void *ip_hdr, bool ipv6,
		    const void *udp_hdr, const void *bth, size_t hdr_len);

/**
 * shca_icrc_update() - add the next bytes (payload, pad) to an ICRC
 * @st: state from shca_icrc_begin()
 * @data: next bytes of the packet
 * @len: length of @data
 */
static inline void shca_icrc_update(struct shca_icrc *st, const void *data,
				    size_t len)
{
	st->crc = shca_crc32_le(st->crc, data, len);
}

/**
 * shca_icrc_final() - the ICRC value
 * @st: state after all payload and pad bytes
 *
 * Return: the ICRC as a number (the standard CRC-32 of the masked bytes);
 * see shca_icrc_store() for its byte order on the wire.
 */
static inline u32 shca_icrc_final(const struct shca_icrc *st)
{
	return ~st->crc;
}

/**
 * shca_icrc_store() - write an ICRC into the packet trailer
 * @trailer: the 4 bytes after the pad
 * @icrc: value from shca_icrc_final()
 *
 * Writes the least significant byte first.
 */
static inline void shca_icrc_store(void *trailer, u32 icrc)
{
	u8 *p = trailer;

	p[0] = (u8)icrc;
	p[1] = (u8)(icrc >> 8);
	p[2] = (u8)(icrc >> 16);
	p[3] = (u8)(icrc >> 24);
}

/**
 * shca_icrc_load() - read the ICRC of a received packet
 * @trailer: the last 4 bytes of the UDP payload
 *
 * Return: the ICRC as a number, comparable to shca_icrc_final().
 */
static inline u32 shca_icrc_load(const void *trailer)
{
	const u8 *p = trailer;

	return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 |
	       (u32)p[3] << 24;
}

/**
 * shca_icrc_check() - compare a computed ICRC with a packet's trailer
 * @trailer: the last 4 bytes of the UDP payload
 * @icrc: value from shca_icrc_final()
 *
 * Return: true if they match.
 */
static inline bool shca_icrc_check(const void *trailer, u32 icrc)
{
	return shca_icrc_load(trailer) == icrc;
}

/**
 * shca_icrc_compute() - ICRC of a linear packet
 * @ip_hdr: IPv4 or IPv6 header
 * @ipv6: @ip_hdr is an IPv6 header
 * @udp_hdr: the UDP header
 * @bth: the BTH
 * @len: bytes from the BTH to the end of the pad, i.e. the UDP payload
 *	length less the 4 ICRC bytes
 * @icrc: result, as from shca_icrc_final()
 *
 * Return: 0, or -EINVAL as shca_icrc_begin().
 */
int shca_icrc_compute(const void *ip_hdr, bool ipv6, const void *udp_hdr,
		      const void *bth, size_t len, u32 *icrc);

#endif /* SHCA_ICRC_H */
