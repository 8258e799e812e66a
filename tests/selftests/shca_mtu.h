/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca_mtu_test's helpers (shca_mtu_lib.c): netem loss switched over
 * route netlink, guarded buffer areas, the RC QP pair, and batches of
 * messages posted from A to B and waited for.
 */
#ifndef SHCA_MTU_H
#define SHCA_MTU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "shca_test.h"

#define WAIT_MS		SCALED_MS(60000)	/* deadline for a batch of completions */
#define GUARD		64	/* guard bytes after every message buffer */
#define GUARD_BYTE	0xa5
#define MAX_MSGS	64
#define AREA		(4u << 20)	/* bytes per buffer area */
#define CQ_DEPTH	512
#define WINDOW_PKTS	120	/* stay below the requester's 128 */
#define IMM		0x5eed1234u
#define N_ATOMIC	40
#define ATOMIC_ADD	3

/* the two sides: A (index 0) sends to B (index 1) */
struct mtu_env {
	struct test_dev dev[2];
	const char *ns[2], *ifname[2];
};

extern struct mtu_env g;

struct area {
	uint8_t *p;		/* what the device sees */
	uint8_t *exp;		/* what it must hold */
	struct ibv_mr *mr;
};

struct pair {
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
	uint32_t psn[2];
};

struct qopts {
	enum ibv_mtu mtu;
	uint8_t timeout, retry_cnt;
};

struct msg {
	enum ibv_wr_opcode op;
	uint32_t len;
	size_t src, dst;	/* offsets in A's source area, B's area */
	int recv;		/* receive it consumes on B, or -1 */
};

struct run {
	struct pair *p;
	struct area *src, *rbuf, *wbuf;
	struct msg m[MAX_MSGS];
	int n, nrecv;
	size_t src_off, rbuf_off, wbuf_off;
};

static inline uint32_t mtu_bytes(enum ibv_mtu mtu)
{
	return 128u << mtu;
}

static inline uint32_t npkts(uint32_t len, enum ibv_mtu mtu)
{
	uint32_t n = (len + mtu_bytes(mtu) - 1) / mtu_bytes(mtu);

	return n ? n : 1;
}

static inline size_t align64(size_t x)
{
	return (x + 63) & ~(size_t)63;
}

/* Sleep 0.2 ms. */
void nap(void);

/* Counter @name of side @dev, or -1 (a failure recorded). */
long long counter(int dev, const char *name);

/* A route netlink socket in side @i's namespace, and its interface. */
bool netem_open(int i);

/* Close the sockets netem_open() opened. */
void netem_close(void);

/*
 * Drop @pct percent of the packets side @dev sends: change the loss of the
 * root netem qdisc of its interface; returns once the kernel applied it.
 */
bool set_loss(int dev, int pct);

/* An AREA-byte buffer on side @dev, guard bytes everywhere. */
bool area_get(struct area *a, int dev, int access);
void area_put(struct area *a);

/* Every byte of the area holds what it must. */
bool area_verify(const struct area *a, const char *what);

/* A QP and CQ on each side, random initial PSNs. */
int pair_create(struct pair *p);
void pair_destroy(struct pair *p);

/* Take both QPs to RTS, each pointing at the other. */
int pair_connect(struct pair *p, const struct qopts *o);

/* The QP's state and path MTU. */
int query_qp(struct ibv_qp *qp, struct ibv_qp_attr *a);

/* Path MTU of an RTS QP: must be accepted, stay RTS and read back. */
bool set_mtu(struct ibv_qp *qp, enum ibv_mtu mtu);

/* Add a message and post what it needs on B (its receive). */
bool msg_add(struct run *r, enum ibv_wr_opcode op, uint32_t len);

/* Post message @i on A. */
bool msg_post(struct run *r, int i);

/*
 * Add messages from a mix of sizes and opcodes, at most @max_pkts packets
 * at @mtu, and post them.  Returns the packets they take.
 */
uint32_t batch(struct run *r, enum ibv_mtu mtu, uint32_t max_pkts,
	       uint32_t seed);

/*
 * Wait for every message's completion on A and every receive on B;
 * each exactly once, successful, with the right opcode and length.
 */
bool wait_all(struct run *r);

/* Nothing more may complete for a while. */
void expect_quiet(struct pair *p);

/* A's first transmissions (packets sent that were not retransmissions). */
long long first_tx(void);

/* Wait until A sent @pkts packets for the first time since @base. */
bool wait_first_tx(long long base, uint32_t pkts);

#endif /* SHCA_MTU_H */
