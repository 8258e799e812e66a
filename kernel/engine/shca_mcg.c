// SPDX-License-Identifier: GPL-2.0
/*
 * shca multicast groups of an engine: attach and detach of UD QPs, the
 * group table the receive path looks packets up in, and the netdev's IP
 * membership that follows it.
 *
 * A group exists while it has members.  Its member set (shca_mcast.h) is
 * never changed in place: attach and detach build the new set, publish it
 * and drop the group's reference on the old one, which a packet being
 * replicated may still hold.  The receive path finds a group by GID under
 * RCU and takes a reference on its current set; no lock is shared between
 * delivery and attach/detach.
 */
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include "shca.h"
#include "shca_engine.h"
#include "shca_mcg.h"
#include "shca_mcjoin.h"
#include "shca_qpc.h"

/**
 * struct shca_mcg_att - one group a QP is attached to (its detach list)
 * @node: entry in shca_qp.mc_list
 * @mgid: the group
 * @count: attach calls not yet undone by a detach (the RDMA core counts
 *	each successful one as a use of the QP)
 */
struct shca_mcg_att {
	struct list_head node;
	u8 mgid[16];
	u32 count;
};

/* The QP's record of its attachment to @mgid, or NULL.  Under lock. */
static struct shca_mcg_att *shca_mcg_att_find(struct shca_qp *qp,
					      const u8 *mgid)
{
	struct shca_mcg_att *att;

	list_for_each_entry(att, &qp->mc_list, node)
		if (!memcmp(att->mgid, mgid, sizeof(att->mgid)))
			return att;
	return NULL;
}

static const struct rhashtable_params shca_mcg_params = {
	.key_len = sizeof_field(struct shca_mcg, mgid),
	.key_offset = offsetof(struct shca_mcg, mgid),
	.head_offset = offsetof(struct shca_mcg, node),
	.automatic_shrinking = true,
};

static struct shca_mcg_set *shca_mcg_set_alloc(u32 n)
{
	struct shca_mcg_set *set;

	set = kvzalloc(struct_size(set, m, n), GFP_KERNEL);
	if (set)
		refcount_set(&set->ref, 1);
	return set;
}

/**
 * shca_mcg_set_put - drop a reference on a member set
 * @set: the set
 *
 * Any context; the set is freed after an RCU grace period.
 */
void shca_mcg_set_put(struct shca_mcg_set *set)
{
	if (refcount_dec_and_test(&set->ref))
		kvfree_rcu(set, rcu);
}

/**
 * shca_mcg_lookup - the member set of a group, for one packet
 * @eng: engine
 * @mgid: the packet's destination as a GID
 *
 * Caller holds rcu_read_lock().
 *
 * Return: the group's current set with a reference the caller drops with
 * shca_mcg_set_put(), or NULL when no QP of the engine is in the group.
 */
struct shca_mcg_set *shca_mcg_lookup(struct shca_engine *eng,
				     const u8 *mgid)
{
	struct shca_mcg_set *set;
	struct shca_mcg *g;

	g = rhashtable_lookup(&eng->mcg.groups, mgid, shca_mcg_params);
	if (!g)
		return NULL;
	set = rcu_dereference(g->set);
	/* a set whose last reference went is being replaced or freed */
	if (!set || !refcount_inc_not_zero(&set->ref))
		return NULL;
	return set;
}

/* Groups with members now: multicast sends loop a copy back (udp_tx). */
static void shca_mcg_count(struct shca_engine *eng)
{
	atomic_set(&eng->mc_groups, eng->mcg.n_groups);
}

/**
 * shca_mcg_active - does a device's engine have multicast groups now?
 * @sdev: device
 *
 * Its multicast sends are looped back to the engine's members only then.
 * Any context.
 *
 * Return: true while the engine has a group with members.
 */
bool shca_mcg_active(struct shca_dev *sdev)
{
	return atomic_read(&sdev->eng->mc_groups) > 0;
}

/* A new group with no set yet. */
static struct shca_mcg *shca_mcg_create(struct shca_engine *eng,
					const u8 *mgid)
{
	struct shca_mcg *g;
	int ret;

	if (eng->mcg.n_groups >= SHCA_MAX_MCAST_GRP)
		return ERR_PTR(-ENOMEM);
	g = kzalloc(sizeof(*g), GFP_KERNEL);
	if (!g)
		return ERR_PTR(-ENOMEM);
	memcpy(g->mgid, mgid, sizeof(g->mgid));
	ret = rhashtable_insert_fast(&eng->mcg.groups, &g->node,
				     shca_mcg_params);
	if (ret) {
		kfree(g);
		return ERR_PTR(ret);
	}
	list_add_tail(&g->list, &eng->mcg.all);
	eng->mcg.n_groups++;
	return g;
}

