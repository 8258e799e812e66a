/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca transmit credits (shca_txcredit.c): how many entries of the
 * engine's transmit LLQ one QP, one user context and all user contexts
 * together may hold, so that no process can take the queue from another
 * user, rdma_cm's GSI QP or a kernel ULP.
 */
#ifndef SHCA_TXCREDIT_H
#define SHCA_TXCREDIT_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct shca_engine;
struct shca_qp;
struct shca_ucontext;

/**
 * struct shca_txc - an engine's transmit credits
 * @lock: protects @waiters and every shca_txc_qp.node; taken with BH
 *	disabled, nests inside qp->lock (never the other way round)
 * @waiters: QPs whose fetch stopped for their user context's or all
 *	users' credit; each is scheduled when an entry is returned
 * @users_used: entries all user contexts hold
 * @users_limit: entries all user contexts may hold together
 * @ctx_limit: entries one user context may hold
 * @qp_limit: entries one QP may hold
 */
struct shca_txc {
	spinlock_t lock;
	struct list_head waiters;
	atomic_t users_used;
	u32 users_limit;
	u32 ctx_limit;
	u32 qp_limit;
};

/**
 * struct shca_txc_qp - a QP's side of the transmit credits
 * @ctx: the user context charged for its entries (NULL: a kernel QP)
 * @node: on shca_txc.waiters while it waits for credit
 * @qp_waits: times its fetch stopped at the QP's own limit
 * @ctx_waits: times its fetch stopped for its user context's or all
 *	users' credit
 */
struct shca_txc_qp {
	struct shca_ucontext *ctx;
	struct list_head node;
	u32 qp_waits;
	u32 ctx_waits;
};

void shca_txc_init(struct shca_txc *txc, u32 entries);
void shca_txc_qp_init(struct shca_qp *qp, struct shca_ucontext *ctx);
bool shca_txc_charge(struct shca_qp *qp);
void shca_txc_uncharge(struct shca_qp *qp, u32 n);
bool shca_txc_room(struct shca_qp *qp);
void shca_txc_qp_gone(struct shca_qp *qp);

#endif /* SHCA_TXCREDIT_H */
