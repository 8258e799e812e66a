/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca devices: module parameters that size a device, creation and
 * removal (shca_dev.c).
 */
#ifndef SHCA_DEV_H
#define SHCA_DEV_H

#include <linux/netdevice.h>

/* resource counts per device (module parameters) */
extern unsigned int shca_max_qp;	/* QP numbers */
extern unsigned int shca_max_cq;	/* CQs */
extern unsigned int shca_max_mr;	/* key table entries (MRs and MWs) */
extern unsigned int shca_max_ah;	/* address handles */

/* what the resource parameters may be set to */
#define SHCA_MAX_QP_LIMIT	(1U << 20)
#define SHCA_MAX_CQ_LIMIT	(1U << 24)
#define SHCA_MAX_AH_LIMIT	(1U << 24)
#define SHCA_MIN_RESOURCES	64

int shca_dev_init(void);
void shca_dev_exit(void);
struct workqueue_struct *shca_dev_unreg_wq(void);
int shca_dev_add(const char *ibdev_name, struct net_device *ndev);
void shca_dev_netdev_event(struct net_device *ndev, unsigned long event);
void shca_dev_remove_all(void);

#endif /* SHCA_DEV_H */
