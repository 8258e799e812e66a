// SPDX-License-Identifier: GPL-2.0
/*
 * Inline or staged: the choice for a kernel QP's send posts (see
 * shca_kpost.h).
 */
#include "shca_kpost.h"

/**
 * shca_kpost_pick - choose where a post of a kernel QP is carried out
 * @kp: the QP's state
 * @busy: its WQEs posted earlier and not yet completed
 * @recvs: a count of the SEND messages the QP has received (it may wrap)
 *
 * Call once per post, before its WQEs are added.
 *
 * Return: true when the post goes to the transmit stage, false when it is
 * sent in the poster's context.
 */
bool shca_kpost_pick(struct shca_kpost *kp, u32 busy, u32 recvs)
{
	bool answered = recvs != kp->recvs_prev;

	kp->recvs_prev = recvs;
	if (kp->probing) {
		/* did the poster go on without waiting for the probe? */
		kp->probing = false;
		if (busy || (kp->answered && !answered)) {
			kp->staged = true;
			kp->n = 0;
		}
	}
	if (kp->staged) {
		if (++kp->n >= SHCA_KPOST_STAGED_POSTS) {
			kp->staged = false;
			/* the next post is inline, the one after it a probe */
			kp->n = SHCA_KPOST_PROBE_EVERY - 2;
		}
		return true;
	}
	if (++kp->n < SHCA_KPOST_PROBE_EVERY)
		return false;
	kp->n = 0;
	kp->probing = true;
	kp->answered = answered;
	return true;
}
