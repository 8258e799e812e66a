// SPDX-License-Identifier: GPL-2.0
/*
 * shca memory registration state changes: a new key object published in
 * the key table and retired from it, and the work requests that change
 * keys (fast registration, local and remote invalidation, binding a
 * memory window).  Every invalidation ends with the R_Key sweep
 * (shca_rkey.c), so no access through the old key outlives it.  The
 * locking and lifetime rules are in shca_mem.h.
 */
#include <linux/slab.h>
#include "shca.h"
#include "shca_mem.h"
#include "shca_memreg.h"
#include "shca_qpc.h"
#include "shca_rkey.h"

/**
 * shca_mkey_new - allocate an MR or MW object, not yet in the key table
 * @sdev: device
 * @pdn: its PD's number
 * @kind: what it is
 *
 * Return: the object, holding its registration's reference, or NULL.
 */
struct shca_mkey *shca_mkey_new(struct shca_dev *sdev, u32 pdn,
				enum shca_mkey_kind kind)
{
	struct shca_mkey *o = kzalloc(sizeof(*o), GFP_KERNEL);

	if (!o)
		return NULL;
	o->sdev = sdev;
	o->kind = kind;
	o->pdn = pdn;
	refcount_set(&o->ref, 1);
	init_completion(&o->done);
	seqcount_spinlock_init(&o->seq, &shca_mrt(sdev)->lock);
	return o;
}

/**
 * shca_mkey_publish - give an object a key and make it visible to lookups
 * @o: the object, fully initialised
 * @state: the state lookups find it in
 *
 * Return: 0, or -ENOMEM when the key table is full.
 */
int shca_mkey_publish(struct shca_mkey *o, enum shca_mkey_state state)
{
	struct shca_mr_table *t = shca_mrt(o->sdev);
	u32 key;
	int ret;

	/* order the object's initialisation before the owner pointer store */
	smp_wmb();
	spin_lock_bh(&t->lock);
	ret = shca_keytab_alloc(&t->kt, o, &key);
	if (!ret) {
		write_seqcount_begin(&o->seq);
		o->key = key;
		o->state = state;
		write_seqcount_end(&o->seq);
	}
	spin_unlock_bh(&t->lock);
	if (ret)
		return ret == SHCA_KT_ENOSPC ? -ENOMEM : ret;
	o->ibmr.lkey = key;
	o->ibmr.rkey = key;
	return 0;
}

/**
 * shca_mkey_publish_mr - give an MR its rights and addresses and publish it
 *	valid
 * @o: the MR, its translation filled in
 * @access: IB_ACCESS_* rights (those outside SHCA_MR_ACCESS are dropped)
 * @iova: address of its first byte
 * @length: bytes
 *
 * Return: as shca_mkey_publish().
 */
int shca_mkey_publish_mr(struct shca_mkey *o, int access, u64 iova,
			 u64 length)
{
	o->access = access & SHCA_MR_ACCESS;
	o->iova = iova;
	o->length = length;
	o->ibmr.iova = iova;
	o->ibmr.length = length;
	return shca_mkey_publish(o, SHCA_MRS_VALID);
}

/**
 * shca_mkey_retire - mark an object dead and free its key
 * @o: the object
 * @key: receives the key it had
 *
 * Under the table lock.  An MR with bound windows stays.
 *
 * Return: 0; 1, doing nothing, when @o is dead already (its translation
 * was replaced by rereg_user_mr); -EBUSY for an MR with bound windows.
 */
int shca_mkey_retire(struct shca_mkey *o, u32 *key)
{
	struct shca_mr_table *t = shca_mrt(o->sdev);
	int ret = 0;

	spin_lock_bh(&t->lock);
	if (o->state == SHCA_MRS_DEAD) {
		ret = 1;
		goto out;
	}
	if (!shca_is_mw(o) && o->m.num_mw) {
		ret = -EBUSY;
		goto out;
	}
	if (shca_is_mw(o) && o->w.mr)
		o->w.mr->m.num_mw--;
	write_seqcount_begin(&o->seq);
	o->state = SHCA_MRS_DEAD;
	if (shca_is_mw(o))
		o->w.mr = NULL;
	write_seqcount_end(&o->seq);
	*key = o->key;
	WARN_ON(shca_keytab_free(&t->kt, o->key));
out:
	spin_unlock_bh(&t->lock);
	return ret;
}

