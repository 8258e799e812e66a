/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca multicast replication stage (shca_mcrep.c).
 */
#ifndef SHCA_MCREP_H
#define SHCA_MCREP_H

#include <linux/skbuff.h>

struct shca_engine;
struct shca_dev;

/*
 * Receive LLQ payload word 1: the function the entry is charged to (the
 * one the packet arrived for) in bits 8..15; of a multicast copy also
 * SHCA_RXD_MCAST and the member QP's cookie (low 32 bits of its serial
 * number) in bits 32..63; of a same-host packet (shca_rx_local()), whose
 * ICRC was not computed, SHCA_RXD_LOCAL.  Word 0 is the skb, shared by
 * every copy of a multicast packet.
 */
#define SHCA_RXD_MCAST		1ULL
#define SHCA_RXD_LOCAL		2ULL
#define SHCA_RXD_COOKIE(w)	((u32)((w) >> 32))
#define SHCA_RXD_FN(fn)		((u64)((fn) & 0xff) << 8)
#define SHCA_RXD_FUNC(w)	((u32)((w) >> 8) & 0xff)

#define SHCA_MC_WORK_BUDGET	256	/* copies the stage delivers a turn */
#define SHCA_MC_NICE		10	/* the replication stage's thread */

void shca_mcrep_rx(struct shca_dev *sdev, struct sk_buff *skb);
void shca_mcrep_kick(struct shca_engine *eng);
int shca_mcrep_init(struct shca_engine *eng);
void shca_mcrep_stop(struct shca_engine *eng);

#endif /* SHCA_MCREP_H */
