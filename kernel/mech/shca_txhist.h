/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Transmit history: retransmission and completion.
 *
 * Per QP, a bounded FIFO of records, one per message whose first packet
 * was built.  A record holds what the requester needs to rebuild any of
 * the message's packets after a loss and to decide its completion without
 * going back to the send queue: the WQE index (the kernel's validated copy
 * keeps the SGEs and remote address), the opcode, the first and last PSN,
 * the message sequence number, the path MTU the message was segmented
 * with, how far its first transmission got (byte offset) and whether a
 * completion is owed.  For an RDMA READ the PSN range is the range of its
 * responses; an ATOMIC takes one PSN.
 *
 * The requester pushes a record when it builds a message's first packet;
 * acknowledgements retire records from the oldest, in order, by PSN, and
 * the caller completes what was retired; a sequence NAK or a timeout
 * replays from the record holding the lost PSN, resegmenting with the MTU
 * recorded there (not the current path MTU).
 *
 * Records are named by ids: a 31-bit counter that grows by one per push.
 * An id stays valid until its record is retired, popped or flushed; a
 * stale id is refused, never misread.  The records of one history are
 * contiguous in PSN space: each starts right after the previous one ends.
 *
 * Pure C (see shca_pure.h): no kernel calls, no allocation after
 * shca_txhist_init() (the caller supplies the record array), no locking
 * (the caller serialises every call on one history; in the module that
 * is qp->lock).  Every loop is bounded by the capacity, every id and the
 * FIFO's own indices are checked before use.
 */
#ifndef SHCA_TXHIST_H
#define SHCA_TXHIST_H

#include "shca_pure.h"
#include "shca_hdr.h"

/* Error codes (negative); errno values in the module, as for the LLQ. */
#if defined(__KERNEL__) && defined(EUCLEAN)
#define SHCA_TXH_EINVAL		(-EINVAL)
#define SHCA_TXH_ENOENT		(-ENOENT)
#define SHCA_TXH_EFULL		(-ENOSPC)
#define SHCA_TXH_ERANGE		(-ERANGE)
#define SHCA_TXH_E2BIG		(-E2BIG)
#define SHCA_TXH_ECORRUPT	(-EUCLEAN)
#else
#define SHCA_TXH_EINVAL		(-22)	/* bad argument or record */
#define SHCA_TXH_ENOENT		(-2)	/* no such record / PSN not held */
#define SHCA_TXH_EFULL		(-28)	/* every record slot is in use */
#define SHCA_TXH_ERANGE		(-34)	/* PSN not contiguous with the FIFO */
#define SHCA_TXH_E2BIG		(-7)	/* PSN span of the FIFO too large */
#define SHCA_TXH_ECORRUPT	(-117)	/* the FIFO's own state is bad */
#endif

#define SHCA_TXH_MAX_CAP	(1u << 16)
#define SHCA_TXH_MIN_MTU	256
#define SHCA_TXH_MAX_MTU	4096
/*
 * Most PSNs the records of one history may span: well inside half the
 * 24-bit PSN space, so that PSN comparisons (shca_psn_diff()) stay exact.
 */
#define SHCA_TXH_MAX_SPAN	(1u << 22)
#define SHCA_TXH_ID_MASK	0x7fffffffu

/* record flags */
#define SHCA_TXH_F_SIGNALED	0x01	/* a completion is owed on retire */
#define SHCA_TXH_F_READ		0x02	/* RDMA READ: PSNs are its responses */
#define SHCA_TXH_F_ATOMIC	0x04	/* ATOMIC: answered by an atomic ACK */
#define SHCA_TXH_F_BUILT	0x08	/* every packet was built at least once */
#define SHCA_TXH_F_REPLY	(SHCA_TXH_F_READ | SHCA_TXH_F_ATOMIC)

/* shca_txhist_retire() flags */
#define SHCA_TXH_RETIRE_REPLY	0x01	/* READ/ATOMIC records may retire */

/**
 * struct shca_txhist_rec - one transmit history record
 * @wqe: index of the message's send WQE (the caller's send queue index)
 * @first_psn: PSN of the first packet (READ: of the first response)
 * @last_psn: PSN of the last packet (READ: of the last response)
 * @msn: message sequence number: messages pushed before this one since
 *	the last shca_txhist_reset(), modulo 2^24
 * @length: message length in bytes
 * @offset: bytes of the message built at least once: where its first
 *	transmission stands (READ/ATOMIC: @length once the request left)
 * @mtu: segment size the message was cut with (256..4096, a power of 2)
 * @opcode: the caller's opcode (opaque to the FIFO)
 * @flags: SHCA_TXH_F_*
 */
struct shca_txhist_rec {
	u32 wqe;
	u32 first_psn;
	u32 last_psn;
	u32 msn;
	u32 length;
	u32 offset;
	u16 mtu;
	u8 opcode;
	u8 flags;
};

/**
 * struct shca_txhist_pos - one packet of the history: where a transmit
 * cursor stands
 * @id: record
 * @psn: PSN of the packet
 * @off: byte offset of its payload in the message (READ: where the
 *	response with this PSN lands, and where a request sent with this
 *	PSN starts reading)
 * @len: its payload length (READ: the bytes a request sent with this
 *	PSN asks for; ATOMIC: 0)
 */
