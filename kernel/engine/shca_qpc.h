/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca QP context: what the engine keeps per QP (its state, requester,
 * completer and responder state, the kernel copies of its send WQEs).
 * The verbs create it (shca_qp.c); the engine runs it.
 */
#ifndef SHCA_QPC_H
#define SHCA_QPC_H

#include <linux/hrtimer.h>
#include <linux/spinlock.h>
#include <linux/refcount.h>
#include <linux/completion.h>
#include <net/dst_cache.h>
#include "shca_ring.h"
#include "shca_rqe.h"
#include "shca_cqe.h"
#include "shca_av.h"
#include "shca_mem.h"
#include "shca_hdr.h"
#include "shca_doorbell.h"
#include "shca_txhist.h"
#include "shca_rkey.h"
#include "shca_txcredit.h"
#include "shca_kpost.h"

/* user QPNs: SHCA_FIRST_QPN..shca_max_qp - 1; QPN 1 is the GSI QP */
#define SHCA_FIRST_QPN		16
#define SHCA_MAX_RD_ATOMIC	128
#define SHCA_MAX_UNACKED_PKTS	128	/* requester window */
#define SHCA_MAX_MSG_SIZE	(1U << 31)
#define SHCA_GSI_QKEY		0x80010000
#define SHCA_TX_BUDGET		32	/* packets per QP per scheduling turn */
#define SHCA_TXHIST_DEPTH	256	/* transmit history records per QP, at most */

/* shca_send_wqe.state */
enum shca_wqe_state {
	SHCA_WQE_QUEUED,	/* fetched, not started */
	SHCA_WQE_STARTED,	/* has a transmit history record */
	SHCA_WQE_DONE,		/* status final: may complete in order */
};

/**
 * struct shca_send_wqe - validated kernel copy of a send WQE
 * @wr_id: returned in the completion
 * @opcode: enum ib_wr_opcode (equal to ib_uverbs_wr_opcode where both exist)
 * @flags: SHCA_SQE_F_*
 * @state: enum shca_wqe_state
 * @status: completion status once DONE
 * @num_sge: SGEs in @sge (0 for inline: @inline_data holds @length bytes)
 * @signal: a successful completion is reported (set at fetch, then by
 *	the transmit history record when it retires)
 * @length: payload bytes of the message
 * @entry: TX LLQ entry id
 * @ex: immediate data (network order) or rkey to invalidate
 * @dm_range: 1 + the index of the device-memory range armed for a DRDMA
 *	WRITE that the message's data comes from (it waits for the range's
 *	packet side), 0 for none (shca_drdma.c)
 * @dm_gen: that range's allocation generation
 * @u: opcode specific
 * @sge: the SGE list (kernel copy)
 * @inline_data: the inline payload (kernel copy), in place of @sge
 *
 * What a sent message's packets are made of (PSNs, segment size, offsets)
 * is in its transmit history record (struct shca_txhist_rec), not here;
 * the WQE copy supplies the data (SGEs, inline bytes) and addresses.
 */
struct shca_send_wqe {
	u64 wr_id;
	u8 opcode;
	u8 flags;
	u8 state;
	u8 status;
	u16 num_sge;
	bool signal;
	u32 length;
	u32 entry;
	u32 ex;
	u32 dm_range;
	u32 dm_gen;
	union {
		struct {
			u64 va;
			u32 rkey;
		} rdma;
		struct {
			u64 va;
			u64 compare_add;
			u64 swap;
			u32 rkey;
		} atomic;
		struct {
			u64 va;
			u64 value;
			u32 rkey;
		} atomic_write;
		struct {
			u64 va;
			u32 rkey;
			u32 length;
			u8 type;
			u8 level;
		} flush;
		struct {
			struct shca_av av;
			u32 remote_qpn;
			u32 remote_qkey;
		} ud;
		struct {
			struct ib_mr *mr;
			u32 key;
			int access;
		} reg;
		struct shca_bind_wr bind;
	} u;
	union {
		DECLARE_FLEX_ARRAY(struct shca_sge, sge);
		DECLARE_FLEX_ARRAY(u8, inline_data);
	};
};

/**
 * struct shca_rd_res - responder resource: one RDMA READ or ATOMIC the
 * responder accepted, kept to answer it (again, for a duplicate)
 * @valid: in use
 * @atomic: ATOMIC (else READ)
 * @first_psn: PSN of the request
 * @last_psn: PSN of the last response
 * @va: remote address (READ: of the first byte)
 * @rkey: R_Key of the request
 * @length: READ length
 * @orig: ATOMIC: the value before the operation
 * @next_psn: next response PSN to send
 * @pending: responses to send
 * @sent: all its responses went out once (pending again: for a duplicate)
 * @mtu: READ: segment size of the responses, the path MTU when the
 *	request was accepted (a duplicate is answered the same way)
 */