/* The group lost its last member: it goes. */
static void shca_mcg_remove(struct shca_engine *eng, struct shca_mcg *g)
{
	rhashtable_remove_fast(&eng->mcg.groups, &g->node, shca_mcg_params);
	list_del(&g->list);
	eng->mcg.n_groups--;
	kfree_rcu(g, rcu);
}

/* Does function @fn have a member in @g?  Under the table lock. */
static bool shca_mcg_has_func(struct shca_engine *eng, struct shca_mcg *g,
			      u32 fn)
{
	struct shca_mcg_set *set;
	u32 i;

	set = rcu_dereference_protected(g->set,
					lockdep_is_held(&eng->mcg.lock));
	for (i = 0; set && i < set->n; i++)
		if (set->m[i].func == fn)
			return true;
	return false;
}

/*
 * The first member of a function makes its netdev join the group's IP
 * address (Ethernet filter, IGMP/MLD); a netdev that has not joined drops
 * the group's packets.  Under the table lock.
 */
static int shca_mcg_join(struct shca_engine *eng, struct shca_mcg *g,
			 struct shca_dev *sdev)
{
	int ret;

	lockdep_assert_held(&eng->mcg.lock);
	if (test_bit(sdev->fn, &g->joined))
		return 0;
	ret = shca_mcjoin(sdev->ndev, g->mgid);
	if (ret)
		return ret;
	__set_bit(sdev->fn, &g->joined);
	shca_stat_inc(sdev, SHCA_CNT_MC_GROUPS);
	return 0;
}

/* The function's last member left: its netdev leaves.  Under the lock. */
static void shca_mcg_leave(struct shca_engine *eng, struct shca_mcg *g,
			   struct shca_dev *sdev)
{
	lockdep_assert_held(&eng->mcg.lock);
	if (!test_bit(sdev->fn, &g->joined) ||
	    shca_mcg_has_func(eng, g, sdev->fn))
		return;
	shca_mcleave(sdev->ndev, g->mgid);
	__clear_bit(sdev->fn, &g->joined);
	atomic64_dec(&sdev->stats[SHCA_CNT_MC_GROUPS]);
}

/* Publish @set as @g's members and drop the group's hold on the old. */
static void shca_mcg_publish(struct shca_engine *eng, struct shca_mcg *g,
			     struct shca_mcg_set *set)
{
	struct shca_mcg_set *old;

	old = rcu_replace_pointer(g->set, set,
				  lockdep_is_held(&eng->mcg.lock));
	if (old)
		shca_mcg_set_put(old);
}

/* Publish @set holding @n members, or free it when @n is an error. */
static int shca_mcg_install(struct shca_engine *eng, struct shca_mcg *g,
			    struct shca_mcg_set *set, int n)
{
	if (n < 0) {
		kvfree(set);
		return n;
	}
	set->n = n;
	shca_mcg_publish(eng, g, set);
	return 0;
}

static int shca_mcg_add(struct shca_engine *eng, struct shca_mcg *g,
			const struct shca_mcast_member *m)
{
	struct shca_mcg_set *old, *set;
	u32 n;

	old = rcu_dereference_protected(g->set,
					lockdep_is_held(&eng->mcg.lock));
	n = old ? old->n : 0;
	if (n >= SHCA_MAX_MCAST_QP_ATTACH)
		return -ENOMEM;
	set = shca_mcg_set_alloc(n + 1);
	if (!set)
		return -ENOMEM;
	return shca_mcg_install(eng, g, set,
				shca_mcast_add(old ? old->m : NULL, n, m,
					       set->m, n + 1));
}

/**
 * shca_mcg_attach - attach a UD QP to a multicast group
 * @qp: the QP
 * @mgid: the group's GID (16 bytes)
 *
 * The first QP of the engine in a group makes the netdev join the
 * group's IP address.  Attaching a QP that is already a member succeeds
 * and changes nothing but the count of detaches it takes to leave.
 * Process context.
 *
 * Return: 0; -EINVAL for a GID that is not a RoCEv2 multicast address;
 * -ENOMEM when a limit (groups, QPs per group, attachments in all) is
 * reached or memory is short; or the error of joining the IP group.
 */
