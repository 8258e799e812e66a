// SPDX-License-Identifier: GPL-2.0
/*
 * shca doorbells: the engine watches the send rings of busy user QPs, so
 * a process posts work with a store to the ring's producer index and no
 * system call; it rings (one post_send call without work requests) only
 * after the engine said, through the ring, that it stopped watching.
 *
 * A user QP's send ring is in one of four states (enum shca_db_state,
 * whose comment lists the transitions):
 *  - idle: SHCA_RING_F_NEED_DOORBELL is set in the ring's control block
 *    and the engine does not look at the ring.  The provider's next post
 *    rings; shca_db_ring() clears the flag and the QP becomes watched.
 *  - owed: idle, but a doorbell call left WQEs in the ring that no other
 *    doorbell will announce; the engine takes them on its next turn at
 *    the QP (shca_db_engine_reads()) and the ring is idle again.
 *  - watched: the flag is clear.  The engine reads the producer index
 *    whenever it handles the QP (its transmit turn, every ACK or response
 *    received) and the transmit stage polls the QPs of its poll list.  A
 *    QP with work outstanding needs no spinning: its next ACK, response
 *    or timer brings the engine back.
 *  - lingering: watched with nothing outstanding, for an idle window,
 *    during which the transmit stage spins on the ring while it has its
 *    CPU to itself, and otherwise looks again from a timer whose period
 *    starts at a few microseconds and doubles while nothing is found (up
 *    to SHCA_POLL_TICK_MAX_NS): the delay a post sees stays small against
 *    the time the QP was idle.
 *
 * Going idle is a handshake: the engine sets the flag, issues a full
 * barrier and reads the producer index once more; the provider stores the
 * producer index, issues a full barrier and reads the flag.  Whatever the
 * interleaving, either the engine sees the new index or the provider sees
 * the flag and rings.  The idle window adapts per QP: it doubles when a
 * post arrived while lingering and shrinks by an eighth when it ran out,
 * between four poll timer ticks and the poll_max_us module parameter (0
 * turns polling off: every post rings).
 *
 * Polling only pays while the poller finds posts quickly.  When the CPU
 * is busy with other work (a process spinning on its CQ, say) the poller
 * looks from the timer and a lone post waits a timer period or more,
 * longer than a system call takes.  So a post found on a quiet QP while
 * the poller polls from its timer (by a pass the timer started, or first
 * by the receive path) was found late.  So was a lone post that rang
 * because the idle window ran out before it came, when nothing followed it
 * before the QP was quiet again (judged when the window runs out again or
 * the next post is found): the round trip is longer than the
 * window, which is then at its floor, and the poller spends the window for
 * nothing.  (The first post of a batch also rings alone, but more follow
 * it.)  After SHCA_DB_LATE_FINDS such lone posts in a row the QP goes
 * direct: whenever it has nothing outstanding it goes idle at once, and a
 * doorbell that brings one lone post (nothing else in the ring) leaves it
 * idle, so each such post rings and is sent in the system call
 * (shca_engine_post()), or by the transmit stage when the one before it
 * is still outstanding.  A doorbell that finds more in the ring
 * (a stream: a second new WQE, or a second one outstanding) ends direct
 * mode and the QP is watched again.  So do SHCA_DB_STREAM_POSTS lone
 * posts in a row with nothing from the peer before each but ACKs: a
 * ping-pong's next post follows the peer's answer, a stream's does not.
 * A stream's posts can all look lone: over a veth the doorbell call that
 * sends a message also runs the peer's receive path and the ACK's, in the
 * call's softirq, so the message is complete before the process posts
 * the next one, and a stream that went direct would ring for every
 * message.
 */
#include <linux/ktime.h>
#include <linux/sched.h>
#include "shca.h"
#include "shca_hdr.h"
#include "shca_qpc.h"
#include "shca_engine.h"
#include "shca_doorbell.h"
#include "shca_wq.h"
#include "shca_ring.h"
#include "shca_trace.h"

static unsigned int shca_poll_max_us = 10000;
module_param_named(poll_max_us, shca_poll_max_us, uint, 0644);
MODULE_PARM_DESC(poll_max_us,
		 "Longest time the engine polls an idle user send queue before asking for a doorbell system call, in microseconds; 0: every post makes one (default 10000)");

/* what the poller does with a QP it looked at (shca_db_check()) */
enum shca_db_verdict {
	SHCA_POLL_DROP,		/* no longer watched: drop from the poll list */
	SHCA_POLL_SERVE,	/* new work in the ring: schedule the QP */
	SHCA_POLL_WAIT,		/* work outstanding: an event will come back */
	SHCA_POLL_LINGER,	/* lingering, window running: look again */
	SHCA_POLL_LINGER_NEW,	/* the same, the window just started */
};

