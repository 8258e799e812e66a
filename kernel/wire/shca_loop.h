/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca same-host delivery (shca_loop.c).
 */
#ifndef SHCA_LOOP_H
#define SHCA_LOOP_H

#include <linux/skbuff.h>

struct shca_dev;

void shca_loop_init(void);
void shca_loop_exit(void);
int shca_loop_queue(struct shca_dev *to, struct sk_buff *skb);

#endif /* SHCA_LOOP_H */
