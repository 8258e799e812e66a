// SPDX-License-Identifier: GPL-2.0
/*
 * shca_icrc.c - RoCEv2 invariant CRC, see shca_icrc.h.
 */
#include "shca_pure.h"
#include "shca_icrc.h"

#ifndef __KERNEL__
#include <errno.h>	/* shca_pure.h does not provide the E* codes */
#endif

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
