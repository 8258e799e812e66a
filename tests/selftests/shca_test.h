/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Helpers shared by the shca selftest programs (shca_test_lib.c, linked
 * into each of them): failure reasons collected per case, TAP results and
 * diagnostics, monotonic time, test data, opening a device by name,
 * taking an RC QP to RTS, posting one work request, polling completions
 * with a deadline, and the port's hardware counters.
 *
 * Nothing here prints a result by itself: a helper that fails either
 * records why with failf() (where it says so) or returns an error for its
 * caller to report in its own words.
 */
#ifndef SHCA_TEST_H
#define SHCA_TEST_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

/* exit statuses, as kselftest reads them */
#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_SKIP	4

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* every remote right a QP can grant */
#define QP_ACC_ALL	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)

/* ibv_modify_qp() masks of an RC QP's RESET->INIT, INIT->RTR, RTR->RTS */
#define QP_INIT_MASK	(IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | \
			 IBV_QP_ACCESS_FLAGS)
#define QP_RTR_MASK	(IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | \
			 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | \
			 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define QP_RTS_MASK	(IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
			 IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | \
			 IBV_QP_MAX_QP_RD_ATOMIC)

/* ---- failures and TAP ------------------------------------------------ */

/* reasons the current case failed, one a line; the program clears it */
extern char why[4096];
/* failf() calls so far: a case failed when this moved during it */
extern unsigned int nfail;
/* case_result() lines so far, and how many said "not ok" */
extern int n_cases, n_failed;

/* Record a reason the current case fails (kept while there is room). */
void failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "# ..." (a TAP diagnostic line) at once. */
void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print every line of why[] as a diagnostic and clear it. */
void why_flush(void);

/*
 * Print the next TAP result line, "ok" when @cond holds; on a failure,
 * the reasons collected in why[] follow as diagnostics.  why[] is cleared.
 */
void case_result(int cond, const char *what);

/* ---- the device's mappings ------------------------------------------ */

/* the ranges of this process's mappings of /dev/infiniband/uverbs* */
struct uverbs_maps {
	int n;
	uintptr_t lo[512], hi[512];
	unsigned long long off[512];	/* the mmap offset of each */
};

/* Read them from /proc/self/maps (none when it cannot be read). */
void uverbs_maps_read(struct uverbs_maps *m);

/* ---- time, test data ------------------------------------------------- */

/* CLOCK_MONOTONIC in milliseconds */
double now_ms(void);
void sleep_ms(int ms);

/*
 * The time scale, SHCA_TIME_SCALE from the environment (1 to 99; 1 when
 * unset or invalid; run.sh sets it).  Every deadline of the tests is
 * stretched by it (SCALED_MS), so a kernel that runs everything several
 * times slower (KASAN, lockdep) gets as long; times a test waits to see
 * that nothing happens are not.
 */
int time_scale(void);
#define SCALED_MS(ms)	((ms) * time_scale())

/*
 * An RC ACK timeout exponent (4.096 us << t) stretched by the time scale
 * rounded up to a power of two (at most 24): a timeout that fires
 * spuriously on a slow kernel spends the retry count without any loss.
 */
int scaled_timeout(int t);

/*
 * Test data: pattern(seed) is the top bytes of successive xorshift32
 * states, started from a state made of SEED (never 0).
 */
uint32_t pattern_start(uint32_t seed);
uint8_t pattern_next(uint32_t *x);
void pattern(uint8_t *p, size_t n, uint32_t seed);

/*
 * @len bytes (rounded up to whole pages), page aligned and zeroed; NULL,
 * with a reason recorded, when there is no memory.  free() releases it.
 */
void *zalloc(size_t len);

/* ---- devices ---------------------------------------------------------- */

/* A device a program drives: found by name, with a PD and a source GID. */
struct test_dev {
	const char *name;
	int gidx;			/* <0: find_v4_gid()'s */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;		/* port 1's GID at gidx */
	struct ibv_device_attr attr;
};

/* The device called @name in @list (from ibv_get_device_list()), or NULL */
struct ibv_device *dev_find(struct ibv_device **list, const char *name);

/*
 * Open device @d->name: its context, attributes, GID and a PD; makes its
 * counters fresh (counters_uncached()).  Returns 0, KSFT_SKIP when no
 * device has that name, KSFT_FAIL when a step failed (said on stderr).
 */
int tdev_open(struct test_dev *d);

/* Free what tdev_open() made (any part of it). */
void tdev_close(struct test_dev *d);

/* tdev_open() of @d[0], then of @d[1]: the first non-zero return, or 0 */
int tdev_open_pair(struct test_dev d[2]);

/*
 * The devices @d[0] and @d[1] are not usable (@rc from tdev_open()):
 * say so and print all @n planned results as skipped, "ok" when @rc is
 * KSFT_SKIP, else "not ok".  Returns @rc.
 */
int tap_skip_all(unsigned int n, int rc, const struct test_dev d[2]);

