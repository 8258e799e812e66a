/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca remote key validation in the data path: each responder
 * QP's R_Key slots, the fenced accesses through them, and the sweep that
 * every invalidation runs over the device's QPs.
 *
 * The rule that makes an invalidation a fence: the check of an R_Key
 * (the full lookup that opens a slot, or a later packet's look at its
 * slot's valid bit) and the memory access it allows happen under the
 * set's lock, in one critical section; an invalidation first makes the
 * key stop looking up (shca_memreg.c, under the key table's lock) and then
 * sweeps, taking every set's lock of the key's PD in turn.  So once the
 * sweep has returned, no access that passed a check of the old key is
 * still copying, and every later check fails.  Documentation/
 * architecture.md, "Remote key validation", says what a user can rely on.
 */
#ifndef SHCA_RKEY_H
#define SHCA_RKEY_H

#include <linux/list.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include "shca_keytab.h"
#include "shca_mem.h"

struct shca_dev;
struct shca_qp;

/**
 * struct shca_rkey_set - a responder QP's remote key memory
 * @lock: serialises @slots and @obj, and each access made through a
 *	slot, against the sweep.  Innermost: taken inside qp->lock by the
 *	data path and inside shca_pd.rkey_lock by the sweep (which may run
 *	under another QP's qp->lock); never two sets' locks at once.
 * @slots: the PD, the R_Keys of the QP's RDMA operations in flight, and
 *	their in-use and valid bits (shca_keytab.h)
 * @obj: per in-use slot, the MR or MW its check found, referenced;
 *	NULL once the slot was swept (the sweep drops the reference)
 * @fresh: slots opened since their last access (that access was checked
 *	by the lookup, not by the slot alone)
 * @node: entry on its PD's shca_pd.rkey_sets (under shca_pd.rkey_lock)
 * @listed: on that list
 */
struct shca_rkey_set {
	spinlock_t lock;
	struct shca_rkey_slots slots;
	struct shca_mkey *obj[SHCA_RKEY_NSLOTS];
	u16 fresh;
	struct list_head node;
	bool listed;
};

void shca_rkey_dev_init(struct shca_dev *sdev);
void shca_rkey_dev_destroy(struct shca_dev *sdev);
int shca_rkey_pd_add(struct shca_dev *sdev, struct shca_pd *pd);
void shca_rkey_pd_del(struct shca_dev *sdev, struct shca_pd *pd);
void shca_rkey_set_init(struct shca_qp *qp);
void shca_rkey_set_join(struct shca_qp *qp);
void shca_rkey_set_leave(struct shca_qp *qp);

int shca_rkey_check(struct shca_qp *qp, u32 rkey, u64 iova, u64 len,
		    int access);
int shca_rkey_check_whole(struct shca_qp *qp, u32 rkey, int access);
int shca_rkey_open(struct shca_qp *qp, u32 rkey, u64 iova, u64 len,
		   int access);
void shca_rkey_close(struct shca_qp *qp, int slot);
void shca_rkey_close_all(struct shca_qp *qp);

int shca_rkey_write_skb(struct shca_qp *qp, int slot, u64 iova,
			struct sk_buff *skb, u32 skb_off, u32 len);
int shca_rkey_read(struct shca_qp *qp, int slot, u64 iova, void *buf,
		   u32 len, u32 *crc);
int shca_rkey_atomic(struct shca_qp *qp, int slot, u64 iova,
		     struct shca_atomic *a);

void shca_rkey_sweep(struct shca_dev *sdev, u32 pdn, u32 rkey);

#endif /* SHCA_RKEY_H */
