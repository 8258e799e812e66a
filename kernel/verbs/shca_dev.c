// SPDX-License-Identifier: GPL-2.0
/*
 * shca devices: creation on a netdev (`rdma link add`), the list of all
 * devices, their reaction to netdev events, unregistration and release,
 * and the table of every verb the device implements.
 */
#include <linux/if_vlan.h>
#include <net/addrconf.h>
#include "shca.h"
#include "shca_ah.h"
#include "shca_attr.h"
#include "shca_av.h"
#include "shca_cq.h"
#include "shca_ctx.h"
#include "shca_dev.h"
#include "shca_engine.h"
#include "shca_func.h"
#include "shca_keytab.h"
#include "shca_mcg.h"
#include "shca_dm.h"
#include "shca_uapi.h"
#include "shca_dmw.h"
#include "shca_mem.h"
#include "shca_memreg.h"
#include "shca_mr.h"
#include "shca_net.h"
#include "shca_obj.h"
#include "shca_qp.h"
#include "shca_res.h"
#include "shca_qpc.h"
#include "shca_rkey.h"
#include "shca_srq.h"

/*
 * Resource counts per device.  The numbers cost nothing until used, except
 * for two tables allocated with each device: the engine's per-QP queue
 * state (about 40 bytes per QP number) and the key table (16 bytes per
 * entry).  An object past its count gets ENOMEM.
 */
unsigned int shca_max_qp = 65536;
module_param_named(max_qp, shca_max_qp, uint, 0444);
MODULE_PARM_DESC(max_qp,
		 "QP numbers per device; a device's user QPs are 16 fewer (default 65536, 64 to 1048576)");

unsigned int shca_max_cq = 1U << 20;
module_param_named(max_cq, shca_max_cq, uint, 0444);
MODULE_PARM_DESC(max_cq,
		 "CQs per device, the kernel's own included (default 1048576, 64 to 16777216)");

unsigned int shca_max_mr = 1U << 18;
module_param_named(max_mr, shca_max_mr, uint, 0444);
MODULE_PARM_DESC(max_mr,
		 "Key table entries per device, shared by its MRs (the kernel's DMA MRs included) and memory windows (default 262144, 64 to 16777214)");

unsigned int shca_max_ah = 65536;
module_param_named(max_ah, shca_max_ah, uint, 0444);
MODULE_PARM_DESC(max_ah,
		 "Address handles per device, the kernel's own included (default 65536, 64 to 16777216)");

/* device unregistrations that cannot run where they are decided (RTNL) */
static struct workqueue_struct *shca_unreg_wq;

/*
 * All shca devices.  shca_dev_mutex protects the list; a device is on it
 * from its creation until its dealloc_driver callback.  shca_dev_gone is
 * signalled whenever a device leaves the list, and shca_dev_removals
 * (written under the mutex) counts those departures.
 */
static LIST_HEAD(shca_dev_list);
static DEFINE_MUTEX(shca_dev_mutex);
static DECLARE_WAIT_QUEUE_HEAD(shca_dev_gone);
static unsigned long shca_dev_removals;

/*
 * shca_dev_list_add - make a new device visible to the notifier and unload
 * @sdev: device, not yet registered with the RDMA core
 *
 * Several devices may share a netdev: they are functions of its engine
 * (shca_func.c).
 */
static void shca_dev_list_add(struct shca_dev *sdev)
{
	mutex_lock(&shca_dev_mutex);
	list_add_tail(&sdev->list, &shca_dev_list);
	mutex_unlock(&shca_dev_mutex);
}

/*
 * shca_dev_list_del - forget a device (from its dealloc_driver callback)
 * @sdev: device being freed
 */
static void shca_dev_list_del(struct shca_dev *sdev)
{
	mutex_lock(&shca_dev_mutex);
	list_del_init(&sdev->list);
	WRITE_ONCE(shca_dev_removals, shca_dev_removals + 1);
	mutex_unlock(&shca_dev_mutex);
	wake_up_all(&shca_dev_gone);
}

