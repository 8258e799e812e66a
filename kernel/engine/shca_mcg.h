/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca multicast groups of an engine (shca_mcg.c) and their replication
 * stage (shca_mcrep.c).
 */
#ifndef SHCA_MCG_H
#define SHCA_MCG_H

#include <linux/mutex.h>
#include <linux/rhashtable-types.h>
#include <linux/skbuff.h>
#include "shca_mcast.h"

struct shca_dev;
struct shca_engine;
struct shca_qp;

#define SHCA_MC_QPN			0xffffff	/* IBA multicast QPN */
#define SHCA_MAX_MCAST_GRP		8192
#define SHCA_MAX_MCAST_QP_ATTACH	4096	/* QPs per group */
#define SHCA_MAX_TOTAL_MCAST_QP_ATTACH	65536
#define SHCA_MC_THRESHOLD		256	/* packets in replication */
#define SHCA_MC_CREDIT			1024	/* copies in the receive LLQ */

/**
 * struct shca_mcg_set - a group's member set, replaced whole
 * @ref: the group's reference (while it is the group's current set) and
 *	one per packet replicating from it; the last put frees it after an
 *	RCU grace period
 * @rcu: that grace period
 * @n: members
 * @m: the members, sorted (shca_mcast.h)
 */
struct shca_mcg_set {
	refcount_t ref;
	struct rcu_head rcu;
	u32 n;
	struct shca_mcast_member m[];
};

/**
 * struct shca_mcg - one multicast group with members on the engine
 * @node: entry in shca_mcg_table.groups
 * @mgid: the group's GID (an IPv4-mapped or IPv6 multicast address)
 * @set: the current member set, never empty (RCU; written under
 *	shca_mcg_table.lock)
 * @joined: bit per function whose netdev joined the group's IP address
 *	(it has members in the group; under shca_mcg_table.lock)
 * @list: entry in shca_mcg_table.all
 * @rcu: frees the group after the last reader
 */
struct shca_mcg {
	struct rhash_head node;
	struct list_head list;
	u8 mgid[16];
	struct shca_mcg_set __rcu *set;
	unsigned long joined;
	struct rcu_head rcu;
};

/**
 * struct shca_mcg_table - an engine's multicast groups and replication
 * @lock: serialises attach and detach (sleeps; the RTNL lock nests
 *	inside it, never the other way round)
 * @groups: groups by GID; looked up under RCU by the receive path
 * @all: every group (under @lock)
 * @n_groups: groups now (under @lock)
 * @n_attached: QP attachments now, over all groups (under @lock)
 * @flow: the replication stage's threshold and credit counters (under
 *	the engine's rx_lock)
 * @pending: admitted packets not yet fully replicated, oldest first
 *	(under the engine's rx_lock); each skb's cb holds its cursor
 */
struct shca_mcg_table {
	struct mutex lock;
	struct rhashtable groups;
	struct list_head all;
	u32 n_groups;
	u32 n_attached;
	struct shca_mcast_flow flow;
	struct sk_buff_head pending;
};

int shca_mcg_init(struct shca_engine *eng);
void shca_mcg_destroy(struct shca_engine *eng);
int shca_mcg_attach(struct shca_qp *qp, const u8 *mgid);
int shca_mcg_detach(struct shca_qp *qp, const u8 *mgid);
void shca_mcg_detach_all(struct shca_qp *qp);
void shca_mcg_func_gone(struct shca_dev *sdev);
void shca_mcg_func_rejoin(struct shca_dev *sdev);
bool shca_mcg_active(struct shca_dev *sdev);
struct shca_mcg_set *shca_mcg_lookup(struct shca_engine *eng,
				     const u8 *mgid);
void shca_mcg_set_put(struct shca_mcg_set *set);

#endif /* SHCA_MCG_H */
