// SPDX-License-Identifier: GPL-2.0
/*
 * shca DRDMA: the address range registers of a device-memory window's
 * ranges, arming them, the producer's commits, send WQEs waiting for
 * their range, and bytes of a DRDMA READ landing.  Rules in shca_drdma.h.
 */
#include <linux/mm.h>
#include <rdma/shca-abi.h>
#include "shca.h"
#include "shca_dmw.h"
#include "shca_drdma.h"
#include "shca_engine.h"
#include "shca_mem.h"
#include "shca_qpc.h"
#include "shca_wq.h"
#include "shca_trace.h"

/* Take @qp off the waiter list it is on (range @r's). */
static void shca_drdma_forget(struct shca_qp *qp, struct shca_dmw_range *r)
{
	list_del_init(&qp->dm_wait);
	if (r->reg && r->reg->waiting)
		r->reg->waiting--;
	atomic64_dec(&qp->sdev->stats[SHCA_CNT_DM_WAITING]);
}

/*
 * The QPs a completing commit sends for from its own context, once the
 * window lock is dropped (shca_engine_resume()), each with a reference.
 */
struct shca_drdma_woken {
	unsigned int n;
	struct shca_qp *qp[SHCA_DRDMA_RESUME_MAX];
};

/*
 * Forget every QP waiting for range @r: the first ones go to @woken when
 * given, the others to the transmit scheduler.
 */
static void shca_drdma_wake(struct shca_dmw *w, struct shca_dmw_range *r,
			    struct shca_drdma_woken *woken)
{
	struct shca_qp *qp, *tmp;

	lockdep_assert_held(&w->lock);
	list_for_each_entry_safe(qp, tmp, &r->waiters, dm_wait) {
		shca_drdma_forget(qp, r);
		if (woken && woken->n < SHCA_DRDMA_RESUME_MAX) {
			/* still listed, so not past shca_drdma_unwait() */
			refcount_inc(&qp->ref);
			woken->qp[woken->n++] = qp;
		} else {
			shca_engine_schedule(qp);
		}
	}
}

/* Send for the QPs shca_drdma_wake() handed over (window lock dropped). */
static void shca_drdma_resume(struct shca_drdma_woken *woken)
{
	unsigned int i;

	for (i = 0; i < woken->n; i++) {
		shca_engine_resume(woken->qp[i]);
		shca_qp_put(woken->qp[i]);
	}
}

/**
 * shca_drdma_attach - give a range in use its register
 * @w: the window
 * @idx: a range shca_dmw_alloc() returned
 * @reg: the register (the owner keeps it until shca_dmw_free())
 *
 * The register starts unarmed, with the range's blocks filled in.
 */
void shca_drdma_attach(struct shca_dmw *w, u32 idx, struct shca_arr_reg *reg)
{
	const struct shca_arr_range *a = shca_arr_get(&w->pool, idx);

	memset(reg, 0, sizeof(*reg));
	reg->block = a->start;
	reg->nblocks = a->nblocks;
	spin_lock_bh(&w->lock);
	w->ranges[idx].reg = reg;
	spin_unlock_bh(&w->lock);
}

/**
 * shca_drdma_detach - a range is being given back: drop its register
 * @w: the window (its lock held)
 * @idx: the range
 *
 * QPs still waiting for it are scheduled; their WQE no longer waits (its
 * MR is gone, so it fails when it is sent).
 */
void shca_drdma_detach(struct shca_dmw *w, u32 idx)
{
	struct shca_dmw_range *r = &w->ranges[idx];

	lockdep_assert_held(&w->lock);
	if (r->reg && r->reg->dir == SHCA_ARR_DIR_WRITE)
		w->armed_writes--;
	shca_drdma_wake(w, r, NULL);
	r->reg = NULL;
}

/**
 * shca_drdma_arm - give a range's register a transfer
 * @w: the window
 * @idx: a range in use with a register
 * @dir: SHCA_ARR_DIR_WRITE, _READ, or _NONE to disarm
 * @offset: first byte of the transfer in the range
 * @length: its bytes, at least 1 (ignored for _NONE)
 *
 * Resets the byte counts; a WRITE opens the bus side to the producer.
 *
 * Return: 0, -EINVAL (direction, a transfer outside the range, no
 * register), or -EBUSY while a WQE waits for the range or a packet still
 * holds one of its pages (the last transfer is in flight).
 */
