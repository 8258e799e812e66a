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
 * enum shca_db_state - where a user QP's send ring stands with the engine
 * @SHCA_DB_IDLE: SHCA_RING_F_NEED_DOORBELL is set and the engine does not
 *	read the ring: every post rings.  A kernel QP stays here; the
 *	engine reads its ring anyway.
 * @SHCA_DB_OWED: as idle, but the ring holds WQEs no doorbell will
 *	announce (a doorbell call left them, or polling was turned off
 *	with posts in the ring): the engine fetches them on its next turn
 *	at the QP, and the ring is idle once they are taken.
 * @SHCA_DB_WATCHED: the flag is clear; the engine reads the producer
 *	index whenever it handles the QP, which is on the engine's poll list
 *	or in the poller's hands.
 * @SHCA_DB_LINGERING: watched, nothing outstanding, and the idle window
 *	runs until shca_qp_db.deadline: the poller looks for new posts.
 *
 * Transitions (all under qp->lock; shca_doorbell.c has the reasons):
 *  IDLE, OWED -> WATCHED      a doorbell call, QP in RTS, polling on,
 *                             and not a lone post of a direct QP that
 *                             stays direct (shca_db_stays_direct())
 *  IDLE -> OWED               a doorbell call left WQEs in the ring
 *  OWED -> IDLE               the engine took them
 *  WATCHED -> LINGERING       nothing outstanding (not a direct QP)
 *  LINGERING -> WATCHED       a post found, or a doorbell call
 *  WATCHED, LINGERING -> IDLE the window ran out (or a direct QP has
 *                             nothing outstanding) and the idle
 *                             handshake found nothing new; or the QP
 *                             left RTS
 *  WATCHED, LINGERING -> OWED polling turned off with posts in the ring
 *  any -> IDLE                the QP is reset
 */
enum shca_db_state {
	SHCA_DB_IDLE,
	SHCA_DB_OWED,
	SHCA_DB_WATCHED,
	SHCA_DB_LINGERING,
};

/**
 * struct shca_qp_db - a user QP's send doorbell state
 * @node: entry in the engine's poll list; empty while off the list.
 *	Protected by the engine's poll_lock; the QP is on the list (or in
 *	the poller's hands) whenever @state is WATCHED or LINGERING.
 * @state: the ring's state (enum shca_db_state); caller must hold
 *	qp->lock
 * @direct: the QP's lone posts ring instead of being watched: the poller
 *	kept finding them late.  A watched direct QP goes idle as soon as
 *	nothing is outstanding, without lingering; caller must hold qp->lock
 * @expired: the ring went idle because its idle window ran out with
 *	nothing posted; caller must hold qp->lock
 * @judge: a doorbell came after the window ran out; when the window runs
 *	out again or the next post is found, the WQEs fetched since (from
 *	@ring_fetch) tell a lone post (one: found late, as the poller could
 *	not find it at all) from a stream's start; caller must hold qp->lock
 * @late: lone posts found late in a row (by the poller, or rung after
 *	the window ran out); SHCA_DB_LATE_FINDS of them make the QP direct;
 *	caller must hold qp->lock
 * @answered: the peer sent the QP a message of its own (a request, a READ
 *	response, an ATOMIC acknowledgement) since its last doorbell;
 *	caller must hold qp->lock
 * @unanswered: a direct QP's lone posts rung in a row with @answered
 *	clear; SHCA_DB_STREAM_POSTS of them end direct mode; caller must
 *	hold qp->lock
 * @ring_fetch: the requester's fetch count at that doorbell; caller must
 *	hold qp->lock
 * @deadline: ktime (ns) at which a lingering QP's window runs out;
 *	caller must hold qp->lock
 * @window: the QP's current idle window in ns (adaptive, bounded by the
 *	poll_max_us module parameter); caller must hold qp->lock
 */
struct shca_qp_db {
	struct list_head node;
	enum shca_db_state state;
	bool direct;
	bool expired;
	bool judge;
	bool answered;
	u8 late;
	u8 unanswered;
	u32 ring_fetch;
	u64 deadline;
	u32 window;
};

void shca_db_init(struct shca_qp *qp);
void shca_db_reset(struct shca_qp *qp);
void shca_db_ring(struct shca_qp *qp);
void shca_db_forget(struct shca_qp *qp);
void shca_db_heard(struct shca_qp *qp, u8 opcode);

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
