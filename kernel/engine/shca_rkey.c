// SPDX-License-Identifier: GPL-2.0
/*
 * shca remote key validation in the data path.
 *
 * An RDMA operation a responder QP executes over more than one packet (an
 * RDMA WRITE being received, the responses of an RDMA READ being built)
 * opens a slot of the QP's set with a full check of its R_Key: key table
 * lookup, generation, state, PD, QP binding of a type 2 window, access
 * rights and the bounds of the whole operation (shca_mkey_get_rkey()).  The
 * slot keeps a reference to the MR or MW found.  Every packet's access,
 * the first one's too, then checks only the slot's valid bit, under the
 * set's lock, and moves its bytes under the same lock; the operation's
 * last packet closes the slot.  An ATOMIC opens, executes and closes.
 *
 * An invalidation (shca_memreg.c: LOCAL_INV, SEND_WITH_INV, window rebind and
 * deallocation, MR deregistration and re-registration) makes the key stop
 * looking up and then calls shca_rkey_sweep(), which walks the device's
 * sets: a set of another PD is skipped on the PD compare; in the others,
 * under each set's lock, every valid slot holding the key loses its valid
 * bit and its reference.  The operation holding such a slot fails at its
 * next packet with a remote access error.  See shca_rkey.h for why this
 * is a fence.
 */
#include "shca.h"
#include "shca_fault.h"
#include "shca_qpc.h"
#include "shca_rkey.h"
#include "shca_mem.h"
#include "shca_trace.h"

/**
 * shca_rkey_dev_init - the device's (empty) table of PDs for the sweep
 * @sdev: device being created
 */
void shca_rkey_dev_init(struct shca_dev *sdev)
{
	xa_init(&sdev->pd_xa);
}

/**
 * shca_rkey_dev_destroy - free the device's table of PDs
 * @sdev: device being freed (every PD is gone)
 */
void shca_rkey_dev_destroy(struct shca_dev *sdev)
{
	WARN_ON(!xa_empty(&sdev->pd_xa));
	xa_destroy(&sdev->pd_xa);
}

/**
 * shca_rkey_pd_add - give a new PD its (empty) list of QP sets and let
 *	sweeps find it by number
 * @sdev: device
 * @pd: the PD, its number allocated
 *
 * Process context.
 *
 * Return: 0 or -ENOMEM.
 */
int shca_rkey_pd_add(struct shca_dev *sdev, struct shca_pd *pd)
{
	spin_lock_init(&pd->rkey_lock);
	INIT_LIST_HEAD(&pd->rkey_sets);
	return xa_err(xa_store(&sdev->pd_xa, pd->pdn, pd, GFP_KERNEL));
}

/**
 * shca_rkey_pd_del - a PD is being freed
 * @sdev: device
 * @pd: the PD, which no QP or key uses any more (the RDMA core's count),
 *	so no sweep can be looking for its number
 */
void shca_rkey_pd_del(struct shca_dev *sdev, struct shca_pd *pd)
{
	WARN_ON(!list_empty(&pd->rkey_sets));
	xa_erase(&sdev->pd_xa, pd->pdn);
}

/**
 * shca_rkey_set_init - an empty set for a new QP, in the QP's PD
 * @qp: QP being created (its PD set)
 */
void shca_rkey_set_init(struct shca_qp *qp)
{
	struct shca_rkey_set *set = &qp->rkeys;

	spin_lock_init(&set->lock);
	shca_rkey_slots_init(&set->slots, qp->pd->pdn);
	memset(set->obj, 0, sizeof(set->obj));
	set->fresh = 0;
	INIT_LIST_HEAD(&set->node);
	set->listed = false;
}

/**
 * shca_rkey_set_join - make a new QP's set visible to sweeps
 * @qp: RC or UC QP, before any packet can reach it
 */
void shca_rkey_set_join(struct shca_qp *qp)
{
	struct shca_pd *pd = qp->pd;

	spin_lock_bh(&pd->rkey_lock);
	list_add_tail(&qp->rkeys.node, &pd->rkey_sets);
	qp->rkeys.listed = true;
	spin_unlock_bh(&pd->rkey_lock);
}

/**
 * shca_rkey_set_leave - take a destroyed QP's set off the sweep's list
 * @qp: QP no packet can reach any more and none is being handled for
 *	(its last reference is gone)
 *
 * Closes the slots still open (a transfer cut short by the destroy).
 */