struct shca_txhist_pos {
	u32 id;
	u32 psn;
	u32 off;
	u32 len;
};

/**
 * struct shca_txhist_stats - counters of one history
 * @used: records held now
 * @hwm: high-water mark of @used
 * @pushed: records pushed
 * @retired: records retired by acknowledgements
 * @popped: records removed by shca_txhist_pop() (failed messages)
 * @flushed: records dropped by flush or reset
 * @replays: replays started (shca_txhist_replay() that found a record)
 * @refused: pushes refused (full, PSN gap, span, bad record)
 * @invalid: calls rejected for a bad argument or a stale id
 * @corrupt: calls that found the FIFO's own state inconsistent
 */
struct shca_txhist_stats {
	u32 used;
	u32 hwm;
	u64 pushed;
	u64 retired;
	u64 popped;
	u64 flushed;
	u64 replays;
	u64 refused;
	u64 invalid;
	u64 corrupt;
};

/**
 * struct shca_txhist - one history; the record array is the caller's
 * @rec: @cap record slots
 * @cap: capacity (1..SHCA_TXH_MAX_CAP)
 * @head: id of the oldest record
 * @head_slot: its slot in @rec
 * @count: records held
 * @msn: MSN the next record gets
 * @stats: counters
 */
struct shca_txhist {
	struct shca_txhist_rec *rec;
	u32 cap;
	u32 head;
	u32 head_slot;
	u32 count;
	u32 msn;
	struct shca_txhist_stats stats;
};

/**
 * shca_txhist_init() - set up an empty history
 * @h: the history
 * @mem: @cap records of caller memory, used until the history is dropped
 * @cap: capacity, 1..SHCA_TXH_MAX_CAP
 *
 * Return: 0 or SHCA_TXH_EINVAL.
 */
int shca_txhist_init(struct shca_txhist *h, struct shca_txhist_rec *mem,
		     u32 cap);

/**
 * shca_txhist_npkts() - packets (PSNs) a message takes
 * @length: message length in bytes
 * @mtu: segment size
 *
 * Return: max(1, ceil(@length / @mtu)), or 0 if @mtu is not a valid MTU.
 */
u32 shca_txhist_npkts(u32 length, u32 mtu);

/**
 * shca_txhist_push() - add the record of a message whose first packet is
 * being built
 * @h: the history
 * @r: the record: @wqe, @first_psn, @last_psn, @length, @mtu, @opcode and
 *	the SIGNALED/READ/ATOMIC flags are used; @msn and @offset are set
 *	by the history, BUILT starts clear
 * @id: receives the record's id
 *
 * @r->last_psn must be @r->first_psn + shca_txhist_npkts() - 1 (an ATOMIC
 * is one packet), and @r->first_psn must follow the newest record's last
 * PSN.
 *
 * Return: 0; SHCA_TXH_EFULL when every slot is used, SHCA_TXH_E2BIG when
 * the records would span more than SHCA_TXH_MAX_SPAN PSNs (both clear as
 * records retire), SHCA_TXH_ERANGE for a PSN gap, SHCA_TXH_EINVAL for an
 * inconsistent record, SHCA_TXH_ECORRUPT.
 */
int shca_txhist_push(struct shca_txhist *h, const struct shca_txhist_rec *r,
		     u32 *id);

/**
 * shca_txhist_get() - look a record up by id
 * @h: the history
 * @id: record id
 *
 * Return: the record, or NULL when @id is not held (retired, popped,
 * flushed or never pushed).  The record stays valid until the next call
 * that removes records.
 */
const struct shca_txhist_rec *shca_txhist_get(const struct shca_txhist *h,
					      u32 id);

/**
 * shca_txhist_oldest() - id of the oldest record
 * @h: the history
 * @id: receives it
 *
 * Return: 0, SHCA_TXH_ENOENT when empty, or SHCA_TXH_ECORRUPT.
 */
int shca_txhist_oldest(const struct shca_txhist *h, u32 *id);

/**
 * shca_txhist_newest() - id of the newest record
 * @h: the history
 * @id: receives it
 *
 * Return: 0, SHCA_TXH_ENOENT when empty, or SHCA_TXH_ECORRUPT.
 */
int shca_txhist_newest(const struct shca_txhist *h, u32 *id);

/**
 * shca_txhist_find() - the record holding a PSN
 * @h: the history
 * @psn: packet sequence number (24 bits)
 * @id: receives the record's id
 *
 * Binary search over the records (they are contiguous and in PSN order).
 *
 * Return: 0, SHCA_TXH_ENOENT when no record holds @psn, or
 * SHCA_TXH_ECORRUPT.
 */
int shca_txhist_find(const struct shca_txhist *h, u32 psn, u32 *id);

/**
 * shca_txhist_built() - note how far a record's first transmission got
 * @h: the history
 * @id: record
 * @offset: bytes of the message built at least once (never moves back;
 *	READ/ATOMIC: the request carries the whole message)
 * @all: every packet of the message was built
 *
 * Return: 0, SHCA_TXH_EINVAL (stale id, @offset beyond the length or
 * moving back, @all with an @offset short of the length, !@all after a
 * call with @all, or !@all with an @offset that is not a multiple of the
 * record's MTU), or SHCA_TXH_ECORRUPT.
 */
