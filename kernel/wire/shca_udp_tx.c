// SPDX-License-Identifier: GPL-2.0
/*
 * shca transmit side of the wire: packet buffers for the engine, the UDP
 * and IP headers, the ICRC, routes, and the hand-off to the IP stack or,
 * for a device of this host, to same-host delivery (shca_loop.c).
 *
 * shca_pkt_xmit() builds the UDP and IP headers itself, computes the ICRC
 * over them and sends with ip_local_out()/ip6_local_out().  It does not
 * use udp_tunnel_xmit_skb(): that picks the IPv4 identification field
 * (which the ICRC covers) only after the ICRC would have to be computed.
 * The UDP checksum is 0 over IPv4, as RoCEv2 specifies; over IPv6 it is
 * computed (offloaded when the netdev can), which every receiver accepts,
 * whereas a zero IPv6 UDP checksum is only accepted by sockets that opt
 * in (rdma_rxe's and ours do).
 */
#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/dst_cache.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include "shca.h"
#include "shca_hdr.h"
#include "shca_icrc.h"
#include "shca_mcg.h"
#include "shca_loop.h"
#include "shca_net.h"
#include "shca_udp_rx.h"
#include "shca_udp_tx.h"
#include "shca_av.h"
#include "shca_trace.h"

#define SHCA_LOCAL_HOP_LIMIT	64	/* hop limit 0 on a same-host packet */

/*
 * What the engine tells shca_pkt_xmit() about a packet it built, in
 * skb->cb from shca_pkt_alloc() to transmit.
 */
struct shca_tx_cb {
	bool icrc_in;	/* skb->len already counts the 4 ICRC bytes */
	bool icrc_rxe;	/* a FLUSH to rdma_rxe: its form of the ICRC */
	u32 tail_len;	/* bytes before the ICRC whose CRC is tail_crc */
	u32 tail_crc;	/* shca_crc32_le(0, those bytes) */
};

#define SHCA_TX_CB(skb)		((struct shca_tx_cb *)(skb)->cb)

/**
 * shca_pkt_alloc - allocate a packet to send
 * @sdev: device
 * @av: destination
 * @tlen: bytes of transport headers + payload + pad
 *
 * Return: a linear skb with skb->data at the BTH and skb->len == @tlen,
 * with room for the link, IP and UDP headers and the ICRC; or NULL.
 */