/*
 * The start of a program that takes one argument, the device's name:
 * check the arguments, print the TAP header and a plan of @n results and
 * open the device into @d (its first IPv4 GID).  Returns 0, or the exit
 * status for a bad usage or a device that cannot be used (then all @n
 * results were printed, skipped).
 */
int tdev_main_open(struct test_dev *d, int argc, char **argv, unsigned int n);

/* Index of port 1's first RoCE v2 GID starting with @pfx (@len bytes), or -1 */
int find_gid_prefix(struct ibv_context *ctx, const uint8_t *pfx, size_t len);

/* Index of port 1's first RoCE v2 GID holding an IPv4 address, or -1. */
int find_v4_gid(struct ibv_context *ctx);

/*
 * The RoCE v2 GID of IP address @addr (IPv4, as an IPv4-mapped IPv6
 * address, or IPv6) into @gid.  Returns 0, or -1 if @addr is neither.
 */
int gid_of_addr(union ibv_gid *gid, const char *addr);

/* ---- QPs ---------------------------------------------------------------- */

/* ibv_wc_status_str() of a status held in an int */
const char *st_str(int st);

/* A UD QP from RESET to RTS (port 1, P_Key index 0, @qkey); 0 or -1 */
int ud_to_rts(struct ibv_qp *qp, uint32_t qkey);

/* A QP's current state, or -1 when ibv_query_qp() fails. */
int qp_state(struct ibv_qp *qp);

/*
 * Everything the INIT, RTR and RTS transitions of an RC QP take: whom it
 * talks to (dest_qpn at dgid, whose first PSN is rq_psn) and how.
 * rd_atomic is both max_dest_rd_atomic and max_rd_atomic.  Port 1,
 * P_Key index 0, hop limit 64.
 */
struct rc_path {
	unsigned int access;		/* qp_access_flags */
	enum ibv_mtu mtu;
	uint32_t dest_qpn, rq_psn, sq_psn;
	union ibv_gid dgid;
	int sgid_index;
	uint8_t rd_atomic, min_rnr_timer;
	uint8_t timeout, retry_cnt, rnr_retry;
};

/*
 * Fill @a for the transition to @to (IBV_QPS_INIT, _RTR or _RTS) from
 * @p; returns the matching QP_*_MASK (0 for another state).
 */
int rc_attr(struct ibv_qp_attr *a, enum ibv_qp_state to,
	    const struct rc_path *p);

/* One transition (see rc_attr()); ibv_modify_qp()'s return. */
int rc_modify(struct ibv_qp *qp, enum ibv_qp_state to,
	      const struct rc_path *p);

/*
 * RESET -> INIT -> RTR -> RTS.  Returns 0, or ibv_modify_qp()'s error
 * with *@at (when not NULL) the state that was refused.
 */
int rc_connect(struct ibv_qp *qp, const struct rc_path *p,
	       enum ibv_qp_state *at);

/* What qp_create() asks for */
struct qp_spec {
	int scq_depth;
	int rcq_depth;			/* 0: the send CQ takes receives too */
	int sig_all;
	uint64_t send_ops;		/* IBV_QP_EX_WITH_*: an extended QP */
	struct ibv_qp_cap cap;		/* asked */
	struct ibv_qp_cap got;		/* granted (set by qp_create()) */
};

/*
 * An RC QP on @d's PD with a new send CQ in *@scq and receive CQ in
 * *@rcq (with @spec->rcq_depth 0, *@scq is both and @rcq is not used).
 * NULL with a reason recorded when a create fails; what was made is left
 * in *@scq and *@rcq for qp_cqs_destroy().
 */
struct ibv_qp *qp_create(const struct test_dev *d, struct qp_spec *spec,
			 struct ibv_cq **scq, struct ibv_cq **rcq);

/* One CQ of @cq_depth; @wr send and receive WRs of one SGE each */
struct qp_spec qp_spec_simple(int cq_depth, uint32_t wr);

/*
 * qp_create() on @d[0] into @qp[0], @cq[0] and on @d[1] into @qp[1],
 * @cq[1], one CQ each (@spec->rcq_depth is 0).  Returns 0, or -1 with a
 * reason recorded and what was made left in @qp and @cq.
 */
int qp_pair_create(const struct test_dev d[2], struct qp_spec *spec,
		   struct ibv_qp *qp[2], struct ibv_cq *cq[2]);

/*
 * Connect two RC QPs to each other (@path[i] is @qp[i]'s): both to INIT,
 * then both to RTR, then both to RTS.  Returns 0, or ibv_modify_qp()'s
 * error with *@side the QP and *@at the state that was refused.
 */
int rc_connect_pair(struct ibv_qp *const qp[2], const struct rc_path path[2],
		    int *side, enum ibv_qp_state *at);

/*
 * Connect RC QPs @qp[0] (on @d[0]) and @qp[1] (on @d[1]) to each other:
 * every remote right, path MTU @mtu, 4 READ/ATOMIC, ACK timeout 14
 * (67 ms), retry and RNR retry 7, send PSN @psn on side 0 and @psn + 1
 * on side 1.  Returns 0, or -1 with a reason recorded.
 */