int shca_drdma_arm(struct shca_dmw *w, u32 idx, u32 dir, u64 offset,
		   u32 length)
{
	struct shca_dmw_range *r = &w->ranges[idx];
	struct shca_arr_reg *reg;
	u64 size;
	int ret = 0;

	if (dir > SHCA_ARR_DIR_READ)
		return -EINVAL;
	spin_lock_bh(&w->lock);
	reg = r->reg;
	size = reg ? (u64)reg->nblocks << PAGE_SHIFT : 0;
	if (!reg)
		ret = -EINVAL;
	else if (dir != SHCA_ARR_DIR_NONE &&
		 (!length || offset > size || length > size - offset))
		ret = -EINVAL;
	else if (!list_empty(&r->waiters) ||
		 shca_dmw_held(w, reg->block, reg->nblocks, true))
		ret = -EBUSY;
	if (!ret) {
		if (reg->dir == SHCA_ARR_DIR_WRITE)
			w->armed_writes--;
		if (dir == SHCA_ARR_DIR_WRITE)
			w->armed_writes++;
		reg->dir = dir;
		reg->offset = dir ? offset : 0;
		reg->total_len = dir ? length : 0;
		reg->write_count = 0;
		reg->read_len = 0;
		reg->flags = dir == SHCA_ARR_DIR_WRITE ? SHCA_ARR_F_BUS_VALID : 0;
		reg->gen++;
	}
	spin_unlock_bh(&w->lock);
	return ret;
}

/**
 * shca_drdma_commit - the producer wrote more bytes of a DRDMA WRITE
 * @sdev: device (counters)
 * @w: the window
 * @idx: a range in use, armed for a WRITE
 * @bytes: bytes written since the last commit
 * @count: receives the byte count afterwards
 *
 * The data must be in the range before the call.  When the count reaches
 * the total, the packet side turns valid and the QPs waiting send, the
 * first SHCA_DRDMA_RESUME_MAX of them from this context when they can
 * (shca_engine_resume()).  Process or softirq context.
 *
 * Return: 0, or -EINVAL when the range is not armed for a WRITE, its bus
 * side has closed, or @bytes would take the count past the total (the
 * count does not move).
 */
int shca_drdma_commit(struct shca_dev *sdev, struct shca_dmw *w, u32 idx,
		      u32 bytes, u32 *count)
{
	struct shca_dmw_range *r = &w->ranges[idx];
	struct shca_drdma_woken woken = { 0 };
	struct shca_arr_reg *reg;
	int ret = 0;
	u32 total;

	spin_lock_bh(&w->lock);
	reg = r->reg;
	if (!reg || reg->dir != SHCA_ARR_DIR_WRITE ||
	    !(reg->flags & SHCA_ARR_F_BUS_VALID) ||
	    bytes > reg->total_len - reg->write_count) {
		ret = -EINVAL;
	} else {
		reg->write_count += bytes;
		if (reg->write_count == reg->total_len) {
			reg->flags = SHCA_ARR_F_PKT_VALID;
			shca_stat_inc(sdev, SHCA_CNT_DM_WRITES);
			shca_drdma_wake(w, r, &woken);
		}
	}
	*count = reg ? reg->write_count : 0;
	total = reg ? reg->total_len : 0;
	spin_unlock_bh(&w->lock);
	trace_shca_drdma_commit(&sdev->ibdev, idx, bytes, *count, total, ret);
	shca_drdma_resume(&woken);
	return ret;
}

/**
 * shca_drdma_landed - bytes were placed in a range (from the network)
 * @sdev: device
 * @idx: the range of the DM MR they were placed through
 * @gen: the range's allocation generation the MR was made for
 * @offset: first byte, from the range's start
 * @len: bytes
 *
 * In a range armed for a READ, read_len grows over the bytes that extend
 * what has landed contiguously from the transfer's start (READ responses
 * are placed in order; a retransmitted one lands again on bytes already
 * counted).  Any context.
 */
void shca_drdma_landed(struct shca_dev *sdev, u32 idx, u32 gen, u64 offset,
		       u32 len)
{
	struct shca_dmw *w = shca_dmw_of(sdev);
	struct shca_dmw_range *r;
	struct shca_arr_reg *reg;
	u64 start, end;

	if (!w || idx >= w->pool.nranges)
		return;
	spin_lock_bh(&w->lock);
	r = &w->ranges[idx];
	reg = r->reg;
	if (!reg || r->gen != gen || reg->dir != SHCA_ARR_DIR_READ ||
	    (reg->flags & SHCA_ARR_F_PKT_VALID))
		goto out;
	start = reg->offset;
	end = min_t(u64, offset + len, start + reg->total_len);
	if (offset > start + reg->read_len || end <= start + reg->read_len)
		goto out;
	shca_stat_add(sdev, SHCA_CNT_DM_READ_BYTES,
		      end - start - reg->read_len);
	reg->read_len = end - start;
	if (reg->read_len == reg->total_len)
		reg->flags = SHCA_ARR_F_BUS_VALID | SHCA_ARR_F_PKT_VALID;
out:
	spin_unlock_bh(&w->lock);
}

/* Is @op a send whose SGEs are its data source? */
static bool shca_drdma_op(u8 op)
{
	return op == IB_WR_RDMA_WRITE || op == IB_WR_RDMA_WRITE_WITH_IMM ||
	       op == IB_WR_SEND || op == IB_WR_SEND_WITH_IMM ||
	       op == IB_WR_SEND_WITH_INV;
}

/*
 * The range, armed for a WRITE, that the DM MR behind SGE @sge covers:
 * its index + 1 and generation, or 0.  Only a valid lkey of the QP's PD
 * with the SGE inside its MR names a range: a WQE cannot wait on (and
 * hold back the re-arming of) a range another PD owns; with a bad key
 * it does not wait and fails when it is sent.
 */
