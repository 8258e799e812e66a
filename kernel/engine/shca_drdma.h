/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca DRDMA (shca_drdma.c, mechanism 000): the address range register
 * of each range of a device-memory window and what moves it.
 *
 * DRDMA WRITE: the range is armed for a transfer of total_len bytes; the
 * application posts a send (an RDMA WRITE) whose data comes from a DM MR
 * over the range, before the data exists.  The WQE waits at the head of
 * its QP's send queue for the range's packet side: other QPs are not
 * held back.  The producer writes into the range and commits what it
 * wrote; when the byte count reaches total_len the packet side turns
 * valid and the QPs waiting for it send, from the committing context when
 * nothing of theirs is in flight (as a doorbell's posts do), else from
 * the transmit stage: the packets leave with the range's pages attached
 * by reference, nothing copied.
 *
 * DRDMA READ: the range is armed for total_len bytes; an RDMA READ whose
 * destination is a DM MR over it places the response payload in the
 * range, read_len counts how far it has landed, and at total_len both
 * sides turn valid.
 *
 * Locking: the window's lock (struct shca_dmw) covers every register and
 * waiter list, and nests inside qp->lock.
 */
#ifndef SHCA_DRDMA_H
#define SHCA_DRDMA_H

#include <linux/list.h>
#include <linux/types.h>

/* QPs a completing commit sends for itself; more go to the scheduler */
#define SHCA_DRDMA_RESUME_MAX	8

struct shca_arr_reg;
struct shca_dev;
struct shca_dmw;
struct shca_qp;
struct shca_send_wqe;

void shca_drdma_attach(struct shca_dmw *w, u32 idx, struct shca_arr_reg *reg);
void shca_drdma_detach(struct shca_dmw *w, u32 idx);
int shca_drdma_arm(struct shca_dmw *w, u32 idx, u32 dir, u64 offset,
		   u32 length);
int shca_drdma_commit(struct shca_dev *sdev, struct shca_dmw *w, u32 idx,
		      u32 bytes, u32 *count);
void shca_drdma_landed(struct shca_dev *sdev, u32 idx, u32 gen, u64 offset,
		       u32 len);
void shca_drdma_fetched(struct shca_qp *qp, struct shca_send_wqe *wqe);
bool shca_drdma_may_send(struct shca_qp *qp, struct shca_send_wqe *wqe);
void shca_drdma_unwait(struct shca_qp *qp);
void shca_drdma_read(struct shca_dmw *w, const struct shca_arr_reg *reg,
		     struct shca_arr_reg *out);

#endif /* SHCA_DRDMA_H */