/* lone posts found late in a row that make a QP direct */
#define SHCA_DB_LATE_FINDS	8
/* a direct QP's lone posts without an answer between them: a stream */
#define SHCA_DB_STREAM_POSTS	16

static u32 shca_db_max_ns(void)
{
	return min_t(u32, READ_ONCE(shca_poll_max_us), 100000) *
	       NSEC_PER_USEC;
}

static void shca_db_set_need(struct shca_qp *qp, bool need)
{
	WRITE_ONCE(qp->sq.ctrl->flags, need ? SHCA_RING_F_NEED_DOORBELL : 0);
}

/* Of @pending WQEs in the send ring (a valid count), those not fetched */
static int shca_db_unfetched(struct shca_qp *qp, int pending)
{
	return pending - (int)(qp->req.fetch - qp->req.comp);
}

/*
 * WQEs in the ring not fetched yet; a corrupt producer index counts as
 * new work, which fetch will judge.
 */
static int shca_db_new_count(struct shca_qp *qp)
{
	int pending = shca_ring_pending(&qp->sq);

	if (pending < 0)
		return INT_MAX;
	return shca_db_unfetched(qp, pending);
}

static bool shca_db_new_work(struct shca_qp *qp)
{
	return shca_db_new_count(qp) > 0;
}

/*
 * Move the ring to state @to (tracepoint shca_db_state on a change).
 * Caller must hold qp->lock.
 */
static void shca_db_set_state(struct shca_qp *qp, enum shca_db_state to)
{
	struct shca_qp_db *db = &qp->db;

	if (trace_shca_db_state_enabled() && db->state != to)
		trace_shca_db_state(&qp->sdev->ibdev, qp->qpn, db->state, to,
				    db->direct, db->window);
	db->state = to;
}

/* Watched or lingering: the engine reads the producer index itself. */
static bool shca_db_watched(const struct shca_qp_db *db)
{
	return db->state == SHCA_DB_WATCHED || db->state == SHCA_DB_LINGERING;
}

static bool shca_db_outstanding(struct shca_qp *qp)
{
	return qp->req.fetch != qp->req.comp;
}

static void shca_db_grow(struct shca_qp_db *db, u32 max)
{
	db->window = min(db->window * 2, max);
}

/* Shrink slowly, never below a few poll timer ticks (or @max). */
static void shca_db_shrink(struct shca_qp_db *db, u32 max)
{
	u32 floor = min_t(u32, max, 4 * SHCA_POLL_TICK_NS);

	db->window = max(db->window - db->window / 8, floor);
}

/* Put a watched QP on the poll list.  Caller must hold qp->lock. */
static void shca_db_list(struct shca_engine *eng, struct shca_qp *qp)
{
	lockdep_assert_held(&qp->lock);

	spin_lock(&eng->poll_lock);
	if (list_empty(&qp->db.node)) {
		refcount_inc(&qp->ref);
		list_add_tail(&qp->db.node, &eng->poll);
		eng->poll_len++;
	}
	spin_unlock(&eng->poll_lock);
}

/**
 * shca_db_init - a new QP's send ring starts idle
 * @qp: QP whose send ring exists, not yet visible to anyone
 */
void shca_db_init(struct shca_qp *qp)
{
	INIT_LIST_HEAD(&qp->db.node);
	if (qp->user)
		shca_db_set_need(qp, true);
}

/**
 * shca_db_reset - a QP moved to RESET: its send ring is idle again
 * @qp: QP (caller must hold qp->lock)
 *
 * The poller drops the QP from its list when it next sees it.
 */
void shca_db_reset(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->lock);

	shca_db_set_state(qp, SHCA_DB_IDLE);
	qp->db.direct = false;
	qp->db.expired = false;
	qp->db.judge = false;
	qp->db.late = 0;
	qp->db.answered = false;
	qp->db.unanswered = 0;
	if (qp->user)
		shca_db_set_need(qp, true);
}

/*
 * The ring holds a lone post: one new WQE, and besides it at most one
 * sent WQE whose ACK is not back yet.  A peer's answer to our last
 * message can overtake that message's ACK (the two leave the peer from
 * different CPUs), so a ping-pong can post its next message while the
 * last one is still outstanding.  Caller must hold qp->lock.
 */
static bool shca_db_lone_post(struct shca_qp *qp)
{
	/* one read of the producer index decides both */
	int pending = shca_ring_pending(&qp->sq);

	lockdep_assert_held(&qp->lock);
	return pending >= 0 && pending <= 2 &&
	       shca_db_unfetched(qp, pending) <= 1;
}

