// SPDX-License-Identifier: GPL-2.0
/*
 * shca rings, completion queues, shared receive queues and the mmap
 * callbacks that hand rings to processes.
 *
 * A ring is vmalloc_user() memory: struct shca_ring_ctrl, then the slots
 * at SHCA_RING_DATA_OFFSET.  Whatever a process can write (the producer
 * index of its SQ/RQ/SRQ, the consumer index and arm word of its CQ, the
 * slots it fills) is read once, into a local, and checked before use.
 */
#include <linux/vmalloc.h>
#include <linux/overflow.h>
#include <linux/log2.h>
#include "shca.h"
#include "shca_qp.h"
#include "shca_engine.h"

#define SHCA_RING_MAX_ENTRIES	(1U << 22)
#define SHCA_RING_MAX_STRIDE	(1U << 16)

/**
 * struct shca_mmap_entry - a ring's memory as the process maps it
 * @rdma: RDMA core entry (its offset is what the process passes to mmap)
 * @buf: vmalloc_user() memory, freed by shca_mmap_free()
 * @size: bytes of @buf (page aligned)
 */
struct shca_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *buf;
	size_t size;
};

static inline struct shca_mmap_entry *
to_smmap(struct rdma_user_mmap_entry *entry)
{
	return container_of(entry, struct shca_mmap_entry, rdma);
}

static struct ib_ucontext *shca_udata_uctx(struct ib_udata *udata)
{
	struct shca_ucontext *suc;

	suc = rdma_udata_to_drv_context(udata, struct shca_ucontext, ibuc);
	return suc ? &suc->ibuc : NULL;
}

static inline bool shca_ring_is_user(const struct shca_ring *r)
{
	return r->mmap;
}

static int shca_copy_resp(struct ib_udata *udata, void *resp,
			  size_t len)
{
	if (!udata || !udata->outlen)
		return 0;
	return ib_copy_to_udata(udata, resp, min(len, udata->outlen));
}

/* ---------------------------------------------------------------------
 * Rings
 */

static int shca_ring_map(struct shca_ring *r, struct ib_ucontext *uctx)
{
	struct shca_mmap_entry *me;
	int ret;

	me = kzalloc(sizeof(*me), GFP_KERNEL);
	if (!me)
		return -ENOMEM;
	me->buf = r->buf;
	me->size = r->size;
	ret = rdma_user_mmap_entry_insert(uctx, &me->rdma, me->size);
	if (ret) {
		kfree(me);
		return ret;
	}
	shca_obj_get(SHCA_OBJ_MMAP);
	r->mmap = &me->rdma;
	return 0;
}

/**
 * shca_ring_init - allocate a ring
 * @r: ring to fill
 * @uctx: user context to map it into, or NULL for a kernel ring
 * @entries: minimum number of slots (rounded up to a power of two)
 * @stride: minimum slot size (rounded up to a power of two)
 * @info: filled with what the process needs to map it (may be NULL)
 *
 * For a user ring the memory belongs to an mmap entry from here on and is
 * freed by shca_mmap_free().
 *
 * Return: 0 or a negative errno.
 */
int shca_ring_init(struct shca_ring *r, struct ib_ucontext *uctx,
		   u32 entries, u32 stride, struct shca_ring_info *info)
{
	int ret;

	memset(r, 0, sizeof(*r));
	if (!entries || entries > SHCA_RING_MAX_ENTRIES ||
	    !stride || stride > SHCA_RING_MAX_STRIDE)
		return -EINVAL;

	r->entries = roundup_pow_of_two(entries);
	r->stride = roundup_pow_of_two(stride);
	r->mask = r->entries - 1;
	r->size = PAGE_ALIGN(SHCA_RING_DATA_OFFSET +
			     (size_t)r->entries * r->stride);
	r->buf = vmalloc_user(r->size);
	if (!r->buf)
		return -ENOMEM;
	r->ctrl = r->buf;
	r->slots = (u8 *)r->buf + SHCA_RING_DATA_OFFSET;

	if (uctx) {
		ret = shca_ring_map(r, uctx);
		if (ret)
			goto err_free;
	}
	if (info) {
		info->mmap_offset = r->mmap ? rdma_user_mmap_get_offset(r->mmap)
					    : 0;
		info->mmap_size = r->size;
		info->entries = r->entries;
		info->stride = r->stride;
	}
	shca_obj_get(SHCA_OBJ_RING);
	return 0;

err_free:
	vfree(r->buf);
	memset(r, 0, sizeof(*r));
	return ret;
}