struct sk_buff *shca_pkt_alloc(struct shca_dev *sdev,
			       const struct shca_av *av, u32 tlen)
{
	bool ipv6 = av->network_type == RDMA_NETWORK_IPV6;
	unsigned int hroom;
	struct sk_buff *skb;
	u8 *p;

	if (tlen < SHCA_BTH_LEN || tlen > U16_MAX)
		return NULL;
	hroom = LL_RESERVED_SPACE_EXTRA(sdev->ndev, VLAN_HLEN) +
		(ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) +
		sizeof(struct udphdr);
	skb = alloc_skb(hroom + tlen + SHCA_ICRC_LEN, GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_reserve(skb, hroom);
	p = skb_put(skb, tlen);
	/* the pad bytes, so that nothing uninitialised reaches the wire */
	memset(p + tlen - SHCA_ICRC_LEN, 0, SHCA_ICRC_LEN);
	skb->protocol = htons(ipv6 ? ETH_P_IPV6 : ETH_P_IP);
	skb->dev = sdev->ndev;
	SHCA_TX_CB(skb)->icrc_in = false;
	SHCA_TX_CB(skb)->icrc_rxe = false;
	SHCA_TX_CB(skb)->tail_len = 0;
	return skb;
}

/**
 * shca_pkt_icrc_rxe - send a FLUSH with rdma_rxe's form of the ICRC
 * @skb: from shca_pkt_alloc(), an RC FLUSH request (no payload)
 *
 * rdma_rxe (Linux 6.2 to at least 6.12) computes a FLUSH's ICRC over its
 * transport headers and then over the same bytes again, unmasked, as if
 * they were payload, and drops a FLUSH whose ICRC follows IBA.  The
 * requester sends this form to a peer that did not answer the other
 * (shca_req.c); shca's receive side takes both (shca_udp_rx.c).
 */
void shca_pkt_icrc_rxe(struct sk_buff *skb)
{
	SHCA_TX_CB(skb)->icrc_rxe = true;
}

/*
 * Append a last fragment from the per-CPU page fragment cache with room
 * for @len bytes the caller writes, then the pad (zero) and the ICRC,
 * which shca_pkt_xmit() stores there.  Returns the @len bytes' room, or
 * NULL (a bad pad, no memory; the caller checked there is a fragment
 * left).
 */
static void *shca_pkt_frag_end(struct sk_buff *skb, u32 len, u32 pad)
{
	u32 n = len + pad + SHCA_ICRC_LEN;
	int i = skb_shinfo(skb)->nr_frags;
	struct page *page;
	u8 *p;

	if (pad > 3)
		return NULL;
	p = netdev_alloc_frag(n);
	if (!p)
		return NULL;
	memset(p + len, 0, pad + SHCA_ICRC_LEN);
	page = virt_to_head_page(p);
	skb_fill_page_desc(skb, i, page, p - (u8 *)page_address(page), n);
	skb->len += n;
	skb->data_len += n;
	skb->truesize += SKB_DATA_ALIGN(n);
	SHCA_TX_CB(skb)->icrc_in = true;
	return p;
}

/**
 * shca_pkt_frag_payload - room for a packet's payload in a page fragment
 * @skb: from shca_pkt_alloc() with no payload in its linear part and no
 *	fragment
 * @len: payload bytes the caller will write
 * @pad: pad bytes the BTH announces (0 to 3), zeroed here
 *
 * One fragment from the per-CPU page fragment cache holds the payload,
 * the pad and room for the ICRC, as shca_pkt_frag_trailer() does for a
 * payload by reference.  The cache hands its pages out again once their
 * fragments are freed, so a stream of packets built this way does not
 * allocate (and clear) a new buffer for every packet, as a linear skb
 * of the same size does.  Any context.
 *
 * Return: where the payload goes, or NULL (no memory, or a fragment that
 * large cannot be had): build the packet linear instead.
 */
void *shca_pkt_frag_payload(struct sk_buff *skb, u32 len, u32 pad)
{
	if (skb_shinfo(skb)->nr_frags || len + pad > PAGE_SIZE + 4)
		return NULL;
	return shca_pkt_frag_end(skb, len, pad);
}

/**
 * shca_pkt_tail_crc - give transmit the CRC of a packet's last bytes
 * @skb: from shca_pkt_alloc(), its headers linear
 * @len: bytes right before the ICRC it covers (payload and pad)
 * @crc: shca_crc32_le(0, those bytes), e.g. from shca_crc32_copy()
 *
 * The ICRC is then computed over the headers alone and put together with
 * @crc (shca_crc32_shift()): a payload copied into the packet is not read
 * a second time.
 */
void shca_pkt_tail_crc(struct sk_buff *skb, u32 len, u32 crc)
{
	SHCA_TX_CB(skb)->tail_len = len;
	SHCA_TX_CB(skb)->tail_crc = crc;
}

/**
 * shca_pkt_frag_trailer - end a packet whose payload is in page fragments
 * @skb: from shca_pkt_alloc(), with the payload appended as page fragments
 *	(at most MAX_SKB_FRAGS - 1 of them)
 * @pad: pad bytes the BTH announces (0 to 3)
 *
 * Appends a last fragment holding the pad bytes (zero) and room for the
 * ICRC, which shca_pkt_xmit() computes over the fragments and stores
 * there: the skb then holds the whole UDP payload, ICRC included.  The
 * trailer comes from the per-CPU page fragment cache.  Any context.
 *
 * Return: 0, -E2BIG when no fragment is left, -ENOMEM (also for a pad
 * over 3).
 */
int shca_pkt_frag_trailer(struct sk_buff *skb, u32 pad)
{
	if (skb_shinfo(skb)->nr_frags >= MAX_SKB_FRAGS)
		return -E2BIG;
	return shca_pkt_frag_end(skb, 0, pad) ? 0 : -ENOMEM;
}

/*
 * Make @*pskb a private skb with room for the UDP and IP headers, whose
 * last 4 bytes are room for the ICRC: a packet whose trailer fragment
 * holds them keeps its page fragments; any other is made linear and the
 * 4 bytes appended.  Consumes the skb on failure.
 */
static int shca_tx_prepare(struct sk_buff **pskb, bool ipv6)
{
	unsigned int room = sizeof(struct udphdr) +
		(ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr));
	struct sk_buff *skb;
	int hexp, texp;
	u32 tail;

	skb = skb_share_check(*pskb, GFP_ATOMIC);
	*pskb = skb;
	if (!skb)
		return -ENOMEM;
	tail = SHCA_TX_CB(skb)->icrc_in ? 0 : SHCA_ICRC_LEN;
	if (skb->len < SHCA_BTH_LEN + SHCA_ICRC_LEN - tail ||
	    skb->len > U16_MAX - room - tail)
		goto err_len;
	if ((tail || skb_cloned(skb) || skb_has_frag_list(skb)) &&
	    skb_linearize(skb))
		goto err_mem;
	hexp = max_t(int, room - skb_headroom(skb), 0);
	texp = max_t(int, tail - skb_tailroom(skb), 0);
	if ((hexp || texp || skb_cloned(skb)) &&
	    pskb_expand_head(skb, hexp, texp, GFP_ATOMIC))
		goto err_mem;
	skb_scrub_packet(skb, false);
	if (tail)	/* (skb_put() of a nonlinear skb is a BUG, even of 0) */
		skb_put(skb, tail);
	skb->protocol = htons(ipv6 ? ETH_P_IPV6 : ETH_P_IP);
	return 0;

err_len:
	kfree_skb(skb);
	return -EMSGSIZE;
err_mem:
	kfree_skb(skb);
	return -ENOMEM;
}

