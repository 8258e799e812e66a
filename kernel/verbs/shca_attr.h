/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca device attributes, port, counters and sysfs (shca_attr.c).
 *
 * The verbs here are callbacks of struct ib_device_ops: their contract is
 * the RDMA core's (include/rdma/ib_verbs.h), and shca_dev_ops
 * (shca_dev.c) lists them all.
 */
#ifndef SHCA_ATTR_H
#define SHCA_ATTR_H

#include <rdma/ib_verbs.h>

struct shca_dev;

int shca_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		      struct ib_udata *udata);
int shca_modify_device(struct ib_device *ibdev, int mask,
		       struct ib_device_modify *attr);
int shca_query_port(struct ib_device *ibdev, u32 port,
		    struct ib_port_attr *attr);
int shca_get_port_immutable(struct ib_device *ibdev, u32 port,
			    struct ib_port_immutable *immutable);
enum rdma_link_layer shca_get_link_layer(struct ib_device *ibdev, u32 port);
struct net_device *shca_get_netdev(struct ib_device *ibdev, u32 port);
int shca_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
struct rdma_hw_stats *shca_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port);
int shca_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index);
void shca_dev_port_event(struct shca_dev *sdev, enum ib_event_type type);

extern const struct attribute_group shca_dev_attr_group;

#endif /* SHCA_ATTR_H */
