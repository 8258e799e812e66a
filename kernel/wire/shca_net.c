// SPDX-License-Identifier: GPL-2.0
/*
 * shca network attachment: the RoCEv2 UDP sockets of each network
 * namespace, which device a packet arriving on a netdev belongs to, and
 * the port state the netdev dictates.
 *
 * Every namespace that holds at least one shca device has one IPv4 and (if
 * IPv6 is available) one IPv6 UDP socket bound to shca_udp_port.  All
 * devices of the namespace share them, as the functions of one hardware
 * HCA share its port; a received packet is handed to the device owning
 * the netdev it arrived on (shca_udp_rx.c).
 */
#include <linux/if_macvlan.h>
#include <linux/if_vlan.h>
#include <net/netns/generic.h>
#include <net/net_namespace.h>
#include <net/udp_tunnel.h>
#include "shca.h"
#include "shca_loop.h"
#include "shca_net.h"
#include "shca_udp_rx.h"

unsigned short shca_udp_port = SHCA_ROCEV2_UDP_PORT;
module_param_named(udp_port, shca_udp_port, ushort, 0444);
MODULE_PARM_DESC(udp_port,
		 "UDP port RoCEv2 packets are sent to and received on (default 4791)");

static unsigned int shca_net_id;

/* unregistrations of devices, which a dying namespace waits for */
static struct workqueue_struct *shca_net_unreg_wq;

/* Protects the sockets, users and device lists of every struct shca_net. */
static DEFINE_MUTEX(shca_net_mutex);
/* Woken when a namespace loses a device. */
static DECLARE_WAIT_QUEUE_HEAD(shca_net_wq);

/**
 * shca_net - shca's state of a network namespace
 * @net: the namespace
 *
 * Return: the state (it lives as long as the namespace).
 */
struct shca_net *shca_net(struct net *net)
{
	return net_generic(net, shca_net_id);
}

/* Caller must hold rcu_read_lock(). */
static struct shca_dev *shca_net_find_dev_exact(struct shca_net *sn,
						const struct net_device *ndev)
{
	struct shca_dev *sdev;

	list_for_each_entry_rcu(sdev, &sn->devs, net_node)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

/* upper netdevs looked through: QinQ, or a VLAN on a macvlan */
#define SHCA_UPPER_DEPTH	2

/**
 * shca_net_is_child - is @ndev a macvlan or an ipvlan (a child of the
 * netdev under it)?
 * @ndev: the netdev
 *
 * Return: true for a macvlan or ipvlan netdev.
 */
bool shca_net_is_child(const struct net_device *ndev)
{
	return netif_is_macvlan(ndev) ||
	       (ndev->rtnl_link_ops &&
		!strcmp(ndev->rtnl_link_ops->kind, "ipvlan"));
}

/*
 * The netdev under a VLAN, macvlan or ipvlan @ndev; NULL for any other.
 * Caller must hold rcu_read_lock().
 */
static struct net_device *shca_net_lower(struct net_device *ndev)
{
	struct list_head *iter = &ndev->adj_list.lower;

	if (is_vlan_dev(ndev))
		return vlan_dev_real_dev(ndev);
	if (!shca_net_is_child(ndev))
		return NULL;
	return netdev_next_lower_dev_rcu(ndev, &iter);
}

/**
 * shca_net_find_dev - the shca device a netdev of a namespace belongs to
 * @sn: the namespace's state
 * @ndev: the netdev
 *
 * The device of @ndev, or of the netdev under it when @ndev is a VLAN, a
 * macvlan or an ipvlan with no device of its own (a function): the RDMA
 * core lists the addresses of such upper netdevs in the GID table of the
 * device of the netdev under them.  Caller must hold rcu_read_lock().
 *
 * Return: the device, or NULL.
 */
struct shca_dev *shca_net_find_dev(struct shca_net *sn,
				   struct net_device *ndev)
{
	struct shca_dev *sdev = shca_net_find_dev_exact(sn, ndev);
	int depth;

	for (depth = 0; !sdev && depth < SHCA_UPPER_DEPTH; depth++) {
		ndev = shca_net_lower(ndev);
		if (!ndev)
			break;
		sdev = shca_net_find_dev_exact(sn, ndev);
	}
	return sdev;
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
	int off = 0, ret;

	if (ipv6) {
		cfg.family = AF_INET6;
		cfg.ipv6_v6only = 1;
	} else {
		cfg.family = AF_INET;
	}
	ret = udp_sock_create(net, &cfg, &sock);
	if (ret)
		return ERR_PTR(ret);
	/*
	 * Multicast sent through the socket (shca_net_mc_sk()) is not
	 * looped back by the IP stack: the sender's device delivers to the
	 * members on this host itself (shca_udp_tx.c).
	 */
	ret = sock->ops->setsockopt(sock, ipv6 ? SOL_IPV6 : SOL_IP,
				    ipv6 ? IPV6_MULTICAST_LOOP :
					   IP_MULTICAST_LOOP,
				    KERNEL_SOCKPTR(&off), sizeof(off));
	if (ret) {
		udp_tunnel_sock_release(sock);
		return ERR_PTR(ret);
	}
	setup_udp_tunnel_sock(net, sock, &tnl);
	return sock;
}

/**
 * shca_net_mc_sk - the socket multicast packets are sent as
 * @net: the sending device's namespace
 * @ipv6: the packet's family
 *
 * The namespace's RoCEv2 socket of that family, whose multicast loopback
 * is off, or NULL if it has none.  Caller has BHs off or holds RCU; the
 * sockets live as long as a device of the namespace.
 *
 * Return: the socket's sock, or NULL.
 */
struct sock *shca_net_mc_sk(struct net *net, bool ipv6)
{
	struct shca_net *sn = shca_net(net);
	struct socket *sock;

	sock = ipv6 ? READ_ONCE(sn->sock6) : READ_ONCE(sn->sock4);
	return sock ? sock->sk : NULL;
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
	WRITE_ONCE(sn->sock4, sock);

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
		WRITE_ONCE(sn->sock4, NULL);
		return PTR_ERR(sock);
	}
	WRITE_ONCE(sn->sock6, sock);
	return 0;
}