struct shca_rd_res {
	bool valid;
	bool atomic;
	bool pending;
	bool sent;
	u32 mtu;
	u32 first_psn;
	u32 last_psn;
	u64 va;
	u32 rkey;
	u32 length;
	u64 orig;
	u32 next_psn;
};

/**
 * struct shca_req - requester state (caller must hold qp->lock)
 * @psn: PSN the next new message starts at
 * @fetch: next SQ ring index to copy out
 * @comp: oldest WQE not completed (the published ring consumer index)
 * @una_psn: oldest PSN still owed an answer (an ACK, or a READ/ATOMIC
 *	response): retransmission starts here
 * @ack_psn: oldest PSN no acknowledgement covers yet (ACKs and NAKs
 *	cover what precedes their PSN; a response covers its own PSN); a
 *	READ/ATOMIC whose responses are missing holds @una_psn below it
 * @rd_atomic: READ/ATOMIC records in the history
 * @hist: transmit history: one record per started message
 * @hist_mem: its record array
 * @cur_valid: @cur names the next packet to build; false: the next
 *	packet is the first of a new message
 * @cur: transmit cursor: a packet of a history record
 * @pend_valid: @pend holds a WQE taken from the TX LLQ (peek) but not
 *	started yet (fence, READ/ATOMIC limit, window, history full)
 * @pend: its SQ index
 * @retry: retries left before RETRY_EXC_ERR
 * @rnr_retry: RNR retries left (7 = infinite)
 * @need_retry: replay from @una_psn before anything new
 * @retrying: a retry was counted and no progress has been made since:
 *	further sequence NAKs of the same episode do not count again
 * @rnr_wait: waiting out an RNR NAK timer
 * @timer: ACK timeout / RNR wait.  It is not stopped when the last
 *	packet is acknowledged: a running timer whose deadline has not come
 *	(or with nothing to wait for) only re-arms itself or ends, which
 *	spares a start and a cancel per message.
 * @timeout_ns: local ACK timeout, 0 = none
 * @ack_armed: @ack_deadline covers the packets in flight (the timer is
 *	queued or about to run)
 * @ack_deadline: ktime (ns) at which the ACK timeout expires, from the
 *	coarse clock (shca_req_arm_timer())
 * @held: a doorbell call has built packets of this requester that it has
 *	not sent yet (shca_engine_post()): until it has, the requester
 *	reports no work, so no other context sends any after them
 * @flush_rxe: FLUSHes go with rdma_rxe's form of the ICRC
 *	(shca_pkt_icrc_rxe()); a FLUSH sent again because it was not
 *	answered tries the other form, and the last one tried stays
 */
struct shca_req {
	u32 psn;
	u32 fetch;
	u32 comp;
	u32 una_psn;
	u32 ack_psn;
	u32 rd_atomic;
	struct shca_txhist hist;
	struct shca_txhist_rec *hist_mem;
	bool cur_valid;
	struct shca_txhist_pos cur;
	bool pend_valid;
	u32 pend;
	int retry;
	int rnr_retry;
	bool need_retry;
	bool retrying;
	bool rnr_wait;
	struct hrtimer timer;
	u64 timeout_ns;
	bool ack_armed;
	u64 ack_deadline;
	bool held;
	bool flush_rxe;
};

/**
 * struct shca_ack - a positive ACK decided under qp->lock, sent after it
 * @valid: there is one
 * @psn: PSN it acknowledges
 * @syndrome: its AETH syndrome
 * @msn: its AETH MSN
 */
struct shca_ack {
	bool valid;
	u32 psn;
	u8 syndrome;
	u32 msn;
};

