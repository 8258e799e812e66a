/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca_abifuzz_test: random verbs calls against shca devices.  Shared
 * declarations of its files:
 *
 *   shca_abifuzz_test.c    options, devices, the watchdog, the phases
 *   shca_abifuzz_pool.c    the object pools, one random step, destroys
 *   shca_abifuzz_ops.c     creates and queries of every kind but QPs
 *   shca_abifuzz_qp.c      QPs: create, modify, query, connect
 *   shca_abifuzz_wr.c      work requests, completions, window binds
 *   shca_abifuzz_raw.c     raw uverbs commands, rings found in the maps
 *   shca_abifuzz_mt.c      phase (a): threads, destroy under use
 *   shca_abifuzz_procs.c   phases (b) fork and (d) SIGKILL
 *   shca_abifuzz_rings.c   phase (c): garbage in the rings, a bystander
 */
#ifndef SHCA_ABIFUZZ_H
#define SHCA_ABIFUZZ_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "shca_test.h"

#define FZ_MAX_DEV	4
#define FZ_POOL		10		/* objects of each kind per pool */
#define FZ_WR_MAGIC	0xf2a0ULL	/* top 16 bits of every wr_id */
#define FZ_ARENA	(1 << 20)	/* MR memory, never freed */

/* ---- random numbers (splitmix64: the seed alone picks every call) ---- */

struct fz_rng {
	uint64_t s;
};

