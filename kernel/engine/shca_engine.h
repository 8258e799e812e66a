/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca engine: the pipeline stages of a device and the linked-list queues
 * between them.
 *
 * Receive:  validate (softirq, shca_rx) --rx LLQ, per QP--> placement,
 *           acknowledgement, completion (shca_engine_rx_run)
 * Transmit: doorbell --> fetch (copy + validate WQEs into the TX LLQ, per
 *           QP) --> packet build and transmit (peek) --> completion (pop,
 *           once the peer acknowledged: ready bit)
 */
#ifndef SHCA_ENGINE_H
#define SHCA_ENGINE_H

#include <linux/hrtimer.h>
#include <linux/workqueue.h>
#include <linux/kthread.h>
#include <linux/netdevice.h>
#include <linux/xarray.h>
#include "shca_llq.h"
#include "shca_doorbell.h"
#include "shca_mcg.h"
#include "shca_txcredit.h"

struct shca_dev;
struct shca_qp;

#define SHCA_RX_LLQ_ENTRIES	8192
#define SHCA_TX_LLQ_ENTRIES	65536
#define SHCA_RX_BUDGET		64
#define SHCA_RX_STREAM_PKTS	2	/* sent in a stage round: a stream */
#define SHCA_TX_ROUND_BUDGET	256
#define SHCA_TX_INLINE_BUDGET	256	/* packets a poster sends itself */
#define SHCA_TX_SPIN_NS		(200 * NSEC_PER_USEC)	/* spin bound */
#define SHCA_POLL_TICK_NS	(10 * NSEC_PER_USEC)	/* timer polling: */
#define SHCA_POLL_TICK_MAX_NS	(200 * NSEC_PER_USEC)	/* first, longest */
#define SHCA_MAX_FUNCS		16	/* functions (devices) on one engine */

enum {
	SHCA_ENG_RX_RUNNING,
	SHCA_ENG_RX_IPI,
};

/**
 * struct shca_engine - the engine of one netdev, shared by the functions
 *	(shca devices) on it
 * @ndev: the netdev the engine serves (reference held): the one under
 *	macvlan and ipvlan children, whose functions share it
 * @ndev_tracker: tracks that reference
 * @node: entry in the list of engines (shca_func.c, under its mutex)
 * @users: functions on the engine (under that mutex)
 * @funcs: the functions by number (written under that mutex, read under
 *	RCU); a function's number names it in the queues' credits and in
 *	the receive LLQ entries charged to it
 * @credit_pct: percentage of each queue's entries one function may hold
 *	while it shares the engine (shca_func.c)
 * @nqp: QP numbers of the engine, shared by its functions: a QPN is below
 *	it.  A QP's queue index (shca_qp.idx) is its QPN, but a function's
 *	GSI QP (QPN 1 on every function) has index @nqp + function
 * @qp_xa: QPs by queue index; a lookup takes the QP's reference under
 *	the xarray's lock (shca_qp_get_idx())
 * @qpn_next: where the next QPN search starts (cyclic allocation, under
 *	@qp_xa's lock)
 * @qp_serial: the last QP serial number handed out (shca_qp.serial)
 * @mc_groups: multicast groups with members now (written by shca_mcg.c;
 *	multicast sends loop a copy back only when nonzero)
 * @handoffs: receive drains moved to another CPU (engine-wide counter)
 * @db_polls: passes of the transmit stage over watched rings (counter)
 * @flags: SHCA_ENG_RX_RUNNING: a context is draining the receive LLQ;
 *	SHCA_ENG_RX_IPI: a hand-off's IPI is on its way (set by the owner
 *	of RX_RUNNING, cleared by the IPI handler)
 * @rx_lock: protects @rx_llq and @mc_llq (taken in softirq)
 * @rx_llq: received packets by destination QPN; payload w[0] = skb
 * @mc_llq: copies of multicast packets by member QPN (shca_mcrep.c), as
 *	many as the replication's credit; payload w[0] = skb, w[1] =
 *	SHCA_RXD_MCAST and the member's cookie
 * @tx_lock: protects @tx_llq; nests inside qp->lock
 * @tx_llq: send WQEs by QPN; payload w[0] = SQ index; peeked to
 *	transmit, ready once acknowledged (or failed), popped to complete
 * @sched_lock: protects @sched and shca_qp.scheduled
 * @sched: QPs with packets to transmit, served round robin
 * @poll_lock: protects @poll, @poll_len and shca_qp_db.node; taken
 *	with BH disabled, may nest inside qp->lock
 * @poll: user QPs whose send rings the transmit stage watches
 *	(shca_doorbell.c); the list holds a QP reference per entry
 * @poll_len: entries on @poll
 * @poll_timer: runs the transmit stage again while QPs linger and the
 *	stage could not spin
 * @poll_tick: the timer's current period in ns (transmit stage only)
 * @spin_until: ktime (ns) until which the stage may spin on lingering
 *	rings (transmit stage only)
 * @timer_polling: the transmit stage could not spin on the lingering
 *	rings and polls them from @poll_timer: a post found now, by its next
 *	pass or first by the receive path, was found late (shca_doorbell.c).
 *	Written by the stage only, read by shca_db_poll() and
 *	shca_db_taken()
 * @rx_work: continues receive processing past a softirq's budget
 * @tx_worker: the transmit stage's kernel thread, bound to @tx_cpu, at
 *	nice shca_tx_nice: spinning processes (pollers) on that CPU must not
 *	get an equal share of it
 * @tx_work: the transmit stage
 * @rx_tasklet: a receive drain handed off to another CPU
 * @rx_csd: the IPI that starts @rx_tasklet there
 * @tx_cpu: CPU the transmit stage runs on: packets of one QP leave from
 *	one CPU, so a netdev that queues per CPU (veth) keeps their order
 * @rx_cpu: CPU the receive stage moves to when a stream of data or
 *	requests arrives on another CPU (shca_rx_target()); equal to
 *	@tx_cpu on a machine with one CPU, which turns that hand-off off
 * @tx_active: the transmit stage is running (written by it; read by
 *	shca_rx() to send ACKs to @tx_cpu)
 * @rx_mem: the memory of @rx_llq (its entries and lists)
 * @tx_mem: the memory of @tx_llq
 * @mc_mem: the memory of @mc_llq
 * @mcg: multicast groups and the replication stage (shca_mcg.c,
 *	shca_mcrep.c)
 * @mc_worker: the replication stage's thread (shca_mcrep.c)
 * @txc: how many @tx_llq entries a QP, a user context and all user
 *	contexts may hold (shca_txcredit.c)
 * @mc_work: the replication stage: copies multicast packets onto
 *	@mc_llq and delivers the copies
 */
