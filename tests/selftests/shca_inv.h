/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the source files of shca_inv_test share: its devices and RC
 * connections, completions, counters and fault injection
 * (shca_inv_lib.c), and the race a case runs (shca_inv_race.c); the
 * cases, the refusals and main() are in shca_inv_test.c.
 */
#ifndef SHCA_INV_H
#define SHCA_INV_H

#include <stdbool.h>
#include <stdint.h>

#include "shca_test.h"

#define XFER_LEN	(1024 * 1024)	/* the transfer: 1024 packets */
#define SPARE_LEN	4096		/* where a rebind moves a window */
#define SCRATCH_LEN	(64 * 1024)	/* the READ a queued one waits behind */
#define WAIT_MS		SCALED_MS(10000)
#define SETTLE_MS	30		/* after the transfer ended */
#define HOLD_MS		200		/* the first hold; doubled per miss */
#define HOLD_MAX_MS	1000		/* the module's limit */
#define HOLD_TRIES	4		/* attempts to land in a hold */
#define CQ_DEPTH	64

#define REMOTE_RW	(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)

enum { OWNER, PEER };

/* READ_QUEUED: the READ waits behind another READ's responses */
enum op { OP_WRITE, OP_READ, OP_READ_QUEUED };
enum tgt { T_MR, T_MW1, T_MW2 };
enum inv {
	I_LINV_SAME,	/* LOCAL_INV on the transfer's QP */
	I_LINV_OTHER,	/* LOCAL_INV on another QP of the PD */
	I_SINV,		/* SEND_WITH_INV from the peer, other connection */
	I_DEALLOC,	/* ibv_dealloc_mw */
	I_REBIND_SAME,	/* type 1 rebind through the transfer's QP */
	I_REBIND_OTHER,	/* type 1 rebind through another QP, onto another
			 * MR over other memory at the same addresses */
	I_DEREG,	/* ibv_dereg_mr */
	I_REREG,	/* ibv_rereg_mr: remote rights taken away */
};

enum hold { H_NONE, H_COPY, H_XMIT };

extern const char *const op_name[];
extern const char *const tgt_name[];
extern const char *const inv_name[];

/* ---- devices, connections ------------------------------------------------ */

extern struct inv_globals {
	struct test_dev dev[2];
} g;

/* one RC connection: QP a on OWNER, QP b on PEER */
struct conn {
	struct ibv_cq *cq[2];		/* send and receive CQ of each QP */
	struct ibv_qp *qp[2];
	uint32_t psn[2];
};

/* Both QPs and their CQs, connected (conn_connect()); 0 or -1 */
int conn_open(struct conn *c);
/* RESET -> RTS on both sides, with fresh PSNs. */
int conn_connect(struct conn *c);
void conn_destroy(struct conn *c);

/*
 * Poll @cq for one completion for at most @ms: 1 with *@wc filled, 0 on
 * timeout (a reason recorded), -1 on a polling error.
 */
int wc_wait(struct ibv_cq *cq, struct ibv_wc *wc, int ms, const char *what);
/* Wait for a completion of @wr_id with @status; any other fails. */
bool wc_expect(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status status,
	       const char *what);
/* Throw away whatever completions a CQ holds (flushes after an error). */
void cq_drain(struct ibv_cq *cq);

/* ---- counters and fault injection ---------------------------------------- */

/* A port 1 counter of device @dev, 0 when it cannot be read */
unsigned long long ctr(int dev, const char *name);

/* ---- the race ------------------------------------------------------------ */

struct tcase {
	char name[48];
	enum op op;
	enum tgt tgt;
	enum inv inv;
};

/* what a case works with, kept across its tries */
struct rig {
	const struct tcase *tc;
	struct conn a, b;	/* a: the transfer's; b: the other QPs */
	uint8_t *tmem;		/* OWNER: target + spare page */
	struct ibv_mr *tmr;	/* registered over tmem */
	uint8_t *amem;		/* OWNER: other memory, p2 throughout, */
	struct ibv_mr *amr;	/* registered at tmem's addresses */
	struct ibv_mw *mw;
	uint32_t rkey;		/* what the peer uses */
	uint8_t *p0, *p1, *p2;	/* patterns: target before, written, after */
	uint8_t *pmem;		/* PEER: source or destination */
	struct ibv_mr *pmr;
	uint8_t *rmem;		/* OWNER: receive buffer for SEND_WITH_INV, */
	struct ibv_mr *rmr;	/* then what READ_QUEUED's first READ reads */
	double xfer_ms;		/* an uninterrupted transfer took this */
	unsigned int cut, whole, missed;
	unsigned int hold_ms;	/* how long the next hold lasts */
	char miss[192];		/* how the last missed hold went */
};

bool rig_open(struct rig *r, const struct tcase *tc);
void rig_close(struct rig *r);
/* Back to a clean connection after a try that errored it. */
bool rig_recover(struct rig *r);
/* One uninterrupted transfer: it works, and how long it takes. */
bool rig_measure(struct rig *r);
/* Give the peer a valid key over the target for the next try. */
bool expose(struct rig *r);
/* The peer's RDMA WRITE or READ of the whole target */
bool post_rdma(struct rig *r);
/* The peer sends SEND_WITH_INV(@rkey) on connection b; OWNER's receive. */
bool send_inv(struct rig *r, uint32_t rkey, enum ibv_wc_status want);
/*
 * One try.  Returns false when a hold was asked for and the
 * invalidation did not land in it (try again); true otherwise, with
 * the try's failures recorded.
 */
bool one_try(struct rig *r, enum hold h, unsigned int n);

#endif /* SHCA_INV_H */