static void shca_push_udp(struct sk_buff *skb, u16 src_port)
{
	struct udphdr *uh;

	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = htons(src_port);
	uh->dest = htons(shca_udp_port);
	uh->len = htons(skb->len);
	uh->check = 0;
}

static void shca_push_ip4(struct net *net, struct sk_buff *skb,
			  const struct shca_av *av, u8 ttl)
{
	struct iphdr *iph;

	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) / 4;
	iph->tos = av->traffic_class;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = ttl;
	iph->protocol = IPPROTO_UDP;
	iph->check = 0;
	iph->saddr = av->saddr.v4.s_addr;
	iph->daddr = av->daddr.v4.s_addr;
	/* the ICRC covers the identification: choose it before the ICRC */
	__ip_select_ident(net, iph, 1);
}

static __be32 shca_av_flowlabel(const struct shca_av *av)
{
	return cpu_to_be32(av->flow_label) & IPV6_FLOWLABEL_MASK;
}

static void shca_push_ip6(struct sk_buff *skb, const struct shca_av *av,
			  u8 hop_limit)
{
	struct ipv6hdr *ip6h;

	ip6h = skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, av->traffic_class, shca_av_flowlabel(av));
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = hop_limit;
	ip6h->saddr = av->saddr.v6;
	ip6h->daddr = av->daddr.v6;
}

/*
 * Compute the ICRC over the final headers and the rest of the packet, its
 * page fragments included, in one read pass, and store it in the last 4
 * bytes.  The IP, UDP and transport headers are linear.
 */
static int shca_tx_icrc(struct sk_buff *skb, bool ipv6)
{
	const struct udphdr *uh = udp_hdr(skb);
	u32 off = skb_transport_offset(skb) + sizeof(*uh);
	u32 len = ntohs(uh->len) - sizeof(*uh) - SHCA_ICRC_LEN;
	u32 head = min_t(u32, skb_headlen(skb) - off, len);
	u32 tail = SHCA_TX_CB(skb)->tail_len;
	u8 trailer[SHCA_ICRC_LEN];
	struct shca_icrc st;
	int ret;

	/* the CRC of the payload is known: the headers alone are read */
	if (tail && tail <= len - SHCA_BTH_LEN && head >= len - tail)
		head = len - tail;
	else
		tail = 0;
	ret = shca_icrc_begin(&st, skb_network_header(skb), ipv6, uh, uh + 1,
			      head);
	if (ret)
		return ret;
	if (tail)
		st.crc = shca_crc32_shift(st.crc, tail) ^
			 SHCA_TX_CB(skb)->tail_crc;
	else if (head < len &&
		 !shca_icrc_skb(&st, skb, off + head, len - head))
		return -EINVAL;
	if (SHCA_TX_CB(skb)->icrc_rxe && head == len)
		shca_icrc_update(&st, uh + 1, len);
	shca_icrc_store(trailer, shca_icrc_final(&st));
	return skb_store_bits(skb, off + len, trailer, SHCA_ICRC_LEN);
}

