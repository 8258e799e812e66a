/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca responder transmit (shca_resp_tx.c).  Callers hold qp->lock unless
 * a function says otherwise.
 */
#ifndef SHCA_RESP_TX_H
#define SHCA_RESP_TX_H

#include <linux/hrtimer.h>
#include "shca_hdr.h"

struct shca_ack;
struct shca_qp;

int shca_resp_transmit(struct shca_qp *qp, int budget);
bool shca_resp_has_work(struct shca_qp *qp);
void shca_resp_ack_send(struct shca_qp *qp, struct shca_ack *ack);
void shca_resp_ack_wait(struct shca_qp *qp);
bool shca_resp_state_ok(struct shca_qp *qp);
bool shca_resp_may_send(struct shca_qp *qp);
enum hrtimer_restart shca_resp_held_fn(struct hrtimer *t);
void shca_resp_send_ack(struct shca_qp *qp, u32 psn, u8 syndrome);
void shca_resp_nak(struct shca_qp *qp, u32 psn, u8 syndrome);
u32 shca_resp_nres(struct shca_qp *qp);
void shca_resp_nak_fatal(struct shca_qp *qp, u32 psn,
			 enum shca_nak_code code);
void shca_resp_read_stop(struct shca_qp *qp);

#endif /* SHCA_RESP_TX_H */
