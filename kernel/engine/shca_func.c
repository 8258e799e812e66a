// SPDX-License-Identifier: GPL-2.0
/*
 * shca functions: the devices that share the engine of one netdev, as the
 * physical and virtual functions of a hardware HCA share its queues and
 * its port.
 *
 * The first device on a netdev creates the netdev's engine; a further
 * device on the same netdev, or on a macvlan or ipvlan child of it (a
 * container's own addresses), joins that engine as another function.  The
 * functions share the transmit and receive stages, the linked-list queues,
 * the QP number space and multicast replication; each keeps its own
 * objects, keys and counters.  While functions share an engine, each may
 * hold at most its credit (a percentage of every queue's entries), so one
 * that floods cannot take the entries another needs; a push beyond it is
 * refused and counted against the function that made it.
 */
#include <linux/rtnetlink.h>
#include "shca.h"
#include "shca_engine.h"
#include "shca_func.h"
#include "shca_net.h"
#include "shca_mcg.h"
#include "shca_mcrep.h"

static unsigned int shca_func_credit = 50;
module_param_named(func_credit, shca_func_credit, uint, 0444);
MODULE_PARM_DESC(func_credit,
		 "Percent of each engine queue a device may hold while other devices share its netdev's engine, 1-100 (default 50); per device in sysfs func_credit");

/* Protects shca_engines and every engine's users, funcs and credits. */
static DEFINE_MUTEX(shca_func_mutex);
static LIST_HEAD(shca_engines);

#define SHCA_FUNC_LOWER_DEPTH	2	/* macvlan/ipvlan levels looked through */

/*
 * The netdev whose engine serves @ndev: @ndev itself, or the device under
 * a macvlan or ipvlan child.  Returns it with a reference (dev_put()).
 */
static struct net_device *shca_func_base(struct net_device *ndev)
{
	struct net_device *lower;
	struct list_head *iter;
	int depth;

	rtnl_lock();
	for (depth = 0; depth < SHCA_FUNC_LOWER_DEPTH; depth++) {
		if (!shca_net_is_child(ndev))
			break;
		iter = ndev->adj_list.lower.next;
		lower = netdev_lower_get_next(ndev, &iter);
		if (!lower)
			break;
		ndev = lower;
	}
	dev_hold(ndev);
	rtnl_unlock();
	return ndev;
}

/* Entries of @q's size a function of @sdev's may hold now. */
static u32 shca_func_limit(const struct shca_dev *sdev, u32 entries)
{
	u64 limit;

	if (sdev->eng->users < 2)
		return entries;
	limit = div_u64((u64)entries * sdev->credit_pct, 100);
	return max_t(u32, limit, 1);
}

/* Set every function's credit on every queue.  Under shca_func_mutex. */
static void shca_func_apply_credits(struct shca_engine *eng)
{
	struct shca_dev *f;
	u32 fn;

	lockdep_assert_held(&shca_func_mutex);
	for (fn = 0; fn < SHCA_MAX_FUNCS; fn++) {
		f = rcu_dereference_protected(eng->funcs[fn],
					      lockdep_is_held(&shca_func_mutex));
		if (!f)
			continue;
		spin_lock_bh(&eng->rx_lock);
		shca_llq_set_credit(&eng->rx_llq, fn,
				    shca_func_limit(f, SHCA_RX_LLQ_ENTRIES));
		shca_llq_set_credit(&eng->mc_llq, fn,
				    shca_func_limit(f, SHCA_MC_CREDIT));
		spin_unlock_bh(&eng->rx_lock);
		spin_lock_bh(&eng->tx_lock);
		shca_llq_set_credit(&eng->tx_llq, fn,
				    shca_func_limit(f,
						    eng->tx_llq.cfg.n_entries));
		spin_unlock_bh(&eng->tx_lock);
	}
}

/* The engine of @base, created when it has none.  Under the mutex. */
static struct shca_engine *shca_func_engine(struct net_device *base,
					    u32 nqp)
{
	struct shca_engine *eng;

	lockdep_assert_held(&shca_func_mutex);
	list_for_each_entry(eng, &shca_engines, node)
		if (eng->ndev == base)
			return eng;
	eng = shca_engine_create(base, nqp);
	if (!IS_ERR(eng))
		list_add_tail(&eng->node, &shca_engines);
	return eng;
}

/* A new function's counters start at zero on every queue. */
static void shca_func_reset(struct shca_engine *eng, u32 fn)
{
	spin_lock_bh(&eng->rx_lock);
	shca_llq_func_reset(&eng->rx_llq, fn);
	shca_llq_func_reset(&eng->mc_llq, fn);
	spin_unlock_bh(&eng->rx_lock);
	spin_lock_bh(&eng->tx_lock);
	shca_llq_func_reset(&eng->tx_llq, fn);
	spin_unlock_bh(&eng->tx_lock);
}