void shca_rkey_set_leave(struct shca_qp *qp)
{
	struct shca_pd *pd = qp->pd;

	spin_lock_bh(&qp->lock);
	shca_rkey_close_all(qp);
	spin_unlock_bh(&qp->lock);
	if (!qp->rkeys.listed)
		return;
	spin_lock_bh(&pd->rkey_lock);
	list_del_init(&qp->rkeys.node);
	qp->rkeys.listed = false;
	spin_unlock_bh(&pd->rkey_lock);
}

/* Count a refused lookup under the reason the lookup gave. */
static void shca_rkey_count_refusal(struct shca_dev *sdev, int err)
{
	shca_stat_inc(sdev, err == -ENOENT ? SHCA_CNT_RKEY_REFUSED_KEY :
		      SHCA_CNT_RKEY_REFUSED_ACCESS);
}

/* The lookup of @use, its refusal counted; no reference kept. */
static int shca_rkey_check_use(struct shca_qp *qp,
			       const struct shca_key_use *use)
{
	struct shca_mkey *mr;
	int err;

	lockdep_assert_held(&qp->lock);
	mr = shca_mkey_get_rkey(qp, use, &err);
	if (!mr) {
		shca_rkey_count_refusal(qp->sdev, err);
		return err;
	}
	shca_mkey_put(mr);
	return 0;
}

/**
 * shca_rkey_check - full check of an R_Key, no slot taken
 * @qp: responder QP (caller must hold qp->lock)
 * @rkey: untrusted key from the packet
 * @iova: first byte the operation accesses
 * @len: bytes it accesses
 * @access: IB_ACCESS_REMOTE_READ, _WRITE or _ATOMIC, SHCA_ACCESS_FLUSH_*
 *
 * For a request accepted now and executed later (an RDMA READ, whose
 * responses open the slot when they are built), or one that touches no
 * byte (a FLUSH).
 *
 * Return: 0, or the lookup's error (-ENOENT: no such key or a stale
 * generation; -EACCES: PD, QP or rights; -ERANGE: bounds).
 */
int shca_rkey_check(struct shca_qp *qp, u32 rkey, u64 iova, u64 len,
		    int access)
{
	struct shca_key_use use = {
		.key = rkey, .iova = iova, .len = len, .access = access,
	};

	return shca_rkey_check_use(qp, &use);
}

/**
 * shca_rkey_check_whole - check an R_Key for an operation on its whole
 *	region, no slot taken
 * @qp: responder QP (caller must hold qp->lock)
 * @rkey: untrusted key from the packet
 * @access: the rights needed (SHCA_ACCESS_FLUSH_*)
 *
 * For a FLUSH of a whole memory region: no address or length to check.
 *
 * Return: as shca_rkey_check(), never -ERANGE.
 */
int shca_rkey_check_whole(struct shca_qp *qp, u32 rkey, int access)
{
	struct shca_key_use use = {
		.key = rkey, .access = access, .whole = true,
	};

	return shca_rkey_check_use(qp, &use);
}

/**
 * shca_rkey_open - check an R_Key and hold it in a slot for an operation
 * @qp: responder QP (caller must hold qp->lock)
 * @rkey: untrusted key from the packet
 * @iova: first byte the whole operation accesses
 * @len: bytes the whole operation accesses
 * @access: IB_ACCESS_REMOTE_READ, _WRITE or _ATOMIC
 *
 * The lookup runs under the set's lock, so that an invalidation that
 * changed the key before its sweep reached this set is seen by it, and
 * one whose sweep comes later finds the slot.
 *
 * Return: the slot (for the accesses and shca_rkey_close()), or as
 * shca_rkey_check(), or -ENOSPC when every slot is in use.
 */
int shca_rkey_open(struct shca_qp *qp, u32 rkey, u64 iova, u64 len,
		   int access)
{
	struct shca_key_use use = {
		.key = rkey, .iova = iova, .len = len, .access = access,
	};
	struct shca_rkey_set *set = &qp->rkeys;
	struct shca_mkey *mr;
	int err, slot;

	lockdep_assert_held(&qp->lock);
	spin_lock(&set->lock);
	mr = shca_mkey_get_rkey(qp, &use, &err);
	if (!mr) {
		spin_unlock(&set->lock);
		shca_rkey_count_refusal(qp->sdev, err);
		return err;
	}
	slot = shca_rkey_record(&set->slots, rkey);
	if (slot < 0) {
		spin_unlock(&set->lock);
		shca_mkey_put(mr);
		return -ENOSPC;
	}
	set->obj[slot] = mr;
	set->fresh |= BIT(slot);
	spin_unlock(&set->lock);
	return slot;
}