static u32 shca_drdma_sge_range(struct shca_qp *qp, struct shca_dmw *w,
				const struct shca_sge *sge, u32 *gen)
{
	struct shca_key_use u = { .key = sge->lkey, .iova = sge->addr,
				  .len = sge->length };
	struct shca_mkey *o = shca_mkey_get_lkey(qp, &u, NULL);
	struct shca_dmw_range *r;
	u32 ret = 0;

	if (!o)
		return 0;
	if (o->kind == SHCA_MRK_DM && o->m.dm_range < w->pool.nranges) {
		spin_lock(&w->lock);
		r = &w->ranges[o->m.dm_range];
		if (r->gen == o->m.dm_gen && r->reg &&
		    r->reg->dir == SHCA_ARR_DIR_WRITE) {
			ret = o->m.dm_range + 1;
			*gen = r->gen;
		}
		spin_unlock(&w->lock);
	}
	shca_mkey_put(o);
	return ret;
}

/**
 * shca_drdma_fetched - note the range a fetched send WQE waits for
 * @qp: QP (caller holds qp->lock)
 * @wqe: a send WQE just fetched and validated
 *
 * Only while the device has ranges armed for a WRITE are a send's keys
 * looked up here; the first SGE on such a range decides.
 */
void shca_drdma_fetched(struct shca_qp *qp, struct shca_send_wqe *wqe)
{
	struct shca_dmw *w = shca_dmw_of(qp->sdev);
	u32 i;

	lockdep_assert_held(&qp->lock);
	wqe->dm_range = 0;
	if (!w || !READ_ONCE(w->armed_writes) ||
	    (wqe->flags & SHCA_SQE_F_INLINE) || !shca_drdma_op(wqe->opcode))
		return;
	for (i = 0; i < wqe->num_sge && !wqe->dm_range; i++)
		wqe->dm_range = shca_drdma_sge_range(qp, w, &wqe->sge[i],
						     &wqe->dm_gen);
}

/**
 * shca_drdma_may_send - may a WQE noted by shca_drdma_fetched() start?
 * @qp: QP (caller holds qp->lock)
 * @wqe: its next WQE, with dm_range set
 *
 * Yes once its range's packet side is valid (or the range was disarmed,
 * re-armed for a READ, or given back).  Otherwise the QP waits on the
 * range's list, and the commit that completes the range schedules it.
 *
 * Return: whether it may start.
 */
bool shca_drdma_may_send(struct shca_qp *qp, struct shca_send_wqe *wqe)
{
	struct shca_dmw *w = shca_dmw_of(qp->sdev);
	u32 idx = wqe->dm_range - 1;
	struct shca_dmw_range *r;
	struct shca_arr_reg *reg;
	bool go;

	lockdep_assert_held(&qp->lock);
	if (!w || idx >= w->pool.nranges) {
		wqe->dm_range = 0;
		return true;
	}
	spin_lock(&w->lock);
	r = &w->ranges[idx];
	reg = r->reg;
	go = !reg || r->gen != wqe->dm_gen ||
	     reg->dir != SHCA_ARR_DIR_WRITE ||
	     (reg->flags & SHCA_ARR_F_PKT_VALID);
	if (!list_empty(&qp->dm_wait) && (go || qp->dm_wait_idx != idx))
		shca_drdma_forget(qp, &w->ranges[qp->dm_wait_idx]);
	if (go) {
		wqe->dm_range = 0;
	} else if (list_empty(&qp->dm_wait)) {
		list_add_tail(&qp->dm_wait, &r->waiters);
		qp->dm_wait_idx = idx;
		reg->waiting++;
		shca_stat_inc(qp->sdev, SHCA_CNT_DM_WAITING);
	}
	spin_unlock(&w->lock);
	return go;
}

/**
 * shca_drdma_unwait - take a QP off any range's waiter list
 * @qp: QP whose WQEs are being flushed (qp->lock held) or that is being
 *	destroyed (state RESET)
 */
void shca_drdma_unwait(struct shca_qp *qp)
{
	struct shca_dmw *w = shca_dmw_of(qp->sdev);

	if (!w)
		return;
	/* BHs may be off, IRQs never: spin_unlock_bh() would enable BHs */
	WARN_ON_ONCE(irqs_disabled());
	spin_lock_bh(&w->lock);
	if (!list_empty(&qp->dm_wait))
		shca_drdma_forget(qp, &w->ranges[qp->dm_wait_idx]);
	spin_unlock_bh(&w->lock);
}

/**
 * shca_drdma_read - a consistent copy of a register
 * @w: the window
 * @reg: a register attached to one of its ranges
 * @out: receives the copy
 */
void shca_drdma_read(struct shca_dmw *w, const struct shca_arr_reg *reg,
		     struct shca_arr_reg *out)
{
	spin_lock_bh(&w->lock);
	*out = *reg;
	spin_unlock_bh(&w->lock);
}
