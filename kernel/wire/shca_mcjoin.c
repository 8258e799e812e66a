// SPDX-License-Identifier: GPL-2.0
/*
 * shca multicast membership of the netdev: while a QP of the device is
 * attached to a group, the netdev is a member of the group's IP multicast
 * address.  That sends the IGMP or MLD reports a switch or router needs to
 * forward the group to this host, programs the netdev's Ethernet filter,
 * and makes the IP stack accept the group's packets (it drops multicast
 * for groups the interface has not joined), including the copy it loops
 * back when a QP of this host sends to the group.  Memberships are
 * counted by the IP stack, so rdma_cm joining the same group for the same
 * netdev is harmless.
 */
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include "shca_mcjoin.h"

/* An IPv4 group as a GID: ::ffff:224.0.0.0/100 (IPv4-mapped). */
static bool shca_mcgid_v4(const u8 *mgid)
{
	return ipv6_addr_v4mapped((const struct in6_addr *)mgid);
}

/**
 * shca_mcgid_valid - is @mgid a multicast GID a RoCEv2 group can use?
 * @mgid: the 16-byte GID
 *
 * Return: true for an IPv4-mapped IPv4 multicast address or an IPv6
 * multicast address (ff00::/8).
 */
bool shca_mcgid_valid(const u8 *mgid)
{
	if (shca_mcgid_v4(mgid))
		return ipv4_is_multicast(*(const __be32 *)(mgid + 12));
	return ipv6_addr_is_multicast((const struct in6_addr *)mgid);
}

/**
 * shca_mcjoin - make @ndev a member of the group's IP multicast address
 * @ndev: the device's netdev
 * @mgid: the group (shca_mcgid_valid())
 *
 * Process context; takes the RTNL lock.
 *
 * Return: 0, or -ENODEV when the netdev has no IPv4 or IPv6 state for
 * the group's family, or the IP stack's error.
 */
int shca_mcjoin(struct net_device *ndev, const u8 *mgid)
{
	struct in_device *in_dev;
	int ret = 0;

	rtnl_lock();
	if (shca_mcgid_v4(mgid)) {
		in_dev = __in_dev_get_rtnl(ndev);
		if (in_dev)
			ip_mc_inc_group(in_dev, *(const __be32 *)(mgid + 12));
		else
			ret = -ENODEV;
	} else if (IS_ENABLED(CONFIG_IPV6)) {
		ret = ipv6_dev_mc_inc(ndev, (const struct in6_addr *)mgid);
	} else {
		ret = -EAFNOSUPPORT;
	}
	rtnl_unlock();
	return ret;
}

/**
 * shca_mcleave - undo one shca_mcjoin()
 * @ndev: the device's netdev
 * @mgid: the group
 *
 * Process context; takes the RTNL lock.  An interface whose IP state was
 * destroyed since (and its memberships with it) is left alone.
 */
void shca_mcleave(struct net_device *ndev, const u8 *mgid)
{
	struct in_device *in_dev;

	rtnl_lock();
	if (shca_mcgid_v4(mgid)) {
		in_dev = __in_dev_get_rtnl(ndev);
		if (in_dev)
			ip_mc_dec_group(in_dev, *(const __be32 *)(mgid + 12));
	} else if (IS_ENABLED(CONFIG_IPV6)) {
		ipv6_dev_mc_dec(ndev, (const struct in6_addr *)mgid);
	}
	rtnl_unlock();
}