/**
 * shca_func_add - make a device a function of its netdev's engine
 * @sdev: new device (sdev->ndev set, not yet attached to the network)
 * @nqp: QP numbers of an engine created for it
 *
 * Sets sdev->eng and sdev->fn.  Process context; takes RTNL.
 *
 * Return: 0; -EBUSY when the engine has SHCA_MAX_FUNCS functions already;
 * or the error of creating the engine.
 */
int shca_func_add(struct shca_dev *sdev, u32 nqp)
{
	struct net_device *base = shca_func_base(sdev->ndev);
	struct shca_engine *eng;
	int ret = -EBUSY;
	u32 fn;

	mutex_lock(&shca_func_mutex);
	eng = shca_func_engine(base, nqp);
	if (IS_ERR(eng)) {
		ret = PTR_ERR(eng);
		goto out;
	}
	for (fn = 0; fn < SHCA_MAX_FUNCS; fn++)
		if (!rcu_access_pointer(eng->funcs[fn]))
			break;
	if (fn == SHCA_MAX_FUNCS) {
		if (!eng->users)
			goto out_destroy;
		goto out;
	}
	sdev->eng = eng;
	sdev->fn = fn;
	sdev->credit_pct = shca_func_credit;
	shca_func_reset(eng, fn);
	eng->users++;
	rcu_assign_pointer(eng->funcs[fn], sdev);
	shca_func_apply_credits(eng);
	ret = 0;
	goto out;

out_destroy:
	list_del(&eng->node);
	shca_engine_destroy(eng);
out:
	mutex_unlock(&shca_func_mutex);
	dev_put(base);
	return ret;
}

/**
 * shca_func_remove - take a device off its engine (its QPs are gone)
 * @sdev: device; harmless when shca_func_add() failed or never ran
 *
 * The engine goes with its last function.  On return no engine context
 * finds @sdev by its function number any more.  Process context.
 */
void shca_func_remove(struct shca_dev *sdev)
{
	struct shca_engine *eng = sdev->eng;

	if (!eng)
		return;
	shca_mcg_func_gone(sdev);
	mutex_lock(&shca_func_mutex);
	RCU_INIT_POINTER(eng->funcs[sdev->fn], NULL);
	eng->users--;
	synchronize_rcu();
	/* the GSI QP's lists were reclaimed with it; be sure */
	shca_engine_drop_qp(eng, eng->nqp + sdev->fn);
	if (!eng->users) {
		list_del(&eng->node);
		shca_engine_destroy(eng);
	} else {
		shca_func_apply_credits(eng);
	}
	mutex_unlock(&shca_func_mutex);
	sdev->eng = NULL;
}

/**
 * shca_func_set_credit - set the share of each queue a function may hold
 * while it shares its engine
 * @sdev: the function
 * @pct: percent of each queue's entries, 1 to 100
 *
 * Below its current use, the function's pushes are refused until enough
 * of its entries are consumed.
 *
 * Return: 0 or -EINVAL.
 */
int shca_func_set_credit(struct shca_dev *sdev, u32 pct)
{
	if (pct < 1 || pct > 100)
		return -EINVAL;
	mutex_lock(&shca_func_mutex);
	sdev->credit_pct = pct;
	shca_func_apply_credits(sdev->eng);
	mutex_unlock(&shca_func_mutex);
	return 0;
}

/**
 * shca_func_get - a function of an engine by number
 * @eng: engine
 * @fn: function number (from a queue entry)
 *
 * Caller holds rcu_read_lock() or has BHs off; the device stays valid
 * until then.
 *
 * Return: the device, or NULL when no function has the number now.
 */
struct shca_dev *shca_func_get(struct shca_engine *eng, u32 fn)
{
	if (fn >= SHCA_MAX_FUNCS)
		return NULL;
	return rcu_dereference_check(eng->funcs[fn], rcu_read_lock_any_held());
}

/**
 * shca_func_skip - the functions a packet received on a netdev is not for
 * @eng: engine
 * @ndev: the netdev the packet arrived on (a function's)
 *
 * A multicast packet arrives once per netdev that joined its group (a
 * macvlan child gets a copy of its own); its copies go to the members of
 * the functions on that netdev only.  Caller holds rcu_read_lock().
 *
 * Return: a bit per function number not on @ndev.
 */
u32 shca_func_skip(struct shca_engine *eng, const struct net_device *ndev)
{
	struct shca_dev *f;
	u32 fn, skip = 0;

	BUILD_BUG_ON(SHCA_MAX_FUNCS > 32);
	for (fn = 0; fn < SHCA_MAX_FUNCS; fn++) {
		f = rcu_dereference_check(eng->funcs[fn],
					  rcu_read_lock_any_held());
		if (!f || f->ndev != ndev)
			skip |= BIT(fn);
	}
	return skip;
}
