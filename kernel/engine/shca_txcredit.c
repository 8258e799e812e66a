// SPDX-License-Identifier: GPL-2.0
/*
 * shca transmit credits.  A send WQE holds an entry of its engine's
 * transmit LLQ from fetch to completion; an RC WQE towards a peer that
 * never answers holds it until the retries run out.  The LLQ's own
 * credits bound each function (virtual HCA); these bound, within a
 * function, each QP, each user context (one open of the uverbs device)
 * and all user contexts together, so that the rest of the queue stays
 * for kernel QPs (rdma_cm's GSI QP, storage ULPs).
 *
 * The fetch stage asks for one credit per WQE (shca_txc_charge()).  A
 * QP at its own limit waits for its own completions; one whose user
 * context, or all users, are at theirs goes on the engine's waiter list
 * and is scheduled again when a user context's entry is returned.  The
 * WQEs it could not fetch stay in its send ring, where they cost the
 * engine nothing.
 */
#include <linux/atomic.h>
#include <linux/module.h>
#include "shca.h"
#include "shca_qpc.h"
#include "shca_engine.h"
#include "shca_txcredit.h"

static unsigned int shca_qp_tx_entries = 1024;
module_param_named(qp_tx_entries, shca_qp_tx_entries, uint, 0444);
MODULE_PARM_DESC(qp_tx_entries,
		 "Send WQEs one QP may have fetched and not completed, 1-65536 (default 1024); more wait in its send ring");

static unsigned int shca_ctx_tx_pct = 25;
module_param_named(ctx_tx_pct, shca_ctx_tx_pct, uint, 0444);
MODULE_PARM_DESC(ctx_tx_pct,
		 "Percent of an engine's transmit queue one user context may hold, 1-100 (default 25)");

static unsigned int shca_user_tx_pct = 75;
module_param_named(user_tx_pct, shca_user_tx_pct, uint, 0444);
MODULE_PARM_DESC(user_tx_pct,
		 "Percent of an engine's transmit queue all user contexts may hold together, 1-100 (default 75); the rest is for kernel QPs");

/* WQEs woken per returned entry */
#define SHCA_TXC_WAKE_BATCH	8

static u32 shca_txc_share(u32 entries, unsigned int pct)
{
	return max_t(u32, 1, div_u64((u64)entries * clamp(pct, 1U, 100U),
				     100));
}

/**
 * shca_txc_init - set up an engine's transmit credits (engine creation)
 * @txc: the credits
 * @entries: entries of the engine's transmit LLQ
 */
void shca_txc_init(struct shca_txc *txc, u32 entries)
{
	spin_lock_init(&txc->lock);
	INIT_LIST_HEAD(&txc->waiters);
	atomic_set(&txc->users_used, 0);
	txc->users_limit = shca_txc_share(entries, shca_user_tx_pct);
	txc->ctx_limit = min(txc->users_limit,
			     shca_txc_share(entries, shca_ctx_tx_pct));
	txc->qp_limit = clamp(shca_qp_tx_entries, 1U, entries);
}

/**
 * shca_txc_qp_init - a new QP's side of the credits (QP creation)
 * @qp: the QP
 * @ctx: the user context that created it, NULL for a kernel QP
 */
void shca_txc_qp_init(struct shca_qp *qp, struct shca_ucontext *ctx)
{
	qp->txc.ctx = ctx;
	INIT_LIST_HEAD(&qp->txc.node);
	qp->txc.qp_waits = 0;
	qp->txc.ctx_waits = 0;
}

/* Take one entry of @used if it stays within @limit. */
static bool shca_txc_take(atomic_t *used, u32 limit)
{
	if (atomic_inc_return(used) <= (int)limit)
		return true;
	atomic_dec(used);
	return false;
}

static bool shca_txc_take_user(struct shca_txc *txc,
			       struct shca_ucontext *ctx)
{
	if (!shca_txc_take(&ctx->tx_used, txc->ctx_limit))
		return false;
	if (shca_txc_take(&txc->users_used, txc->users_limit))
		return true;
	atomic_dec(&ctx->tx_used);
	return false;
}

/*
 * The QP's user is out of credit: wait on the list, then try once more,
 * so that an entry returned before the QP was listed is not missed (the
 * returner checks the list after giving the entry back).
 */
