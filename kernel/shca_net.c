// SPDX-License-Identifier: GPL-2.0
/*
 * shca network attachment: the RoCEv2 UDP sockets of each network
 * namespace and the entry point of received packets.
 *
 * Every namespace that holds at least one shca device has one IPv4 and (if
 * IPv6 is available) one IPv6 UDP socket bound to shca_udp_port.  All
 * devices of the namespace share them, as the functions of one hardware
 * HCA share its port; a received packet is handed to the device owning
 * the netdev it arrived on.
 */
#include <net/netns/generic.h>
#include <net/net_namespace.h>
#include <net/udp_tunnel.h>
#include "shca.h"

static unsigned int shca_net_id;

/* Protects the sockets, users and device lists of every struct shca_net. */
static DEFINE_MUTEX(shca_net_mutex);
/* Woken when a namespace loses a device. */
static DECLARE_WAIT_QUEUE_HEAD(shca_net_wq);

static struct shca_net *shca_net(struct net *net)
{
	return net_generic(net, shca_net_id);
}

/* Caller must hold rcu_read_lock(). */
static struct shca_dev *shca_net_find_dev(struct shca_net *sn,
					  const struct net_device *ndev)
{
	struct shca_dev *sdev;

	list_for_each_entry_rcu(sdev, &sn->devs, net_node)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

/*
 * UDP encapsulation receive hook: called for every datagram to the RoCEv2
 * port, in softirq context.  Returns 0: the skb is always consumed.
 */
static int shca_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	struct shca_net *sn;
	struct shca_dev *sdev;

	rcu_read_lock();
	sn = rcu_dereference_sk_user_data(sk);
	sdev = sn ? shca_net_find_dev(sn, skb->dev) : NULL;
	if (sdev) {
		shca_stat_inc(sdev, SHCA_CNT_RX_PKTS);
		/* no transport engine yet: every packet is dropped */
		shca_stat_inc(sdev, SHCA_CNT_RX_DROP_NO_TRANSPORT);
	}
	rcu_read_unlock();
	kfree_skb(skb);
	return 0;
}

static struct socket *shca_sock_create(struct net *net, struct shca_net *sn,
				       bool ipv6)
{
	struct udp_tunnel_sock_cfg tnl = {
		.sk_user_data = sn,
		.encap_type = 1,
		.encap_rcv = shca_udp_encap_recv,
	};
	struct udp_port_cfg cfg = {
		.local_udp_port = htons(shca_udp_port),
	};
	struct socket *sock;
	int ret;

	if (ipv6) {
		cfg.family = AF_INET6;
		cfg.ipv6_v6only = 1;
	} else {
		cfg.family = AF_INET;
	}
	ret = udp_sock_create(net, &cfg, &sock);
	if (ret)
		return ERR_PTR(ret);
	setup_udp_tunnel_sock(net, sock, &tnl);
	return sock;
}

/* Caller must hold shca_net_mutex. */
static int shca_net_open_sockets(struct net *net, struct shca_net *sn)
{
	struct socket *sock;

	sock = shca_sock_create(net, sn, false);
	if (IS_ERR(sock)) {
		pr_info("shca: cannot bind UDP port %u (IPv4): %ld\n",
			shca_udp_port, PTR_ERR(sock));
		return PTR_ERR(sock);
	}
	sn->sock4 = sock;

	if (!IS_ENABLED(CONFIG_IPV6))
		return 0;
	sock = shca_sock_create(net, sn, true);
	if (IS_ERR(sock)) {
		/* IPv6 disabled in this namespace is not an error */
		if (PTR_ERR(sock) == -EAFNOSUPPORT)
			return 0;
		pr_info("shca: cannot bind UDP port %u (IPv6): %ld\n",
			shca_udp_port, PTR_ERR(sock));
		udp_tunnel_sock_release(sn->sock4);
		sn->sock4 = NULL;
		return PTR_ERR(sock);
	}
	sn->sock6 = sock;
	return 0;
}

/* Caller must hold shca_net_mutex. */
static void shca_net_close_sockets(struct shca_net *sn)
{
	if (sn->sock6)
		udp_tunnel_sock_release(sn->sock6);
	if (sn->sock4)
		udp_tunnel_sock_release(sn->sock4);
	sn->sock6 = NULL;
	sn->sock4 = NULL;
}

/**
 * shca_net_attach - connect a device to its namespace's RoCEv2 sockets
 * @sdev: device; sdev->net is set
 *
 * Opens the sockets when this is the namespace's first device.
 *
 * Return: 0, or a negative errno (e.g. -EADDRINUSE when another driver
 * such as rdma_rxe owns the UDP port in this namespace).
 */
int shca_net_attach(struct shca_dev *sdev)
{
	struct shca_net *sn = shca_net(sdev->net);
	int ret = 0;

	mutex_lock(&shca_net_mutex);
	if (!sn->users)
		ret = shca_net_open_sockets(sdev->net, sn);
	if (!ret) {
		sn->users++;
		list_add_tail_rcu(&sdev->net_node, &sn->devs);
	}
	mutex_unlock(&shca_net_mutex);
	return ret;
}

/**
 * shca_net_detach - disconnect a device from its namespace's sockets
 * @sdev: device previously attached (calling it twice is harmless)
 *
 * Closes the sockets with the namespace's last device.  On return the
 * receive path no longer sees @sdev.
 */
void shca_net_detach(struct shca_dev *sdev)
{
	struct shca_net *sn = shca_net(sdev->net);

	mutex_lock(&shca_net_mutex);
	if (!list_empty(&sdev->net_node)) {
		list_del_rcu(&sdev->net_node);
		INIT_LIST_HEAD(&sdev->net_node);
		if (!--sn->users)
			shca_net_close_sockets(sn);
	}
	mutex_unlock(&shca_net_mutex);
	synchronize_rcu();
	wake_up_all(&shca_net_wq);
}

static __net_init int shca_net_ns_init(struct net *net)
{
	struct shca_net *sn = shca_net(net);

	INIT_LIST_HEAD(&sn->devs);
	return 0;
}

static bool shca_net_unused(struct shca_net *sn)
{
	bool unused;

	mutex_lock(&shca_net_mutex);
	unused = !sn->users;
	mutex_unlock(&shca_net_mutex);
	return unused;
}

/*
 * A dying namespace has already unregistered its netdevs, which started
 * the unregistration of their shca devices (queued on shca_wq, or by
 * whoever got there first): wait for those to finish so that no device or
 * socket outlives the namespace.
 */
static __net_exit void shca_net_ns_exit(struct net *net)
{
	struct shca_net *sn = shca_net(net);

	flush_workqueue(shca_wq);
	wait_event(shca_net_wq, shca_net_unused(sn));
	mutex_lock(&shca_net_mutex);
	shca_net_close_sockets(sn);
	mutex_unlock(&shca_net_mutex);
}

static struct pernet_operations shca_net_ops = {
	.init = shca_net_ns_init,
	.exit = shca_net_ns_exit,
	.id = &shca_net_id,
	.size = sizeof(struct shca_net),
};

/**
 * shca_net_init - register the per-namespace state
 *
 * Return: 0 or a negative errno.
 */
int shca_net_init(void)
{
	return register_pernet_subsys(&shca_net_ops);
}

/**
 * shca_net_exit - unregister the per-namespace state (all devices gone)
 */
void shca_net_exit(void)
{
	unregister_pernet_subsys(&shca_net_ops);
}
