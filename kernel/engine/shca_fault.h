/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca fault injection for tests (debugfs shca/fault/), off by default.
 *
 * A hold point stops one packet for a set time at a chosen place of the
 * data path, so that a test can put an invalidation exactly into that
 * window (Documentation/testing.md, invalidation.sh).  While nothing is
 * armed a hold point is a static branch that is never taken.
 */
#ifndef SHCA_FAULT_H
#define SHCA_FAULT_H

#include <linux/jump_label.h>

struct dentry;

/* where a hold point sits (debugfs fault/rkey_hold_at) */
enum shca_hold_at {
	/*
	 * an RDMA WRITE packet, READ response or ATOMIC between the check of
	 * its R_Key slot and its access to the memory (the slot lock held)
	 */
	SHCA_HOLD_COPY = 0,
	/* a READ response built, before it is handed to the network */
	SHCA_HOLD_XMIT = 1,
	/* a QP lookup by queue index, between finding the QP and taking
	 * its reference (shca_qp_get_idx())
	 */
	SHCA_HOLD_LOOKUP = 2,
	/* a deferred ACK, sent with no QP lock held (shca_resp_ack_send()) */
	SHCA_HOLD_ACK = 3,
};

DECLARE_STATIC_KEY_FALSE(shca_fault_armed);

bool shca_fault_take(enum shca_hold_at at, u32 *ms);
void shca_fault_hold_done(void);
void shca_fault_hold(enum shca_hold_at at);

/**
 * shca_fault_point - a hold point
 * @at: which one
 *
 * Busy-waits for the armed time if this is the packet the armed hold
 * waits for; otherwise returns at once.  Any context.
 */
static inline void shca_fault_point(enum shca_hold_at at)
{
	if (static_branch_unlikely(&shca_fault_armed))
		shca_fault_hold(at);
}

void shca_fault_init(struct dentry *parent);
void shca_fault_exit(void);

#endif /* SHCA_FAULT_H */