/* ip_local_out() and friends: NET_XMIT_* or -errno, to 0 or -errno. */
static int shca_xmit_ret(int err)
{
	err = net_xmit_eval(err);
	return err > 0 ? -ENOBUFS : err;
}

/*
 * Held transmission.  A doorbell call builds its QP's packets holding
 * qp->lock with BHs off.  On a netdev that receives in the sender's
 * softirq (veth, and the loopback-like paths), handing a packet to the IP
 * stack there only raises the softirq in which the peer receives it, and
 * that runs when BHs come back on, after the call's bookkeeping.  So
 * between shca_tx_hold() and shca_tx_unhold() (BHs off all along, on one
 * CPU) finished IP packets are queued on the holder, and shca_tx_flush()
 * sends them once the lock is dropped.  The holder pointer is per CPU and
 * only set while BHs are off, so no other context on this CPU sees it.
 */
static DEFINE_PER_CPU(struct shca_tx_hold *, shca_tx_holder);

/* Queue a finished IP packet on this CPU's holder, if there is one. */
static bool shca_tx_held(struct sk_buff *skb)
{
	struct shca_tx_hold *h = this_cpu_read(shca_tx_holder);

	if (!h)
		return false;
	__skb_queue_tail(&h->q, skb);
	return true;
}

/* A finished packet leaves by @path (tracepoint shca_wire_tx). */
static void shca_tx_trace(const struct sk_buff *skb, u8 path)
{
	u32 off = skb_transport_offset(skb) + sizeof(struct udphdr);

	trace_shca_wire_tx(skb->data + off, skb->len - off, path);
}

/*
 * Hand a finished IP packet (route set) to the IP stack, by @path.
 * Consumes @skb.  Returns what ip_local_out() or ip6_local_out() returns.
 */
static int shca_ip_send(struct net *net, struct sk_buff *skb, u8 path)
{
	if (trace_shca_wire_tx_enabled())
		shca_tx_trace(skb, path);
	/* multicast goes as the namespace's socket: no IP loopback */
	if (ip_hdr(skb)->version == 4)
		return ip_local_out(net, ipv4_is_multicast(ip_hdr(skb)->daddr) ?
				    shca_net_mc_sk(net, false) : NULL, skb);
	return ip6_local_out(net,
			     ipv6_addr_is_multicast(&ipv6_hdr(skb)->daddr) ?
			     shca_net_mc_sk(net, true) : NULL, skb);
}

/*
 * Hand a finished IP packet (route set) to the IP stack, or to this CPU's
 * holder while a hold is on.  Consumes @skb.  Returns what
 * ip_local_out() or ip6_local_out() returns, 0 for a held packet.
 */
static int shca_ip_local_out(struct net *net, struct sk_buff *skb)
{
	if (shca_tx_held(skb))
		return 0;
	return shca_ip_send(net, skb, SHCA_PATH_IP);
}

/**
 * shca_tx_hold - hold the IP packets this CPU sends from now on
 * @h: the holder, on the caller's stack
 *
 * Caller has BHs off until shca_tx_unhold(), and must pass @h to
 * shca_tx_flush() afterwards.
 */
void shca_tx_hold(struct shca_tx_hold *h)
{
	__skb_queue_head_init(&h->q);
	this_cpu_write(shca_tx_holder, h);
}

/**
 * shca_tx_unhold - stop holding: packets go out at once again
 * @h: the holder given to shca_tx_hold()
 *
 * Return: true when packets were held.
 */
bool shca_tx_unhold(struct shca_tx_hold *h)
{
	this_cpu_write(shca_tx_holder, NULL);
	return !skb_queue_empty(&h->q);
}

/**
 * shca_tx_flush - send the packets a hold kept back, in order
 * @h: the holder, after shca_tx_unhold()
 *
 * Each packet is complete (headers, ICRC, route) and was counted in
 * TX_PKTS when it was held; one the IP stack drops now is lost like one
 * dropped on the wire, and RC recovers it the same way.  Process context,
 * BHs on: the receive softirq a transmission raises runs right after it.
 */