/**
 * shca_mkey_remote - may remote operations hold the object's key in R_Key
 * slots (so that its invalidation must sweep)?
 * @o: the object
 *
 * Return: true for a fast-registration MR and any object with remote
 * rights.
 */
bool shca_mkey_remote(const struct shca_mkey *o)
{
	return o->kind == SHCA_MRK_FRMR || (o->access & SHCA_ACCESS_REMOTE);
}

/**
 * shca_mkey_drain - drop the registration's reference and wait for every
 * lookup's (sleeps)
 * @o: the object, retired
 */
void shca_mkey_drain(struct shca_mkey *o)
{
	shca_mkey_put(o);
	while (!wait_for_completion_timeout(&o->done, 10 * HZ))
		pr_warn_ratelimited("shca: key %#x still referenced\n", o->key);
}

/**
 * shca_mr_check_access - check the access rights of a new MR or of a
 * REG_MR work request
 * @ibdev: device
 * @access: IB_ACCESS_* flags
 *
 * Return: 0; -EOPNOTSUPP for on-demand paging; -EINVAL for IB_ZERO_BASED
 * or what ib_check_mr_access() refuses.
 */
int shca_mr_check_access(struct ib_device *ibdev, int access)
{
	if (access & IB_ACCESS_ON_DEMAND)
		return -EOPNOTSUPP;
	if (access & IB_ZERO_BASED)
		return -EINVAL;
	return ib_check_mr_access(ibdev, access);
}

/* --- work requests: REG_MR, LOCAL_INV / SEND_WITH_INV, BIND_MW --- */

/*
 * Commit the blocks of the last map_mr_sg as the FRMR's translation (the
 * staged array becomes the live one; the old live one is staged for the
 * next map).  Caller holds shca_mrt.lock and checked the state.
 */
static int shca_frmr_commit(struct shca_mkey *o, u32 key, int access)
{
	struct shca_mr_table *t = shca_mrt(o->sdev);
	struct ib_mr *ibmr = &o->ibmr;
	u64 psize = ibmr->page_size, iova = ibmr->iova, len = ibmr->length;
	u32 npages = o->m.staged_new ? o->m.mapped : o->m.npages;
	u32 shift;
	int ret;

	if (!is_power_of_2(psize) || psize < SZ_512 || !npages ||
	    npages > o->m.max_pages || len > SHCA_MAX_MR_SIZE)
		return -EINVAL;
	shift = ilog2(psize);
	if (len > ((u64)npages << shift) - (iova & (psize - 1)))
		return -EINVAL;
	ret = shca_keytab_rekey(&t->kt, o->key, key);
	if (ret)
		return ret == SHCA_KT_ENOENT ? -ENOENT : -EINVAL;
	write_seqcount_begin(&o->seq);
	o->key = key;
	o->access = access & SHCA_MR_ACCESS;
	o->iova = iova;
	o->length = len;
	o->m.base = iova & (psize - 1);
	o->m.shift = shift;
	o->m.npages = npages;
	if (o->m.staged_new)
		swap(o->m.blocks, o->m.staged);
	o->m.staged_new = false;
	o->state = SHCA_MRS_VALID;
	write_seqcount_end(&o->seq);
	return 0;
}

/**
 * shca_mr_fast_reg - execute a REG_MR work request
 * @qp: the posting QP
 * @ibmr: an MR from alloc_mr(IB_MR_TYPE_MEM_REG), mapped by ib_map_mr_sg()
 * @key: new key: the MR's index, any key byte (ib_update_fast_reg_key())
 * @access: IB_ACCESS_* rights of the registration
 *
 * The MR must be free (never registered, or invalidated) and in the QP's
 * PD.  Its translation becomes the blocks, iova and length of the last
 * ib_map_mr_sg().
 *
 * Return: 0 or a negative errno (see shca_memreg.h).
 */
