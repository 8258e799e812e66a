// SPDX-License-Identifier: GPL-2.0
/*
 * shca - software RDMA host channel adapter carrying RoCEv2 over any
 * Ethernet netdev.
 *
 * Module entry points: the `rdma link` type that creates devices, the
 * netdev notifier that follows their netdevs, and module load and unload,
 * which set up and tear down the layers in order (Documentation/
 * architecture.md, "Reading the code").
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <rdma/rdma_netlink.h>
#include "shca.h"
#include "shca_dev.h"
#include "shca_engine.h"
#include "shca_fault.h"
#include "shca_crcsel.h"
#include "shca_net.h"
#include "shca_obj.h"

static struct dentry *shca_debugfs;

static int shca_newlink(const char *ibdev_name, struct net_device *ndev)
{
	return shca_dev_add(ibdev_name, ndev);
}

static struct rdma_link_ops shca_link_ops = {
	.type = SHCA_DRV_NAME,
	.newlink = shca_newlink,
};

static int shca_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *arg)
{
	shca_dev_netdev_event(netdev_notifier_info_to_dev(arg), event);
	return NOTIFY_DONE;
}

static struct notifier_block shca_netdev_nb = {
	.notifier_call = shca_netdev_event,
};

/* A failure only costs the debug files: debugfs calls need no checks. */
static void shca_debugfs_init(void)
{
	shca_debugfs = debugfs_create_dir(SHCA_DRV_NAME, NULL);
	shca_obj_debugfs(shca_debugfs);
	shca_fault_init(shca_debugfs);
}

static int __init shca_init(void)
{
	int ret;

	ret = shca_crcsel_init();
	if (ret)
		return ret;
	ret = shca_dev_init();
	if (ret)
		goto err_crc;
	ret = shca_engine_init();
	if (ret)
		goto err_dev;
	ret = shca_net_init(shca_dev_unreg_wq());
	if (ret)
		goto err_engine;
	ret = register_netdevice_notifier(&shca_netdev_nb);
	if (ret)
		goto err_net;

	rdma_link_register(&shca_link_ops);
	shca_debugfs_init();
	pr_info("shca: loaded, RoCEv2 on UDP port %u\n", shca_udp_port);
	return 0;

err_net:
	shca_net_exit();
err_engine:
	shca_engine_exit();
err_dev:
	shca_dev_exit();
err_crc:
	shca_crcsel_exit();
	return ret;
}

static void __exit shca_exit(void)
{
	debugfs_remove_recursive(shca_debugfs);
	shca_fault_exit();
	rdma_link_unregister(&shca_link_ops);
	unregister_netdevice_notifier(&shca_netdev_nb);
	shca_dev_remove_all();
	shca_net_exit();
	shca_engine_exit();
	shca_dev_exit();
	shca_crcsel_exit();
	shca_obj_check_leaks();
	pr_info("shca: unloaded\n");
}

module_init(shca_init);
module_exit(shca_exit);

MODULE_AUTHOR("shca developers");
MODULE_DESCRIPTION("shca: software RDMA host channel adapter (RoCEv2)");
MODULE_LICENSE("GPL");
MODULE_ALIAS_RDMA_LINK(SHCA_DRV_NAME);
