/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the source files of shca_fault_test share: its options and exit
 * statuses, the two devices and their async events, QPs, posting and
 * waiting (shca_fault_lib.c), and the modes the driver in
 * shca_fault_test.c runs (shca_fault_traffic.c, _qps.c, _mrs.c).
 */
#ifndef SHCA_FAULT_H
#define SHCA_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include "shca_test.h"

#define EXIT_PASS	0
#define EXIT_FAIL	1
#define EXIT_FATAL	2
#define EXIT_PORT	3
#define EXIT_SKIP	4

#define MIB		(1024 * 1024)
#define PAGE		4096
#define STALL_MS	SCALED_MS(30000)	/* traffic: no round ended for this long */
#define GRACE_MS	SCALED_MS(3000)	/* wait for an event after an error */
#define MAX_QPN		16384	/* shca's QPN space */
#define QKEY		0x11111111
#define MAX_EVENT_LINES	24

#define ACC_REMOTE	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)

struct dev {
	const char *name;
	int gidx;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
	bool fatal;
	bool port_err;
};

/* side A of every QP pair on dv[0], side B on dv[1] */
extern struct dev dv[2];
/* fail() was called */
extern bool failed;

extern struct fault_opts {
	unsigned int n;
	unsigned int mrs;
	unsigned int rounds;
	unsigned int wave;
	int secs;
} opt;

/* ---- reporting, time, patterns ------------------------------------------- */

/* Print "# FAIL: ..." and remember that something failed */
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void nap(void);
/* Does p[0..n) hold pattern(seed)?  Reports the first bad byte. */
bool pattern_ok(const uint8_t *p, size_t n, uint32_t seed,
		const char *what);

/* ---- devices and async events -------------------------------------------- */

int dev_open(struct ibv_device **list, struct dev *d);
void dev_close(struct dev *d, int dev);
/* A failed destroy is a failure unless the device died under us. */
void destroy_check(int ret, int dev, const char *what);
/* Read every pending async event of both devices (never blocks). */
void events_poll(void);
bool any_fatal(void);
bool any_event(void);

/* ---- QPs ----------------------------------------------------------------- */

struct ibv_qp *qp_new(int dev, enum ibv_qp_type type, struct ibv_cq *scq,
		      struct ibv_cq *rcq, struct ibv_srq *srq, uint32_t swr,
		      uint32_t rwr);
/* Take an RC QP on device @dev to RTS, connected to @peer. */
int rc_connect_to(struct ibv_qp *qp, int dev, const struct ibv_qp *peer);
int ud_connect(struct ibv_qp *qp, int dev);
int post_send(struct ibv_qp *qp, uint64_t wr_id, enum ibv_wr_opcode op,
	      void *addr, uint32_t len, uint32_t lkey, uint64_t raddr,
	      uint32_t rkey, bool signaled);
int post_recv(struct ibv_qp *qp, struct ibv_srq *srq, uint64_t wr_id,
	      void *addr, uint32_t len, uint32_t lkey);
/* Wait for one completion on @cq (deadline 20 s, scaled); false on error. */
bool wait_one(struct ibv_cq *cq, struct ibv_wc *wc, const char *what);

/* ---- the modes (an exit status each) ------------------------------------- */

int mode_traffic(void);		/* shca_fault_traffic.c */
int mode_qps(void);		/* shca_fault_qps.c */
int mode_mrs(void);		/* shca_fault_mrs.c */

#endif /* SHCA_FAULT_H */