int shca_mcg_attach(struct shca_qp *qp, const u8 *mgid)
{
	struct shca_engine *eng = qp->sdev->eng;
	struct shca_mcast_member m = {
		.qpn = qp->qpn,
		.func = qp->sdev->fn,
		.flags = qp->mc_block_self ? SHCA_MC_BLOCK_SELF : 0,
		.cookie = (u32)qp->serial,
	};
	struct shca_mcg_att *att, *old;
	struct shca_mcg *g;
	bool fresh = false;
	int ret;

	if (!shca_mcgid_valid(mgid))
		return -EINVAL;
	att = kzalloc(sizeof(*att), GFP_KERNEL);
	if (!att)
		return -ENOMEM;
	memcpy(att->mgid, mgid, sizeof(att->mgid));
	att->count = 1;

	mutex_lock(&eng->mcg.lock);
	old = shca_mcg_att_find(qp, mgid);
	if (old) {
		old->count++;
		ret = 0;
		goto out_free;
	}
	ret = -ENOMEM;
	if (eng->mcg.n_attached >= SHCA_MAX_TOTAL_MCAST_QP_ATTACH)
		goto out_free;
	g = rhashtable_lookup_fast(&eng->mcg.groups, mgid, shca_mcg_params);
	if (!g) {
		g = shca_mcg_create(eng, mgid);
		ret = PTR_ERR(g);
		if (IS_ERR(g))
			goto out_free;
		fresh = true;
	}
	ret = shca_mcg_join(eng, g, qp->sdev);
	if (!ret) {
		ret = shca_mcg_add(eng, g, &m);
		if (ret)
			shca_mcg_leave(eng, g, qp->sdev);
	}
	if (ret) {
		if (fresh)
			shca_mcg_remove(eng, g);
		goto out_free;
	}
	eng->mcg.n_attached++;
	shca_stat_inc(qp->sdev, SHCA_CNT_MC_ATTACHED);
	list_add_tail(&att->node, &qp->mc_list);
	shca_mcg_count(eng);
	mutex_unlock(&eng->mcg.lock);
	return 0;

out_free:
	mutex_unlock(&eng->mcg.lock);
	kfree(att);
	return ret;
}

/* Remove @qp from @g; the group goes with its last member.  Under lock. */
static int shca_mcg_del(struct shca_engine *eng, struct shca_mcg *g,
			struct shca_qp *qp)
{
	struct shca_mcg_set *old, *set;
	u32 fn = qp->sdev->fn;
	int ret;

	old = rcu_dereference_protected(g->set,
					lockdep_is_held(&eng->mcg.lock));
	if (shca_mcast_find(old->m, old->n, fn, qp->qpn) < 0)
		return -EINVAL;
	if (old->n == 1) {
		shca_mcg_publish(eng, g, NULL);
		shca_mcg_leave(eng, g, qp->sdev);
		shca_mcg_remove(eng, g);
		return 0;
	}
	set = shca_mcg_set_alloc(old->n - 1);
	if (!set)
		return -ENOMEM;
	ret = shca_mcg_install(eng, g, set,
			       shca_mcast_del(old->m, old->n, fn, qp->qpn,
					      set->m, old->n - 1));
	if (!ret)
		shca_mcg_leave(eng, g, qp->sdev);
	return ret;
}

/*
 * Undo one attach under the table lock; the last one takes the QP out of
 * the group.  @all: undo every attach (the QP is being destroyed).
 */
static int shca_mcg_detach_locked(struct shca_qp *qp, const u8 *mgid,
				  bool all)
{
	struct shca_engine *eng = qp->sdev->eng;
	struct shca_mcg_att *att;
	struct shca_mcg *g;
	int ret;

	lockdep_assert_held(&eng->mcg.lock);
	att = shca_mcg_att_find(qp, mgid);
	if (!att)
		return -EINVAL;
	if (!all && att->count > 1) {
		att->count--;
		return 0;
	}
	g = rhashtable_lookup_fast(&eng->mcg.groups, mgid, shca_mcg_params);
	if (WARN_ON_ONCE(!g))
		ret = -EINVAL;
	else
		ret = shca_mcg_del(eng, g, qp);
	if (ret && !all)
		return ret;
	/* a member left behind is harmless: its copies are dropped */
	if (!ret) {
		eng->mcg.n_attached--;
		atomic64_dec(&qp->sdev->stats[SHCA_CNT_MC_ATTACHED]);
	}
	list_del(&att->node);
	kfree(att);
	shca_mcg_count(eng);
	return 0;
}

/**
 * shca_mcg_detach - detach a QP from a multicast group
 * @qp: the QP
 * @mgid: the group's GID
 *
 * Packets of the group already being replicated may still reach the QP.
 * With its last member the group goes and the netdev leaves its IP
 * address.  Process context.
 *
 * Return: 0, -EINVAL when the QP is not attached to the group, -ENOMEM.
 */