/*
 * Called by the RDMA core once the device is unregistered and no user is
 * left, or by ib_dealloc_device() when creation fails part way; the core
 * frees the ib_device itself afterwards.  Everything it undoes must be
 * safe to undo when it was never done.
 */
static void shca_dealloc_driver(struct ib_device *ibdev)
{
	struct shca_dev *sdev = to_sdev(ibdev);

	shca_net_detach(sdev);
	shca_func_remove(sdev);
	shca_ah_table_destroy(sdev);
	shca_mr_table_destroy(sdev);
	shca_dmw_destroy(sdev);
	ida_destroy(&sdev->srq_ida);
	ida_destroy(&sdev->cq_ida);
	ida_destroy(&sdev->pd_ida);
	shca_rkey_dev_destroy(sdev);
	netdev_put(sdev->ndev, &sdev->ndev_tracker);
	shca_dev_list_del(sdev);
	shca_obj_put(SHCA_OBJ_DEV);
}

/*
 * Every verb the device implements, grouped by object.  Each callback
 * lives in the verbs file of its object (shca_<object>.c).
 */
static const struct ib_device_ops shca_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SHCA_UVERBS_ABI_VERSION,

	/* device and port: shca_attr.c, and this file */
	.dealloc_driver = shca_dealloc_driver,
	.query_device = shca_query_device,
	.modify_device = shca_modify_device,
	.query_port = shca_query_port,
	.get_port_immutable = shca_get_port_immutable,
	.get_link_layer = shca_get_link_layer,
	.get_netdev = shca_get_netdev,
	.query_pkey = shca_query_pkey,
	.alloc_hw_port_stats = shca_alloc_hw_port_stats,
	.get_hw_stats = shca_get_hw_stats,
	.device_group = &shca_dev_attr_group,

	/* user context, PD, mmap: shca_ctx.c */
	.alloc_ucontext = shca_alloc_ucontext,
	.dealloc_ucontext = shca_dealloc_ucontext,
	.query_ucontext = shca_query_ucontext,
	.disassociate_ucontext = shca_disassociate_ucontext,
	.alloc_pd = shca_alloc_pd,
	.dealloc_pd = shca_dealloc_pd,
	.mmap = shca_mmap,
	.mmap_free = shca_mmap_free,

	/* CQ: shca_cq.c */
	.create_cq = shca_create_cq,
	.destroy_cq = shca_destroy_cq,
	.resize_cq = shca_resize_cq,
	.modify_cq = shca_modify_cq,
	.poll_cq = shca_poll_cq,
	.req_notify_cq = shca_req_notify_cq,

	/* SRQ: shca_srq.c */
	.create_srq = shca_create_srq,
	.modify_srq = shca_modify_srq,
	.query_srq = shca_query_srq,
	.destroy_srq = shca_destroy_srq,
	.post_srq_recv = shca_post_srq_recv,

	/* QP: shca_qp.c */
	.create_qp = shca_create_qp,
	.modify_qp = shca_modify_qp,
	.query_qp = shca_query_qp,
	/* its engine state for rdma resource show qp -dd: shca_res.c */
	.fill_res_qp_entry = shca_fill_res_qp_entry,
	.destroy_qp = shca_destroy_qp,
	.attach_mcast = shca_attach_mcast,
	.detach_mcast = shca_detach_mcast,
	.post_send = shca_post_send,
	.post_recv = shca_post_recv,

	/* MR and MW: shca_mr.c */
	.get_dma_mr = shca_get_dma_mr,
	.reg_user_mr = shca_reg_user_mr,
	.rereg_user_mr = shca_rereg_user_mr,
	.dereg_mr = shca_dereg_mr,
	.alloc_mr = shca_alloc_mr,
	.map_mr_sg = shca_map_mr_sg,
	.alloc_mw = shca_alloc_mw,
	.dealloc_mw = shca_dealloc_mw,
	.alloc_dm = shca_alloc_dm,
	.dealloc_dm = shca_dealloc_dm,
	.reg_dm_mr = shca_reg_dm_mr,

	/* AH: shca_ah.c */
	.create_ah = shca_create_ah,
	.create_user_ah = shca_create_user_ah,
	.query_ah = shca_query_ah,
	.destroy_ah = shca_destroy_ah,

	INIT_RDMA_OBJ_SIZE(ib_ucontext, shca_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_pd, shca_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_cq, shca_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_srq, shca_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_qp, shca_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_mw, shca_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_ah, shca_ah, ibah),
};