struct shca_engine {
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct list_head node;
	u32 users;
	struct shca_dev __rcu *funcs[SHCA_MAX_FUNCS];
	u32 credit_pct;
	u32 nqp;
	struct xarray qp_xa;
	u32 qpn_next;
	atomic64_t qp_serial;
	atomic_t mc_groups;
	atomic64_t handoffs;
	atomic64_t db_polls;
	unsigned long flags;
	spinlock_t rx_lock;
	struct shca_llq rx_llq;
	struct shca_llq mc_llq;
	spinlock_t tx_lock;
	struct shca_llq tx_llq;
	spinlock_t sched_lock;
	struct list_head sched;
	spinlock_t poll_lock;
	struct list_head poll;
	u32 poll_len;
	struct hrtimer poll_timer;
	u64 poll_tick;
	u64 spin_until;
	bool timer_polling;
	struct work_struct rx_work;
	struct kthread_worker *tx_worker;
	struct kthread_work tx_work;
	struct tasklet_struct rx_tasklet;
	call_single_data_t rx_csd;
	int tx_cpu;
	int rx_cpu;
	bool tx_active;
	void *rx_mem;
	void *tx_mem;
	void *mc_mem;
	struct shca_mcg_table mcg;
	struct kthread_worker *mc_worker;
	struct kthread_work mc_work;
	struct shca_txc txc;
};

int shca_engine_init(void);
void shca_engine_exit(void);
struct shca_engine *shca_engine_create(struct net_device *ndev, u32 nqp);
void shca_engine_destroy(struct shca_engine *eng);
void shca_engine_schedule(struct shca_qp *qp);
void shca_engine_post(struct shca_qp *qp);
void shca_engine_resume(struct shca_qp *qp);
void shca_engine_post_kernel(struct shca_qp *qp, bool staged);
void shca_engine_unschedule(struct shca_qp *qp);
void shca_engine_drop_qp(struct shca_engine *eng, u32 qpn);
void shca_engine_flush_tx(struct shca_dev *sdev);
void shca_engine_update_stats(struct shca_dev *sdev);
void shca_engine_count_tx(u8 op);
unsigned int shca_engine_tx_round(void);
void shca_engine_try_inline(struct shca_qp *qp);
void shca_engine_send_posted(struct shca_qp *qp);
enum shca_db_next shca_engine_leftover(struct shca_qp *qp, bool ring);
void shca_engine_follow(struct shca_qp *qp, enum shca_db_next next);

#endif /* SHCA_ENGINE_H */
