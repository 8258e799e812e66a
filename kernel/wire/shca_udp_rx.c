// SPDX-License-Identifier: GPL-2.0
/*
 * shca receive side of the wire: the checks every RoCEv2 packet passes
 * before the engine sees it.
 *
 * The UDP layer has checked the IP header, the UDP length and (when not
 * zero) the UDP checksum.  shca_net_rcv() checks them again and the BTH
 * version, strips the UDP header and calls the engine's one receive entry
 * point, shca_rx().  The ICRC is checked and stripped later, by the
 * receive drain (shca_net_rx_verify()), so that a drain moved to another
 * CPU takes that pass over the payload with it.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include "shca.h"
#include "shca_hdr.h"
#include "shca_icrc.h"
#include "shca_net.h"
#include "shca_rx.h"
#include "shca_udp_rx.h"

/*
 * Check the IP header in front of the UDP header at skb->data: the one
 * skb->protocol names, which later stages go by.
 * Return: 0, or -EBADMSG.
 */
static int shca_rx_check_ip(const struct sk_buff *skb)
{
	int ip_len = -skb_network_offset(skb);

	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph = ip_hdr(skb);

		if (ip_len < (int)sizeof(*iph) || iph->version != 4 ||
		    iph->ihl * 4 != ip_len || iph->protocol != IPPROTO_UDP)
			return -EBADMSG;
		return 0;
	}
	if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		/* the ICRC is defined for a UDP header right after the IPv6 one */
		if (ip_len != (int)sizeof(*ip6h) || ip6h->version != 6 ||
		    ip6h->nexthdr != IPPROTO_UDP)
			return -EBADMSG;
		return 0;
	}
	return -EBADMSG;
}

/**
 * shca_icrc_skb - add bytes of an skb beyond its linear part to an ICRC
 * @st: the ICRC being computed
 * @skb: packet (page fragments or a frag list)
 * @off: offset of the first byte
 * @len: bytes
 *
 * The bytes are read in place, not copied.
 *
 * Return: false if the skb is shorter than @off + @len.
 */
bool shca_icrc_skb(struct shca_icrc *st, struct sk_buff *skb,
		   unsigned int off, unsigned int len)
{
	struct skb_seq_state seq;
	unsigned int done = 0, n;
	const u8 *data;

	skb_prepare_seq_read(skb, off, off + len, &seq);
	while (done < len) {
		n = skb_seq_read(done, &data, &seq);
		if (!n)
			break;
		n = min(n, len - done);
		shca_icrc_update(st, data, n);
		done += n;
	}
	skb_abort_seq_read(&seq);
	return done == len;
}

/*
 * A FLUSH whose ICRC @st did not match as IBA computes it: does it match
 * as rdma_rxe computes it, the transport headers covered a second time
 * (shca_pkt_icrc_rxe())?  @crc_len: the whole request, linear.
 */
static bool shca_rx_icrc_rxe(struct sk_buff *skb, struct shca_icrc *st,
			     u32 crc_len, const void *trailer)
{
	u8 op = skb->data[0];

	if (op != SHCA_OPCODE(SHCA_OP_RC, SHCA_OP_FLUSH) ||
	    crc_len != shca_opcode_info(op)->hdr_len ||
	    skb_headlen(skb) < crc_len)
		return false;
	shca_icrc_update(st, skb->data, crc_len);
	return shca_icrc_check(trailer, shca_icrc_final(st));
}

/*
 * Check the ICRC of a packet whose BTH is at skb->data (linear), with the
 * network and transport headers set.  @crc_len: bytes from the BTH to the
 * ICRC.  A FLUSH may carry rdma_rxe's form of it as well (counted).
 */
static bool shca_rx_icrc_ok(struct shca_dev *sdev, struct sk_buff *skb,
			    bool ipv6, u32 crc_len)
{
	u32 head = min_t(u32, skb_headlen(skb), crc_len);
	u8 buf[SHCA_ICRC_LEN];
	struct shca_icrc st;
	const void *trailer;

	if (shca_icrc_begin(&st, skb_network_header(skb), ipv6, udp_hdr(skb),
			    skb->data, head))
		return false;
	if (head < crc_len && !shca_icrc_skb(&st, skb, head, crc_len - head))
		return false;
	trailer = skb_header_pointer(skb, crc_len, SHCA_ICRC_LEN, buf);
	if (!trailer)
		return false;
	if (shca_icrc_check(trailer, shca_icrc_final(&st)))
		return true;
	if (!shca_rx_icrc_rxe(skb, &st, crc_len, trailer))
		return false;
	shca_stat_inc(sdev, SHCA_CNT_FLUSH_RXE_ICRC);
	return true;
}

/**
 * shca_net_rx_verify - check a received packet's ICRC and strip it
 * @sdev: receiving device
 * @skb: packet as shca_rx() queued it, skb->data at the BTH
 *
 * The receive drain calls this before the packet is handled, so that a
 * drain moved to another CPU takes this pass over the payload with it
 * instead of leaving it on the CPU the packet arrived on (a veth's
 * sender's).  shca_net_rcv() checked the IP header that skb->protocol
 * names and that the packet reaches past a BTH and the ICRC; nothing
 * changed skb->len since it pulled the UDP header.  BH disabled.
 *
 * Return: true if the packet is good, ICRC removed; false if it was
 * dropped (and consumed).
 */