int shca_mr_fast_reg(struct shca_qp *qp, struct ib_mr *ibmr, u32 key,
		     int access)
{
	struct shca_mkey *o;
	struct shca_mr_table *t;
	int ret;

	if (!ibmr || ibmr->device != qp->ibqp.device ||
	    ibmr->type != IB_MR_TYPE_MEM_REG)
		return -EINVAL;
	o = to_smr(ibmr);
	if (o->kind != SHCA_MRK_FRMR)
		return -EINVAL;
	if (o->pdn != to_spd(qp->ibqp.pd)->pdn)
		return -EACCES;
	if (shca_mr_check_access(ibmr->device, access))
		return -EINVAL;
	t = shca_mrt(o->sdev);
	spin_lock_bh(&t->lock);
	if (o->state != SHCA_MRS_FREE)
		ret = -EINVAL;
	else
		ret = shca_frmr_commit(o, key, access);
	spin_unlock_bh(&t->lock);
	if (!ret) {
		WRITE_ONCE(ibmr->lkey, key);
		WRITE_ONCE(ibmr->rkey, key);
	}
	return ret;
}

/* Invalidate @o (its key checked); caller holds shca_mrt.lock. */
static int shca_mr_do_invalidate(struct shca_mkey *o)
{
	switch (o->kind) {
	case SHCA_MRK_FRMR:
		if (o->m.num_mw)
			return -EBUSY;
		break;
	case SHCA_MRK_MW2:
		if (o->w.mr)
			o->w.mr->m.num_mw--;
		break;
	default:
		/* user and DMA MRs, type 1 windows (o10-37.2.26) */
		return -EINVAL;
	}
	write_seqcount_begin(&o->seq);
	o->state = SHCA_MRS_FREE;
	if (o->kind == SHCA_MRK_MW2) {
		o->w.mr = NULL;
		o->w.qp_serial = 0;
		o->access = 0;
		o->length = 0;
	}
	write_seqcount_end(&o->seq);
	return 0;
}

/**
 * shca_mr_invalidate - LOCAL_INV or a received SEND_WITH_INV
 * @sdev: device
 * @pd: PD of the QP executing it
 * @key: untrusted key to invalidate
 * @remote: from a SEND_WITH_INV (else a LOCAL_INV)
 *
 * Only FRMRs and type 2 windows can be invalidated.  Invalidating one that
 * is already free succeeds.  On success the sweep has run.
 *
 * Return: 0 or a negative errno (see shca_memreg.h).
 */
int shca_mr_invalidate(struct shca_dev *sdev, struct shca_pd *pd, u32 key,
		       bool remote)
{
	struct shca_mr_table *t = shca_mrt(sdev);
	struct shca_mkey *o = shca_mkey_find(sdev, key);
	int ret;

	if (!o) {
		shca_stat_inc(sdev, SHCA_CNT_INV_REFUSED);
		return -ENOENT;
	}
	spin_lock_bh(&t->lock);
	if (o->key != key || o->state == SHCA_MRS_DEAD)
		ret = -ENOENT;
	else if (!pd || o->pdn != pd->pdn)
		ret = -EACCES;
	else
		ret = shca_mr_do_invalidate(o);
	spin_unlock_bh(&t->lock);
	if (!ret)
		shca_rkey_sweep(sdev, o->pdn, key);
	shca_mkey_put(o);
	if (ret)
		shca_stat_inc(sdev, SHCA_CNT_INV_REFUSED);
	return ret;
}

/**
 * struct shca_bind - the arguments of a window bind
 * @qp: the posting QP
 * @pdn: its PD number
 * @mw_rkey: the window's current key
 * @new_rkey: its key after the bind
 * @mr_lkey: the MR's key
 * @addr: MR iova of the window's first byte
 * @length: window bytes
 * @access: window rights
 */
struct shca_bind {
	struct shca_qp *qp;
	u32 pdn;
	u32 mw_rkey;
	u32 new_rkey;
	u32 mr_lkey;
	u64 addr;
	u64 length;
	int access;
};

