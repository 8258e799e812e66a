/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Multicast replication: a group's member set and the flow control of the
 * replication stage.
 *
 * A received multicast packet's payload is held once.  The replication
 * stage walks a snapshot of its group's member set and injects one
 * descriptor per member QP into the normal receive pipeline; every
 * descriptor refers to the one payload.  The payload starts with one
 * reference (the packet's own); every copy but the last takes one more,
 * and the last copy is marked last and takes the packet's own reference,
 * so the payload is freed when the last descriptor is consumed and no
 * dummy copy is needed.  A packet that has no member to go to (the group
 * emptied, or its only member is the sending QP, which asked not to see
 * its own packets) gets no copy and its reference is the caller's to drop.
 *
 * Two counters keep multicast from crowding out unicast traffic:
 *  - the threshold counter: packets admitted and not yet fully replicated;
 *    at the threshold a new packet is dropped (and counted);
 *  - the credit counter: descriptors injected and not yet consumed; at the
 *    limit the stage stops injecting until consumed descriptors return
 *    their credit, and resumes where it stopped.
 *
 * Member sets are sorted arrays of (function, QPN) pairs, replaced whole
 * (copy on write): shca_mcast_add() and shca_mcast_del() write the new
 * set into memory the caller supplies, so readers of the old one (a packet
 * being replicated) are never disturbed.  A function is an underlying
 * function of the engine (a virtual HCA); QPNs are per function.
 *
 * Pure C (see shca_pure.h): no kernel calls, no allocation, no locking;
 * the caller serialises every call on one flow state, and every loop is
 * bounded by the set's size.
 */
#ifndef SHCA_MCAST_H
#define SHCA_MCAST_H

#include "shca_pure.h"

/* Error codes (negative); errno values in the module, as for the LLQ. */
#if defined(__KERNEL__) && defined(EUCLEAN)
#define SHCA_MC_EINVAL		(-EINVAL)
#define SHCA_MC_ENOENT		(-ENOENT)
#define SHCA_MC_EEXIST		(-EEXIST)
#define SHCA_MC_ENOSPC		(-ENOSPC)
#define SHCA_MC_EAGAIN		(-EAGAIN)
#define SHCA_MC_ENOBUFS		(-ENOBUFS)
#define SHCA_MC_ECORRUPT	(-EUCLEAN)
#else
#define SHCA_MC_EINVAL		(-22)	/* bad argument */
#define SHCA_MC_ENOENT		(-2)	/* not a member / no copy left */
#define SHCA_MC_EEXIST		(-17)	/* already a member */
#define SHCA_MC_ENOSPC		(-28)	/* the set is full */
#define SHCA_MC_EAGAIN		(-11)	/* out of credit: resume later */
#define SHCA_MC_ENOBUFS		(-105)	/* at the threshold: drop */
#define SHCA_MC_ECORRUPT	(-117)	/* a check failed */
#endif

/* Most members one set may hold (ids must fit in an int return value). */
#define SHCA_MC_MAX_MEMBERS	(1u << 24)

/* shca_mcast_member.flags */
#define SHCA_MC_BLOCK_SELF	0x1	/* no copy of this QP's own packets */
#define SHCA_MC_FLAGS		SHCA_MC_BLOCK_SELF

/**
 * struct shca_mcast_member - one member QP of a group
 * @qpn: the QP's number within its function
 * @func: the underlying function the QP belongs to
 * @flags: SHCA_MC_* flags
 * @cookie: the caller's, carried along (the module: the QP's serial
 *	number, so that a copy replicated from an old snapshot never reaches
 *	a later QP with the same number)
 */
struct shca_mcast_member {
	u32 qpn;
	u16 func;
	u16 flags;
	u32 cookie;
};

/**
 * struct shca_mcast_flow - the replication stage's flow control
 * @threshold: packets that may be admitted and not fully replicated
 * @credit: descriptors that may be in the receive pipeline at once
 * @pkts: packets admitted and not yet fully replicated
 * @descs: descriptors injected and not yet consumed
 * @admitted: packets admitted so far
 * @drop_threshold: packets dropped at the threshold
 * @copies: descriptors injected so far
 * @credit_stalls: times the stage stopped for credit with copies left
 */
struct shca_mcast_flow {
	u32 threshold;
	u32 credit;
	u32 pkts;
	u32 descs;
	u64 admitted;
	u64 drop_threshold;
	u64 copies;
	u64 credit_stalls;
};

/**
 * struct shca_mcast_src - who sent a packet, as far as the engine knows
 * @local: it came from a QP of this engine (same-host delivery)
 * @func: that QP's function (when @local)
 * @qpn: that QP's number (when @local)
 * @skip_funcs: bit f set: members of function f (below 32) get no copy
 *	(the packet arrived for other functions)
 */
struct shca_mcast_src {
	bool local;
	u16 func;
	u32 qpn;
	u32 skip_funcs;
};

/**
 * struct shca_mcast_rep - replication of one packet: a cursor over the
 * snapshot of its group's member set
 * @set: the snapshot (the caller keeps it alive until replication ends)
 * @n: its member count
 * @next: index of the next member to get a copy; @n when none is left
 * @copies: copies injected so far
 * @src: the sender
 */
struct shca_mcast_rep {
	const struct shca_mcast_member *set;
	u32 n;
	u32 next;
	u32 copies;
	struct shca_mcast_src src;
};

/**
 * shca_mcast_find() - look a member up in a set
 * @set: sorted member set
 * @n: its member count
 * @func: function of the QP
 * @qpn: the QP's number
 *
 * Return: the member's index, SHCA_MC_ENOENT if it is not in the set.
 */
int shca_mcast_find(const struct shca_mcast_member *set, u32 n, u16 func,
		    u32 qpn);

/**
 * shca_mcast_add() - the set with one member more
 * @set: sorted member set (may be NULL when @n is 0)
 * @n: its member count
 * @m: the new member
 * @out: memory for the new set, @cap members, not overlapping @set
 * @cap: members @out can hold
 *
 * Return: the new member count (@n + 1), SHCA_MC_EEXIST if the QP is
 * already a member (whatever its flags), SHCA_MC_ENOSPC if @out cannot
 * hold @n + 1 members, SHCA_MC_EINVAL for bad arguments or flags.
 */
int shca_mcast_add(const struct shca_mcast_member *set, u32 n,
		   const struct shca_mcast_member *m,
		   struct shca_mcast_member *out, u32 cap);

/**
 * shca_mcast_del() - the set with one member less
 * @set: sorted member set
 * @n: its member count
 * @func: function of the QP to remove
 * @qpn: its number
 * @out: memory for the new set, at least @n - 1 members (may be NULL when
 *	@n is 1), not overlapping @set
 * @cap: members @out can hold
 *
 * Return: the new member count (@n - 1), SHCA_MC_ENOENT if the QP is not
 * a member, SHCA_MC_ENOSPC if @out is too small, SHCA_MC_EINVAL for bad
 * arguments.
 */
int shca_mcast_del(const struct shca_mcast_member *set, u32 n, u16 func,
		   u32 qpn, struct shca_mcast_member *out, u32 cap);

/**
 * shca_mcast_flow_init() - set up the flow control
 * @f: flow state
 * @threshold: packets in replication at once (at least 1)
 * @credit: descriptors in the pipeline at once (at least 1)
 *
 * Return: 0, or SHCA_MC_EINVAL for a zero limit.
 */
int shca_mcast_flow_init(struct shca_mcast_flow *f, u32 threshold,
			 u32 credit);

/**
 * shca_mcast_admit() - a multicast packet arrives: admit it or not
 * @f: flow state
 *
 * Return: 0 when admitted (it counts against the threshold until
 * shca_mcast_rep_end()), SHCA_MC_ENOBUFS when the threshold is reached:
 * the caller drops the packet; the drop is counted.
 */
int shca_mcast_admit(struct shca_mcast_flow *f);

/**
 * shca_mcast_rep_start() - begin replicating an admitted packet
 * @r: the cursor
 * @set: snapshot of the group's member set (sorted)
 * @n: its member count
 * @src: the packet's sender
 */
void shca_mcast_rep_start(struct shca_mcast_rep *r,
			  const struct shca_mcast_member *set, u32 n,
			  const struct shca_mcast_src *src);

/**
 * shca_mcast_rep_next() - the next copy of the packet being replicated
 * @f: flow state
 * @r: the packet's cursor
 * @last: set to true when this copy is the last: it takes the packet's
 *	own payload reference; false: the caller takes one more reference
 *	for it
 *
 * A copy takes one credit, which shca_mcast_consumed() returns.
 *
 * Return: the index in the set of the member to inject a descriptor for;
 * SHCA_MC_EAGAIN when no credit is left (call again after some return);
 * SHCA_MC_ENOENT when no copy is left to make: if @r->copies is 0 no copy
 * was made at all and the payload reference is still the caller's.
 */
int shca_mcast_rep_next(struct shca_mcast_flow *f, struct shca_mcast_rep *r,
			bool *last);

/**
 * shca_mcast_rep_end() - a packet leaves replication (all its copies
 * were made, or it is given up): it no longer counts against the
 * threshold
 * @f: flow state
 *
 * Return: 0, or SHCA_MC_EINVAL (nothing changed) when no packet was in
 * replication.
 */
int shca_mcast_rep_end(struct shca_mcast_flow *f);

/**
 * shca_mcast_consumed() - a descriptor left the receive pipeline (its
 * copy was placed or dropped): its credit returns
 * @f: flow state
 *
 * Return: 0, or SHCA_MC_EINVAL (nothing changed) when no descriptor was
 * in the pipeline.
 */
int shca_mcast_consumed(struct shca_mcast_flow *f);

/**
 * shca_mcast_check_set() - check a member set's invariants
 * @set: member set
 * @n: its member count
 *
 * Return: 0 when it is sorted by (function, QPN) without duplicates and
 * every member's flags are known, SHCA_MC_ECORRUPT otherwise.
 */
int shca_mcast_check_set(const struct shca_mcast_member *set, u32 n);

/**
 * shca_mcast_check_flow() - check the flow state's invariants
 * @f: flow state
 *
 * Return: 0 when the counters are within their limits, SHCA_MC_ECORRUPT
 * otherwise.
 */
int shca_mcast_check_flow(const struct shca_mcast_flow *f);

#endif /* SHCA_MCAST_H */