int shca_mcg_detach(struct shca_qp *qp, const u8 *mgid)
{
	struct shca_engine *eng = qp->sdev->eng;
	int ret;

	mutex_lock(&eng->mcg.lock);
	ret = shca_mcg_detach_locked(qp, mgid, false);
	mutex_unlock(&eng->mcg.lock);
	return ret;
}

/**
 * shca_mcg_detach_all - detach a QP that is being destroyed from every
 * group it is still attached to
 * @qp: the QP
 *
 * The RDMA core refuses to destroy an attached kernel QP and detaches a
 * process's QPs itself; this covers whatever is left.  A detach that
 * fails for memory leaves a stale member behind: its copies carry the
 * QP's serial number and are dropped.  Process context.
 */
void shca_mcg_detach_all(struct shca_qp *qp)
{
	struct shca_engine *eng = qp->sdev->eng;
	struct shca_mcg_att *att;

	if (list_empty(&qp->mc_list))
		return;
	mutex_lock(&eng->mcg.lock);
	while ((att = list_first_entry_or_null(&qp->mc_list,
					       struct shca_mcg_att, node)))
		shca_mcg_detach_locked(qp, att->mgid, true);
	mutex_unlock(&eng->mcg.lock);
}

/**
 * shca_mcg_init - set up an engine's group table (device creation)
 * @eng: the engine
 *
 * Return: 0 or -ENOMEM.
 */
int shca_mcg_init(struct shca_engine *eng)
{
	struct shca_mcg_table *t = &eng->mcg;

	mutex_init(&t->lock);
	INIT_LIST_HEAD(&t->all);
	skb_queue_head_init(&t->pending);
	shca_mcast_flow_init(&t->flow, SHCA_MC_THRESHOLD, SHCA_MC_CREDIT);
	return rhashtable_init(&t->groups, &shca_mcg_params);
}

/* A group left at engine teardown: every function has left it. */
static void shca_mcg_free_one(void *ptr, void *arg)
{
	struct shca_mcg *g = ptr;
	struct shca_mcg_set *set;

	set = rcu_dereference_protected(g->set, true);
	if (set)
		shca_mcg_set_put(set);
	kfree(g);
}

/**
 * shca_mcg_func_gone - a function leaves its engine: its netdev leaves
 * every group the function still has (stale) members in
 * @sdev: the function (its QPs are gone)
 *
 * A member left behind by a detach that failed for memory stays in its
 * set until the group goes; its copies find no QP and are dropped.
 * Process context.
 */
void shca_mcg_func_gone(struct shca_dev *sdev)
{
	struct shca_engine *eng = sdev->eng;
	struct shca_mcg *g;

	mutex_lock(&eng->mcg.lock);
	list_for_each_entry(g, &eng->mcg.all, list) {
		if (!test_and_clear_bit(sdev->fn, &g->joined))
			continue;
		shca_mcleave(sdev->ndev, g->mgid);
		atomic64_dec(&sdev->stats[SHCA_CNT_MC_GROUPS]);
	}
	mutex_unlock(&eng->mcg.lock);
}

/**
 * shca_mcg_func_rejoin - join a function's groups again on its netdev
 * @sdev: the function, whose netdev moved to another namespace (which
 *	resets the netdev's IP multicast memberships)
 *
 * A group that cannot be joined is left to its members as it is, and
 * counted as left.  Process context.
 */
void shca_mcg_func_rejoin(struct shca_dev *sdev)
{
	struct shca_engine *eng = sdev->eng;
	struct shca_mcg *g;

	mutex_lock(&eng->mcg.lock);
	list_for_each_entry(g, &eng->mcg.all, list) {
		if (!test_bit(sdev->fn, &g->joined) ||
		    !shca_mcjoin(sdev->ndev, g->mgid))
			continue;
		__clear_bit(sdev->fn, &g->joined);
		atomic64_dec(&sdev->stats[SHCA_CNT_MC_GROUPS]);
	}
	mutex_unlock(&eng->mcg.lock);
}

/**
 * shca_mcg_destroy - free the group table (every QP is gone, the receive
 * stage has stopped, the replication queue is empty)
 * @eng: the engine
 *
 * A group can outlive its QPs only when detaching one failed for memory
 * as it was destroyed; such a group goes here.
 */
void shca_mcg_destroy(struct shca_engine *eng)
{
	rhashtable_free_and_destroy(&eng->mcg.groups, shca_mcg_free_one, eng);
	mutex_destroy(&eng->mcg.lock);
}