/* Caller must hold shca_net_mutex. */
static void shca_net_close_sockets(struct shca_net *sn)
{
	if (sn->sock6)
		udp_tunnel_sock_release(sn->sock6);
	if (sn->sock4)
		udp_tunnel_sock_release(sn->sock4);
	WRITE_ONCE(sn->sock6, NULL);
	WRITE_ONCE(sn->sock4, NULL);
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

/* Disconnect @sdev from namespace @net's sockets (shca_net_detach()). */
static void shca_net_detach_from(struct shca_dev *sdev, struct net *net)
{
	struct shca_net *sn = shca_net(net);
	bool attached;

	mutex_lock(&shca_net_mutex);
	attached = !list_empty(&sdev->net_node);
	if (attached) {
		list_del_rcu(&sdev->net_node);
		if (!--sn->users)
			shca_net_close_sockets(sn);
	}
	mutex_unlock(&shca_net_mutex);
	synchronize_rcu();
	/*
	 * Only now may the entry point at itself: a reader still on it
	 * before the grace period would have gone round it for ever.
	 */
	if (attached)
		INIT_LIST_HEAD(&sdev->net_node);
	wake_up_all(&shca_net_wq);
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
	shca_net_detach_from(sdev, sdev->net);
}

/**
 * shca_net_move - follow a device's netdev into another namespace
 * @sdev: device attached to the namespace its netdev left
 * @to: the netdev's namespace now
 *
 * Sends go by @to's routes at once; the device leaves the old namespace's
 * sockets (closed with its last device, so that namespace may go) and
 * joins @to's.  Process context, not under RTNL.
 *
 * Return: 0, or the error of joining @to's sockets (the device is then
 * attached nowhere and receives nothing).
 */
int shca_net_move(struct shca_dev *sdev, struct net *to)
{
	struct net *from = sdev->net;

	WRITE_ONCE(sdev->net, to);
	shca_net_detach_from(sdev, from);
	return shca_net_attach(sdev);
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
 * the unregistration of their shca devices (queued on @unreg_wq of
 * shca_net_init(), or by
 * whoever got there first): wait for those to finish so that no device or
 * socket outlives the namespace.
 */
static __net_exit void shca_net_ns_exit(struct net *net)
{
	struct shca_net *sn = shca_net(net);

	flush_workqueue(shca_net_unreg_wq);
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
 * shca_net_init - register the per-namespace state (module load)
 * @unreg_wq: the workqueue device unregistrations are queued on: a dying
 *	namespace flushes it before it waits for its devices to go
 *
 * Return: 0 or a negative errno.
 */
int shca_net_init(struct workqueue_struct *unreg_wq)
{
	int ret;

	shca_net_unreg_wq = unreg_wq;
	shca_loop_init();
	ret = register_pernet_subsys(&shca_net_ops);
	if (ret)
		shca_loop_exit();
	return ret;
}

/**
 * shca_net_exit - unregister the per-namespace state (all devices gone)
 */
void shca_net_exit(void)
{
	unregister_pernet_subsys(&shca_net_ops);
	shca_loop_exit();
}

/**
 * shca_net_port_state - port state as the netdev dictates it
 * @sdev: device
 *
 * The port is active while the netdev is up and has carrier.
 *
 * Return: IB_PORT_ACTIVE or IB_PORT_DOWN.
 */
enum ib_port_state shca_net_port_state(struct shca_dev *sdev)
{
	struct net_device *ndev = sdev->ndev;

	if (netif_running(ndev) && netif_carrier_ok(ndev))
		return IB_PORT_ACTIVE;
	return IB_PORT_DOWN;
}
