/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca address vectors (shca_av.c): where a packet goes and where a
 * received one came from, and the device's table of address handles
 * that UD work requests name.
 */
#ifndef SHCA_AV_H
#define SHCA_AV_H

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

struct dst_cache;
struct shca_dev;
struct shca_pd;

/**
 * struct shca_av - resolved address vector: everything needed to send a
 * packet to a peer and to describe a sender in a UD completion's GRH
 * @network_type: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6
 * @sgid_index: source GID table index
 * @sgid: source GID
 * @dgid: destination GID
 * @saddr: source IP (IPv4-mapped form in @sgid for IPv4)
 * @daddr: destination IP
 * @traffic_class: IPv4 TOS / IPv6 traffic class
 * @flow_label: IPv6 flow label (also the UDP source port entropy)
 * @hop_limit: TTL / hop limit
 * @sl: service level
 * @dmac: destination MAC resolved by the RDMA core (informational: the
 *	IP layer resolves neighbours itself)
 * @ifindex: interface packets to the peer leave by: the netdev of the
 *	source GID (the device's netdev or a VLAN on it), 0 for the
 *	device's netdev
 */
struct shca_av {
	u8 network_type;
	u8 sgid_index;
	union ib_gid sgid;
	union ib_gid dgid;
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} saddr, daddr;
	u8 traffic_class;
	u32 flow_label;
	u8 hop_limit;
	u8 sl;
	u8 dmac[ETH_ALEN];
	int ifindex;
};

/**
 * shca_av_from_attr - resolve an address handle attribute
 * @sdev: device
 * @av: result
 * @attr: RoCE ah attribute with a GRH (sgid_attr set by the RDMA core)
 *
 * Return: 0, or -EINVAL for a non-RoCEv2 source GID or a bad attribute.
 */
int shca_av_from_attr(struct shca_dev *sdev, struct shca_av *av,
		      const struct rdma_ah_attr *attr);

/**
 * shca_av_to_attr - describe an address vector as an ah attribute
 * (query_qp, query_ah)
 * @sdev: device
 * @av: address vector
 * @attr: result
 */
void shca_av_to_attr(struct shca_dev *sdev, const struct shca_av *av,
		     struct rdma_ah_attr *attr);

/**
 * struct shca_ah - address handle
 * @ibah: RDMA core AH
 * @av: resolved address
 * @handle: number a user UD SQE names it by (struct shca_create_ah_resp)
 */
struct shca_ah {
	struct ib_ah ibah;
	struct shca_av av;
	u32 handle;
};

static inline struct shca_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct shca_ah, ibah);
}

/**
 * shca_ah_lookup - look up an AH by handle for a UD send
 * @sdev: device
 * @pd: PD the AH must belong to
 * @handle: handle from the SQE
 * @av: copy of the AH's address vector (the AH may be destroyed after
 *	return; the copy stays valid)
 *
 * Return: 0, or -EINVAL when no AH of @pd has that handle.  Any context
 * (takes the xarray lock with interrupts disabled).
 */
int shca_ah_lookup(struct shca_dev *sdev, struct shca_pd *pd, u32 handle,
		   struct shca_av *av);

/**
 * shca_ah_table_init - initialise sdev->ah_xa (before registration)
 * @sdev: device
 * @max_ah: AHs the device holds at most (handles 1 to @max_ah)
 *
 * Return: 0.
 */
int shca_ah_table_init(struct shca_dev *sdev, u32 max_ah);

/**
 * shca_ah_table_destroy - release sdev->ah_xa (every AH destroyed)
 * @sdev: device
 */
void shca_ah_table_destroy(struct shca_dev *sdev);
int shca_ah_insert(struct shca_dev *sdev, struct shca_ah *ah, bool sleepable);
void shca_ah_remove(struct shca_dev *sdev, struct shca_ah *ah);

/**
 * shca_pkt_src_av - the address vector of a received packet's sender, for
 * UD completions (GRH) and for answering it
 * @sdev: receiving device
 * @skb: received packet (network header set)
 * @av: result: sgid/saddr are the packet's destination (this host),
 *	dgid/daddr its source; traffic class, flow label and hop limit as
 *	received; dmac the sender's MAC when known; sgid_index and sl 0
 */
void shca_pkt_src_av(struct shca_dev *sdev, const struct sk_buff *skb,
		     struct shca_av *av);

#define SHCA_GRH_LEN	40

/**
 * shca_av_is_peer - is a received packet from the connection @av names?
 * @av: a connected QP's address vector
 * @skb: received packet (network header set)
 *
 * Return: true when @skb's source address is @av's destination and its
 * destination address is @av's source, in the same IP version.
 */
bool shca_av_is_peer(const struct shca_av *av, const struct sk_buff *skb);

/**
 * shca_pkt_grh - the 40 GRH bytes a UD receive buffer starts with
 * @skb: received packet (network header set)
 * @grh: SHCA_GRH_LEN bytes: the IPv6 header, or for IPv4 20 zero bytes
 *	and the IPv4 header (what ibv_init_ah_from_wc() and
 *	ib_init_ah_attr_from_wc() parse)
 */
void shca_pkt_grh(const struct sk_buff *skb, void *grh);

#endif /* SHCA_AV_H */