void shca_tx_flush(struct shca_tx_hold *h)
{
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(&h->q)))
		shca_ip_send(dev_net(skb_dst(skb)->dev), skb, SHCA_PATH_HELD);
}

static int shca_av_oif(struct shca_dev *sdev, const struct shca_av *av)
{
	return av->ifindex ? av->ifindex : sdev->ndev->ifindex;
}

/* Route to an IPv4 peer that is not this host: a route or an ERR_PTR(). */
static struct dst_entry *shca_route_ip4(struct shca_dev *sdev,
					const struct shca_av *av)
{
	struct flowi4 fl4 = {};
	struct rtable *rt;

	fl4.flowi4_oif = shca_av_oif(sdev, av);
	fl4.flowi4_proto = IPPROTO_UDP;
	fl4.daddr = av->daddr.v4.s_addr;
	fl4.saddr = av->saddr.v4.s_addr;
	rt = ip_route_output_key(sdev->net, &fl4);
	if (IS_ERR(rt))
		return ERR_CAST(rt);
	if (rt->rt_type == RTN_LOCAL) {
		/* local, but no shca device owns it (e.g. 127.0.0.1) */
		ip_rt_put(rt);
		return ERR_PTR(-EHOSTUNREACH);
	}
	return &rt->dst;
}

/* Route to an IPv6 peer that is not this host: a route or an ERR_PTR(). */
static struct dst_entry *shca_route_ip6(struct shca_dev *sdev,
					const struct shca_av *av)
{
	struct dst_entry *dst;
	struct flowi6 fl6 = {};
	int err;

	fl6.flowi6_oif = shca_av_oif(sdev, av);
	fl6.flowi6_proto = IPPROTO_UDP;
	fl6.daddr = av->daddr.v6;
	fl6.saddr = av->saddr.v6;
	fl6.flowlabel = ip6_make_flowinfo(av->traffic_class,
					  shca_av_flowlabel(av));
	dst = ipv6_stub->ipv6_dst_lookup_flow(sdev->net, NULL, &fl6, NULL);
	if (IS_ERR(dst))
		return dst;
	if (dst->error || (dst->dev->flags & IFF_LOOPBACK)) {
		err = dst->error ? dst->error : -EHOSTUNREACH;
		dst_release(dst);
		return ERR_PTR(err);
	}
	return dst;
}

/*
 * Look up the route to @av's destination, which is not an address of
 * this host, and keep it in @cache when there is one.  BHs off.
 */
static struct dst_entry *shca_route_lookup(struct shca_dev *sdev,
					   const struct shca_av *av,
					   struct dst_cache *cache)
{
	struct dst_entry *dst;

	if (av->network_type == RDMA_NETWORK_IPV6) {
		dst = shca_route_ip6(sdev, av);
		if (!IS_ERR(dst) && cache)
			dst_cache_set_ip6(cache, dst, &av->saddr.v6);
	} else {
		dst = shca_route_ip4(sdev, av);
		if (!IS_ERR(dst) && cache)
			dst_cache_set_ip4(cache, dst, av->saddr.v4.s_addr);
	}
	return dst;
}

/*
 * The route in @cache, with a reference, if it is still valid; NULL
 * otherwise.  A valid cached route also means that the destination is
 * still not an address of this host: adding or removing an address
 * invalidates every cached route of the namespace (IPv4: rt_cache_flush(),
 * IPv6: the routing tree's serial number).  BHs off.
 */
static struct dst_entry *shca_route_cached(struct dst_cache *cache,
					   const struct shca_av *av)
{
	struct in6_addr saddr6;
	struct rtable *rt;
	__be32 saddr;

	if (!cache)
		return NULL;
	if (av->network_type == RDMA_NETWORK_IPV6)
		return dst_cache_get_ip6(cache, &saddr6);
	rt = dst_cache_get_ip4(cache, &saddr);
	return rt ? &rt->dst : NULL;
}

/*
 * A multicast packet a QP of @sdev sends reaches the device's own group
 * members here through same-host delivery, since the IP stack does not
 * loop it back (shca_net_mc_sk()): a copy of the finished packet's
 * headers sharing its payload pages, marked as looped back so that the
 * replication can leave out a sending QP that asked for it.  Only while
 * the engine has groups with members.
 */