int rc_pair_connect(const struct test_dev d[2], struct ibv_qp *const qp[2],
		    uint32_t psn, enum ibv_mtu mtu);

/*
 * Print "holding @n" (what a test script waits for), then sleep until
 * killed: a process that dies holding what it made.
 */
int hold_until_killed(int n);

/* ibv_dereg_mr() of @mr unless NULL; failf() when it fails */
void mr_dereg(struct ibv_mr *mr);

/* Destroy the @n QPs of @qp that are not NULL; failf() what fails. */
void qps_destroy(struct ibv_qp *const *qp, int n);

/* Destroy a QP and its two CQs (any of them NULL); failf() what fails. */
void qp_cqs_destroy(struct ibv_qp *qp, struct ibv_cq *scq,
		    struct ibv_cq *rcq, const char *dev);

/* ---- work requests and completions ------------------------------------ */

/*
 * One send work request.  The remote address and key go to wr.rdma, or
 * to wr.atomic (with cmp_add and swap) for the two atomic opcodes; imm is
 * in host order.
 */
struct send_args {
	uint64_t wr_id;
	enum ibv_wr_opcode op;
	struct ibv_sge *sg;
	int nsge;
	unsigned int flags;		/* send_flags */
	uint64_t raddr;
	uint32_t rkey;
	uint32_t imm;
	uint64_t cmp_add, swap;
};

/* Post @a alone to @qp's send queue; ibv_post_send()'s return. */
int post_send1(struct ibv_qp *qp, const struct send_args *a);

/*
 * Post one receive of @nsge SGEs to @srq, or to @qp's receive queue when
 * @srq is NULL; ibv_post_recv()'s (or ibv_post_srq_recv()'s) return.
 */
int post_recv1(struct ibv_qp *qp, struct ibv_srq *srq, uint64_t wr_id,
	       struct ibv_sge *sg, int nsge);

/*
 * Poll @cq until @n completions arrived or @ms milliseconds passed,
 * napping briefly while nothing comes.  Returns the number polled, or -1
 * (a reason recorded) when ibv_poll_cq() failed.
 */
int poll_wait(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms);

/* ---- counters ------------------------------------------------------------ */

/*
 * Make reads of DEV's port 1 counters fresh: the RDMA core caches them for
 * "lifespan" ms (10 by default), and a transfer faster than that reads
 * as no change.  Best effort (needs root).  Even with lifespan 0 a read
 * in the same jiffy as the previous one gets the cached figures: see
 * counters_next_jiffy().
 */
void counters_uncached(const char *dev);

/*
 * Wait until a counter read refreshes the RDMA core's cache: it keeps the
 * figures while jiffies has not passed the last read's plus the lifespan
 * (0 after counters_uncached()), so a read in the same jiffy as the one
 * before an operation (4 ms at HZ=250, 10 ms at HZ=100) reads no change.
 */
void counters_next_jiffy(void);

/* One port 1 counter of @dev into *@v; false when it cannot be read. */
bool ctr_read(const char *dev, const char *name, unsigned long long *v);

#define MAX_CTRS	128

/* Every port 1 counter of one device */
struct ctrs {
	int n;
	char name[MAX_CTRS][48];
	unsigned long long v[MAX_CTRS];
};

void ctrs_read(const char *dev, struct ctrs *c);

/* @name's value in @c, 0 when it has none */
unsigned long long ctrs_get(const struct ctrs *c, const char *name);

/* One diagnostic line: the counters of @dev that moved since @before. */
void ctrs_diag(const char *dev, const struct ctrs *before);

/* ---- fault injection (the driver's debugfs shca/fault/) ---------------- */

#define FAULT_DIR	"/sys/kernel/debug/shca/fault"

/* A FAULT_DIR knob: its value, or -1 */
long fault_get(const char *name);
bool fault_set(const char *name, long v);
/*
 * Arm one hold at point @at (rkey_hold_at), on the packet after @after
 * others have passed it, lasting @ms; false when a knob cannot be set.
 */
bool fault_arm(int at, long after, unsigned int ms);
/* Is the driver's fault injection there? */
bool fault_available(void);

/*
 * Run @watch(@arg) in a thread pinned to each CPU (at most 2), call
 * @act(@arg) from this one meanwhile, and wait for the threads; returns
 * @act's return.  The watchers start first: @act itself may reach the
 * hold (a veth delivers in the sender's softirq), which busies its CPU,
 * and the watcher on the other CPU is then the one that can act inside
 * the hold.
 */
int run_with_watchers(void *(*watch)(void *), int (*act)(void *), void *arg);

/*
 * In a watcher: wait until a hold has begun (rkey_holds above @holds0)
 * and claim it, *@claimed from 0 to 1.  False when another thread
 * claimed it first, *@claimed was set otherwise (the action could not
 * start), or @ms passed.
 */
bool hold_claim(int *claimed, long holds0, int ms);

#endif /* SHCA_TEST_H */