/**
 * struct shca_resp - responder state (caller must hold qp->lock)
 * @epsn: expected PSN
 * @msn: message sequence number
 * @nak_sent: a sequence NAK for @epsn went out already
 * @in_send: a multi-packet SEND is being received into @rwqe
 * @rwqe: receive WQE of the message being received
 * @rwqe_kept: @rwqe was taken for a UC message that was dropped before
 *	its end; the next message is received into it (a dropped UC message
 *	consumes no receive WQE)
 * @recv_off: bytes placed into @rwqe
 * @in_write: a multi-packet RDMA WRITE is in progress
 * @wr_va: its next address
 * @wr_rkey: its R_Key
 * @wr_resid: bytes still to come
 * @wr_len: its total length (the RETH DMA length)
 * @wr_slot: its R_Key slot (shca_rkey.c), -1 when it holds none
 * @seg: segment size of the multi-packet SEND/WRITE in progress (the
 *	payload of its FIRST packet)
 * @mtu_seen: path MTUs (bit 1 << enum ib_mtu) the QP has had since RTR:
 *	a message the requester cut before a path MTU change may be
 *	retransmitted with its old segment size
 * @se: the packet being processed asked for a solicited event
 * @ack_pending: an ACK for @ack_psn is owed
 * @nak_pending: a sequence or RNR NAK (@nak_psn, @nak_syn) waits behind
 *	READ/ATOMIC responses still to be sent
 * @ack_psn: PSN the owed ACK acknowledges: the last SEND/WRITE packet
 *	accepted (an ACK never carries the PSN of a READ/ATOMIC request)
 * @nak_syn: the waiting NAK's AETH syndrome
 * @nak_psn: the PSN the waiting NAK names
 * @fatal_pending: a request failed (NAK @fatal_code for @fatal_psn)
 *	while READ/ATOMIC responses were owed to earlier ones: no request is
 *	taken any more, those responses go, then the NAK, then the QP
 *	enters the error state
 * @fatal_code: the waiting fatal NAK's code (enum shca_nak_code)
 * @fatal_psn: the failed request's PSN
 * @res: READ/ATOMIC resources, used round robin
 * @res_next: next slot of @res to use
 * @res_out: slots with responses still to send
 * @rd_res: the READ resource whose responses hold the R_Key slot
 *	@rd_slot (responses are built from one resource at a time; another
 *	one taking over closes it, and it opens again, with a full check,
 *	when its responses resume); NULL when none does
 * @rd_slot: that slot, -1 when none
 * @rsp_sent: READ response and ATOMIC acknowledgement packets sent (wraps;
 *	shca_rx_one() compares two readings)
 * @sends: SEND messages received whole (wraps); written with WRITE_ONCE()
 *	under qp->lock, read without it by a kernel QP's post
 *	(shca_kpost_pick())
 * @ack_defer: where the ACK the packet being received earns is left, for
 *	shca_rx_one() to build and send after dropping qp->lock; NULL: ACKs
 *	are sent at once
 * @ack_out: such an ACK is being built and sent, without qp->lock, from
 *	@av and @attr.dest_qp_num: shca_resp_ack_wait() keeps them until it
 *	is gone.  Set under qp->lock, cleared (release) without it.
 * @ack_wq: shca_resp_ack_wait() sleeps here while @ack_out is set; the
 *	ACK's sender wakes it
 * @flight: response packets (ACK/NAK, READ response, ATOMIC
 *	acknowledgement) on their way (low 32 bits) and the CPU they left
 *	from (high 32 bits); a QP reference while not 0.  Raised under
 *	qp->lock (shca_resp_flight_take()), lowered without it by the
 *	packets' skb destructor.
 * @flight_wait: a response waits for @flight to drop to 0; the
 *	destructor that drops it schedules the QP.  Set under qp->lock,
 *	cleared by that destructor.
 * @held_skb: fault injection (shca_fault.h, SHCA_HOLD_XMIT): a READ
 *	response set aside before it leaves; no other response leaves
 *	while it is held.  A QP reference while not NULL.
 * @held_timer: sends @held_skb when the hold ends
 */
struct shca_resp {
	u32 epsn;
	u32 msn;
	bool nak_sent;
	bool in_send;
	struct shca_recv_wqe *rwqe;
	bool rwqe_kept;
	u32 recv_off;
	bool in_write;
	u64 wr_va;
	u32 wr_rkey;
	u32 wr_resid;
	u32 wr_len;
	int wr_slot;
	u32 seg;
	u8 mtu_seen;
	bool se;
	bool ack_pending;
	u32 ack_psn;
	bool nak_pending;
	u8 nak_syn;
	u32 nak_psn;
	bool fatal_pending;
	u8 fatal_code;
	u32 fatal_psn;
	struct shca_rd_res res[SHCA_MAX_RD_ATOMIC];
	u32 res_next;
	u32 res_out;
	struct shca_rd_res *rd_res;
	int rd_slot;
	u32 rsp_sent;
	u32 sends;
	struct shca_ack *ack_defer;
	bool ack_out;
	wait_queue_head_t ack_wq;
	atomic64_t flight;
	atomic_t flight_wait;
	struct sk_buff *held_skb;
	struct hrtimer held_timer;
};