/**
 * shca_ring_destroy - release a ring
 * @r: ring (a zeroed ring is ignored)
 *
 * A user ring's memory is freed by shca_mmap_free() once no mmap() call is
 * using the entry; pages the process still maps live on through the
 * mapping's page references.  The kernel does not touch @r afterwards.
 */
void shca_ring_destroy(struct shca_ring *r)
{
	if (!r->buf)
		return;
	if (r->mmap)
		rdma_user_mmap_entry_remove(r->mmap);
	else
		vfree(r->buf);
	memset(r, 0, sizeof(*r));
	shca_obj_put(SHCA_OBJ_RING);
}

/**
 * shca_ring_pending - slots filled by the producer, not yet consumed
 * @r: SQ/RQ/SRQ ring (kernel consumes); caller holds the consumer lock
 *
 * Return: the count, or -EPROTO when the producer index is impossible.
 */
int shca_ring_pending(struct shca_ring *r)
{
	/* acquire: the slots up to prod are read after prod */
	u32 prod = smp_load_acquire(&r->ctrl->prod);
	u32 n = prod - r->kidx;

	if (n > r->entries)
		return -EPROTO;
	return n;
}

/**
 * shca_ring_consume - advance the kernel's consumer index and publish it
 * @r: SQ/RQ/SRQ ring; caller holds the consumer lock
 * @n: slots consumed
 *
 * The release store orders the kernel's reads of the slots before the
 * producer may reuse them.
 */
void shca_ring_consume(struct shca_ring *r, u32 n)
{
	r->kidx += n;
	/* release: slots read before the producer may reuse them */
	smp_store_release(&r->ctrl->cons, r->kidx);
}

/**
 * shca_ring_get_rqe - copy out and validate the next receive WQE
 * @r: RQ or SRQ ring (caller holds the queue's consumer lock)
 * @max_sge: the queue's SGE limit (at most SHCA_MAX_SGE is honoured)
 * @out: the copy
 *
 * The slot is copied before anything in it is looked at; only the copy
 * is validated and used.
 *
 * Return: 0; -EAGAIN when the ring is empty; -EPROTO when the ring's
 * producer index is corrupt; -EBADMSG when the WQE is malformed (it is
 * consumed, and @out holds its wr_id and no SGEs, for an error completion).
 */
int shca_ring_get_rqe(struct shca_ring *r, u32 max_sge,
		      struct shca_recv_wqe *out)
{
	struct shca_rqe hdr;
	const u8 *slot;
	u32 i, n, len = 0;
	int pending;

	pending = shca_ring_pending(r);
	if (pending < 0)
		return pending;
	if (!pending)
		return -EAGAIN;

	slot = shca_ring_slot(r, r->kidx);
	memcpy(&hdr, slot, sizeof(hdr));
	n = hdr.num_sge;
	if (n > max_sge || n > SHCA_MAX_SGE ||
	    sizeof(hdr) + (size_t)n * sizeof(struct shca_sge) > r->stride) {
		out->wr_id = hdr.wr_id;
		out->num_sge = 0;
		out->length = 0;
		shca_ring_consume(r, 1);
		return -EBADMSG;
	}
	memcpy(out->sge, slot + sizeof(hdr), n * sizeof(struct shca_sge));

	for (i = 0; i < n; i++) {
		if (check_add_overflow(len, out->sge[i].length, &len))
			len = U32_MAX;
	}
	out->wr_id = hdr.wr_id;
	out->num_sge = n;
	out->length = len;
	shca_ring_consume(r, 1);
	return 0;
}

/*
 * Copy slots [from, to) of @old into @new at the same indices and let
 * @new continue where @old was.  Caller holds the queue's lock and has
 * checked that to - from fits @new.
 */
static void shca_ring_move(struct shca_ring *new, const struct shca_ring *old,
			   u32 from, u32 to, u32 kidx)
{
	u32 i;

	for (i = from; i != to; i++)
		memcpy(shca_ring_slot(new, i), shca_ring_slot(old, i),
		       min(new->stride, old->stride));
	new->kidx = kidx;
	WRITE_ONCE(new->ctrl->prod, to);
	WRITE_ONCE(new->ctrl->cons, from);
}

