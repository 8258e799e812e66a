// SPDX-License-Identifier: GPL-2.0
/*
 * shca addressing: address vectors and address handles.
 *
 * An address vector (struct shca_av) is what the engine needs to send to a
 * peer: IP version, both addresses, traffic class, flow label and hop
 * limit.  It is resolved once, from the ah attribute the RDMA core hands
 * to create_ah or modify_qp, and copied into each packet's path.
 *
 * Address handles live in sdev->ah_xa under a handle a user UD send queue
 * entry names them by.  The RDMA core frees an AH right after destroy_ah
 * returns, without an RCU grace period, so lookups copy the address vector
 * under the xarray lock (taken with interrupts disabled: lookups may come
 * from any context), never under RCU alone.
 */
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include "shca.h"
#include "shca_av.h"

/* Caller must hold rcu_read_lock(). */
static int shca_gid_attr_ifindex(const struct ib_gid_attr *sgid_attr)
{
	struct net_device *ndev = rdma_read_gid_attr_ndev_rcu(sgid_attr);

	return IS_ERR(ndev) ? 0 : ndev->ifindex;
}

/* Fill in the IP addresses of @av from its GIDs; -EINVAL on a mix. */
static int shca_av_set_ips(struct shca_av *av)
{
	union {
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} sa;
	bool v4 = av->network_type == RDMA_NETWORK_IPV4;

	if (ipv6_addr_v4mapped((struct in6_addr *)av->sgid.raw) != v4 ||
	    ipv6_addr_v4mapped((struct in6_addr *)av->dgid.raw) != v4)
		return -EINVAL;

	rdma_gid2ip((struct sockaddr *)&sa, &av->sgid);
	if (v4)
		av->saddr.v4 = sa.in.sin_addr;
	else
		av->saddr.v6 = sa.in6.sin6_addr;
	rdma_gid2ip((struct sockaddr *)&sa, &av->dgid);
	if (v4)
		av->daddr.v4 = sa.in.sin_addr;
	else
		av->daddr.v6 = sa.in6.sin6_addr;
	return 0;
}

/**
 * shca_av_from_attr - resolve an address handle attribute
 * @sdev: device
 * @av: result
 * @attr: RoCE ah attribute with a GRH (sgid_attr set by the RDMA core)
 *
 * Only RoCEv2 source GIDs are accepted; the IP version is the source
 * GID's, and the destination GID must be of the same kind (IPv4-mapped or
 * not).
 *
 * Return: 0, or -EINVAL for a non-RoCEv2 source GID or a bad attribute.
 */
int shca_av_from_attr(struct shca_dev *sdev, struct shca_av *av,
		      const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid_attr;
	int nt;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	sgid_attr = grh->sgid_attr;
	if (!sgid_attr || sgid_attr->device != &sdev->ibdev ||
	    sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	nt = rdma_gid_attr_network_type(sgid_attr);
	if (nt != RDMA_NETWORK_IPV4 && nt != RDMA_NETWORK_IPV6)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	av->network_type = nt;
	av->sgid_index = grh->sgid_index;
	av->sgid = sgid_attr->gid;
	av->dgid = grh->dgid;
	if (shca_av_set_ips(av))
		return -EINVAL;
	av->traffic_class = grh->traffic_class;
	av->flow_label = grh->flow_label & 0xfffff;
	av->hop_limit = grh->hop_limit;
	av->sl = rdma_ah_get_sl(attr);
	memcpy(av->dmac, attr->roce.dmac, ETH_ALEN);

	rcu_read_lock();
	av->ifindex = shca_gid_attr_ifindex(sgid_attr);
	rcu_read_unlock();
	return 0;
}

/**
 * shca_av_to_attr - describe an address vector as an ah attribute
 * (query_qp, query_ah)
 * @sdev: device
 * @av: address vector
 * @attr: result; grh.sgid_attr is left NULL (the RDMA core fills it)
 */
void shca_av_to_attr(struct shca_dev *sdev, const struct shca_av *av,
		     struct rdma_ah_attr *attr)
{
	union ib_gid dgid = av->dgid;

	memset(attr, 0, sizeof(*attr));
	attr->type = rdma_ah_find_type(&sdev->ibdev, 1);
	rdma_ah_set_port_num(attr, 1);
	rdma_ah_set_sl(attr, av->sl);
	rdma_ah_set_grh(attr, &dgid, av->flow_label, av->sgid_index,
			av->hop_limit, av->traffic_class);
	memcpy(attr->roce.dmac, av->dmac, ETH_ALEN);
}

/**
 * shca_pkt_src_av - the address vector of a received packet's sender
 * @sdev: receiving device
 * @skb: received packet (network header set)
 * @av: result, see shca_av.h
 */
void shca_pkt_src_av(struct shca_dev *sdev, const struct sk_buff *skb,
		     struct shca_av *av)
{
	memset(av, 0, sizeof(*av));
	av->ifindex = skb->skb_iif ? skb->skb_iif : sdev->ndev->ifindex;
	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph = ip_hdr(skb);

		av->network_type = RDMA_NETWORK_IPV4;
		av->saddr.v4.s_addr = iph->daddr;
		av->daddr.v4.s_addr = iph->saddr;
		ipv6_addr_set_v4mapped(iph->daddr,
				       (struct in6_addr *)av->sgid.raw);
		ipv6_addr_set_v4mapped(iph->saddr,
				       (struct in6_addr *)av->dgid.raw);
		av->traffic_class = iph->tos;
		av->hop_limit = iph->ttl;
	} else {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		av->network_type = RDMA_NETWORK_IPV6;
		av->saddr.v6 = ip6h->daddr;
		av->daddr.v6 = ip6h->saddr;
		memcpy(av->sgid.raw, &ip6h->daddr, sizeof(av->sgid.raw));
		memcpy(av->dgid.raw, &ip6h->saddr, sizeof(av->dgid.raw));
		av->traffic_class = ip6_tclass(ip6_flowinfo(ip6h));
		av->flow_label = be32_to_cpu(ip6_flowlabel(ip6h));
		av->hop_limit = ip6h->hop_limit;
	}
	/* packets delivered on this host carry no Ethernet header */
	if (skb_mac_header_was_set(skb) &&
	    skb_network_header(skb) - skb_mac_header(skb) >= ETH_HLEN)
		memcpy(av->dmac, eth_hdr(skb)->h_source, ETH_ALEN);
}