static void shca_dev_init_ibdev(struct shca_dev *sdev)
{
	struct ib_device *ibdev = &sdev->ibdev;

	strscpy(ibdev->node_desc, "shca", sizeof(ibdev->node_desc));
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, sdev->ndev->dev_addr);
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ib_set_device_ops(ibdev, &shca_dev_ops);
	ibdev->driver_def = shca_uapi_defs;
}

/* The engine and the object tables; undone by shca_dealloc_driver(). */
static int shca_dev_init_tables(struct shca_dev *sdev)
{
	int ret;

	ida_init(&sdev->cq_ida);
	ida_init(&sdev->srq_ida);
	shca_rkey_dev_init(sdev);
	ret = shca_mr_table_init(sdev, shca_max_mr);
	if (ret)
		return ret;
	ret = shca_ah_table_init(sdev, shca_max_ah);
	if (ret)
		return ret;
	ret = shca_func_add(sdev, shca_max_qp);
	if (ret)
		return ret;
	/* functions of one netdev share its MAC: their GUIDs differ */
	((u8 *)&sdev->ibdev.node_guid)[4] ^= sdev->fn;
	return 0;
}

/*
 * shca_dev_create - allocate and initialise a device on @ndev
 * @ndev: Ethernet netdev
 *
 * The device is not registered; the caller registers it or, on failure,
 * calls ib_dealloc_device(), which releases everything through
 * shca_dealloc_driver().
 *
 * Return: the device or an ERR_PTR().
 */
static struct shca_dev *shca_dev_create(struct net_device *ndev)
{
	struct shca_dev *sdev;
	int ret;

	sdev = ib_alloc_device(shca_dev, ibdev);
	if (!sdev)
		return ERR_PTR(-ENOMEM);
	shca_obj_get(SHCA_OBJ_DEV);

	sdev->ndev = ndev;
	netdev_hold(ndev, &sdev->ndev_tracker, GFP_KERNEL);
	sdev->net = dev_net(ndev);
	INIT_LIST_HEAD(&sdev->list);
	INIT_LIST_HEAD(&sdev->net_node);
	ida_init(&sdev->pd_ida);
	shca_dev_init_ibdev(sdev);
	/*
	 * A NIC's bus device is the RDMA device's parent too, as for a
	 * hardware HCA: /sys/class/infiniband/DEV/device/net/ then names
	 * the netdev, which tools use to find the device's addresses.  A
	 * virtual netdev (veth, lo, macvlan) has none.
	 */
	sdev->ibdev.dev.parent = ndev->dev.parent;

	ret = shca_dev_init_tables(sdev);
	if (!ret)
		ret = ib_device_set_netdev(&sdev->ibdev, ndev, 1);
	if (ret) {
		ib_dealloc_device(&sdev->ibdev);
		return ERR_PTR(ret);
	}
	return sdev;
}

static void shca_unreg_work(struct work_struct *work)
{
	struct shca_dev *sdev = container_of(work, struct shca_dev, unreg_work);

	ib_unregister_device_and_put(&sdev->ibdev);
}

/*
 * Called under RTNL, where ib_unregister_device() must not run: take a
 * reference and unregister from shca_unreg_wq.  A device already being
 * unregistered has no references left to take and needs nothing more.
 *
 * Once only: while the netdev waits for its last references, the network
 * core repeats NETDEV_UNREGISTER every second.  Were the work queued
 * again while it runs, the new instance would hold a reference that the
 * running one waits for (in disable_device()) and could not run before
 * it: neither would ever finish.
 */
static void shca_queue_unregister(struct shca_dev *sdev)
{
	lockdep_assert_held(&shca_dev_mutex);
	if (sdev->unreg_queued || !ib_device_try_get(&sdev->ibdev))
		return;
	sdev->unreg_queued = true;
	if (!queue_work(shca_unreg_wq, &sdev->unreg_work))
		ib_device_put(&sdev->ibdev);
}

