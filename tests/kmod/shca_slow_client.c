// SPDX-License-Identifier: GPL-2.0
/*
 * shca_slow_client - an RDMA core client whose removal from one device
 * takes a while, as a kernel ULP tearing down its connections does.
 *
 * Loaded only by tests/selftests/faults_dev.sh, with dev= (a shca device)
 * and remove_ms=.  While the device's unregistration waits in the client's
 * remove callback, its netdev's unregistration waits for the device's
 * netdev reference, and the network core repeats NETDEV_UNREGISTER every
 * second: the test checks that the device and the netdev still go.
 * removed= counts the slow removals done, so that the test can tell that
 * the wait it is about really happened.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/module.h>
#include <rdma/ib_verbs.h>

static char *dev;
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "the device whose removal is slow");

static uint remove_ms = 3000;
module_param(remove_ms, uint, 0444);
MODULE_PARM_DESC(remove_ms, "how long its removal takes (default 3000 ms)");

static int removed;
module_param(removed, int, 0444);
MODULE_PARM_DESC(removed, "slow removals done (read-only)");

static int slow_add(struct ib_device *ibdev)
{
	return 0;
}

static void slow_remove(struct ib_device *ibdev, void *client_data)
{
	if (!dev || strcmp(dev_name(&ibdev->dev), dev))
		return;
	pr_info("%s: removal takes %u ms\n", dev, remove_ms);
	msleep(remove_ms);
	WRITE_ONCE(removed, removed + 1);
}

static struct ib_client slow_client = {
	.name = "shca_slow_client",
	.add = slow_add,
	.remove = slow_remove,
};

static int __init slow_init(void)
{
	if (!dev || remove_ms > 60000)
		return -EINVAL;
	return ib_register_client(&slow_client);
}

static void __exit slow_exit(void)
{
	ib_unregister_client(&slow_client);
}

module_init(slow_init);
module_exit(slow_exit);
MODULE_DESCRIPTION("shca test: an RDMA client whose removal is slow");
MODULE_LICENSE("GPL");