int shca_txhist_built(struct shca_txhist *h, u32 id, u32 offset, bool all);

/**
 * shca_txhist_frontier() - first PSN of a record not built yet
 * @r: the record
 *
 * Return: @r->last_psn + 1 once every packet was built, else the PSN of
 * the packet at @r->offset.
 */
u32 shca_txhist_frontier(const struct shca_txhist_rec *r);

/**
 * shca_txhist_retire() - remove the records an acknowledgement covers
 * @h: the history
 * @psn: every PSN up to and including it is acknowledged
 * @flags: SHCA_TXH_RETIRE_REPLY: READ and ATOMIC records may retire (a
 *	response came for them); without it they stop the retirement
 * @out: receives copies of the retired records, oldest first, or NULL
 * @max: most records to retire in this call
 *
 * Retires from the oldest record while its last PSN is at or before @psn,
 * it was built completely and (unless @flags allow it) it needs no
 * response.  The caller completes the retired records in order and calls
 * again while it gets @max of them.
 *
 * Return: records retired (0..@max), or SHCA_TXH_ECORRUPT.
 */
int shca_txhist_retire(struct shca_txhist *h, u32 psn, u32 flags,
		       struct shca_txhist_rec *out, u32 max);

/**
 * shca_txhist_pop() - remove the oldest record whatever its state
 * @h: the history
 * @out: receives a copy (may be NULL)
 *
 * For a message that failed: the caller completes it with an error.
 *
 * Return: 0, SHCA_TXH_ENOENT when empty, or SHCA_TXH_ECORRUPT.
 */
int shca_txhist_pop(struct shca_txhist *h, struct shca_txhist_rec *out);

/**
 * shca_txhist_pos_at() - the packet of a record with a given PSN
 * @h: the history
 * @id: record
 * @psn: a PSN of that record
 * @pos: receives the packet's position, computed with the record's MTU
 *
 * For a READ, @pos->off and @pos->len describe the request that asks for
 * the responses from @psn on; an ATOMIC has only its first PSN.
 *
 * Return: 0, SHCA_TXH_EINVAL (stale id, @psn outside the record) or
 * SHCA_TXH_ECORRUPT.
 */
int shca_txhist_pos_at(const struct shca_txhist *h, u32 id, u32 psn,
		       struct shca_txhist_pos *pos);

/**
 * shca_txhist_replay() - where a retransmission from a PSN starts
 * @h: the history
 * @psn: the first PSN to send again
 * @pos: receives the packet holding @psn (see shca_txhist_pos_at())
 *
 * Return: 0, SHCA_TXH_ENOENT when no record holds @psn, or
 * SHCA_TXH_ECORRUPT.
 */
int shca_txhist_replay(struct shca_txhist *h, u32 psn,
		       struct shca_txhist_pos *pos);

/**
 * shca_txhist_pos_next() - move a position to the next packet to build
 * @h: the history
 * @pos: a position of a record held; moved to the record's next packet,
 *	or to the first packet of the next record (a READ or ATOMIC request
 *	is one packet: its whole PSN range is passed)
 *
 * Return: 0; SHCA_TXH_ENOENT when @pos was the last packet of the newest
 * record (@pos is left as it was); SHCA_TXH_EINVAL when @pos does not
 * name a packet held; SHCA_TXH_ECORRUPT.
 */
int shca_txhist_pos_next(const struct shca_txhist *h,
			 struct shca_txhist_pos *pos);

/**
 * shca_txhist_flush() - drop every record (the QP failed or was reset)
 * @h: the history
 *
 * Ids handed out before stay invalid; new ones continue after them.
 *
 * Return: records dropped.
 */
u32 shca_txhist_flush(struct shca_txhist *h);

/**
 * shca_txhist_reset() - drop every record and restart the MSN at 0
 * @h: the history
 */
void shca_txhist_reset(struct shca_txhist *h);

/**
 * shca_txhist_check() - verify the history's invariants
 * @h: the history
 *
 * Every record: a valid MTU, a PSN range matching its length and MTU, an
 * offset within its length; consecutive records contiguous in PSN and
 * MSN; the whole span within SHCA_TXH_MAX_SPAN.  O(count).
 *
 * Return: 0 or SHCA_TXH_ECORRUPT.
 */
int shca_txhist_check(struct shca_txhist *h);

/**
 * shca_txhist_count() - records held
 * @h: the history
 *
 * Return: the count (0 if the state is corrupt).
 */
static inline u32 shca_txhist_count(const struct shca_txhist *h)
{
	return h->count <= h->cap ? h->count : 0;
}

/**
 * shca_txhist_full() - no record slot is free
 * @h: the history
 *
 * Return: true when a push would be refused for lack of room.
 */
static inline bool shca_txhist_full(const struct shca_txhist *h)
{
	return h->count >= h->cap;
}

#endif /* SHCA_TXHIST_H */
