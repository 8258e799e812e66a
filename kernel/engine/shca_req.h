/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca requester (shca_req.c).  Callers hold qp->lock.
 */
#ifndef SHCA_REQ_H
#define SHCA_REQ_H

#include <linux/types.h>

struct shca_qp;

int shca_req_transmit(struct shca_qp *qp, int budget);
bool shca_req_has_work(struct shca_qp *qp);
bool shca_req_has_fetched_work(struct shca_qp *qp);
bool shca_req_quiet(struct shca_qp *qp);
bool shca_req_off_wire(struct shca_qp *qp);
void shca_req_arm_timer(struct shca_qp *qp);

#endif /* SHCA_REQ_H */