/*
 * The netdev moved to another namespace: the device follows it there
 * (shca_net_move()) and its multicast groups are joined again on the
 * netdev, whose IP state the move reset.  A device the new namespace
 * cannot take (another driver owns the RoCEv2 port there) goes.
 */
static void shca_move_work(struct work_struct *work)
{
	struct shca_dev *sdev = container_of(work, struct shca_dev, move_work);
	struct net *net;

	rtnl_lock();
	net = maybe_get_net(dev_net(sdev->ndev));
	rtnl_unlock();
	if (net && !net_eq(net, sdev->net)) {
		if (shca_net_move(sdev, net)) {
			pr_info("shca: %s: RoCEv2 port taken in the new namespace of %s\n",
				dev_name(&sdev->ibdev.dev), netdev_name(sdev->ndev));
			mutex_lock(&shca_dev_mutex);
			shca_queue_unregister(sdev);
			mutex_unlock(&shca_dev_mutex);
		} else {
			shca_mcg_func_rejoin(sdev);
		}
	}
	if (net)
		put_net(net);
	ib_device_put(&sdev->ibdev);
}

/* Under RTNL: the netdev reappeared in another namespace. */
static void shca_queue_move(struct shca_dev *sdev)
{
	if (!ib_device_try_get(&sdev->ibdev))
		return;
	if (!queue_work(shca_unreg_wq, &sdev->move_work))
		ib_device_put(&sdev->ibdev);
}

/**
 * shca_dev_add - create and register a device on a netdev (`rdma link add`)
 * @ibdev_name: the RDMA device name the user asked for
 * @ndev: Ethernet netdev to carry RoCEv2 on
 *
 * A netdev that has a shca device already, or whose lower device has one
 * (a macvlan or ipvlan child), gets another function of the same engine.
 *
 * Return: 0, -EINVAL for a netdev shca cannot use, -EBUSY when its engine
 * has SHCA_MAX_FUNCS functions, or another negative errno.
 */
int shca_dev_add(const char *ibdev_name, struct net_device *ndev)
{
	struct shca_dev *sdev;
	int ret;

	if (ndev->type != ARPHRD_ETHER && ndev->type != ARPHRD_LOOPBACK) {
		pr_info("shca: %s is not an Ethernet device\n", ndev->name);
		return -EINVAL;
	}
	if (is_vlan_dev(ndev)) {
		pr_info("shca: %s is a VLAN device; use its real device\n",
			ndev->name);
		return -EINVAL;
	}

	sdev = shca_dev_create(ndev);
	if (IS_ERR(sdev))
		return PTR_ERR(sdev);
	INIT_WORK(&sdev->unreg_work, shca_unreg_work);
	INIT_WORK(&sdev->move_work, shca_move_work);

	shca_dev_list_add(sdev);
	ret = shca_net_attach(sdev);
	if (ret)
		goto err;

	ret = ib_register_device(&sdev->ibdev, ibdev_name, NULL);
	if (ret)
		goto err;

	/* the netdev may have gone while the device was not yet registered */
	mutex_lock(&shca_dev_mutex);
	if (sdev->ndev_gone)
		shca_queue_unregister(sdev);
	mutex_unlock(&shca_dev_mutex);
	return 0;

err:
	/* undoes everything above through shca_dealloc_driver() */
	ib_dealloc_device(&sdev->ibdev);
	return ret;
}

