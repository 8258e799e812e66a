/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca doorbells: how the engine learns about work a process wrote into a
 * send ring, without a system call per post.
 */
#ifndef SHCA_DOORBELL_H
#define SHCA_DOORBELL_H

#include <linux/list.h>
#include <linux/types.h>

struct shca_qp;
struct shca_engine;

/**
 * struct shca_qp_db - a user QP's send doorbell state
 * @node: entry in the engine's poll list while @listed
 * @listed: on the engine's poll list; protected by the engine's poll_lock
 * @watched: the engine watches this send ring, and the ring's
 *	SHCA_RING_F_NEED_DOORBELL is clear.  Set and cleared under qp->lock;
 *	while it is set the QP is on the poll list or in the poller's hands.
 * @deadline: ktime (ns) at which the QP goes idle if nothing new was
 *	posted and nothing is outstanding; caller must hold qp->lock
 * @window: the QP's current idle window in ns (adaptive, bounded by the
 *	poll_max_us module parameter); caller must hold qp->lock
 * @lingering: the window is running with nothing outstanding (the poller
 *	spins for this QP); caller must hold qp->lock
 * @direct: the QP rings for every lone post instead of being watched
 *	(the poller kept finding its lone posts late); caller must hold
 *	qp->lock
 * @late: lone posts the poller found late in a row; caller must hold
 *	qp->lock
 * @owed: the ring is not watched, yet holds WQEs the engine must fetch by
 *	itself: a doorbell call left them, or the ring stopped being watched
 *	(poll_max_us set to 0) with posts in it; caller must hold qp->lock
 */
struct shca_qp_db {
	struct list_head node;
	bool listed;
	bool watched;
	bool lingering;
	bool direct;
	bool owed;
	u8 late;
	u64 deadline;
	u32 window;
};

void shca_db_init(struct shca_qp *qp);
void shca_db_reset(struct shca_qp *qp);
void shca_db_ring(struct shca_qp *qp);
void shca_db_forget(struct shca_qp *qp);

/* what the engine does next for a QP (shca_db_settle()) */
enum shca_db_next {
	SHCA_DB_SETTLED,	/* nothing to do */
	SHCA_DB_WAKE_POLLER,	/* the transmit stage must start a window */
	SHCA_DB_NEW_WORK,	/* new WQEs turned up: serve the QP */
};

enum shca_db_next shca_db_settle(struct shca_qp *qp);
void shca_db_taken(struct shca_qp *qp);
void shca_db_rung(struct shca_qp *qp);
bool shca_db_engine_reads(struct shca_qp *qp);
/* shca_db_poll() result bits */
#define SHCA_DB_POLL_LINGER	1	/* some QP lingers: poll again */
#define SHCA_DB_POLL_FRESH	2	/* a post was found or a window began */

unsigned int shca_db_poll(struct shca_engine *eng);

#endif /* SHCA_DOORBELL_H */
