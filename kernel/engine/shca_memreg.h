/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca memory registration state changes (shca_memreg.c).
 */
#ifndef SHCA_MEMREG_H
#define SHCA_MEMREG_H

#include "shca_mem.h"

int shca_mr_table_init(struct shca_dev *sdev, u32 entries);
void shca_mr_table_destroy(struct shca_dev *sdev);
struct shca_mkey *shca_mkey_new(struct shca_dev *sdev, u32 pdn,
				enum shca_mkey_kind kind);
int shca_mkey_publish(struct shca_mkey *o, enum shca_mkey_state state);
int shca_mkey_publish_mr(struct shca_mkey *o, int access, u64 iova,
			 u64 length);
int shca_mkey_retire(struct shca_mkey *o, u32 *key);
bool shca_mkey_remote(const struct shca_mkey *o);
void shca_mkey_drain(struct shca_mkey *o);
int shca_mr_check_access(struct ib_device *ibdev, int access);

/*
 * Work requests the requester executes on behalf of a QP (REG_MR,
 * LOCAL_INV, BIND_MW) and remote invalidation (SEND_WITH_INV).  Return 0
 * or a negative errno the caller maps to a completion status: -ENOENT (key
 * not current), -EACCES (PD, QP or access rights), -ERANGE (window outside
 * its MR), -EINVAL (operation not allowed for the object or its state, key
 * index changed), -EBUSY (invalidating an MR with bound windows).
 *
 * Invalidation (LOCAL_INV, SEND_WITH_INV, rebinding a bound window,
 * dealloc_mw, dereg_mr of an MR with remote access or an FRMR, rereg of
 * a user MR's PD, access or translation): first the old key stops
 * looking up, or looks up with the new rights (state change under the
 * table lock), then shca_rkey_sweep() runs for (PD number, old key),
 * from the caller's context with no shca_mr lock held; it may run under
 * the invalidating QP's qp->lock.  When it returns, no access that
 * passed a check of the old key is still copying and every later check
 * fails (shca_rkey.h).  dereg_mr and dealloc_mw then wait (sleeping)
 * until every reference is put: never hold one across a sleep.
 */
int shca_mr_fast_reg(struct shca_qp *qp, struct ib_mr *ibmr, u32 key,
		     int access);
int shca_mr_invalidate(struct shca_dev *sdev, struct shca_pd *pd, u32 key,
		       bool remote);
int shca_mw_bind(struct shca_qp *qp, const struct shca_bind_wr *wr);

#endif /* SHCA_MEMREG_H */
