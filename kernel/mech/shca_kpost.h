/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a kernel QP's send posts are carried out: in the poster's context
 * or by the transmit stage.
 *
 * Sending from the poster's context (as a user QP's doorbell call does)
 * wakes no thread, and on a device of the same host the peer's receive,
 * its answer and the completion all run before the post returns: what a
 * lone request (queue depth 1) wants.  A poster with more requests to
 * submit loses by it: each request's whole round trip then runs on the
 * poster's CPU before the next can be submitted, while the transmit
 * stage's thread could carry them on another CPU.  While posts are sent
 * inline, a poster at any queue depth looks the same (every request is
 * done when its post returns); only a post handed to the stage shows what
 * the poster does when it is not held up.  So, per QP:
 *
 *  - Inline (the start): every SHCA_KPOST_PROBE_EVERY-th post goes to the
 *    stage instead, a probe, which lets the poster go on at once.
 *  - The post after a probe says whether the poster ran ahead of it: the
 *    QP still has WQEs not completed (@busy), or, on a QP whose posts are
 *    answered (a SEND arrived between the post before the probe and the
 *    probe), no SEND has arrived since the probe.  If so the QP goes
 *    staged.
 *  - Staged: SHCA_KPOST_STAGED_POSTS posts go to the stage (this one
 *    included); then the QP is inline again and probes at its second
 *    post.
 *
 * A lone request's poster waits for its answer (or its completion) before
 * it posts again, so a probe costs it one staged request in
 * SHCA_KPOST_PROBE_EVERY; a poster that runs ahead has one inline round
 * trip and a probe in SHCA_KPOST_STAGED_POSTS posts.  Misjudged: a probe
 * sent while older requests are still on their way, whose answers the
 * poster may wait for instead (inline until the next probe), and a poster
 * that drops to queue depth 1 during a staged run (the rest of the run
 * staged).
 *
 * Pure C (shca_pure.h): the caller serialises the calls on one state (the
 * QP's send lock) and supplies the readings.
 */
#ifndef SHCA_KPOST_H
#define SHCA_KPOST_H

#include "shca_pure.h"

#define SHCA_KPOST_PROBE_EVERY	64
#define SHCA_KPOST_STAGED_POSTS	256

/**
 * struct shca_kpost - a kernel QP's choice between inline and staged posts
 * @n: posts since the last probe (inline) or since the QP went staged
 * @recvs_prev: the count of SENDs received at the previous post (at the
 *	post after a probe: at the probe)
 * @staged: posts go to the transmit stage
 * @probing: the previous post was a probe
 * @answered: a SEND arrived between the probe and the post before it
 *
 * All zero is the start: inline, the first probe after
 * SHCA_KPOST_PROBE_EVERY posts.
 */
struct shca_kpost {
	u32 n;
	u32 recvs_prev;
	bool staged;
	bool probing;
	bool answered;
};

bool shca_kpost_pick(struct shca_kpost *kp, u32 busy, u32 recvs);

#endif /* SHCA_KPOST_H */