static void shca_tx_mc_loop(struct shca_dev *sdev, struct sk_buff *skb)
{
	struct sk_buff *copy;

	if (!shca_mcg_active(sdev) ||
	    !ib_device_try_get(&sdev->ibdev))
		return;
	copy = pskb_copy(skb, GFP_ATOMIC);
	if (!copy)
		goto put;
	skb_dst_drop(copy);
	if (ip_hdr(copy)->version == 4)
		ip_send_check(ip_hdr(copy));	/* GRH parsers check it */
	__skb_pull(copy, skb_transport_offset(copy));
	copy->dev = sdev->ndev;
	copy->skb_iif = sdev->ndev->ifindex;
	copy->pkt_type = PACKET_LOOPBACK;
	copy->ip_summed = CHECKSUM_UNNECESSARY;
	if (!shca_loop_queue(sdev, copy))
		return;
	kfree_skb(copy);
put:
	ib_device_put(&sdev->ibdev);
}

/*
 * Send a packet through the IP stack by route @dst (its reference goes
 * with the packet), and to the device's own multicast members.  Consumes
 * @skb.
 */
static int shca_tx_ip(struct shca_dev *sdev, const struct shca_av *av,
		      struct dst_entry *dst, u16 src_port, struct sk_buff *skb)
{
	bool ipv6 = av->network_type == RDMA_NETWORK_IPV6;
	u8 hop_limit = av->hop_limit;
	int ret;

	shca_push_udp(skb, src_port);
	if (ipv6) {
		if (!hop_limit)
			hop_limit = ip6_dst_hoplimit(dst);
		shca_push_ip6(skb, av, hop_limit);
	} else {
		if (!hop_limit)
			hop_limit = ip4_dst_hoplimit(dst);
		shca_push_ip4(sdev->net, skb, av, hop_limit);
	}
	skb_dst_set(skb, dst);
	ret = shca_tx_icrc(skb, ipv6);
	if (ret) {
		kfree_skb(skb);
		return ret;
	}
	if (ipv6) {
		/* after the ICRC, which does not cover it */
		udp6_set_csum(false, skb, &av->saddr.v6, &av->daddr.v6,
			      skb->len - sizeof(struct ipv6hdr));
		memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
		if (ipv6_addr_is_multicast(&av->daddr.v6))
			shca_tx_mc_loop(sdev, skb);
	} else {
		memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
		if (ipv4_is_multicast(av->daddr.v4.s_addr))
			shca_tx_mc_loop(sdev, skb);
	}
	return shca_xmit_ret(shca_ip_local_out(sdev->net, skb));
}

/*
 * If the destination of @av is an address of this namespace: the shca
 * device owning its netdev, with a reference on its ib_device, and in
 * *@iif that netdev's index; an ERR_PTR() when no running shca device can
 * take the packet.  NULL when the destination is elsewhere.
 */
static struct shca_dev *shca_tx_local_dev(struct shca_dev *sdev,
					  const struct shca_av *av, int *iif)
{
	struct net_device *ndev = NULL;
	struct shca_dev *to;

	rcu_read_lock();
	if (av->network_type == RDMA_NETWORK_IPV4)
		ndev = __ip_dev_find(sdev->net, av->daddr.v4.s_addr, false);
	else if (ipv6_mod_enabled())
		ndev = ipv6_dev_find(sdev->net, &av->daddr.v6, NULL);
	if (!ndev) {
		to = NULL;
		goto out;
	}
	to = shca_net_find_dev(shca_net(sdev->net), ndev);
	if (!to)
		to = ERR_PTR(-EHOSTUNREACH);
	else if (shca_net_port_state(sdev) != IB_PORT_ACTIVE ||
		 shca_net_port_state(to) != IB_PORT_ACTIVE)
		to = ERR_PTR(-ENETDOWN);
	else if (!ib_device_try_get(&to->ibdev))
		to = ERR_PTR(-ENODEV);
	else
		*iif = ndev->ifindex;
out:
	rcu_read_unlock();
	return to;
}