/**
 * shca_av_is_peer - is a received packet from the connection @av names?
 * @av: a connected QP's address vector
 * @skb: received packet (network header set)
 *
 * An RC or UC connection takes packets from its peer only: anyone who can
 * reach the UDP port could otherwise inject into it at a guessed QPN and
 * PSN.
 *
 * Return: true when @skb's source address is @av's destination and its
 * destination address is @av's source, in the same IP version.
 */
bool shca_av_is_peer(const struct shca_av *av, const struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph = ip_hdr(skb);

		return av->network_type == RDMA_NETWORK_IPV4 &&
		       iph->saddr == av->daddr.v4.s_addr &&
		       iph->daddr == av->saddr.v4.s_addr;
	}
	if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		return av->network_type == RDMA_NETWORK_IPV6 &&
		       ipv6_addr_equal(&ip6h->saddr, &av->daddr.v6) &&
		       ipv6_addr_equal(&ip6h->daddr, &av->saddr.v6);
	}
	return false;
}

/**
 * shca_pkt_grh - the 40 GRH bytes a UD receive buffer starts with
 * @skb: received packet (network header set)
 * @grh: SHCA_GRH_LEN bytes, see shca_av.h
 *
 * Only the fixed 20 bytes of an IPv4 header fit; a header with options is
 * then not recognised as IPv4 by the GRH parsers (its checksum does not
 * match), as with other RoCE devices.
 */
void shca_pkt_grh(const struct sk_buff *skb, void *grh)
{
	u8 *p = grh;

	if (skb->protocol == htons(ETH_P_IP)) {
		memset(p, 0, SHCA_GRH_LEN - sizeof(struct iphdr));
		memcpy(p + SHCA_GRH_LEN - sizeof(struct iphdr), ip_hdr(skb),
		       sizeof(struct iphdr));
	} else {
		memcpy(p, ipv6_hdr(skb), SHCA_GRH_LEN);
	}
}

/**
 * shca_ah_table_init - initialise sdev->ah_xa
 * @sdev: device
 * @max_ah: AHs the device holds at most
 *
 * Handles run from 1 to @max_ah; the lock is taken with interrupts
 * disabled.
 *
 * Return: 0.
 */
int shca_ah_table_init(struct shca_dev *sdev, u32 max_ah)
{
	xa_init_flags(&sdev->ah_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	sdev->max_ah = max_ah;
	return 0;
}

/**
 * shca_ah_table_destroy - release sdev->ah_xa
 * @sdev: device whose AHs are all destroyed
 */
void shca_ah_table_destroy(struct shca_dev *sdev)
{
	WARN_ON(!xa_empty(&sdev->ah_xa));
	xa_destroy(&sdev->ah_xa);
}

/**
 * shca_ah_lookup - look up an AH by handle for a UD send
 * @sdev: device
 * @pd: PD the AH must belong to
 * @handle: handle from the SQE (untrusted)
 * @av: copy of the AH's address vector
 *
 * Return: 0, or -EINVAL when no AH of @pd has that handle.  Any context.
 */
int shca_ah_lookup(struct shca_dev *sdev, struct shca_pd *pd, u32 handle,
		   struct shca_av *av)
{
	struct shca_ah *ah;
	unsigned long flags;
	int ret = -EINVAL;

	xa_lock_irqsave(&sdev->ah_xa, flags);
	ah = xa_load(&sdev->ah_xa, handle);
	if (ah && ah->ibah.pd == &pd->ibpd) {
		*av = ah->av;
		ret = 0;
	}
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
	return ret;
}

/**
 * shca_ah_insert - publish an AH under a new handle
 * @sdev: device
 * @ah: the AH, its address vector resolved
 * @sleepable: the caller may sleep (else the handle is allocated atomically)
 *
 * Return: 0, or -ENOMEM when the device holds max_ah AHs or memory runs
 * out.
 */
int shca_ah_insert(struct shca_dev *sdev, struct shca_ah *ah, bool sleepable)
{
	struct xa_limit lim = XA_LIMIT(1, sdev->max_ah);
	unsigned long flags;
	int ret;

	if (sleepable) {
		ret = xa_alloc_irq(&sdev->ah_xa, &ah->handle, ah, lim,
				   GFP_KERNEL);
	} else {
		xa_lock_irqsave(&sdev->ah_xa, flags);
		ret = __xa_alloc(&sdev->ah_xa, &ah->handle, ah, lim,
				 GFP_ATOMIC);
		xa_unlock_irqrestore(&sdev->ah_xa, flags);
	}
	return ret == -EBUSY ? -ENOMEM : ret;
}

/**
 * shca_ah_remove - withdraw an AH's handle (a UD send naming it fails)
 * @sdev: device
 * @ah: the AH
 */
void shca_ah_remove(struct shca_dev *sdev, struct shca_ah *ah)
{
	unsigned long flags;

	xa_lock_irqsave(&sdev->ah_xa, flags);
	__xa_erase(&sdev->ah_xa, ah->handle);
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
}

