// SPDX-License-Identifier: GPL-2.0
/*
 * shca - software RDMA host channel adapter carrying RoCEv2 over any
 * Ethernet netdev.
 *
 * Module entry points, the `rdma link` type, the netdev notifier and the
 * device lifecycle.
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/if_vlan.h>
#include <linux/sched/prio.h>
#include <linux/seq_file.h>
#include <rdma/rdma_netlink.h>
#include "shca.h"
#include "shca_doorbell.h"
#include "shca_fault.h"
#include "shca_icrc.h"
#include "shca_keytab.h"

unsigned short shca_udp_port = SHCA_ROCEV2_UDP_PORT;
module_param_named(udp_port, shca_udp_port, ushort, 0444);
MODULE_PARM_DESC(udp_port,
		 "UDP port RoCEv2 packets are sent to and received on (default 4791)");

unsigned int shca_poll_max_us = 10000;
module_param_named(poll_max_us, shca_poll_max_us, uint, 0644);
MODULE_PARM_DESC(poll_max_us,
		 "Longest time the engine polls an idle user send queue before asking for a doorbell system call, in microseconds; 0: every post makes one (default 10000)");

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

/*
 * Below 0: a process that spins on the stage's CPU (a CQ poller) would
 * otherwise get half of it.  Not -20: the stage would then starve
 * ksoftirqd (nice 0), to which the kernel defers receive processing under
 * load, and a netdev that receives on the sending CPU (veth) overflows
 * its backlog and drops shca's own packets.
 */
int shca_tx_nice = -10;
module_param_named(tx_nice, shca_tx_nice, int, 0444);
MODULE_PARM_DESC(tx_nice,
		 "Nice value of the transmit stage threads (shca_tx/<netdev>), -20 to 19 (default -10)");

struct workqueue_struct *shca_wq;
struct workqueue_struct *shca_unreg_wq;

/*
 * All shca devices.  shca_dev_mutex protects the list; a device is on it
 * from its creation until its dealloc_driver callback.  shca_dev_gone is
 * signalled whenever a device leaves the list.
 */
static LIST_HEAD(shca_dev_list);
static DEFINE_MUTEX(shca_dev_mutex);
static DECLARE_WAIT_QUEUE_HEAD(shca_dev_gone);

static atomic_t shca_objs[SHCA_NUM_OBJ_TYPES];
static const char * const shca_obj_names[SHCA_NUM_OBJ_TYPES] = {
	[SHCA_OBJ_DEV] = "device",
	[SHCA_OBJ_UCTX] = "ucontext",
	[SHCA_OBJ_PD] = "pd",
	[SHCA_OBJ_MMAP] = "mmap",
	[SHCA_OBJ_RING] = "ring",
	[SHCA_OBJ_CQ] = "cq",
	[SHCA_OBJ_SRQ] = "srq",
	[SHCA_OBJ_QP] = "qp",
	[SHCA_OBJ_MR] = "mr",
	[SHCA_OBJ_MW] = "mw",
	[SHCA_OBJ_AH] = "ah",
};

/**
 * shca_obj_get - account one live object of type @t
 * @t: object type
 *
 * Every object the module allocates is counted so that module unload can
 * report leaks (see shca_check_leaks()).
 */
void shca_obj_get(enum shca_obj_type t)
{
	atomic_inc(&shca_objs[t]);
}

/**
 * shca_obj_put - account the release of one object of type @t
 * @t: object type
 */
void shca_obj_put(enum shca_obj_type t)
{
	WARN_ON_ONCE(atomic_dec_return(&shca_objs[t]) < 0);
}

static void shca_check_leaks(void)
{
	int i, n;

	for (i = 0; i < SHCA_NUM_OBJ_TYPES; i++) {
		n = atomic_read(&shca_objs[i]);
		if (n)
			pr_err("shca: leak: %d %s object(s) still allocated at unload\n",
			       n, shca_obj_names[i]);
	}
}

/*
 * debugfs "shca/objects": one "<type> <count>" line per object type, the
 * live counts the leak report checks at unload, so that tests can see
 * them come back while the module stays loaded.
 */
static struct dentry *shca_debugfs;