/*
 * Hand a packet to @to, a device of this host, with the headers it would
 * arrive with from the wire (skb->data at the UDP header) but no ICRC:
 * it never leaves memory (shca_net_rcv_local()).  Drops the ib_device
 * reference on @to.  Consumes @skb.
 */
static int shca_tx_local(struct shca_dev *sdev, struct shca_dev *to, int iif,
			 const struct shca_av *av, u16 src_port,
			 struct sk_buff *skb)
{
	bool ipv6 = av->network_type == RDMA_NETWORK_IPV6;
	u8 hop_limit = av->hop_limit ? av->hop_limit : SHCA_LOCAL_HOP_LIMIT;

	shca_push_udp(skb, src_port);
	if (ipv6) {
		shca_push_ip6(skb, av, hop_limit);
	} else {
		shca_push_ip4(sdev->net, skb, av, hop_limit);
		ip_send_check(ip_hdr(skb));	/* GRH parsers check it */
	}
	__skb_pull(skb, skb_transport_offset(skb));
	skb->dev = to->ndev;
	skb->skb_iif = iif;
	skb->pkt_type = PACKET_HOST;
	skb->ip_summed = CHECKSUM_UNNECESSARY;
	if (trace_shca_wire_tx_enabled())
		shca_tx_trace(skb, SHCA_PATH_LOCAL);
	shca_stat_inc(sdev, SHCA_CNT_TX_LOCAL);
	shca_net_rcv_local(to, skb);
	ib_device_put(&to->ibdev);
	return 0;
}

/*
 * Send a packet to a peer that is not a cached route's: to a device of
 * this host, or through the IP stack by a route looked up now (and kept
 * in @cache).  Consumes @skb.
 */
static int shca_tx_resolve(struct shca_dev *sdev, const struct shca_av *av,
			   struct dst_cache *cache, u16 src_port,
			   struct sk_buff *skb)
{
	struct dst_entry *dst;
	struct shca_dev *to;
	int iif = 0;

	to = shca_tx_local_dev(sdev, av, &iif);
	if (to && !IS_ERR(to))
		return shca_tx_local(sdev, to, iif, av, src_port, skb);
	dst = to ? ERR_CAST(to) : shca_route_lookup(sdev, av, cache);
	if (IS_ERR(dst)) {
		kfree_skb(skb);
		return PTR_ERR(dst);
	}
	return shca_tx_ip(sdev, av, dst, src_port, skb);
}

/**
 * shca_pkt_xmit - send a packet built by the engine
 * @sdev: device
 * @av: destination
 * @cache: route cache kept for @av (a connected QP's), or NULL
 * @src_port: UDP source port
 * @skb: packet, skb->data at the BTH; consumed
 *
 * Counts TX_PKTS and TX_BYTES (UDP payload: BTH to ICRC) for a packet
 * handed to the IP stack or to a local device, TX_DROP otherwise.
 * Process or softirq context, BHs off (which @cache, per CPU, relies on).
 *
 * Return: 0, or a negative errno when the packet was dropped.
 */
int shca_pkt_xmit(struct shca_dev *sdev, const struct shca_av *av,
		  struct dst_cache *cache, u16 src_port, struct sk_buff *skb)
{
	bool ipv6 = av->network_type == RDMA_NETWORK_IPV6;
	struct dst_entry *dst;
	u32 len = 0;
	int ret;

	if (!ipv6 && av->network_type != RDMA_NETWORK_IPV4) {
		kfree_skb(skb);
		ret = -EINVAL;
		goto out;
	}
	ret = shca_tx_prepare(&skb, ipv6);
	if (ret)
		goto out;
	len = skb->len;
	trace_shca_xmit(&sdev->ibdev, skb);

	dst = shca_route_cached(cache, av);
	if (dst) {
		shca_stat_inc(sdev, SHCA_CNT_TX_ROUTE_CACHED);
		ret = shca_tx_ip(sdev, av, dst, src_port, skb);
	} else {
		ret = shca_tx_resolve(sdev, av, cache, src_port, skb);
	}
out:
	if (ret) {
		shca_stat_inc(sdev, SHCA_CNT_TX_DROP);
		return ret;
	}
	shca_stat_inc(sdev, SHCA_CNT_TX_PKTS);
	shca_stat_add(sdev, SHCA_CNT_TX_BYTES, len);
	return 0;
}