/**
 * struct shca_qp - queue pair
 * @ibqp: RDMA core QP
 * @sdev: device
 * @lock: protects everything below that changes after creation; taken
 *	with BH disabled (the receive path runs in softirq)
 * @ref: references from lookups (qp_xa under RCU); the last put
 *	completes @done
 * @done: destroy waits for it
 * @qpn: QP number
 * @idx: its queue index on the engine (shca_qp_idx())
 * @serial: number unique on the engine and never reused (QPNs are): a
 *	type 2 memory window names the QP it is bound to by it
 * @type: IB_QPT_RC, UC, UD or GSI
 * @user: rings belong to a process (untrusted)
 * @state: QP state
 * @pd: protection domain
 * @scq: send CQ
 * @rcq: receive CQ
 * @srq: shared receive queue or NULL
 * @sq: send ring
 * @rq: receive ring (unused with an SRQ)
 * @rq_lock: consumer side of @rq (kernel post_recv produces under it too)
 * @sq_lock: kernel post_send producer side of @sq
 * @wqe: kernel copies of the send WQEs, one per @sq slot
 * @wqe_stride: bytes per @wqe element
 * @max_send_sge: SGE limit of send WQEs
 * @max_recv_sge: SGE limit of receive WQEs
 * @max_inline: inline data limit
 * @sq_sig_all: every send WQE completes
 * @attr: attributes (path MTU, PSNs, keys, timers, access, limits)
 * @av: primary path (RC/UC)
 * @route: route to @av's destination, cached by shca_pkt_xmit(); per CPU
 *	and used with BHs off, so also by an ACK sent without @lock
 *	(shca_resp_ack_send()); reset when @av changes
 * @req: requester
 * @resp: responder
 * @rkeys: the R_Key slots of the responder's RDMA operations in flight
 *	(shca_rkey.c); on its PD's shca_pd.rkey_sets for RC and UC QPs
 * @sched_node: entry in the engine's list of QPs with work to transmit
 * @scheduled: on that list (under the engine's sched_lock)
 * @db: a user QP's send doorbell state (shca_doorbell.h)
 * @last_wqe_work: delivers IB_EVENT_QP_LAST_WQE_REACHED when a QP on an
 *	SRQ enters the error state (shca_wq.c)
 * @mc_list: the multicast groups the QP is attached to (struct
 *	shca_mcg_att, under the engine's shca_mcg_table.lock)
 * @mc_block_self: created with IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK: no
 *	copy of its own multicast packets
 * @dm_wait: entry in the waiter list of the device-memory range its next
 *	send WQE waits for (shca_drdma.c; under the window's lock); empty
 *	when it waits for none
 * @dm_wait_idx: that range's index (valid while @dm_wait is listed)
 * @txc: its transmit credits (shca_txcredit.c)
 * @kpost: a kernel QP's choice between sending its posts from the
 *	poster's context and the transmit stage (shca_kpost.h); under
 *	@sq_lock
 */
struct shca_qp {
	struct ib_qp ibqp;
	struct shca_dev *sdev;
	spinlock_t lock;
	refcount_t ref;
	struct completion done;
	u32 qpn;
	u32 idx;
	u64 serial;
	enum ib_qp_type type;
	bool user;
	enum ib_qp_state state;
	struct shca_pd *pd;
	struct shca_cq *scq;
	struct shca_cq *rcq;
	struct shca_srq *srq;
	struct shca_ring sq;
	struct shca_ring rq;
	spinlock_t rq_lock;
	spinlock_t sq_lock;
	u8 *wqe;
	u32 wqe_stride;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_inline;
	bool sq_sig_all;
	struct ib_qp_attr attr;
	struct shca_av av;
	struct dst_cache route;
	struct shca_req req;
	struct shca_resp resp;
	struct shca_rkey_set rkeys;
	struct list_head sched_node;
	bool scheduled;
	struct shca_qp_db db;
	struct work_struct last_wqe_work;
	struct list_head mc_list;
	bool mc_block_self;
	struct list_head dm_wait;
	u32 dm_wait_idx;
	struct shca_txc_qp txc;
	struct shca_kpost kpost;
};

/*
 * For lockdep_assert() in code that builds or sends a QP's packets: it
 * holds qp->lock, or it is the sender of a deferred ACK (resp.ack_out),
 * which needs no lock (shca_resp_ack_send()).
 */
#define shca_qp_may_tx(qp) \
	(lockdep_is_held(&(qp)->lock) || READ_ONCE((qp)->resp.ack_out))

static inline struct shca_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct shca_qp, ibqp);
}

static inline struct shca_send_wqe *shca_qp_wqe(struct shca_qp *qp, u32 idx)
{
	return (struct shca_send_wqe *)(qp->wqe +
		(size_t)(idx & qp->sq.mask) * qp->wqe_stride);
}

static inline u32 shca_qp_mtu(struct shca_qp *qp)
{
	return ib_mtu_enum_to_int(qp->attr.path_mtu);
}

#endif /* SHCA_QPC_H */