/* ---------------------------------------------------------------------
 * mmap
 */

static int shca_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	struct shca_mmap_entry *me;
	int ret;

	/* checks VM_SHARED and that the VMA covers the whole entry */
	entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!entry)
		return -EINVAL;
	me = to_smmap(entry);
	if (vma->vm_end - vma->vm_start != me->size)
		ret = -EINVAL;
	else
		ret = remap_vmalloc_range(vma, me->buf, 0);
	rdma_user_mmap_entry_put(entry);
	return ret;
}

static void shca_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct shca_mmap_entry *me = to_smmap(entry);

	vfree(me->buf);
	kfree(me);
	shca_obj_put(SHCA_OBJ_MMAP);
}

/* ---------------------------------------------------------------------
 * Completion queues
 */

/* Slots of @cq the consumer has not freed.  Caller holds cq->lock. */
static u32 shca_cq_used(struct shca_cq *cq)
{
	struct shca_ring *r = &cq->ring;
	u32 cons;

	/*
	 * A user CQ's consumer index is untrusted: any value is possible.
	 * Acquire: the consumer's reads of the slots before cons are done
	 * before we overwrite them.
	 */
	cons = smp_load_acquire(&r->ctrl->cons);
	return r->kidx - cons;
}

static struct ib_qp *shca_cq_lookup_qp(struct shca_cq *cq, u32 qpn)
{
	struct shca_dev *sdev = to_sdev(cq->ibcq.device);
	struct shca_qp *qp;

	qp = xa_load(&sdev->qp_xa, qpn);
	return qp ? &qp->ibqp : NULL;
}

/*
 * Decide whether the CQE just posted raises the completion event and
 * disarm what fired.  Caller holds cq->lock and has published the CQE.
 */
static bool shca_cq_should_fire(struct shca_cq *cq, bool solicited)
{
	struct shca_ring_ctrl *ctrl = cq->ring.ctrl;
	bool fire = false;
	u32 arm, seq;

	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED && solicited)) {
		cq->notify = 0;
		fire = true;
	}
	if (!shca_ring_is_user(&cq->ring))
		return fire;

	/* prod store before arm load: pairs with the provider's barrier */
	smp_mb();
	arm = READ_ONCE(ctrl->arm);
	seq = arm & SHCA_CQ_ARM_SEQ_MASK;
	if (seq != cq->arm_ack &&
	    (solicited || !(arm & SHCA_CQ_ARM_SOLICITED))) {
		cq->arm_ack = seq;
		WRITE_ONCE(ctrl->arm_ack, seq);
		fire = true;
	}
	return fire;
}

