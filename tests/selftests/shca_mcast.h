/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca_mcast_test: UD multicast through ibv_attach_mcast (what the
 * program's files share).
 */
#ifndef SHCA_MCAST_H
#define SHCA_MCAST_H

#include "shca_test.h"

#define MC_QKEY		0x11170000u
#define MC_QPN		0xffffffu
#define MC_LEN		256		/* payload of a message */
#define MC_SLOT		(40 + MC_LEN)	/* GRH + payload */

/*
 * A set of UD QPs on one device, sharing one receive CQ and one send CQ,
 * each with @msgs receive
 * buffers of MC_SLOT bytes posted (slot (q, m) at (q * msgs + m) *
 * MC_SLOT of @buf, wr_id q * msgs + m).  @seen counts the copies of each
 * message each QP received.
 */
struct mc_qps {
	const struct test_dev *d;
	int n, msgs;
	struct ibv_cq *cq;		/* receives */
	struct ibv_cq *scq;		/* sends */
	struct ibv_qp **qp;
	uint8_t *buf;
	struct ibv_mr *mr;
	int *seen;			/* [n * msgs] */
	int bad;			/* completions in error or malformed */
};

/* @n QPs of @d in RTS, created with @create_flags; 0 or -1 (reason said) */
int mc_qps_create(struct mc_qps *s, const struct test_dev *d, int n,
		  int msgs, uint32_t create_flags);
/* Post the receive slots of QPs [@from, @to) again; 0 or -1 */
int mc_qps_post(struct mc_qps *s, int from, int to);
/* Forget what was received */
void mc_qps_reset(struct mc_qps *s);
void mc_qps_destroy(struct mc_qps *s);

/*
 * Attach (@attach true) or detach QPs [@from, @to) of @s to/from @gid;
 * the number that succeeded.
 */
int mc_attach(struct mc_qps *s, const union ibv_gid *gid, int from, int to,
	      bool attach);

/*
 * Send @msgs messages (seq 0..msgs-1, each MC_LEN bytes of pattern(seed +
 * seq) after a 4-byte seq) from QP @qp of @s to group @gid, sender GID
 * index @sgid; 0 when all were posted and completed.
 */
int mc_send(struct mc_qps *s, int qp, const union ibv_gid *gid, int sgid,
	    int msgs, uint32_t seed);

/* An AH to group @gid from GID index @sgid of @s's device, or NULL */
struct ibv_ah *mc_group_ah(struct mc_qps *s, const union ibv_gid *gid,
			   int sgid);

/* Post message @m (from slot @m % msgs of the send row) on QP @qp via @ah */
int mc_post_ah(struct mc_qps *s, int qp, struct ibv_ah *ah, int m,
	       uint32_t seed);

/*
 * Like mc_send(), but without waiting for any completion: the AH is
 * destroyed right after the last post, then QP @qp (set to NULL), as
 * mckey's sender does.  @msgs is at most @s->msgs.  0 when all went.
 */
int mc_send_and_go(struct mc_qps *s, int qp, const union ibv_gid *gid,
		   int sgid, int msgs, uint32_t seed);

/*
 * Poll @s's CQ until @expect receive completions arrived or @ms passed
 * (then a little longer, to catch extra ones); checks each: success, GRH,
 * length, sender QPN @src_qpn, payload.  Returns the completions seen.
 */
int mc_collect(struct mc_qps *s, int expect, uint32_t src_qpn, uint32_t seed,
	       int ms);

/* Copies QP @q received of message @m */
static inline int mc_seen(const struct mc_qps *s, int q, int m)
{
	return s->seen[q * s->msgs + m];
}

/*
 * Every QP of @s in [@from, @to) got every message once, the rest none,
 * and no completion was bad (the first QP that did not, said).
 */
bool mc_all_once(const struct mc_qps *s, int from, int to);

/*
 * Send @rx->msgs messages from QP @qp of @tx (GID index @sgid) to @g and
 * collect them at @rx: QPs [@from, @to) get each once, the rest none
 * (mc_all_once()).
 */
bool mc_round_trip(struct mc_qps *tx, int qp, int sgid,
		   const union ibv_gid *g, struct mc_qps *rx, int from,
		   int to, uint32_t seed);

/* A new QP for @s (no create flags), in RTS, or NULL */
struct ibv_qp *mc_qp_new(struct mc_qps *s);

/*
 * Random attach, detach, destroy and re-create of @rx's QPs (and all of
 * them leaving, so that the group goes and comes back) for at most @ms
 * while QP 0 of @tx sends @msgs messages to @gid from GID index @sgid.
 * 0 when every call succeeded and every message was sent.
 */
int mc_race(struct mc_qps *rx, struct mc_qps *tx, const union ibv_gid *gid,
	    int sgid, int msgs, int ms);

/* Counter @name of @d's port 1, read fresh; 0 when unreadable */
unsigned long long mc_ctr(const struct test_dev *d, const char *name);

/* The --storm case (shca_mcast_storm.c): 0 when it passed */
int mc_storm(struct test_dev d[2]);

/* The --funcs cases (shca_mcast_funcs.c): MC_FUNCS_PLAN results */
#define MC_FUNCS_PLAN	4
void mc_funcs(struct test_dev d[3], int nqp, int msgs);

/* The --move cases (shca_mcast_move.c): MC_MOVE_PLAN results */
#define MC_MOVE_PLAN	2
void mc_move(struct test_dev d[2], const char *gofile, int nqp, int msgs);

/* The --rate measurement (shca_mcast_rate.c): 0, or -1 if not set up */
int mc_rate(struct test_dev d[2], int nqp, int msgs);

/* Index of port 1's first RoCE v2 GID holding an IPv6 address of 2001:db8::/32 */
int find_v6_gid(struct ibv_context *ctx);

#endif /* SHCA_MCAST_H */
