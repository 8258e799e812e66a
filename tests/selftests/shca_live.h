/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the source files of shca_live_test share: live connections on one
 * device that keep moving checked data while packet_fuzz.sh injects
 * packets aimed at them.  shca_live_test.c has the driver, the data
 * alphabet, the state file and the UC and UD pairs; shca_live_rc.c the
 * RC pairs.
 *
 * The alphabet: every byte the live connections move is below 0x80; the
 * fuzzer's payload (and pad) bytes are 0xc0..0xff; memory waiting for a
 * transfer is poisoned with 0xa5.  So a byte tells who put it there.
 */
#ifndef SHCA_LIVE_H
#define SHCA_LIVE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "shca_test.h"

#define LIVE_MTU	1024
#define NSLOT		16	/* buffer slots per area */
#define SLOT		4096
#define DEPTH		8	/* send WRs outstanding per QP */
#define RQ_DEPTH	16	/* receives posted per QP */
#define POISON		0xa5
#define FOREIGN_MIN	0xc0	/* the fuzzer's payload bytes */
#define FLUSH_MS	SCALED_MS(5000)	/* error completion to the last flushed WR */
#define DRAIN_MS	SCALED_MS(30000)	/* stop to the last completion */
#define STALL_MS	SCALED_MS(30000)	/* no completion: a hang (bystander) */
#define UD_QKEY		0x11111111
#define GRH_LEN		40

extern struct live_opts {
	const char *dev, *state;
	int gidx;
	unsigned int seconds;
	uint32_t seed;
} opt;

extern struct test_dev dev;
extern volatile sig_atomic_t stopping;

/* ---- the data alphabet --------------------------------------------------- */

/* Byte @off of live message @m (0..0x7f); the first 4 spell @m. */
uint8_t live_byte(uint64_t m, uint32_t off);
void live_fill(uint8_t *p, uint64_t m, uint32_t len);
bool live_match(const uint8_t *p, uint64_t m, uint32_t len);
/* The message number spelled by the first 4 bytes (28 bits). */
uint64_t live_ident(const uint8_t *p);

/* What a buffer holds, compared with the live message it should */
enum cls {
	C_OK,		/* exactly the message */
	C_FOREIGN,	/* bytes of the fuzzer, or a completion it made */
	C_STALE,	/* poison: the transfer never landed */
	C_SHORT,	/* a prefix of whole MTUs: an empty LAST ended it */
	C_SKIPPED,	/* a later live message: one went missing */
	C_OTHER,	/* none of these */
	C_NCLS
};
extern const char *const cls_name[C_NCLS];

/*
 * Classify @got bytes at @p that should be message @m of @want bytes;
 * @next_len gives the length of a later message (for C_SKIPPED, which
 * sets *@skip to how many came before it; may be NULL).
 */
enum cls classify(const uint8_t *p, uint32_t got, uint64_t m, uint32_t want,
		  uint32_t (*next_len)(uint64_t m), unsigned int *skip);

/* A length from the boundary set (1, MTU-1, MTU, MTU+1, ...) <= @max */
uint32_t pick_len(uint32_t *x, uint32_t min, uint32_t max);
uint32_t rnd32(uint32_t *x);

/* ---- RC pairs (shca_live_rc.c) ------------------------------------------- */

struct rc_link;

/*
 * A requester QP A and a responder QP B on @pd, connected to each other
 * through the device's same-host path, A's first PSN @psn0.  A victim's
 * QPNs, PSNs and one MR ("pub") are published in the state file; its
 * other memory, and everything of a bystander, is not.
 */
struct rc_link *rc_new(const char *name, bool victim, uint32_t psn0,
		       uint32_t seed);
/* Post what is due, poll, check; a failed victim is reconnected. */
void rc_step(struct rc_link *l, double now);
/* Stop posting; true once nothing is outstanding any more. */
bool rc_drained(struct rc_link *l, double now);
/* Drain it, then go on with a new generation (SIGUSR2) */
void rc_recycle(struct rc_link *l);
/* Print its RESULT lines; free it. */
int rc_report(struct rc_link *l);
/* Its part of the state file (JSON members, no braces). */
int rc_state(const struct rc_link *l, char *buf, size_t len);

#endif /* SHCA_LIVE_H */
