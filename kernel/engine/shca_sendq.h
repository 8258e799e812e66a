/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca send queue in the engine: transmit history records and WQE
 * completion order (shca_sendq.c).  Callers hold qp->lock.
 */
#ifndef SHCA_SENDQ_H
#define SHCA_SENDQ_H

#include <rdma/ib_verbs.h>

struct shca_qp;
struct shca_send_wqe;
struct shca_txhist_rec;

int shca_req_hist_alloc(struct shca_qp *qp);
void shca_req_hist_free(struct shca_qp *qp);
void shca_req_reset(struct shca_qp *qp);
void shca_req_flush(struct shca_qp *qp);
void shca_wqe_done(struct shca_qp *qp, struct shca_send_wqe *wqe,
		   enum ib_wc_status status);
bool shca_op_is_rd_atomic(u8 opcode);
bool shca_req_live(const struct shca_qp *qp);
bool shca_wqe_is_local(const struct shca_send_wqe *wqe);
struct shca_send_wqe *shca_req_rec_wqe(struct shca_qp *qp,
				       const struct shca_txhist_rec *rec);
u32 shca_req_sent_end(struct shca_qp *qp);
bool shca_req_outstanding(struct shca_qp *qp);
const struct shca_txhist_rec *shca_req_oldest(struct shca_qp *qp);
void shca_req_fail(struct shca_qp *qp, u32 psn, enum ib_wc_status status);
void shca_req_retire(struct shca_qp *qp, u32 psn, u32 flags);

#endif /* SHCA_SENDQ_H */
