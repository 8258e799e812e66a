/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca network attachment: namespaces, their RoCEv2 sockets, the port
 * state (shca_net.c).
 */
#ifndef SHCA_NET_H
#define SHCA_NET_H

#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

struct shca_dev;

/* module parameter: the UDP port RoCEv2 packets go to and come from */
extern unsigned short shca_udp_port;

/**
 * struct shca_net - per network namespace state
 * @sock4: IPv4 RoCEv2 UDP socket, NULL while no device lives in the netns
 * @sock6: IPv6 RoCEv2 UDP socket (may stay NULL when IPv6 is disabled)
 * @users: number of devices using the sockets
 * @devs: devices whose netdev is in this namespace (RCU list)
 *
 * @sock4, @sock6, @users and writers of @devs are protected by
 * shca_net_mutex; the receive path walks @devs under RCU.
 */
struct shca_net {
	struct socket *sock4;
	struct socket *sock6;
	unsigned int users;
	struct list_head devs;
};

int shca_net_init(struct workqueue_struct *unreg_wq);
void shca_net_exit(void);
int shca_net_attach(struct shca_dev *sdev);
void shca_net_detach(struct shca_dev *sdev);
int shca_net_move(struct shca_dev *sdev, struct net *to);
struct shca_net *shca_net(struct net *net);
struct shca_dev *shca_net_find_dev(struct shca_net *sn,
				   struct net_device *ndev);
bool shca_net_is_child(const struct net_device *ndev);
enum ib_port_state shca_net_port_state(struct shca_dev *sdev);
struct sock *shca_net_mc_sk(struct net *net, bool ipv6);

#endif /* SHCA_NET_H */