/* One device's share of a netdev event.  Under shca_dev_mutex. */
static void shca_dev_ndev_event(struct shca_dev *sdev, unsigned long event)
{
	lockdep_assert_held(&shca_dev_mutex);
	switch (event) {
	case NETDEV_UNREGISTER:
		/* still registered: it moves to another namespace */
		if (sdev->ndev->reg_state == NETREG_REGISTERED)
			break;
		sdev->ndev_gone = true;
		shca_queue_unregister(sdev);
		break;
	case NETDEV_REGISTER:
		/* our netdev registers again: in its new namespace */
		shca_queue_move(sdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		shca_dev_port_event(sdev,
				    shca_net_port_state(sdev) == IB_PORT_ACTIVE ?
				    IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR);
		break;
	default:
		break;
	}
}

/**
 * shca_dev_netdev_event - follow a netdev event on the device of @ndev
 * @ndev: the netdev the event is about
 * @event: NETDEV_*
 *
 * NETDEV_UNREGISTER unregisters the device, unless the netdev only moves
 * to another namespace (then the device follows it once it is there,
 * NETDEV_REGISTER); a change of link state is reported to the RDMA core
 * as a port event.  Called under RTNL.
 */
void shca_dev_netdev_event(struct net_device *ndev, unsigned long event)
{
	struct shca_dev *sdev;

	mutex_lock(&shca_dev_mutex);
	list_for_each_entry(sdev, &shca_dev_list, list)
		if (sdev->ndev == ndev)
			shca_dev_ndev_event(sdev, event);
	mutex_unlock(&shca_dev_mutex);
}

/*
 * Unregister every device still present.  A device whose unregistration
 * another context already started (rdma link delete, netdev removal) has
 * no reference left to take: wait until its dealloc_driver has taken it
 * off the list.  The wait watches the departure count, not the device:
 * once it has left the list, its memory may be freed at any moment.
 */
static void shca_dev_unregister_all(void)
{
	struct shca_dev *sdev;
	unsigned long seen;

	for (;;) {
		mutex_lock(&shca_dev_mutex);
		sdev = list_first_entry_or_null(&shca_dev_list,
						struct shca_dev, list);
		if (sdev && !ib_device_try_get(&sdev->ibdev)) {
			seen = shca_dev_removals;
			mutex_unlock(&shca_dev_mutex);
			wait_event(shca_dev_gone,
				   READ_ONCE(shca_dev_removals) != seen);
			continue;
		}
		mutex_unlock(&shca_dev_mutex);
		if (!sdev)
			break;
		ib_unregister_device_and_put(&sdev->ibdev);
	}
}

/**
 * shca_dev_init - check the resource parameters, create the workqueue of
 * deferred unregistrations (module load)
 *
 * Return: 0, -EINVAL for a resource count out of range, or -ENOMEM.
 */
int shca_dev_init(void)
{
	if (shca_max_qp < SHCA_MIN_RESOURCES ||
	    shca_max_qp > SHCA_MAX_QP_LIMIT ||
	    shca_max_cq < SHCA_MIN_RESOURCES ||
	    shca_max_cq > SHCA_MAX_CQ_LIMIT ||
	    shca_max_mr < SHCA_MIN_RESOURCES ||
	    shca_max_mr > SHCA_KT_MAX_CAP ||
	    shca_max_ah < SHCA_MIN_RESOURCES ||
	    shca_max_ah > SHCA_MAX_AH_LIMIT) {
		pr_err("shca: max_qp, max_cq, max_mr or max_ah out of range\n");
		return -EINVAL;
	}
	/*
	 * Not WQ_MEM_RECLAIM: unregistering a device flushes the RDMA core's
	 * ib_wq, which is not either, and a reclaim workqueue must not wait
	 * for one that may have no worker under memory pressure.
	 */
	shca_unreg_wq = alloc_workqueue("shca_unreg", WQ_UNBOUND, 0);
	return shca_unreg_wq ? 0 : -ENOMEM;
}

/**
 * shca_dev_unreg_wq - the workqueue device unregistrations are queued on
 * (a dying namespace flushes it before it waits for its devices to go)
 *
 * Return: the workqueue.
 */
struct workqueue_struct *shca_dev_unreg_wq(void)
{
	return shca_unreg_wq;
}

/**
 * shca_dev_remove_all - unregister every device and wait until all are
 * released (module unload, after the link type and the notifier are gone)
 */
void shca_dev_remove_all(void)
{
	flush_workqueue(shca_unreg_wq);
	shca_dev_unregister_all();
}

/**
 * shca_dev_exit - undo shca_dev_init() (no device left, no namespace
 * waiting for one)
 */
void shca_dev_exit(void)
{
	destroy_workqueue(shca_unreg_wq);
}