static bool shca_txc_wait(struct shca_txc *txc, struct shca_qp *qp)
{
	unsigned long flags;
	bool got;

	spin_lock_irqsave(&txc->lock, flags);
	if (list_empty(&qp->txc.node))
		list_add_tail(&qp->txc.node, &txc->waiters);
	spin_unlock_irqrestore(&txc->lock, flags);
	smp_mb();	/* listed before the counters are read again */
	got = shca_txc_take_user(txc, qp->txc.ctx);
	if (got) {
		spin_lock_irqsave(&txc->lock, flags);
		list_del_init(&qp->txc.node);
		spin_unlock_irqrestore(&txc->lock, flags);
	}
	return got;
}

/**
 * shca_txc_charge - take the credit for one more fetched send WQE
 * @qp: QP (caller must hold qp->lock)
 *
 * A QP in error fetches its whole ring to flush it, past every limit:
 * those WQEs complete at once.
 *
 * Return: true when the WQE may be fetched; false when the QP, its user
 * context or all users are at their limit (counted; a QP waiting for its
 * user's credit is scheduled again when an entry comes back).
 */
bool shca_txc_charge(struct shca_qp *qp)
{
	struct shca_txc *txc = &qp->sdev->eng->txc;

	lockdep_assert_held(&qp->lock);
	if (qp->state == IB_QPS_ERR) {
		if (qp->txc.ctx) {
			atomic_inc(&qp->txc.ctx->tx_used);
			atomic_inc(&txc->users_used);
		}
		return true;
	}
	if (qp->req.fetch - qp->req.comp >= txc->qp_limit) {
		qp->txc.qp_waits++;
		shca_stat_inc(qp->sdev, SHCA_CNT_TX_QP_CREDIT_WAITS);
		return false;
	}
	if (!qp->txc.ctx || shca_txc_take_user(txc, qp->txc.ctx) ||
	    shca_txc_wait(txc, qp))
		return true;
	qp->txc.ctx_waits++;
	shca_stat_inc(qp->sdev, SHCA_CNT_TX_CTX_CREDIT_WAITS);
	return false;
}

/* Schedule a few QPs waiting for credit; they take it or wait again. */
static void shca_txc_wake(struct shca_txc *txc)
{
	struct shca_qp *qp;
	unsigned long flags;
	int n;

	spin_lock_irqsave(&txc->lock, flags);
	for (n = 0; n < SHCA_TXC_WAKE_BATCH; n++) {
		qp = list_first_entry_or_null(&txc->waiters, struct shca_qp,
					      txc.node);
		if (!qp)
			break;
		list_del_init(&qp->txc.node);
		/* listed QPs are alive: shca_txc_qp_gone() takes them off */
		shca_engine_schedule(qp);
	}
	spin_unlock_irqrestore(&txc->lock, flags);
}

/**
 * shca_txc_uncharge - give back the credits of completed (or reclaimed)
 * send WQEs
 * @qp: QP whose WQEs they were (qp->lock held, or the QP unreachable)
 * @n: how many
 */
void shca_txc_uncharge(struct shca_qp *qp, u32 n)
{
	struct shca_txc *txc = &qp->sdev->eng->txc;

	if (!qp->txc.ctx || !n)
		return;
	atomic_sub(n, &qp->txc.ctx->tx_used);
	atomic_sub(n, &txc->users_used);
	smp_mb__after_atomic();	/* returned before the waiters are read */
	if (!list_empty_careful(&txc->waiters))
		shca_txc_wake(txc);
}

/**
 * shca_txc_room - may the QP fetch more now, as far as its credits go?
 * @qp: QP (caller must hold qp->lock)
 *
 * For the transmit stage's "anything to do": a QP at its own limit, or
 * waiting for its user's credit, is not worth a turn until a completion
 * or a returned entry.
 *
 * Return: true when a fetch could take a WQE.
 */
bool shca_txc_room(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	return qp->req.fetch - qp->req.comp < qp->sdev->eng->txc.qp_limit &&
	       list_empty_careful(&qp->txc.node);
}

/**
 * shca_txc_qp_gone - a dying QP stops waiting for credit (QP destroy,
 * before its last reference goes)
 * @qp: the QP
 */
void shca_txc_qp_gone(struct shca_qp *qp)
{
	struct shca_txc *txc = &qp->sdev->eng->txc;
	unsigned long flags;

	spin_lock_irqsave(&txc->lock, flags);
	list_del_init(&qp->txc.node);
	spin_unlock_irqrestore(&txc->lock, flags);
}