/* IBTA checks of a bind; caller holds shca_mrt.lock. */
static int shca_mw_bind_check(const struct shca_bind *b, struct shca_mkey *mw,
			      struct shca_mkey *mr)
{
	if (mw->key != b->mw_rkey || mw->state == SHCA_MRS_DEAD)
		return -ENOENT;
	if (mw->pdn != b->pdn)
		return -EACCES;
	if (shca_key_index(b->new_rkey) != shca_key_index(b->mw_rkey))
		return -EINVAL;
	if (mw->kind == SHCA_MRK_MW1 && (b->access & IB_ZERO_BASED))
		return -EINVAL;
	/* o10-37.2.30 / .40: type 2 binds only when free, never to nothing */
	if (mw->kind == SHCA_MRK_MW2 &&
	    (mw->state != SHCA_MRS_FREE || !b->length))
		return -EINVAL;
	if (!b->length)
		return 0;
	if (shca_is_mw(mr) || mr->key != b->mr_lkey ||
	    mr->state != SHCA_MRS_VALID)
		return -ENOENT;
	if (mr->pdn != b->pdn || !(mr->access & IB_ACCESS_MW_BIND))
		return -EACCES;
	if ((b->access & SHCA_ACCESS_WRITES) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return -EACCES;
	if (!shca_range_ok(mr->iova, mr->length, b->addr, b->length))
		return -ERANGE;
	return 0;
}

/* Apply a checked bind; caller holds shca_mrt.lock. */
static void shca_mw_do_bind(const struct shca_bind *b, struct shca_mkey *mw,
			    struct shca_mkey *mr)
{
	struct shca_mr_table *t = shca_mrt(mw->sdev);