static int shca_objects_show(struct seq_file *s, void *unused)
{
	int i;

	for (i = 0; i < SHCA_NUM_OBJ_TYPES; i++)
		seq_printf(s, "%s %d\n", shca_obj_names[i],
			   atomic_read(&shca_objs[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(shca_objects);

/* A failure only costs the debug file: debugfs calls need no checks. */
static void shca_debugfs_init(void)
{
	shca_debugfs = debugfs_create_dir(SHCA_DRV_NAME, NULL);
	debugfs_create_file("objects", 0444, shca_debugfs, NULL,
			    &shca_objects_fops);
	shca_fault_init(shca_debugfs);
}

/* Caller must hold shca_dev_mutex. */
static struct shca_dev *shca_find_by_ndev(struct net_device *ndev)
{
	struct shca_dev *sdev;

	list_for_each_entry(sdev, &shca_dev_list, list)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

/**
 * shca_dev_list_add - make a new device visible to the notifier and unload
 * @sdev: device, not yet registered with the RDMA core
 *
 * Return: 0, or -EEXIST when another shca device already uses the netdev
 * (one device per netdev).
 */
static int shca_dev_list_add(struct shca_dev *sdev)
{
	int ret = 0;

	mutex_lock(&shca_dev_mutex);
	if (shca_find_by_ndev(sdev->ndev))
		ret = -EEXIST;
	else
		list_add_tail(&sdev->list, &shca_dev_list);
	mutex_unlock(&shca_dev_mutex);
	return ret;
}

/**
 * shca_dev_list_del - forget a device (from its dealloc_driver callback)
 * @sdev: device being freed
 */
void shca_dev_list_del(struct shca_dev *sdev)
{
	mutex_lock(&shca_dev_mutex);
	list_del_init(&sdev->list);
	mutex_unlock(&shca_dev_mutex);
	wake_up_all(&shca_dev_gone);
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
 */
static void shca_queue_unregister(struct shca_dev *sdev)
{
	if (!ib_device_try_get(&sdev->ibdev))
		return;
	if (!queue_work(shca_unreg_wq, &sdev->unreg_work))
		ib_device_put(&sdev->ibdev);
}

static int shca_newlink(const char *ibdev_name, struct net_device *ndev)
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

	sdev = shca_dev_create(ndev, ibdev_name);
	if (IS_ERR(sdev))
		return PTR_ERR(sdev);
	INIT_WORK(&sdev->unreg_work, shca_unreg_work);

	ret = shca_dev_list_add(sdev);
	if (ret)
		goto err;

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

static struct rdma_link_ops shca_link_ops = {
	.type = SHCA_DRV_NAME,
	.newlink = shca_newlink,
};

static int shca_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *arg)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(arg);
	struct shca_dev *sdev;

	mutex_lock(&shca_dev_mutex);
	sdev = shca_find_by_ndev(ndev);
	if (!sdev)
		goto out;

	switch (event) {
	case NETDEV_UNREGISTER:
		sdev->ndev_gone = true;
		shca_queue_unregister(sdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		shca_dev_port_event(sdev,
				    shca_port_state(sdev) == IB_PORT_ACTIVE ?
				    IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR);
		break;
	default:
		break;
	}
out:
	mutex_unlock(&shca_dev_mutex);
	return NOTIFY_DONE;
}

static struct notifier_block shca_netdev_nb = {
	.notifier_call = shca_netdev_event,
};

/*
 * Unregister every device still present.  A device whose unregistration
 * another context already started (rdma link delete, netdev removal) has
 * no reference left to take: wait until its dealloc_driver has taken it
 * off the list.
 */
static void shca_unregister_all(void)
{
	struct shca_dev *sdev;

	for (;;) {
		mutex_lock(&shca_dev_mutex);
		sdev = list_first_entry_or_null(&shca_dev_list,
						struct shca_dev, list);
		if (sdev && !ib_device_try_get(&sdev->ibdev)) {
			mutex_unlock(&shca_dev_mutex);
			wait_event(shca_dev_gone,
				   list_empty(&sdev->list));
			continue;
		}
		mutex_unlock(&shca_dev_mutex);
		if (!sdev)
			break;
		ib_unregister_device_and_put(&sdev->ibdev);
	}
}

static int __init shca_init(void)
{
	int ret;

	shca_tx_nice = clamp_t(int, shca_tx_nice, MIN_NICE, MAX_NICE);
	if (shca_max_qp < SHCA_MIN_RESOURCES ||
	    shca_max_qp > SHCA_MAX_QP_LIMIT ||
	    shca_max_cq < SHCA_MIN_RESOURCES ||
	    shca_max_cq > SHCA_MAX_CQ_LIMIT ||
	    shca_max_mr < SHCA_MIN_RESOURCES ||
	    shca_max_mr > SHCA_KT_MAX_CAP) {
		pr_err("shca: max_qp, max_cq or max_mr out of range\n");
		return -EINVAL;
	}
	shca_icrc_init_tables();
	shca_wq = alloc_workqueue("shca", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!shca_wq)
		return -ENOMEM;
	/*
	 * Not WQ_MEM_RECLAIM: unregistering a device flushes the RDMA core's
	 * ib_wq, which is not either, and a reclaim workqueue must not wait
	 * for one that may have no worker under memory pressure.
	 */
	shca_unreg_wq = alloc_workqueue("shca_unreg", WQ_UNBOUND, 0);
	if (!shca_unreg_wq) {
		ret = -ENOMEM;
		goto err_wq;
	}

	ret = shca_net_init();
	if (ret)
		goto err_unreg_wq;

	ret = register_netdevice_notifier(&shca_netdev_nb);
	if (ret)
		goto err_net;

	rdma_link_register(&shca_link_ops);
	shca_debugfs_init();
	pr_info("shca: loaded, RoCEv2 on UDP port %u\n", shca_udp_port);
	return 0;

err_net:
	shca_net_exit();
err_unreg_wq:
	destroy_workqueue(shca_unreg_wq);
err_wq:
	destroy_workqueue(shca_wq);
	return ret;
}

static void __exit shca_exit(void)
{
	debugfs_remove_recursive(shca_debugfs);
	shca_fault_exit();
	rdma_link_unregister(&shca_link_ops);
	unregister_netdevice_notifier(&shca_netdev_nb);
	flush_workqueue(shca_unreg_wq);
	shca_unregister_all();
	shca_net_exit();
	destroy_workqueue(shca_unreg_wq);
	destroy_workqueue(shca_wq);
	shca_check_leaks();
	pr_info("shca: unloaded\n");
}

module_init(shca_init);
module_exit(shca_exit);

MODULE_AUTHOR("shca developers");
MODULE_DESCRIPTION("shca: software RDMA host channel adapter (RoCEv2)");
MODULE_LICENSE("GPL");
MODULE_ALIAS_RDMA_LINK(SHCA_DRV_NAME);
