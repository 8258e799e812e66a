/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca functions: the devices sharing one netdev's engine (shca_func.c).
 */
#ifndef SHCA_FUNC_H
#define SHCA_FUNC_H

#include <linux/types.h>

struct shca_dev;
struct shca_engine;
struct net_device;

int shca_func_add(struct shca_dev *sdev, u32 nqp);
void shca_func_remove(struct shca_dev *sdev);
int shca_func_set_credit(struct shca_dev *sdev, u32 pct);
struct shca_dev *shca_func_get(struct shca_engine *eng, u32 fn);
u32 shca_func_skip(struct shca_engine *eng, const struct net_device *ndev);

#endif /* SHCA_FUNC_H */