static void shca_cq_err_event(struct shca_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/**
 * shca_cq_post - add a completion
 * @cq: CQ
 * @cqe: the completion
 * @solicited: the completion is for a solicited message
 *
 * Takes cq->lock; calls the completion or error handler after releasing
 * it.
 *
 * Return: 0 or -ENOSPC on overflow.
 */
int shca_cq_post(struct shca_cq *cq, const struct shca_cqe *cqe,
		 bool solicited)
{
	struct shca_ring *r = &cq->ring;
	struct ib_qp *ibqp = NULL;
	bool fire = false, err_event = false;
	struct shca_cqe c = *cqe;
	unsigned long flags;
	int ret = 0;

	/* never show a process stale kernel bytes */
	memset(c.rsvd, 0, sizeof(c.rsvd));
	if (READ_ONCE(cq->kqp))
		ibqp = shca_cq_lookup_qp(cq, c.qp_num);

	spin_lock_irqsave(&cq->lock, flags);
	if (shca_cq_used(cq) >= r->entries) {
		err_event = !cq->overflow;
		cq->overflow = true;
		ret = -ENOSPC;
		goto unlock;
	}
	memcpy(shca_ring_slot(r, r->kidx), &c, sizeof(c));
	if (cq->kqp)
		cq->kqp[r->kidx & r->mask] = ibqp;
	r->kidx++;
	/* release: the CQE is visible before the index that covers it */
	smp_store_release(&r->ctrl->prod, r->kidx);
	fire = shca_cq_should_fire(cq, solicited);
unlock:
	spin_unlock_irqrestore(&cq->lock, flags);

	if (fire && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	if (err_event)
		shca_cq_err_event(cq);
	if (!ret)
		shca_stat_inc(to_sdev(cq->ibcq.device), SHCA_CNT_COMPLETIONS);
	return ret;
}

static int shca_create_cq_common(struct ib_cq *ibcq,
				 const struct ib_cq_init_attr *attr,
				 struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibcq->device);
	struct ib_ucontext *uctx = shca_udata_uctx(udata);
	struct shca_cq *cq = to_scq(ibcq);
	struct shca_create_cq_resp resp = {};
	int id, ret;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (!attr->cqe || attr->cqe > SHCA_MAX_CQE ||
	    attr->comp_vector >= (u32)ibcq->device->num_comp_vectors)
		return -EINVAL;

	spin_lock_init(&cq->lock);
	id = ida_alloc_max(&sdev->cq_ida, shca_max_cq - 1, GFP_KERNEL);
	if (id < 0)
		return id == -ENOSPC ? -ENOMEM : id;
	cq->cqn = id;

	ret = shca_ring_init(&cq->ring, uctx, attr->cqe,
			     sizeof(struct shca_cqe), &resp.cq);
	if (ret)
		goto err_id;
	if (!uctx) {
		cq->kqp = kvcalloc(cq->ring.entries, sizeof(*cq->kqp),
				   GFP_KERNEL);
		if (!cq->kqp) {
			ret = -ENOMEM;
			goto err_ring;
		}
	}
	resp.cqn = cq->cqn;
	ret = shca_copy_resp(udata, &resp, sizeof(resp));
	if (ret)
		goto err_kqp;

	ibcq->cqe = cq->ring.entries;
	shca_obj_get(SHCA_OBJ_CQ);
	return 0;

err_kqp:
	kvfree(cq->kqp);
	cq->kqp = NULL;
err_ring:
	shca_ring_destroy(&cq->ring);
err_id:
	ida_free(&sdev->cq_ida, id);
	return ret;
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
static int shca_create_cq(struct ib_cq *ibcq,
			  const struct ib_cq_init_attr *attr,
			  struct uverbs_attr_bundle *attrs)
{
	return shca_create_cq_common(ibcq, attr,
				     attrs ? &attrs->driver_udata : NULL);
}
#else
static int shca_create_cq(struct ib_cq *ibcq,
			  const struct ib_cq_init_attr *attr,
			  struct ib_udata *udata)
{
	return shca_create_cq_common(ibcq, attr, udata);
}
#endif

/*
 * The RDMA core destroys a CQ only once no QP uses it, so no engine
 * context can be posting to it any more.
 */
static int shca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibcq->device);
	struct shca_cq *cq = to_scq(ibcq);

	shca_ring_destroy(&cq->ring);
	kvfree(cq->kqp);
	cq->kqp = NULL;
	ida_free(&sdev->cq_ida, cq->cqn);
	shca_obj_put(SHCA_OBJ_CQ);
	return 0;
}

static void shca_cqe_to_wc(const struct shca_cqe *c, struct ib_qp *qp,
			   struct ib_wc *wc)
{
	wc->wr_id = c->wr_id;
	wc->status = c->status;
	wc->opcode = c->opcode;
	wc->vendor_err = c->vendor_err;
	wc->byte_len = c->byte_len;
	wc->qp = qp;
	if (c->wc_flags & IB_WC_WITH_INVALIDATE)
		wc->ex.invalidate_rkey = c->ex;
	else
		wc->ex.imm_data = (__force __be32)c->ex;
	wc->src_qp = c->src_qp;
	wc->slid = c->slid;
	wc->wc_flags = c->wc_flags;
	wc->pkey_index = c->pkey_index;
	wc->sl = c->sl;
	wc->dlid_path_bits = c->dlid_path_bits;
	wc->port_num = c->port_num;
	memcpy(wc->smac, c->smac, ETH_ALEN);
	wc->vlan_id = c->vlan_id;
	wc->network_hdr_type = c->network_hdr_type;
}

/**
 * shca_cq_clean - drop a kernel QP's completions from a kernel CQ
 * @cq: CQ; nothing is done for a process's CQ, whose provider cleans it
 * @qpn: the QP, moved to RESET or destroyed: it adds no completion any
 *	more
 *
 * Completions not polled yet would otherwise be read as those of the
 * QP's next life, or carry a pointer to a QP that no longer exists.  The
 * ones kept move toward the producer end; the consumer index moves past
 * the room freed.
 */