/* Release @slot; caller holds the set's lock.  Ignores a bad number. */
static void shca_rkey_release_locked(struct shca_rkey_set *set, int slot)
{
	lockdep_assert_held(&set->lock);
	if (shca_rkey_release(&set->slots, slot))
		return;
	shca_mkey_put(set->obj[slot]);
	set->obj[slot] = NULL;
	set->fresh &= ~BIT(slot);
}

/**
 * shca_rkey_close - the operation holding @slot is over
 * @qp: responder QP (caller must hold qp->lock)
 * @slot: from shca_rkey_open(), swept or not; a negative one is ignored
 */
void shca_rkey_close(struct shca_qp *qp, int slot)
{
	lockdep_assert_held(&qp->lock);
	if (slot < 0)
		return;
	spin_lock(&qp->rkeys.lock);
	shca_rkey_release_locked(&qp->rkeys, slot);
	spin_unlock(&qp->rkeys.lock);
}

/**
 * shca_rkey_close_all - close every slot of the QP
 * @qp: QP (caller must hold qp->lock): reset, error or destroy, when no
 *	operation of the QP goes on
 */
void shca_rkey_close_all(struct shca_qp *qp)
{
	struct shca_rkey_set *set = &qp->rkeys;
	int i;

	lockdep_assert_held(&qp->lock);
	spin_lock(&set->lock);
	for (i = 0; i < SHCA_RKEY_NSLOTS; i++)
		if (set->slots.in_use & BIT(i))
			shca_rkey_release_locked(set, i);
	spin_unlock(&set->lock);
}

/*
 * Enter the critical section of an access through @slot: on success the
 * set's lock is held and *@ref is the slot's MR or MW and key.  -ESTALE
 * (lock not held) when the slot was swept or is not open.
 */
static int shca_rkey_enter(struct shca_qp *qp, int slot,
			   struct shca_mkey_ref *ref)
{
	struct shca_rkey_set *set = &qp->rkeys;

	lockdep_assert_held(&qp->lock);
	spin_lock(&set->lock);
	if (!shca_rkey_slot_valid(&set->slots, slot) || !set->obj[slot]) {
		spin_unlock(&set->lock);
		shca_stat_inc(qp->sdev, SHCA_CNT_RKEY_SWEPT_REFUSED);
		return -ESTALE;
	}
	if (set->fresh & BIT(slot))
		set->fresh &= ~BIT(slot);
	else
		shca_stat_inc(qp->sdev, SHCA_CNT_RKEY_SLOT_HITS);
	ref->obj = set->obj[slot];
	ref->key = set->slots.rkey[slot];
	shca_fault_point(SHCA_HOLD_COPY);
	return 0;
}

/*
 * Leave the critical section.  An access that failed there counts as
 * refused like one whose slot was swept: the key changed under the open
 * slot (e.g. a window retired just before its sweep reached this set).
 */
static int shca_rkey_exit(struct shca_qp *qp, int ret)
{
	spin_unlock(&qp->rkeys.lock);
	if (ret)
		shca_stat_inc(qp->sdev, SHCA_CNT_RKEY_SWEPT_REFUSED);
	return ret;
}

/**
 * shca_rkey_write_skb - place an RDMA WRITE packet's payload
 * @qp: responder QP (caller must hold qp->lock)
 * @slot: the WRITE's slot
 * @iova: where the payload goes (a window's offset if zero based)
 * @skb: the packet
 * @skb_off: payload offset in @skb
 * @len: payload bytes
 *
 * Return: 0, -ESTALE when the slot was swept, or an error of
 * shca_mkey_copy_skb() (the MR or window changed under the slot).
 */
int shca_rkey_write_skb(struct shca_qp *qp, int slot, u64 iova,
			struct sk_buff *skb, u32 skb_off, u32 len)
{
	struct shca_mkey_ref ref;
	int ret;

	lockdep_assert_held(&qp->lock);
	ret = shca_rkey_enter(qp, slot, &ref);
	if (ret)
		return ret;
	ret = shca_mkey_copy_skb(&ref, iova, skb, skb_off, len, SHCA_TO_MR);
	return shca_rkey_exit(qp, ret);
}

