/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca work queues of a QP in the engine (shca_wq.c).
 */
#ifndef SHCA_WQ_H
#define SHCA_WQ_H

#include <linux/types.h>

struct shca_cq;
struct shca_dev;
struct shca_engine;
struct shca_pd;
struct shca_qp;

u32 shca_qp_idx(const struct shca_dev *sdev, u32 qpn);
struct shca_qp *shca_qp_get_idx(struct shca_engine *eng, u32 idx);
struct shca_qp *shca_qp_get(struct shca_dev *sdev, u32 qpn);
void shca_qp_fetch_pd(struct shca_dev *sdev, struct shca_pd *pd);
void shca_qp_fetch_cq(struct shca_dev *sdev, struct shca_cq *cq);
void shca_qp_put(struct shca_qp *qp);
int shca_qp_fetch(struct shca_qp *qp);
void shca_qp_complete(struct shca_qp *qp);
void shca_qp_error(struct shca_qp *qp);
void shca_qp_flush(struct shca_qp *qp);
void shca_rq_flush(struct shca_qp *qp);
void shca_qp_events_init(struct shca_qp *qp);
void shca_qp_events_stop(struct shca_qp *qp);

#endif /* SHCA_WQ_H */