void shca_cq_clean(struct shca_cq *cq, u32 qpn)
{
	struct shca_ring *r = &cq->ring;
	unsigned long flags;
	u32 cons, i, freed = 0;
	struct shca_cqe *c;

	if (!READ_ONCE(cq->kqp))
		return;
	spin_lock_irqsave(&cq->lock, flags);
	cons = r->ctrl->cons;	/* kernel ring: written under cq->lock */
	for (i = r->kidx; i != cons; ) {
		c = shca_ring_slot(r, --i);
		if (c->qp_num == qpn) {
			freed++;
		} else if (freed) {
			memcpy(shca_ring_slot(r, i + freed), c, sizeof(*c));
			cq->kqp[(i + freed) & r->mask] = cq->kqp[i & r->mask];
		}
	}
	/* release: pairs with shca_cq_used() of the producer */
	smp_store_release(&r->ctrl->cons, cons + freed);
	spin_unlock_irqrestore(&cq->lock, flags);
}

/* Kernel CQs only: a process polls its own ring. */
static int shca_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct shca_cq *cq = to_scq(ibcq);
	struct shca_ring *r = &cq->ring;
	unsigned long flags;
	u32 cons;
	int n = 0;

	if (!READ_ONCE(cq->kqp))
		return -EOPNOTSUPP;

	spin_lock_irqsave(&cq->lock, flags);
	cons = r->ctrl->cons;	/* kernel ring: only written here */
	while (n < num && cons != r->kidx) {
		shca_cqe_to_wc(shca_ring_slot(r, cons), cq->kqp[cons & r->mask],
			       &wc[n]);
		cons++;
		n++;
	}
	/* release: pairs with shca_cq_used() of the producer */
	smp_store_release(&r->ctrl->cons, cons);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

static int shca_req_notify_cq(struct ib_cq *ibcq,
			      enum ib_cq_notify_flags flags)
{
	struct shca_cq *cq = to_scq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (flags & IB_CQ_NEXT_COMP)
		cq->notify = IB_CQ_NEXT_COMP;
	else if ((flags & IB_CQ_SOLICITED) && cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = IB_CQ_SOLICITED;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && shca_cq_used(cq))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/*
 * Move the unconsumed CQEs into @nr and swap it in; on return @nr and
 * *@nkqp hold what the CQ no longer uses.  Caller holds cq->lock.
 */
static int shca_cq_swap_ring(struct shca_cq *cq, struct shca_ring *nr,
			     struct ib_qp ***nkqp)
{
	struct shca_ring *r = &cq->ring;
	/* acquire: the consumer is done with the slots before cons */
	u32 cons = smp_load_acquire(&r->ctrl->cons);
	u32 used = r->kidx - cons, i;

	if (used > r->entries || used > nr->entries)
		return -EINVAL;
	shca_ring_move(nr, r, cons, r->kidx, r->kidx);
	if (*nkqp) {
		for (i = cons; i != r->kidx; i++)
			(*nkqp)[i & nr->mask] = cq->kqp[i & r->mask];
	}
	if (shca_ring_is_user(r)) {
		WRITE_ONCE(nr->ctrl->arm, READ_ONCE(r->ctrl->arm));
		WRITE_ONCE(nr->ctrl->arm_ack, cq->arm_ack);
	}
	swap(*r, *nr);
	swap(cq->kqp, *nkqp);
	cq->ibcq.cqe = r->entries;
	return 0;
}

static int shca_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct ib_ucontext *uctx = shca_udata_uctx(udata);
	struct shca_cq *cq = to_scq(ibcq);
	struct shca_create_cq_resp resp = {};
	struct ib_qp **nkqp = NULL;
	struct shca_ring nr;
	unsigned long flags;
	int ret;

	if (cqe < 1 || cqe > SHCA_MAX_CQE || !uctx != !cq->ring.mmap)
		return -EINVAL;
	/*
	 * Work posted before the resize completes into the old ring first,
	 * so that "more completions pending than the new size" is judged
	 * on them (the transmit stage completes UD sends asynchronously).
	 */
	shca_engine_flush_tx(to_sdev(ibcq->device));
	ret = shca_ring_init(&nr, uctx, cqe, sizeof(struct shca_cqe),
			     &resp.cq);
	if (ret)
		return ret;
	if (!uctx) {
		nkqp = kvcalloc(nr.entries, sizeof(*nkqp), GFP_KERNEL);
		if (!nkqp) {
			ret = -ENOMEM;
			goto out;
		}
	}
	resp.cqn = cq->cqn;
	ret = shca_copy_resp(udata, &resp, sizeof(resp));
	if (ret)
		goto out;