/*
 * A direct QP's lone post stays direct (rings alone) unless it is a
 * stream's: SHCA_DB_STREAM_POSTS of them in a row with no answer from the
 * peer before each (@answered: one came since the last doorbell).
 * Caller must hold qp->lock.
 */
static bool shca_db_stays_direct(struct shca_qp *qp, bool answered)
{
	struct shca_qp_db *db = &qp->db;

	lockdep_assert_held(&qp->lock);
	if (!shca_db_lone_post(qp))
		return false;
	if (answered) {
		db->unanswered = 0;
		return true;
	}
	return ++db->unanswered < SHCA_DB_STREAM_POSTS;
}

/**
 * shca_db_ring - the process rang the send doorbell: watch the ring
 * @qp: user QP (caller must hold qp->lock)
 *
 * Counts the doorbell.  Watching starts only for a QP in RTS while
 * polling is enabled; otherwise the flag stays set and every post rings.
 * A direct QP stays idle while the ring holds a lone post
 * (shca_db_lone_post()) and the peer answers its posts: a lone post
 * rings, a stream is watched (shca_db_stays_direct()).  A doorbell after
 * the QP's idle window ran out is judged when the window runs out next
 * (shca_db_expire()).
 */
void shca_db_ring(struct shca_qp *qp)
{
	struct shca_qp_db *db = &qp->db;
	u32 max = shca_db_max_ns();
	bool answered = db->answered;

	lockdep_assert_held(&qp->lock);
	shca_stat_inc(qp->sdev, SHCA_CNT_DB_RINGS);
	db->answered = false;
	if (!qp->user || qp->state != IB_QPS_RTS || !max)
		return;
	if (db->expired && !db->direct) {
		db->judge = true;
		db->ring_fetch = qp->req.fetch;
	}
	db->expired = false;
	if (db->direct) {
		if (shca_db_stays_direct(qp, answered))
			return;
		db->direct = false;
		db->late = 0;
		shca_stat_inc(qp->sdev, SHCA_CNT_DB_DIRECT_ENDS);
	}
	if (!db->window || db->window > max)
		db->window = max / 2;
	if (!shca_db_watched(db)) {
		shca_db_set_need(qp, false);
		shca_db_list(qp->sdev->eng, qp);
	}
	shca_db_set_state(qp, SHCA_DB_WATCHED);
}

/**
 * shca_db_forget - take a dying QP off the poll list
 * @qp: QP already in the RESET state (so the poller drops it too)
 */
void shca_db_forget(struct shca_qp *qp)
{
	struct shca_engine *eng = qp->sdev->eng;
	bool listed;

	spin_lock_bh(&eng->poll_lock);
	listed = !list_empty(&qp->db.node);
	if (listed) {
		list_del_init(&qp->db.node);
		eng->poll_len--;
	}
	spin_unlock_bh(&eng->poll_lock);
	if (listed)
		shca_qp_put(qp);
}

/**
 * shca_db_heard - a packet for the QP arrived from its peer
 * @qp: QP (caller must hold qp->lock)
 * @opcode: the packet's BTH opcode, a valid one
 *
 * A request, a READ response or an ATOMIC acknowledgement is an answer:
 * what a ping-pong waits for before its next post.  A plain ACK or NAK
 * is not (shca_db_stays_direct()).
 */
void shca_db_heard(struct shca_qp *qp, u8 opcode)
{
	u32 f = shca_opcode_info(opcode)->flags;

	lockdep_assert_held(&qp->lock);
	if (f & (SHCA_OPF_REQ | SHCA_OPF_READ | SHCA_OPF_ATOMIC))
		qp->db.answered = true;
}

/* Stop watching: the next post rings.  Caller must hold qp->lock. */
static enum shca_db_verdict shca_db_unwatch(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->lock);

	/* a QP in error keeps the ERROR|NEED_DOORBELL flags it was given */
	if (qp->state != IB_QPS_ERR && qp->state != IB_QPS_RESET)
		shca_db_set_need(qp, true);
	shca_db_set_state(qp, SHCA_DB_IDLE);
	return SHCA_POLL_DROP;
}

/* The idle handshake.  Caller must hold qp->lock. */
static enum shca_db_verdict shca_db_go_idle(struct shca_qp *qp, u32 max)
{
	lockdep_assert_held(&qp->lock);

