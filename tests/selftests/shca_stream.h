/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the source files of shca_stream_test share: its options, its two
 * devices, TAP results, the data pattern, QP endpoints, posting and
 * completion checks (shca_stream_lib.c), and the modes the driver in
 * shca_stream_test.c runs (shca_stream_data.c, _atomic.c, _peer.c).
 */
#ifndef SHCA_STREAM_H
#define SHCA_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "shca_test.h"

#define MIB		(1024 * 1024)
#define GUARD		64	/* poisoned bytes behind every message */
#define POISON		0xa5
#define STALL_MS	SCALED_MS(30000)	/* no completion for this long: a hang */
#define QUIET_MS	100	/* after the end, nothing more may complete */
#define IMM_XOR		0x5ca1ab1eU
#define POLL_BATCH	32

#define MR_ACC_ALL	(IBV_ACCESS_LOCAL_WRITE | QP_ACC_ALL)

/* ---- options, reporting -------------------------------------------------- */

enum mode { M_STREAM, M_ATOMIC, M_RNR, M_PEER };

/* the stream mode's operations (-O) */
enum sop { S_SEND, S_SEND_IMM, S_WRITE, S_WRITE_IMM, S_READ, S_NOPS };

extern struct stream_opts {
	enum mode mode;
	unsigned long long bytes;	/* stream: total payload */
	unsigned int count;		/* atomic: ops; rnr: messages */
	unsigned int depth;		/* WRs outstanding */
	unsigned int max_msg;		/* stream: largest message */
	unsigned int mtu;
	unsigned int timeout, retry_cnt, rnr_retry, min_rnr_timer;
	unsigned int prepost, trickle_ms;	/* rnr */
	unsigned int ops;		/* stream: bit mask of enum sop allowed */
	bool no_zero_rdma;		/* stream: no 0-byte WRITE/READ */
	const char *cmd;		/* peer: makes the peer disappear */
	bool kill_peer;			/* peer: kill its process first */
	unsigned int slack_ms;		/* peer: accepted lateness */
	unsigned int deadline_s;
	uint64_t seed;
} opt;

/* side 0 (the requester) on dev[0], side 1 on dev[1] */
extern struct stream_globals {
	struct test_dev dev[2];
} g;

extern unsigned int tap_n, tap_failed;
extern double pat_ms;		/* time spent making and checking data */

/* Record one TAP result: failed when failf() was called since the last. */
bool tap_result(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Called once per polling round that found nothing: after a few such
 * rounds, sleep a little.
 */
void idle(unsigned int *rounds);

/* ---- the data pattern ---------------------------------------------------- */

uint64_t mix64(uint64_t x);
/* Fill P with the LEN bytes of message M, then GUARD poison bytes. */
void pat_fill(uint8_t *p, uint64_t m, size_t len);
/*
 * Check that P holds the LEN bytes of message M followed by GUARD poison
 * bytes; describe the damage with failf() when not.
 */
bool pat_check(const uint8_t *p, uint64_t m, size_t len, const char *what);

/* ---- devices, QPs -------------------------------------------------------- */

/* What one side tells the other to connect (peer mode: over a pipe). */
struct conn {
	uint32_t qpn, psn, rkey;
	uint64_t addr;
	union ibv_gid gid;
};

struct ep {
	int dev;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	uint32_t psn;
};
int ep_create(struct ep *e, int dev, unsigned int swr, unsigned int rwr);
void ep_destroy(struct ep *e);
/* What E's peer needs to connect to it */
void conn_of(const struct ep *e, struct conn *c);
/* Take E's QP to RTS, connected to PEER. */
int ep_connect(struct ep *e, const struct conn *peer);
struct ibv_mr *reg(int dev, void *p, size_t len, int access);

/* signaled, one SGE; failures recorded */
int post_send(struct ep *e, uint64_t wr_id, enum ibv_wr_opcode op,
	      void *addr, uint32_t len, uint32_t lkey, uint64_t raddr,
	      uint32_t rkey, uint32_t imm);
int post_atomic(struct ep *e, uint64_t wr_id, enum ibv_wr_opcode op,
		void *res, uint32_t lkey, uint64_t raddr, uint32_t rkey,
		uint64_t cmp_add, uint64_t swap);
int post_recv(struct ep *e, uint64_t wr_id, void *addr, uint32_t len,
	      uint32_t lkey);

/* ibv_poll_cq() with its failure recorded */
int cq_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n);
/* Wait up to MS for one completion on CQ: 1, 0 (none) or -1. */
int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, double ms);
/* Nothing more may complete on CQ within QUIET_MS. */
void expect_quiet(struct ibv_cq *cq, const char *what);
/*
 * The common part of a completion check: wr_id, status, QP number.
 * WHAT names the queue.
 */
bool wc_ok(const struct ibv_wc *wc, const char *what, uint64_t wr_id,
	   enum ibv_wc_status st, const struct ibv_qp *qp);

/* ---- the modes ----------------------------------------------------------- */

void run_stream(void);		/* shca_stream_data.c */
void run_rnr(void);		/* shca_stream_data.c */
void run_atomic(void);		/* shca_stream_atomic.c */
void run_peer(void);		/* shca_stream_peer.c */

#endif /* SHCA_STREAM_H */
