/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the source files of shca_rc_test share: the two devices, guarded
 * buffers, QP pairs, posting and completion checks (shca_rc_lib.c), and
 * the cases (one shca_rc_*.c file per topic) the driver in
 * shca_rc_test.c runs.
 */
#ifndef SHCA_RC_H
#define SHCA_RC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "shca_test.h"

#define WAIT_MS		SCALED_MS(10000)	/* deadline of every expected completion */
#define QUIET_MS	300	/* how long "nothing happens" is watched */
#define GUARD		4096	/* guard bytes either side of every buffer */
#define GUARD_BYTE	0xa5
#define CQ_DEPTH	2048
#define MIB		(1024 * 1024)
#define IMM		0x1234abcdU
#define ANY		(-1)

#define WR_BAD		0xbad0ULL
#define WR_FOLLOW	0xf011ULL
#define WR_LATER	0x1a7eULL
#define WR_RQ_LATER	0x1a7f0ULL
#define WR_RESP		900ULL

#define ACC_ALL		(IBV_ACCESS_LOCAL_WRITE | QP_ACC_ALL)

/* ---- global state and reporting ---------------------------------------- */

/* side 0 of every QP pair is on dev[0], side 1 on dev[1] */
extern struct rc_globals {
	struct test_dev dev[2];
} g;

extern const char *skip_why;	/* set when the current case skips */
extern double last_err_ms;	/* post to error completion, req_error() */

const char *op_str(int op);
const char *state_str(int st);

/* ---- completions -------------------------------------------------------- */

/* N completions on CQ within WAIT_MS, else a reason recorded */
bool wait_wcs(struct ibv_cq *cq, struct ibv_wc *wc, int n, const char *what);
bool wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, const char *what);

/* Nothing may complete on CQ for MS milliseconds */
bool expect_quiet(struct ibv_cq *cq, int ms, const char *what);

/*
 * Check a completion: STATUS, WR_ID and QPN always; OPCODE and LEN (when
 * not ANY) for successful ones (the spec leaves them undefined on error).
 */
bool check_wc(const struct ibv_wc *wc, const char *what,
	      enum ibv_wc_status status, int opcode, uint32_t qpn,
	      uint64_t wr_id, long len);

/* ---- guarded buffers ---------------------------------------------------- */

/*
 * A buffer of LEN bytes at p with GUARD bytes of GUARD_BYTE either side;
 * exp is the image the whole area (base..base+total) should hold.
 */
struct mbuf {
	uint8_t *base, *exp, *p;
	size_t total, len;
	struct ibv_mr *mr;
};

/*
 * Allocate a guarded buffer for device DEV; register it with ACCESS
 * unless ACCESS is negative: the whole area, or only p..p+len (INNER).
 */
bool mbuf_get(struct mbuf *b, int dev, size_t len, int access, bool inner);
void mbuf_put(struct mbuf *b);

/* Fill p[off..off+n) (and its expected image) with a pattern */
void mbuf_fill(struct mbuf *b, size_t off, size_t n, uint32_t seed);

/* What DST should hold at OFF afterwards: N bytes of SRC's image at SOFF */
void mbuf_expect(struct mbuf *dst, size_t off, const struct mbuf *src,
		 size_t soff, size_t n);

/* Mismatching bytes between base and exp in [from, to) (area offsets) */
size_t mbuf_diff(const struct mbuf *b, size_t from, size_t to,
		 size_t *first, size_t *last);
bool mbuf_verify(const struct mbuf *b, const char *what);

void sge_set(struct ibv_sge *sg, const struct mbuf *b, size_t off,
	     uint32_t len);
uint64_t raddr(const struct mbuf *b, long off);

/* rkey with the same index and another key byte: a stale key */
uint32_t stale_key(uint32_t key);

/* ---- QP pairs ------------------------------------------------------------ */

struct popts {
	enum ibv_mtu mtu;
	unsigned int access[2];		/* qp_access_flags of each side */
	uint8_t rnr_retry, min_rnr_timer, timeout, retry_cnt, rd_atomic;
	uint32_t send_wr, recv_wr, send_sge, recv_sge, inline_data;
	int sig_all;
	uint64_t send_ops;		/* IBV_QP_EX_WITH_*: extended QPs */
};

struct popts defaults(void);

struct side {
	int dev;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_qp_cap cap;		/* as ibv_create_qp returned it */
	uint32_t psn;
};

struct pair {
	struct side s[2];
};

int pair_create(struct pair *p, const struct popts *o);
void pair_destroy(struct pair *p);
int pair_connect(struct pair *p, const struct popts *o);
/* pair_create() and pair_connect(): 0, or -1 with nothing held */
int pair_open(struct pair *p, const struct popts *o);

bool check_state(struct ibv_qp *qp, enum ibv_qp_state want,
		 const char *what);