	shca_db_set_need(qp, true);
	/* flag store before the index load: pairs with the provider */
	smp_mb();
	if (shca_db_new_work(qp)) {
		shca_db_set_need(qp, false);
		shca_db_set_state(qp, SHCA_DB_WATCHED);
		shca_db_grow(&qp->db, max);
		return SHCA_POLL_SERVE;
	}
	shca_db_shrink(&qp->db, max);
	shca_stat_inc(qp->sdev, SHCA_CNT_DB_IDLE);
	return shca_db_unwatch(qp);
}

/**
 * shca_db_settle - a QP has nothing left to send: what now for its ring?
 * @qp: QP (caller must hold qp->lock)
 *
 * Called where the engine finished with a QP outside the transmit stage
 * (a receive, a doorbell call).  A watched QP with nothing outstanding
 * starts its idle window in the transmit stage; a direct one goes idle
 * here, without waking the stage.
 *
 * Return: what the caller must do once it dropped qp->lock.
 */
enum shca_db_next shca_db_settle(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->lock);

	if (!shca_db_watched(&qp->db) || shca_db_outstanding(qp))
		return SHCA_DB_SETTLED;
	if (!qp->db.direct)
		return SHCA_DB_WAKE_POLLER;
	if (shca_db_go_idle(qp, shca_db_max_ns()) == SHCA_POLL_SERVE)
		return SHCA_DB_NEW_WORK;
	return SHCA_DB_SETTLED;
}

/*
 * Work came to a quiet QP (found while it was watched, or rung after its
 * idle window ran out); @late: it was a lone post found late.
 * SHCA_DB_LATE_FINDS late ones in a row make the QP direct; anything
 * else starts the count again.  Caller must hold qp->lock.
 */
static void shca_db_count_late(struct shca_qp *qp, bool late)
{
	struct shca_qp_db *db = &qp->db;

	lockdep_assert_held(&qp->lock);
	if (!late) {
		db->late = 0;
		return;
	}
	if (++db->late < SHCA_DB_LATE_FINDS)
		return;
	db->late = 0;
	db->unanswered = 0;
	db->direct = true;
	shca_stat_inc(qp->sdev, SHCA_CNT_DB_DIRECT);
}

/*
 * A doorbell came after the idle window ran out: judge it once the QP is
 * quiet again, when its window runs out or the next post is found (by the
 * poller or the receive path), whichever comes first.  The WQEs fetched
 * since tell what the doorbell brought: one is a lone post the poller
 * could not have found in time (late), more a stream.  Judging only at the
 * window's end would count a next post found in the window as part of a
 * stream.  Caller must hold qp->lock.
 */
static void shca_db_judge(struct shca_qp *qp)
{
	struct shca_qp_db *db = &qp->db;

	lockdep_assert_held(&qp->lock);
	if (db->judge)
		shca_db_count_late(qp, qp->req.fetch - db->ring_fetch == 1);
	db->judge = false;
}

/* The idle window ran out and the QP went idle.  Caller holds qp->lock. */
static void shca_db_expire(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	shca_db_judge(qp);
	qp->db.expired = true;
}

/**
 * shca_db_taken - the engine is about to take a QP's posts outside the
 * poller (the receive softirq that handled the QP found them)
 * @qp: QP (caller must hold qp->lock)
 *
 * A lone post on a quiet watched QP counts as found late while the
 * poller polls from its timer: it would have found the post late.  A
 * spinning poller would have found it at once.
 */
void shca_db_taken(struct shca_qp *qp)
{
	int n_new;

	lockdep_assert_held(&qp->lock);
	if (!shca_db_watched(&qp->db) || shca_db_outstanding(qp))
		return;
	n_new = shca_db_new_count(qp);
	if (n_new > 0) {
		shca_db_judge(qp);
		shca_db_count_late(qp, n_new == 1 &&
				   READ_ONCE(qp->sdev->eng->timer_polling));
	}
}

/**
 * shca_db_rung - the doorbell call had its turn at the QP
 * @qp: user QP (caller must hold qp->lock)
 *
 * WQEs left in an idle ring after the call (whatever kept the call from
 * taking them) are owed: no other doorbell announces them, so the engine
 * fetches them itself on its next turn at the QP (shca_db_engine_reads()).
 */
void shca_db_rung(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->lock);

	if (!shca_db_watched(&qp->db))
		shca_db_set_state(qp, shca_db_new_work(qp) ?
				  SHCA_DB_OWED : SHCA_DB_IDLE);
}

/**
 * shca_db_engine_reads - must the engine look for new WQEs in this QP's
 * send ring by itself?
 * @qp: QP (caller must hold qp->lock)
 *
 * Return: true for a kernel QP or a ring that is owed, watched or
 * lingering; false for an idle ring, whose process rings for every post.
 */