	spin_lock_irqsave(&cq->lock, flags);
	ret = shca_cq_swap_ring(cq, &nr, &nkqp);
	spin_unlock_irqrestore(&cq->lock, flags);
out:
	/* the new ring on failure, the old one on success */
	kvfree(nkqp);
	shca_ring_destroy(&nr);
	return ret;
}

static int shca_modify_cq(struct ib_cq *ibcq, u16 count, u16 period)
{
	return -EOPNOTSUPP;
}

/* ---------------------------------------------------------------------
 * Shared receive queues
 */

static u32 shca_srq_stride(u32 max_sge)
{
	return sizeof(struct shca_rqe) + max_sge * sizeof(struct shca_sge);
}

static void shca_srq_event(struct shca_srq *srq, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = type,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/**
 * shca_srq_get_wqe - take the next WQE of an SRQ
 * @srq: SRQ
 * @out: the copy
 *
 * Raises IB_EVENT_SRQ_LIMIT_REACHED (once per arming) when fewer WQEs
 * than the armed limit remain.
 *
 * Return: as shca_ring_get_rqe().
 */
int shca_srq_get_wqe(struct shca_srq *srq, struct shca_recv_wqe *out)
{
	unsigned long flags;
	bool fire = false;
	int ret, left;

	spin_lock_irqsave(&srq->lock, flags);
	ret = shca_ring_get_rqe(&srq->ring, srq->max_sge, out);
	if (!ret && srq->limit) {
		left = shca_ring_pending(&srq->ring);
		if (left >= 0 && (u32)left < srq->limit) {
			srq->limit = 0;
			fire = true;
		}
	}
	spin_unlock_irqrestore(&srq->lock, flags);

	if (fire)
		shca_srq_event(srq, IB_EVENT_SRQ_LIMIT_REACHED);
	return ret;
}

static int shca_srq_check_attr(const struct ib_srq_attr *attr)
{
	if (!attr->max_wr || attr->max_wr > SHCA_MAX_SRQ_WR ||
	    attr->max_sge > SHCA_MAX_SGE || attr->srq_limit >= attr->max_wr)
		return -EINVAL;
	return 0;
}

static int shca_create_srq(struct ib_srq *ibsrq,
			   struct ib_srq_init_attr *init,
			   struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibsrq->device);
	struct ib_ucontext *uctx = shca_udata_uctx(udata);
	struct shca_srq *srq = to_ssrq(ibsrq);
	struct shca_create_srq_resp resp = {};
	struct ib_srq_attr *attr = &init->attr;
	int id, ret;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	ret = shca_srq_check_attr(attr);
	if (ret)
		return ret;

	spin_lock_init(&srq->lock);
	id = ida_alloc_max(&sdev->srq_ida, SHCA_MAX_SRQ - 1, GFP_KERNEL);
	if (id < 0)
		return id == -ENOSPC ? -ENOMEM : id;
	srq->srqn = id;

	ret = shca_ring_init(&srq->ring, uctx, attr->max_wr,
			     shca_srq_stride(attr->max_sge), &resp.rq);
	if (ret)
		goto err_id;
	/* the rounded-up stride may hold more SGEs than asked for */
	srq->max_sge = min_t(u32, SHCA_MAX_SGE,
			     (srq->ring.stride - sizeof(struct shca_rqe)) /
			     sizeof(struct shca_sge));
	srq->limit = 0;	/* srq_limit is ignored at creation */

	resp.srqn = srq->srqn;
	ret = shca_copy_resp(udata, &resp, sizeof(resp));
	if (ret)
		goto err_ring;

	attr->max_wr = srq->ring.entries;
	attr->max_sge = srq->max_sge;
	shca_obj_get(SHCA_OBJ_SRQ);
	return 0;

err_ring:
	shca_ring_destroy(&srq->ring);
err_id:
	ida_free(&sdev->srq_ida, id);
	return ret;
}