static inline uint64_t rnd64(struct fz_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* uniform in [0, n) (n > 0) */
static inline uint32_t rnd(struct fz_rng *r, uint32_t n)
{
	return (uint32_t)(rnd64(r) % n);
}

/* true with probability pct % */
static inline bool chance(struct fz_rng *r, unsigned int pct)
{
	return rnd(r, 100) < pct;
}

/* ---- devices and what every part shares ----------------------------- */

struct fz_dev {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	int gidx;
	union ibv_gid gid;
};

struct fz_global {
	struct fz_dev dev[FZ_MAX_DEV];
	int ndev;
	uint64_t seed;
	unsigned int threads;
	bool trace;
	/* MR memory: read-write, then a read-only page, then a PROT_NONE page */
	uint8_t *arena, *ro_page, *none_page;
	atomic_uint sanity;		/* sanity failures so far */
	const char *phase;
};

extern struct fz_global G;

/*
 * A sanity failure: print it as a diagnostic (the first 50) and count it.
 * The program exits 1 when any was counted.
 */
void fz_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* What the thread is doing, for the watchdog's report of a hang. */
void fz_doing(const char *what);

/* ---- object pools (shca_abifuzz_pool.c) ----------------------------- */

enum fz_kind { K_PD, K_MR, K_MW, K_CH, K_CQ, K_SRQ, K_QP, K_AH, K_NKIND };

/* One object; the indices name other objects of the same pool, -1 none. */
struct fz_obj {
	void *p;			/* the libibverbs object, NULL: free */
	int dev;
	int pd, cq, rcq, ch, srq;	/* what it was created on */
	int pd2;			/* MR: perhaps this PD (failed rereg) */
	int users;			/* objects created on it */
	int type;			/* QP type, MW type */
	int state;			/* QP: state of the last modify that worked */
	struct ibv_qp_cap cap;		/* QP: as granted */
	uint32_t srq_wr, srq_sge;	/* SRQ: as granted */
	bool gone;			/* destroyed behind libibverbs' back */
};

/* A completion's wr_id: FZ_WR_MAGIC, then the pool's call count */
#define FZ_WR_ID(p)	(FZ_WR_MAGIC << 48 | ((p)->calls & 0xffffffffffffULL))

struct fz_pool {
	struct fz_rng rng;
	/*
	 * each step draws from a generator made of the pool's seed and the
	 * step's number: a call that went another way (a window bound or
	 * not yet) changes the pool, never the random numbers of later steps
	 */
	uint64_t seed, step;
	struct fz_obj o[K_NKIND][FZ_POOL];
	uint64_t calls;
	const char *tag;
	/* a fork child destroyed objects libibverbs still holds */
	bool tainted;
	/*
	 * a fork child reads no events: libibverbs' destroy in the parent
	 * waits until it has acknowledged as many as the kernel handed out
	 */
	bool no_events;
	/*
	 * no destroy of a QP, SRQ or CQ: after a fork round the shared event
	 * file holds events libibverbs counts against them that the parent
	 * cannot acknowledge (events of the child's own objects name the
	 * child's memory), so those destroys would wait for ever; the
	 * objects go when the devices are reopened (fz_devs_reopen())
	 */
	bool keep_waiting;
	/* other threads share the devices: no guessed handles */
	bool mt;
	/* a destroy that should have been refused worked: stop using it */
	bool broken;
	bool stats;			/* time each kind of step */
	/* how deep the calls got: connections made, WRs taken, completions */
	uint64_t n_conn, n_posted, n_wc, n_wc_err;
	size_t arena_off, arena_len;	/* this pool's part of the arena */
};

void fz_tr(const struct fz_pool *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int pick(struct fz_pool *p, int kind, int dev);
int pick_free(struct fz_pool *p, int kind);
uint32_t boundary(struct fz_rng *r, uint32_t max, uint32_t typical);
bool pool_destroy(struct fz_pool *p, int kind, int i);

/* the random steps: shca_abifuzz_ops.c */
void op_alloc_pd(struct fz_pool *p);
void op_reg_mr(struct fz_pool *p);
void op_rereg_mr(struct fz_pool *p);
void op_alloc_mw(struct fz_pool *p);
void op_create_ch(struct fz_pool *p);
void op_create_cq(struct fz_pool *p);
void op_resize_cq(struct fz_pool *p);
void op_create_srq(struct fz_pool *p);
void op_srq_misc(struct fz_pool *p);
void op_create_ah(struct fz_pool *p);
void op_query(struct fz_pool *p);
/* shca_abifuzz_qp.c */
void op_create_qp(struct fz_pool *p);
void op_query_qp(struct fz_pool *p);
void op_modify_qp(struct fz_pool *p);
void op_connect(struct fz_pool *p);
/* shca_abifuzz_wr.c */
void op_post_send(struct fz_pool *p);
void op_post_recv(struct fz_pool *p);
void op_poll(struct fz_pool *p);
void op_notify(struct fz_pool *p);
void op_bind_mw(struct fz_pool *p);

void pool_init(struct fz_pool *p, uint64_t seed, const char *tag,
	       size_t arena_off, size_t arena_len);

/* One random call (or a short sequence: connect, destroy and clean up). */
void pool_step(struct fz_pool *p);

/* Print where the time of the steps with p->stats went */
void pool_stats(void);

/* Destroy everything, dependents first; sanity-checks every destroy. */
void pool_drain(struct fz_pool *p);

/* Connect two of the pool's QPs (or make UD QPs usable): RTS both. */
bool pool_connect(struct fz_pool *p, int a, int b);

/* Poll every CQ of the pool until it is empty (bounded). */
void pool_poll_all(struct fz_pool *p);

/* Drain each device's async events (acked at once). */
void fz_async_drain(void);
int fz_devs_reopen(void);
/* The same, unless @p is a fork child's */
void pool_async_drain(const struct fz_pool *p);

/* Check the completions @wc[0..n) polled from a CQ of @p asking for @ne. */
void fz_check_wc(struct fz_pool *p, const struct ibv_wc *wc, int n,
		 int ne, bool raw);

/* ---- raw commands and rings (shca_abifuzz_raw.c) -------------------- */

/* A raw doorbell (post command with no WRs); 0 or -errno. */
int raw_db_send(struct ibv_context *ctx, uint32_t qp_handle);
int raw_db_recv(struct ibv_context *ctx, uint32_t qp_handle);
int raw_db_srq(struct ibv_context *ctx, uint32_t srq_handle);
int raw_req_notify(struct ibv_context *ctx, uint32_t cq_handle, int solicited);

/*
 * One random raw uverbs command on @ctx: a handle that names nothing
 * (or a live object of another type, for commands that change nothing),
 * or a response buffer the kernel cannot write.  @alone: @live holds
 * every handle of @ctx, so any other small number names nothing.  Returns what write()
 * said (0 or -errno); anything that created an object is destroyed.
 */
int raw_fuzz(struct fz_rng *r, struct ibv_context *ctx,
	     const uint32_t *live, int nlive, bool alone);

/* The uverbs mappings of this process (from /proc/self/maps). */

/* A ring as this process maps it */
struct fz_ring {
	uint8_t *base;
	size_t len;
	unsigned long long off;		/* mmap offset on the command fd */
};

/* Mappings in @after that @before lacks, largest first; how many. */
int maps_new(const struct uverbs_maps *before,
	     const struct uverbs_maps *after,
	     struct fz_ring *out, int max);

/* A second mapping of @r (it outlives the object); false when refused. */
bool ring_alias(struct ibv_context *ctx, const struct fz_ring *r,
		struct fz_ring *alias);

/* ---- phases ---------------------------------------------------------- */

/* Each returns the number of verbs calls (and raw commands) it made. */
uint64_t phase_threads(uint64_t calls);
uint64_t phase_fork(uint64_t calls);
uint64_t phase_rings(uint64_t calls);
uint64_t phase_kill(uint64_t calls);

/* Bystander-style helpers of shca_abifuzz_rings.c, also used by phase d */
struct fz_pair {
	struct ibv_pd *pd[2];
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
	struct ibv_mr *mr[2];
	uint8_t *buf[2];
	size_t len;
};

bool pair_open(struct fz_pair *pr, size_t len, int sq, int rq);

/*
 * Victims of the ring writes (phases a and c): an RC pair between the
 * first two devices, a UD QP on an SRQ, their CQs, and every ring they
 * map.  The handles, contexts and MRs are copied apart so that threads
 * that only write rings and ring doorbells never read a freed object.
 */
#define VQ_SQ	64
#define VQ_RQ	16

struct victim {
	struct ibv_pd *pd[2];
	struct ibv_mr *mr[2];
	struct ibv_cq *cq[2];
	struct ibv_srq *srq;
	struct ibv_qp *qp[3];		/* RC on dev 0 and 1, UD (SRQ) on dev 0 */
	struct ibv_ah *ah;
	struct fz_ring ring[12];
	uint32_t stride[12];
	int rdev[12];
	int nring;
	uint32_t qph[3], cqh[2], srqh;
	struct ibv_context *qctx[3];
	struct ibv_mr mrc[2];
};

bool victim_open(struct victim *v, uint8_t *buf, size_t len);
void victim_connect(struct victim *v);
/* Destroy what is left (NULL pointers are gone already) */
void victim_close(struct victim *v);
/* One hostile act on @v (never a libibverbs call with @raw_only); calls */
int hostile(struct fz_rng *r, struct victim *v, bool raw_only);
void pair_close(struct fz_pair *pr);

/* SEND and RDMA WRITE both ways, every byte checked; false on failure. */
bool pair_verify(struct fz_pair *pr, uint32_t seed);

#endif /* SHCA_ABIFUZZ_H */