bool shca_net_rx_verify(struct shca_dev *sdev, struct sk_buff *skb)
{
	u32 crc_len = skb->len - SHCA_ICRC_LEN;

	if (!shca_rx_icrc_ok(sdev, skb, skb->protocol == htons(ETH_P_IPV6),
			     crc_len)) {
		shca_stat_inc(sdev, SHCA_CNT_RX_DROP_BAD_ICRC);
		kfree_skb(skb);
		return false;
	}
	if (pskb_trim_rcsum(skb, crc_len)) {
		shca_stat_inc(sdev, SHCA_CNT_RX_DROP_BAD_HDR);
		kfree_skb(skb);
		return false;
	}
	return true;
}

/**
 * shca_net_rx_strip - strip the ICRC of a same-host packet, unchecked
 * @sdev: receiving device
 * @skb: packet as shca_rx_local() queued it, skb->data at the BTH
 *
 * The packet was built on this host and never left memory: its ICRC was
 * not computed (shca_net_rcv_local()), and there is nothing to check.
 *
 * Return: true, ICRC removed; false if it was dropped (and consumed).
 */
bool shca_net_rx_strip(struct shca_dev *sdev, struct sk_buff *skb)
{
	if (skb->len < SHCA_BTH_LEN + SHCA_ICRC_LEN ||
	    pskb_trim_rcsum(skb, skb->len - SHCA_ICRC_LEN)) {
		shca_stat_inc(sdev, SHCA_CNT_RX_DROP_BAD_HDR);
		kfree_skb(skb);
		return false;
	}
	return true;
}

/**
 * shca_net_rcv_local - take a unicast packet from a device of this host
 * @to: the receiving device (the caller holds a reference on it)
 * @skb: the packet with its UDP and IP headers, skb->data at the UDP
 *	header, network and transport headers set, the room of the ICRC at
 *	its end (not computed); consumed
 *
 * Same-host delivery: the packet was built by a device of this host and
 * never leaves memory, so it carries no ICRC to check and needs none of
 * shca_net_rcv()'s checks of untrusted headers.  Counted as received by
 * @to and queued for its QP (shca_rx_local()).  BHs off.
 */
void shca_net_rcv_local(struct shca_dev *to, struct sk_buff *skb)
{
	shca_stat_inc(to, SHCA_CNT_RX_PKTS);
	shca_stat_add(to, SHCA_CNT_RX_BYTES, skb->len - sizeof(struct udphdr));
	__skb_pull(skb, sizeof(struct udphdr));
	shca_rx_local(to, skb);
}

static u8 shca_bth_tver(const void *bth)
{
	return ((const u8 *)bth)[1] & 0x0f;
}

/**
 * shca_net_rcv - take a RoCEv2 packet from the network for a device
 * @sdev: the receiving device
 * @skb: packet, skb->data at the UDP header, network and transport
 *	headers set; consumed
 *
 * Checks the IP and UDP headers and the BTH version, strips the UDP
 * header and gives the packet to the engine's shca_rx(); the receive
 * drain checks and strips the ICRC (shca_net_rx_verify()).  Softirq
 * context, caller must hold rcu_read_lock().
 */
void shca_net_rcv(struct shca_dev *sdev, struct sk_buff *skb)
{
	const struct udphdr *uh;

	shca_stat_inc(sdev, SHCA_CNT_RX_PKTS);
	if (skb->len > sizeof(*uh))
		shca_stat_add(sdev, SHCA_CNT_RX_BYTES, skb->len - sizeof(*uh));

	if (skb_transport_offset(skb) != 0 ||
	    !pskb_may_pull(skb, sizeof(*uh) + SHCA_BTH_LEN) ||
	    shca_rx_check_ip(skb))
		goto drop;
	uh = udp_hdr(skb);
	if (ntohs(uh->len) != skb->len ||
	    skb->len < sizeof(*uh) + SHCA_BTH_LEN + SHCA_ICRC_LEN ||
	    shca_bth_tver(uh + 1) != SHCA_BTH_TVER)
		goto drop;
	__skb_pull(skb, sizeof(*uh));
	/* the arrival interface stays in skb_iif; sdev holds its netdev */
	skb->dev = sdev->ndev;
	shca_rx(sdev, skb);
	return;

drop:
	shca_stat_inc(sdev, SHCA_CNT_RX_DROP_BAD_HDR);
	kfree_skb(skb);
}

/**
 * shca_udp_encap_recv - the RoCEv2 sockets' UDP encapsulation hook
 * @sk: the namespace's socket (user data: its struct shca_net)
 * @skb: datagram to the RoCEv2 port, skb->data at the UDP header
 *
 * Hands the packet to the device owning the netdev it arrived on.
 * Softirq context.
 *
 * Return: 0: the skb is always consumed.
 */
int shca_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	struct shca_net *sn;
	struct shca_dev *sdev;

	rcu_read_lock();
	sn = rcu_dereference_sk_user_data(sk);
	sdev = sn ? shca_net_find_dev(sn, skb->dev) : NULL;
	if (sdev)
		shca_net_rcv(sdev, skb);
	else
		kfree_skb(skb);
	rcu_read_unlock();
	return 0;
}