/* Kernel SRQ: move the posted WQEs into a ring of @max_wr slots. */
static int shca_srq_resize(struct shca_srq *srq, u32 max_wr)
{
	struct shca_ring nr, *r = &srq->ring;
	unsigned long flags;
	u32 prod;
	int ret;

	ret = shca_ring_init(&nr, NULL, max_wr, r->stride, NULL);
	if (ret)
		return ret;

	spin_lock_irqsave(&srq->lock, flags);
	prod = r->ctrl->prod;	/* kernel ring: only written under the lock */
	if (prod - r->kidx > nr.entries ||
	    (srq->limit && srq->limit >= nr.entries)) {
		ret = -EINVAL;
	} else {
		shca_ring_move(&nr, r, r->kidx, prod, r->kidx);
		swap(*r, nr);
	}
	spin_unlock_irqrestore(&srq->lock, flags);

	shca_ring_destroy(&nr);
	return ret;
}

static int shca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			   enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct shca_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	int ret = 0;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR) {
		if (shca_ring_is_user(&srq->ring))
			return -EOPNOTSUPP;
		if (!attr->max_wr || attr->max_wr > SHCA_MAX_SRQ_WR ||
		    ((mask & IB_SRQ_LIMIT) && attr->srq_limit >= attr->max_wr))
			return -EINVAL;
		ret = shca_srq_resize(srq, attr->max_wr);
		if (ret)
			return ret;
	}
	if (mask & IB_SRQ_LIMIT) {
		spin_lock_irqsave(&srq->lock, flags);
		if (attr->srq_limit >= srq->ring.entries)
			ret = -EINVAL;
		else
			srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->lock, flags);
		if (ret)
			return ret;
	}
	return 0;
}

static int shca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct shca_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;

	spin_lock_irqsave(&srq->lock, flags);
	attr->max_wr = srq->ring.entries;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

/*
 * The RDMA core destroys an SRQ only once no QP uses it, so the engine no
 * longer takes WQEs from it.
 */
static int shca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibsrq->device);
	struct shca_srq *srq = to_ssrq(ibsrq);

	shca_ring_destroy(&srq->ring);
	ida_free(&sdev->srq_ida, srq->srqn);
	shca_obj_put(SHCA_OBJ_SRQ);
	return 0;
}

/* Write one receive WR into a kernel SRQ.  Caller holds srq->lock. */
static int shca_srq_post_one(struct shca_srq *srq, const struct ib_recv_wr *wr)
{
	struct shca_ring *r = &srq->ring;
	u32 prod = r->ctrl->prod;	/* kernel ring: only written here */
	struct shca_rqe *rqe;
	struct shca_sge *sge;
	int i;

	if (wr->num_sge < 0 || (u32)wr->num_sge > srq->max_sge)
		return -EINVAL;
	if (prod - r->kidx >= r->entries)
		return -ENOMEM;

	rqe = shca_ring_slot(r, prod);
	rqe->wr_id = wr->wr_id;
	rqe->num_sge = wr->num_sge;
	rqe->rsvd = 0;
	sge = (struct shca_sge *)(rqe + 1);
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	/* release: the RQE is visible before the index that covers it */
	smp_store_release(&r->ctrl->prod, prod + 1);
	return 0;
}

static int shca_post_srq_recv(struct ib_srq *ibsrq,
			      const struct ib_recv_wr *wr,
			      const struct ib_recv_wr **bad_wr)
{
	struct shca_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	int ret = 0;

	if (shca_ring_is_user(&srq->ring)) {
		/* a process posts into its ring; a call is only a doorbell */
		if (!wr)
			return 0;
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		ret = shca_srq_post_one(srq, wr);
		if (ret)
			break;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (ret)
		*bad_wr = wr;
	return ret;
}

const struct ib_device_ops shca_queue_ops = {
	.create_cq = shca_create_cq,
	.create_srq = shca_create_srq,
	.destroy_cq = shca_destroy_cq,
	.destroy_srq = shca_destroy_srq,
	.mmap = shca_mmap,
	.mmap_free = shca_mmap_free,
	.modify_cq = shca_modify_cq,
	.modify_srq = shca_modify_srq,
	.poll_cq = shca_poll_cq,
	.post_srq_recv = shca_post_srq_recv,
	.query_srq = shca_query_srq,
	.req_notify_cq = shca_req_notify_cq,
	.resize_cq = shca_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, shca_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_srq, shca_srq, ibsrq),
};