/**
 * shca_rkey_read - copy an RDMA READ response's payload out of memory
 * @qp: responder QP (caller must hold qp->lock)
 * @slot: the READ's slot
 * @iova: first byte (a window's offset if zero based)
 * @buf: the packet's payload area
 * @len: bytes
 * @crc: raw CRC-32 state the bytes are added to as they are copied
 *
 * The bytes are copied, not referenced: once the sweep of an invalidation
 * has passed, no packet can carry bytes of the memory read afterwards.
 *
 * Return: as shca_rkey_write_skb().
 */
int shca_rkey_read(struct shca_qp *qp, int slot, u64 iova, void *buf,
		   u32 len, u32 *crc)
{
	struct shca_mkey_ref ref;
	int ret;

	lockdep_assert_held(&qp->lock);
	ret = shca_rkey_enter(qp, slot, &ref);
	if (ret)
		return ret;
	ret = shca_mkey_copy_crc(&ref, iova, buf, len, crc);
	return shca_rkey_exit(qp, ret);
}

/**
 * shca_rkey_atomic - execute an ATOMIC through its slot
 * @qp: responder QP (caller must hold qp->lock)
 * @slot: the ATOMIC's slot
 * @iova: operand address
 * @a: the operation; a->orig receives the operand's value before
 *
 * Return: as shca_rkey_write_skb(), or an error of shca_mkey_atomic().
 */
int shca_rkey_atomic(struct shca_qp *qp, int slot, u64 iova,
		     struct shca_atomic *a)
{
	struct shca_mkey_ref ref;
	int ret;

	lockdep_assert_held(&qp->lock);
	ret = shca_rkey_enter(qp, slot, &ref);
	if (ret)
		return ret;
	ret = shca_mkey_atomic(&ref, iova, a);
	return shca_rkey_exit(qp, ret);
}

/* Clear @rkey in one set; caller holds the set's lock.  Returns slots. */
static unsigned int shca_rkey_sweep_set(struct shca_rkey_set *set, u32 pdn,
					u32 rkey)
{
	unsigned long cleared;
	unsigned int i;

	lockdep_assert_held(&set->lock);
	cleared = shca_rkey_clear(&set->slots, pdn, rkey);
	for_each_set_bit(i, &cleared, SHCA_RKEY_NSLOTS) {
		shca_mkey_put(set->obj[i]);
		set->obj[i] = NULL;
	}
	return hweight_long(cleared);
}

/**
 * shca_rkey_sweep - stop every in-flight operation using an R_Key
 * @sdev: device
 * @pdn: PD number of the key (the PD it had, if it just changed)
 * @rkey: the key that stopped looking up
 *
 * Called after the key's state changed (shca_memreg.c), from process or
 * softirq context, possibly holding one QP's qp->lock (LOCAL_INV, BIND_MW,
 * SEND_WITH_INV) but no set's lock.  Takes each set's lock of PD @pdn in
 * turn, walking that PD's list only (the PD compare of the seed, made by
 * the list a set is on): when it returns, every access that passed a
 * check of @rkey has finished, and the operations holding it fail at
 * their next packet.  The PD cannot go meanwhile: the object whose key
 * this is holds it (and a re-registration that moved the object to
 * another PD holds the old one until it returns).
 */
void shca_rkey_sweep(struct shca_dev *sdev, u32 pdn, u32 rkey)
{
	struct shca_pd *pd = xa_load(&sdev->pd_xa, pdn);
	unsigned int cleared = 0, visited = 0;
	struct shca_rkey_set *set;

	if (pd) {
		spin_lock_bh(&pd->rkey_lock);
		list_for_each_entry(set, &pd->rkey_sets, node) {
			visited++;
			spin_lock(&set->lock);
			cleared += shca_rkey_sweep_set(set, pdn, rkey);
			spin_unlock(&set->lock);
		}
		spin_unlock_bh(&pd->rkey_lock);
	}
	trace_shca_rkey_sweep(&sdev->ibdev, pdn, rkey, visited, cleared);
	shca_stat_inc(sdev, SHCA_CNT_RKEY_SWEEPS);
	shca_stat_add(sdev, SHCA_CNT_RKEY_SLOTS_CLEARED, cleared);
	shca_stat_add(sdev, SHCA_CNT_RKEY_SETS_VISITED, visited);
}