	if (mw->w.mr)
		mw->w.mr->m.num_mw--;
	if (!b->length)
		mr = NULL;
	if (mr)
		mr->m.num_mw++;
	WARN_ON(shca_keytab_rekey(&t->kt, mw->key, b->new_rkey));
	write_seqcount_begin(&mw->seq);
	mw->key = b->new_rkey;
	mw->state = SHCA_MRS_VALID;
	mw->access = b->access & (SHCA_ACCESS_REMOTE | IB_ZERO_BASED);
	mw->iova = b->addr;
	mw->length = b->length;
	mw->w.mr = mr;
	mw->w.zero_based = !!(b->access & IB_ZERO_BASED);
	mw->w.qp_serial = mw->kind == SHCA_MRK_MW2 ? b->qp->serial : 0;
	write_seqcount_end(&mw->seq);
	WRITE_ONCE(mw->w.ibmw->rkey, b->new_rkey);
}

/*
 * Take a bound type 1 window off its MR, keeping its key: until the bind
 * that follows publishes the new binding, the window is bound to nothing
 * and every access through it fails.  Caller holds shca_mrt.lock.
 */
static void shca_mw_unbind(struct shca_mkey *mw)
{
	lockdep_assert_held(&shca_mrt(mw->sdev)->lock);
	mw->w.mr->m.num_mw--;
	write_seqcount_begin(&mw->seq);
	mw->w.mr = NULL;
	mw->access = 0;
	mw->length = 0;
	write_seqcount_end(&mw->seq);
}

/*
 * Check and apply bind @b.  Rebinding a bound type 1 window to memory
 * first unbinds it and sweeps its key, with the table lock dropped, and
 * only then publishes the new binding (checked again: the window or the
 * MR may have changed meanwhile): no operation that passed a check of
 * the old key can reach the new binding's memory.  *@sweep is set when
 * the caller must still sweep the old key (a window unbound or moved
 * in one step).
 */
static int shca_mw_bind_locked(const struct shca_bind *b,
			       struct shca_mkey *mw, struct shca_mkey *mr,
			       bool *sweep)
{
	struct shca_mr_table *t = shca_mrt(mw->sdev);
	int ret;

	lockdep_assert_held(&t->lock);
	ret = shca_mw_bind_check(b, mw, mr);
	if (ret)
		return ret;
	if (mw->state == SHCA_MRS_VALID && mw->w.mr && b->length) {
		shca_mw_unbind(mw);
		spin_unlock_bh(&t->lock);
		shca_rkey_sweep(mw->sdev, mw->pdn, b->mw_rkey);
		spin_lock_bh(&t->lock);
		ret = shca_mw_bind_check(b, mw, mr);
		if (ret)
			return ret;
	}
	*sweep = mw->state == SHCA_MRS_VALID && mw->w.mr;
	shca_mw_do_bind(b, mw, mr);
	return 0;
}

/**
 * shca_mw_bind - execute a BIND_MW work request (type 1 or type 2)
 * @qp: the posting QP
 * @wr: the bind (validated kernel copy of the work request)
 *
 * Window, MR and QP must share a PD; the MR must allow IB_ACCESS_MW_BIND,
 * hold the window, and have local write if the window grants remote write
 * or atomic.  A type 2 window must be free and is tied to @qp.  Rebinding
 * a bound type 1 window sweeps its old key before the new binding is
 * visible; unbinding one (length 0) sweeps it after.
 *
 * Return: 0 or a negative errno (see shca_memreg.h).
 */
int shca_mw_bind(struct shca_qp *qp, const struct shca_bind_wr *wr)
{
	struct shca_dev *sdev = to_sdev(qp->ibqp.device);
	struct shca_bind b = {
		.qp = qp, .pdn = to_spd(qp->ibqp.pd)->pdn,
		.mw_rkey = wr->mw_rkey, .new_rkey = wr->rkey,
		.mr_lkey = wr->mr_lkey, .addr = wr->addr, .length = wr->length,
		.access = wr->access,
	};
	struct shca_mr_table *t = shca_mrt(sdev);
	struct shca_mkey *mw, *mr = NULL;
	bool was_bound = false;
	int ret;

	if (b.access & ~SHCA_MW_ACCESS)
		return -EINVAL;
	mw = shca_mkey_find(sdev, b.mw_rkey);
	if (!mw)
		return -ENOENT;
	ret = -EINVAL;
	if (!shca_is_mw(mw))
		goto out;
	ret = -ENOENT;
	if (b.length) {
		mr = shca_mkey_find(sdev, b.mr_lkey);
		if (!mr)
			goto out;
	}
	spin_lock_bh(&t->lock);
	ret = shca_mw_bind_locked(&b, mw, mr, &was_bound);
	spin_unlock_bh(&t->lock);
	if (!ret && was_bound)
		shca_rkey_sweep(sdev, mw->pdn, b.mw_rkey);
out:
	shca_mkey_put(mr);
	shca_mkey_put(mw);
	return ret;
}

/* --- the table --- */

/**
 * shca_mr_table_init - create the device's key table
 * @sdev: device (from shca_dev_create(), before registration)
 * @entries: keys the table holds (MRs and MWs together)
 *
 * Return: 0 or -ENOMEM.
 */
int shca_mr_table_init(struct shca_dev *sdev, u32 entries)
{
	struct shca_mr_table *t;
	int ret = -ENOMEM;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return ret;
	t->mem = kvmalloc(shca_keytab_mem_size(entries), GFP_KERNEL);
	if (!t->mem)
		goto err_free;
	ret = shca_keytab_init(&t->kt, entries, t->mem);
	if (ret)
		goto err_mem;
	spin_lock_init(&t->lock);
	sdev->mrt = t;
	return 0;

err_mem:
	kvfree(t->mem);
err_free:
	kfree(t);
	return ret;
}

/**
 * shca_mr_table_destroy - free the device's key table
 * @sdev: device (from dealloc_driver: every MR and MW is gone)
 *
 * Safe to call when shca_mr_table_init() failed or never ran.
 */
void shca_mr_table_destroy(struct shca_dev *sdev)
{
	struct shca_mr_table *t = shca_mrt(sdev);

	if (!t)
		return;
	WARN(t->kt.used, "shca: %u keys still in use\n", t->kt.used);
	sdev->mrt = NULL;
	kvfree(t->mem);
	kfree(t);
}