/* ibv_qp_attr of ME's transition to INIT, RTR or RTS under O */
void init_attr(struct ibv_qp_attr *a, unsigned int access);
void rtr_attr(struct ibv_qp_attr *a, const struct popts *o,
	      const struct side *me, const struct side *peer);
void rts_attr(struct ibv_qp_attr *a, const struct popts *o,
	      const struct side *me);

/*
 * A connected pair with a source buffer of SLEN bytes on side 0 and a
 * target of DLEN bytes on side 1 registered with DACC.  Returns 0, or -1
 * with nothing held; xfer_close() releases all three.
 */
int xfer_open(struct pair *p, const struct popts *o,
	      struct mbuf *src, size_t slen, struct mbuf *dst,
	      size_t dlen, int dacc);
void xfer_close(struct pair *p, struct mbuf *src, struct mbuf *dst);

/* ---- posting (failures recorded) ----------------------------------------- */

/* signaled; SEND_WITH_IMM and RDMA_WRITE_WITH_IMM carry IMM */
int post_wr(struct side *s, uint64_t wr_id, enum ibv_wr_opcode op,
	    struct ibv_sge *sg, int nsge, uint64_t remote, uint32_t rkey);
int post_atomic(struct side *s, uint64_t wr_id, enum ibv_wr_opcode op,
		struct ibv_sge *sg, uint64_t remote, uint32_t rkey,
		uint64_t cmp_add, uint64_t swap);
/* ibv_wr_atomic_write() of the 8 bytes at @value (an extended QP) */
int post_atomic_write(struct side *s, uint64_t wr_id, uint64_t remote,
		      uint32_t rkey, const void *value);
int post_recv(struct side *s, uint64_t wr_id, struct ibv_sge *sg, int nsge);
int post_recv0(struct side *s, uint64_t wr_id);

/* ---- building blocks ----------------------------------------------------- */

/* Counters of both devices, to show what a failed case did */
void ctr_snap(struct ctrs c[2]);
/* Print the counters that changed since BEFORE */
void ctr_diag(const struct ctrs before[2]);

/* One counter of device DEV, read fresh (counters_next_jiffy()). */
bool read_counter(int dev, const char *name, unsigned long long *v);

/*
 * SEND LEN bytes (with immediate data when IMMED) from side 0 to
 * side 1 of P and check both completions and every byte of the receive
 * buffer and its guards.
 */
bool xfer_send(struct pair *p, size_t len, bool immed, const char *what);

/*
 * After an error case: the pair that existed during it (BYSTANDER, may be
 * NULL) and a fresh pair on the same devices must still carry a SEND.
 */
void still_works(struct pair *bystander);

/*
 * Post BAD with a signaled 0-byte SEND behind it on side 0 of P: BAD must
 * complete with ST (or ALT), the SEND behind it with WR_FLUSH_ERR, the QP
 * must be in ERR and a send and a receive posted afterwards must be
 * flushed too.  Returns the status BAD completed with, -1 if none, -2 if
 * the post itself failed.
 */
int req_error(struct pair *p, struct ibv_send_wr *bad,
	      enum ibv_wc_status st, enum ibv_wc_status alt,
	      const char *what);

/* Responder side 1 of P must go to ERR with its receive WR_RESP flushed */
void resp_flushed(struct pair *p, const char *what);

/* Responder side 1 of P must be unaffected: RTS, nothing completed */
void resp_untouched(struct pair *p, const char *what);

/* ---- the cases (ARG selects a variant) -------------------------------- */

/* shca_rc_ops.c */
void t_send_size(long len);
void t_send_sges(long arg);
void t_inline(long arg);
void t_send_imm(long arg);
void t_write(long len);
void t_sqd(long arg);
void t_write_scatter(long n);
void t_write_imm(long arg);
void t_read(long len);
void t_wc_fields(long arg);
void t_unsignaled(long arg);

/* shca_rc_atomic.c */
void t_atomic(long arg);
void t_atomic_many(long arg);
void t_atomic_write(long arg);
void t_err_atomic_write(long arg);

/* shca_rc_mw.c */
void t_mw2_inv(long arg);
void t_mw2_stale(long arg);
void t_mw1(long arg);

/* shca_rc_err.c */
void t_err_bad_rkey(long arg);
void t_err_past_end(long arg);
void t_err_read_noperm(long arg);
void t_err_qp_access(long arg);
void t_err_atomic_unaligned(long arg);
void t_err_send_too_long(long arg);
void t_err_lkey(long arg);
void t_err_recv_lkey(long arg);
void t_err_rnr0(long arg);
void t_rnr7_late(long arg);
void t_err_peer_gone(long arg);
void t_hol(long arg);

/* shca_rc_verbs.c */
void t_post_reset(long arg);
void t_post_sges(long arg);
void t_post_inline_big(long arg);
void t_post_overflow(long arg);
void t_create_absurd(long arg);
void t_modify_invalid(long arg);
void t_modify_range(long arg);
void t_destroy_busy(long arg);

#endif /* SHCA_RC_H */