bool shca_db_engine_reads(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->lock);

	if (qp->db.state == SHCA_DB_OWED && !shca_db_new_work(qp))
		shca_db_set_state(qp, SHCA_DB_IDLE);
	return !qp->user || qp->db.state != SHCA_DB_IDLE;
}

/* Decide what to do with a watched QP.  Caller must hold qp->lock. */
static enum shca_db_verdict shca_db_check(struct shca_qp *qp, u64 now,
					  bool late)
{
	struct shca_qp_db *db = &qp->db;
	u32 max = shca_db_max_ns();
	enum shca_db_verdict v;
	int n_new;

	lockdep_assert_held(&qp->lock);
	if (!shca_db_watched(db))
		return SHCA_POLL_DROP;
	if (qp->state != IB_QPS_RTS)
		return shca_db_unwatch(qp);
	if (!max) {
		/* polling turned off: stop, but fetch what the ring holds */
		shca_db_unwatch(qp);
		/* flag store before the index load: pairs with the provider */
		smp_mb();
		if (!shca_db_new_work(qp))
			return SHCA_POLL_DROP;
		shca_db_set_state(qp, SHCA_DB_OWED);
		return SHCA_POLL_SERVE;
	}
	n_new = shca_db_new_count(qp);
	if (n_new > 0) {
		if (db->state == SHCA_DB_LINGERING) {
			shca_db_judge(qp);
			shca_db_count_late(qp, late && n_new == 1);
			shca_db_grow(db, max);
		}
		shca_db_set_state(qp, SHCA_DB_WATCHED);
		shca_stat_inc(qp->sdev, SHCA_CNT_DB_POLL_HITS);
		return SHCA_POLL_SERVE;
	}
	if (shca_db_outstanding(qp) || qp->req.rnr_wait) {
		shca_db_set_state(qp, SHCA_DB_WATCHED);
		return SHCA_POLL_WAIT;
	}
	if (db->direct)
		return shca_db_go_idle(qp, max);
	if (db->state != SHCA_DB_LINGERING) {
		shca_db_set_state(qp, SHCA_DB_LINGERING);
		db->deadline = now + min(db->window, max);
		return SHCA_POLL_LINGER_NEW;
	}
	if (now < db->deadline)
		return SHCA_POLL_LINGER;
	v = shca_db_go_idle(qp, max);
	if (v == SHCA_POLL_DROP)
		shca_db_expire(qp);
	return v;
}

/* Take the poll list's first QP (and its reference), or NULL. */
static struct shca_qp *shca_db_pop(struct shca_engine *eng)
{
	struct shca_qp *qp;

	spin_lock_bh(&eng->poll_lock);
	qp = list_first_entry_or_null(&eng->poll, struct shca_qp, db.node);
	if (qp) {
		list_del_init(&qp->db.node);
		eng->poll_len--;
	}
	spin_unlock_bh(&eng->poll_lock);
	return qp;
}

/**
 * shca_db_poll - one pass of the transmit stage over the watched QPs
 * @eng: engine
 *
 * Schedules QPs with new work; QPs whose idle window ran out go idle.
 * Visits each QP listed at the start once.  Transmit stage context.
 *
 * Return: SHCA_DB_POLL_LINGER when some QP is still lingering (worth
 * polling again), plus SHCA_DB_POLL_FRESH when a post was found or a
 * window just started (poll again soon).
 */
unsigned int shca_db_poll(struct shca_engine *eng)
{
	enum shca_db_verdict v;
	unsigned int ret = 0;
	struct shca_qp *qp;
	u64 now = ktime_get_ns();
	bool late = READ_ONCE(eng->timer_polling);
	u32 n;

	spin_lock_bh(&eng->poll_lock);
	n = eng->poll_len;
	spin_unlock_bh(&eng->poll_lock);
	if (n)
		atomic64_inc(&eng->db_polls);

	while (n--) {
		qp = shca_db_pop(eng);
		if (!qp)
			break;
		spin_lock_bh(&qp->lock);
		v = shca_db_check(qp, now, late);
		if (v != SHCA_POLL_DROP)
			shca_db_list(eng, qp);
		spin_unlock_bh(&qp->lock);
		if (v == SHCA_POLL_SERVE)
			shca_engine_schedule(qp);
		if (v == SHCA_POLL_LINGER)
			ret |= SHCA_DB_POLL_LINGER;
		else if (v == SHCA_POLL_LINGER_NEW)
			ret |= SHCA_DB_POLL_LINGER | SHCA_DB_POLL_FRESH;
		else if (v == SHCA_POLL_SERVE)
			ret |= SHCA_DB_POLL_FRESH;
		shca_qp_put(qp);
	}
	return ret;
}
