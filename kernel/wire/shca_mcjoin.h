/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca multicast membership of the netdev (shca_mcjoin.c).
 */
#ifndef SHCA_MCJOIN_H
#define SHCA_MCJOIN_H

#include <linux/types.h>

struct net_device;

int shca_mcjoin(struct net_device *ndev, const u8 *mgid);
void shca_mcleave(struct net_device *ndev, const u8 *mgid);
bool shca_mcgid_valid(const u8 *mgid);

#endif /* SHCA_MCJOIN_H */
