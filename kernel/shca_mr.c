// SPDX-License-Identifier: GPL-2.0
/*
 * shca memory registration: memory regions, memory windows and the key
 * table they share (seed 003).
 *
 * Every MR and MW is a struct shca_mr (for an MW, a separate object the
 * core's ib_mw points to, so that its memory can outlive the ib_mw under
 * RCU).  Its key indexes the device's shca_keytab; lkey == rkey.
 *
 * Locking and lifetime:
 *  - shca_mrt.lock (taken with spin_lock_bh) serialises every key table
 *    writer and every change of an object's mutable state: state, key,
 *    access, geometry, window binding, num_mw.
 *  - Those mutable fields are also covered by the object's seqcount, so
 *    readers take a consistent snapshot (struct shca_mr_view) without the
 *    lock.
 *  - Lookups run under RCU without the lock: the key table gives an owner
 *    pointer, refcount_inc_not_zero() pins it, then the snapshot confirms
 *    key, state, PD, access and bounds.  Objects are freed with kfree_rcu().
 *  - An object starts with one reference owned by its registration;
 *    dereg_mr/dealloc_mw drop it and sleep until the last lookup reference
 *    is put (completion).
 *  - An MR with bound windows cannot be deregistered or invalidated
 *    (num_mw), so a window never points at a freed MR; a window's copy
 *    path still pins the MR it snapshotted.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/seqlock.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>
#include "shca.h"
#include "shca_icrc.h"
#include "shca_keytab.h"
#include "shca_qp.h"
#include "shca_rkey.h"

#define SHCA_ACCESS_REMOTE	(IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_ATOMIC)
#define SHCA_ACCESS_WRITES	(IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_ATOMIC)
/* the rights an MR keeps (others are accepted and ignored) */
#define SHCA_MR_ACCESS		(IB_ACCESS_LOCAL_WRITE | SHCA_ACCESS_REMOTE | \
				 IB_ACCESS_MW_BIND)
/* the rights a window bind may ask for */
#define SHCA_MW_ACCESS		(IB_ACCESS_LOCAL_WRITE | SHCA_ACCESS_REMOTE | \
				 IB_ZERO_BASED)

enum shca_mr_kind {
	SHCA_MRK_USER,		/* reg_user_mr: pinned user pages */
	SHCA_MRK_DMA,		/* get_dma_mr: iova is a kernel address */
	SHCA_MRK_FRMR,		/* alloc_mr(MEM_REG): fast registration */
	SHCA_MRK_MW1,		/* memory window type 1 */
	SHCA_MRK_MW2,		/* memory window type 2 */
};

enum shca_mr_state {
	SHCA_MRS_FREE,		/* FRMR not registered, MW2 not bound */
	SHCA_MRS_VALID,
	SHCA_MRS_DEAD,		/* being destroyed */
};

/**
 * struct shca_mrt - the device's key table
 * @lock: serialises @kt writers and object state changes (spin_lock_bh)
 * @kt: the keys
 * @mem: @kt's slot memory
 */
struct shca_mrt {
	spinlock_t lock;
	struct shca_keytab kt;
	void *mem;
};

/**
 * struct shca_mr - a memory region or window
 * @ibmr: RDMA core MR (unused for windows)
 * @sdev: device
 * @kind: enum shca_mr_kind, fixed
 * @ref: references: the registration's, one per lookup, one per R_Key
 *	slot holding the object (shca_rkey.c)
 * @done: completed when @ref drops to zero
 * @rcu: for kfree_rcu()
 * @seq: guards the fields below for lockless readers; written under
 *	shca_mrt.lock
 * @pdn: PD number (a user MR's may change: rereg_user_mr)
 * @state: enum shca_mr_state
 * @key: current lkey/rkey
 * @access: IB_ACCESS_* rights (window: those of the binding)
 * @iova: MR: first byte; window: MR iova of the window's first byte
 * @length: bytes
 * @m: MR part
 * @m.base: offset of @iova in the first page or block
 * @m.shift: log2 of the page/block size
 * @m.npages: pages/blocks in use
 * @m.max_pages: FRMR: capacity of @m.blocks and @m.staged
 * @m.mapped: FRMR: blocks in @m.staged (the last map_mr_sg)
 * @m.staged_new: FRMR: a map_mr_sg filled @m.staged since the last REG_MR
 *	(else a REG_MR keeps the blocks in effect)
 * @m.num_mw: windows bound to this MR (under shca_mrt.lock only)
 * @m.pages: user MR: the pinned pages
 * @m.blocks: FRMR: kernel virtual address of each block of the
 *	registration in effect; swapped with @m.staged by a REG_MR
 * @m.staged: FRMR: the blocks map_mr_sg writes, which take effect at the
 *	next REG_MR: mapping a registered MR does not move its translation
 * @m.umem: user MR: the pinned region
 * @w: window part
 * @w.mr: the MR the window is bound to, NULL if unbound or zero length
 * @w.zero_based: remote addresses are offsets from the window start
 * @w.qp_serial: type 2: the serial number (shca_qp.serial) of the QP the
 *	window is bound to; 0 when unbound.  Not a pointer: a QP destroyed
 *	and another allocated at its address must not inherit the window
 * @w.ibmw: the core's object (valid until dealloc_mw marks @state DEAD)
 */
struct shca_mr {
	struct ib_mr ibmr;
	struct shca_dev *sdev;
	u8 kind;
	refcount_t ref;
	struct completion done;
	struct rcu_head rcu;
	seqcount_spinlock_t seq;
	u32 pdn;
	u8 state;
	u32 key;
	int access;
	u64 iova;
	u64 length;
	union {
		struct {
			u64 base;
			u32 shift;
			u32 npages;
			u32 max_pages;
			u32 mapped;
			bool staged_new;
			unsigned int num_mw;
			struct page **pages;
			u64 *blocks;
			u64 *staged;
			struct ib_umem *umem;
		} m;
		struct {
			struct shca_mr *mr;
			bool zero_based;
			u64 qp_serial;
			struct ib_mw *ibmw;
		} w;
	};
};

/**
 * struct shca_mw - the core's memory window object
 * @ibmw: RDMA core MW
 * @obj: our object, which holds the window's state
 */
struct shca_mw {
	struct ib_mw ibmw;
	struct shca_mr *obj;
};

/* a consistent copy of an object's mutable fields */
struct shca_mr_view {
	u32 pdn;
	u8 state;
	u32 key;
	int access;
	u64 iova;
	u64 length;
	u64 base;
	u32 shift;
	u32 npages;
	u64 *blocks;
	struct shca_mr *mr;
	bool zero_based;
	u64 qp_serial;
};

/*
 * Where a transfer's other end is: a buffer or an skb.  With @frag set
 * (SHCA_FROM_MR into @skb only) the MR's pages are attached to @skb as
 * page fragments, each with its own page reference, instead of being
 * copied; at most @max_frags fragments.  @copied counts the bytes the CPU
 * copied.  With @crc (SHCA_FROM_MR into @buf only) the bytes are added
 * to that raw CRC-32 state as they are copied (shca_crc32_copy()).
 */
struct shca_xfer {
	enum shca_copy_dir dir;
	void *buf;
	struct sk_buff *skb;
	u32 off;
	bool frag;
	unsigned int max_frags;
	u64 copied;
	u32 *crc;
};

/*
 * One piece of an MR, never across a kernel page: @addr mapped into the
 * kernel (unmapped with shca_mr_unmap()), and the page and offset in it.
 */
struct shca_mr_map {
	void *addr;
	void *kmap;
	struct page *page;
	u32 pg_off;
	u32 len;
};

static inline struct shca_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct shca_mr, ibmr);
}

static inline struct shca_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct shca_mw, ibmw);
}

static inline struct shca_mrt *shca_mrt(struct shca_dev *sdev)
{
	return sdev->mrt.priv;
}

static inline bool shca_is_mw(const struct shca_mr *o)
{
	return o->kind == SHCA_MRK_MW1 || o->kind == SHCA_MRK_MW2;
}

/* [@iova, @iova + @len) inside [@start, @start + @length)?  No overflow. */
static inline bool shca_range_ok(u64 start, u64 length, u64 iova, u64 len)
{
	return iova >= start && len <= length && iova - start <= length - len;
}

static void shca_mr_view(struct shca_mr *o, struct shca_mr_view *v)
{
	unsigned int seq;

	do {
		seq = read_seqcount_begin(&o->seq);
		v->pdn = o->pdn;
		v->state = o->state;
		v->key = o->key;
		v->access = o->access;
		v->iova = o->iova;
		v->length = o->length;
		if (shca_is_mw(o)) {
			v->mr = o->w.mr;
			v->zero_based = o->w.zero_based;
			v->qp_serial = o->w.qp_serial;
			v->base = 0;
			v->shift = 0;
			v->npages = 0;
			v->blocks = NULL;
		} else {
			v->mr = NULL;
			v->zero_based = false;
			v->qp_serial = 0;
			v->base = o->m.base;
			v->shift = o->m.shift;
			v->npages = o->m.npages;
			v->blocks = o->m.blocks;
		}
	} while (read_seqcount_retry(&o->seq, seq));
}

/**
 * shca_mr_put - drop a reference taken by a lookup
 * @mr: the MR/MW, or NULL
 */
void shca_mr_put(struct shca_mr *mr)
{
	if (mr && refcount_dec_and_test(&mr->ref))
		complete(&mr->done);
}

/* The object @key names, referenced, or NULL.  Any context. */
static struct shca_mr *shca_mr_find(struct shca_dev *sdev, u32 key)
{
	struct shca_mr *o;

	rcu_read_lock();
	o = shca_keytab_lookup(&shca_mrt(sdev)->kt, key);
	if (o && !refcount_inc_not_zero(&o->ref))
		o = NULL;
	rcu_read_unlock();
	return o;
}

/* Window bounds are in the remote address space (offsets if zero based). */
static bool shca_view_range_ok(const struct shca_mr *o,
			       const struct shca_mr_view *v, u64 iova, u64 len)
{
	if (shca_is_mw(o) && v->zero_based)
		return shca_range_ok(0, v->length, iova, len);
	return shca_range_ok(v->iova, v->length, iova, len);
}

/* The lookup checks of shca_mr.h, in order, on a referenced object. */
static int shca_mr_check(struct shca_mr *o, struct shca_pd *pd,
			 struct shca_qp *qp, u32 key, u64 iova, u64 len,
			 int access)
{
	struct shca_mr_view v;

	shca_mr_view(o, &v);
	if (v.state != SHCA_MRS_VALID || v.key != key)
		return -ENOENT;
	if (!pd || v.pdn != pd->pdn)
		return -EACCES;
	if (o->kind == SHCA_MRK_MW2 && (!qp || v.qp_serial != qp->serial))
		return -EACCES;
	if ((v.access & access) != access)
		return -EACCES;
	if (!shca_view_range_ok(o, &v, iova, len))
		return -ERANGE;
	return 0;
}

static struct shca_mr *shca_mr_get(struct shca_dev *sdev, struct shca_pd *pd,
				   struct shca_qp *qp, u32 key, u64 iova,
				   u64 len, int access, bool remote, int *err)
{
	struct shca_mr *o = shca_mr_find(sdev, key);
	int ret = -ENOENT;

	if (o && (remote || !shca_is_mw(o)))
		ret = shca_mr_check(o, pd, qp, key, iova, len, access);
	if (ret) {
		shca_mr_put(o);
		o = NULL;
	}
	if (err)
		*err = ret;
	return o;
}

/**
 * shca_mr_get_lkey - look up a local key for a local access
 * @sdev: device
 * @pd: PD of the QP using the key
 * @lkey: untrusted key (an MR's; windows have no lkey)
 * @iova: first byte accessed
 * @len: bytes accessed
 * @access: rights needed (IB_ACCESS_LOCAL_WRITE to write, 0 to read)
 * @err: if not NULL, receives 0 or the error (see shca_mr.h)
 *
 * Return: the MR, referenced (shca_mr_put()), or NULL.
 */
struct shca_mr *shca_mr_get_lkey(struct shca_dev *sdev, struct shca_pd *pd,
				 u32 lkey, u64 iova, u64 len, int access,
				 int *err)
{
	return shca_mr_get(sdev, pd, NULL, lkey, iova, len, access, false,
			   err);
}

/**
 * shca_mr_get_rkey - look up a remote key for an incoming RDMA access
 * @sdev: device
 * @pd: PD of the responder QP
 * @qp: the responder QP (a type 2 window must be bound to it)
 * @rkey: untrusted key from the packet
 * @iova: first byte accessed (for a zero-based window, its offset)
 * @len: bytes accessed
 * @access: IB_ACCESS_REMOTE_READ, _WRITE or _ATOMIC
 * @err: if not NULL, receives 0 or the error (see shca_mr.h)
 *
 * Return: the MR or MW, referenced (shca_mr_put()), or NULL.
 */
struct shca_mr *shca_mr_get_rkey(struct shca_dev *sdev, struct shca_pd *pd,
				 struct shca_qp *qp, u32 rkey, u64 iova,
				 u64 len, int access, int *err)
{
	return shca_mr_get(sdev, pd, qp, rkey, iova, len, access, true, err);
}

/*
 * Map the piece of MR @o (snapshot @v) that holds @iova, at most @len bytes
 * and never across a kernel page.  Bounds were checked by the caller.
 */
static int shca_mr_map(struct shca_mr *o, const struct shca_mr_view *v,
		       u64 iova, u32 len, struct shca_mr_map *m)
{
	u64 pos = v->base + (iova - v->iova);
	u64 idx = pos >> v->shift;
	u64 in = pos & ((1ULL << v->shift) - 1);
	unsigned long va = (unsigned long)iova;

	m->kmap = NULL;
	m->page = NULL;
	if (o->kind != SHCA_MRK_DMA && idx >= v->npages)
		return -ERANGE;
	if (o->kind == SHCA_MRK_USER) {
		m->page = o->m.pages[idx];
		m->kmap = kmap_local_page(m->page);
		m->addr = m->kmap + in;
		m->pg_off = in;
		m->len = min_t(u64, len, PAGE_SIZE - in);
		return 0;
	}
	if (o->kind == SHCA_MRK_FRMR) {
		va = (unsigned long)(READ_ONCE(v->blocks[idx]) + in);
		len = min_t(u64, len, (1ULL << v->shift) - in);
	}
	/* DMA MR and FRMR: kernel addresses, which must be in the linear map */
	if (!virt_addr_valid((void *)va))
		return -EFAULT;
	m->addr = (void *)va;
	m->page = virt_to_page((void *)va);
	m->pg_off = offset_in_page(va);
	m->len = min_t(u64, len, PAGE_SIZE - m->pg_off);
	return 0;
}

static void shca_mr_unmap(struct shca_mr_map *m, bool written)
{
	if (!m->kmap)
		return;
	if (written)
		flush_dcache_page(m->page);
	kunmap_local(m->kmap);
}

/*
 * Attach the piece @m to the end of x->skb by reference.  The page gets a
 * reference of its own, so that the MR can be deregistered (and the pages
 * unpinned) while the packet still waits in a queue.  Return: 0, or
 * -E2BIG when the piece cannot go by reference (no fragment left, a page
 * that must not be referenced such as a slab page): the caller copies.
 */
static int shca_xfer_frag(struct shca_xfer *x, const struct shca_mr_map *m)
{
	struct sk_buff *skb = x->skb;
	int i = skb_shinfo(skb)->nr_frags;

	if (skb_can_coalesce(skb, i, m->page, m->pg_off)) {
		skb_frag_size_add(&skb_shinfo(skb)->frags[i - 1], m->len);
	} else {
		if (i >= x->max_frags || !sendpage_ok(m->page))
			return -E2BIG;
		get_page(m->page);
		skb_fill_page_desc(skb, i, m->page, m->pg_off, m->len);
	}
	skb->len += m->len;
	skb->data_len += m->len;
	skb->truesize += m->len;
	return 0;
}

static int shca_xfer_piece(struct shca_xfer *x, void *addr, u32 n)
{
	int ret = 0;

	x->copied += n;
	if (x->skb && x->dir == SHCA_TO_MR)
		ret = skb_copy_bits(x->skb, x->off, addr, n);
	else if (x->skb)
		ret = skb_store_bits(x->skb, x->off, addr, n);
	else if (x->dir == SHCA_TO_MR)
		memcpy(addr, x->buf + x->off, n);
	else if (x->crc)
		*x->crc = shca_crc32_copy(*x->crc, x->buf + x->off, addr, n);
	else
		memcpy(x->buf + x->off, addr, n);
	x->off += n;
	return ret;
}

/*
 * For window @mw: pin the MR it is bound to and translate @iova into that
 * MR's address space.
 */
static int shca_mw_resolve(struct shca_mr *mw, u64 iova, u64 len,
			   struct shca_mr **mr, u64 *mr_iova)
{
	struct shca_mr_view v;
	int ret = 0;

	rcu_read_lock();
	shca_mr_view(mw, &v);
	if (v.state != SHCA_MRS_VALID)
		ret = -ENOENT;
	else if (!v.mr || !shca_view_range_ok(mw, &v, iova, len))
		ret = -ERANGE;
	else if (!refcount_inc_not_zero(&v.mr->ref))
		ret = -ENOENT;
	rcu_read_unlock();
	if (ret)
		return ret;
	*mr = v.mr;
	*mr_iova = v.zero_based ? v.iova + iova : iova;
	return 0;
}

/* Move @len bytes at @iova of MR @o (not a window) to/from @x. */
static int shca_mr_xfer_mr(struct shca_mr *o, u64 iova, u32 len,
			   struct shca_xfer *x)
{
	struct shca_mr_view v;
	struct shca_mr_map m;
	int ret;

	shca_mr_view(o, &v);
	if (v.state != SHCA_MRS_VALID)
		return -ENOENT;
	if (!shca_range_ok(v.iova, v.length, iova, len))
		return -ERANGE;
	while (len) {
		ret = shca_mr_map(o, &v, iova, len, &m);
		if (ret)
			return ret;
		if (x->frag)
			ret = shca_xfer_frag(x, &m);
		else
			ret = shca_xfer_piece(x, m.addr, m.len);
		shca_mr_unmap(&m, x->dir == SHCA_TO_MR);
		if (ret)
			return ret;
		iova += m.len;
		len -= m.len;
	}
	return 0;
}

static int shca_mr_xfer(struct shca_mr *o, u64 iova, u32 len,
			struct shca_xfer *x)
{
	struct shca_mr *mr;
	u64 mr_iova;
	int ret;

	if (!len)
		return 0;
	if (!shca_is_mw(o))
		return shca_mr_xfer_mr(o, iova, len, x);
	ret = shca_mw_resolve(o, iova, len, &mr, &mr_iova);
	if (ret)
		return ret;
	ret = shca_mr_xfer_mr(mr, mr_iova, len, x);
	shca_mr_put(mr);
	return ret;
}

/* Count what a transfer moved with the CPU (shca_xfer.copied). */
static void shca_xfer_account(struct shca_dev *sdev,
			      const struct shca_xfer *x)
{
	if (!x->copied)
		return;
	shca_stat_add(sdev, SHCA_CNT_PAYLOAD_COPY_BYTES, x->copied);
	if (x->dir == SHCA_TO_MR)
		shca_stat_add(sdev, SHCA_CNT_PAYLOAD_RX_BYTES, x->copied);
}

/**
 * shca_mr_copy - copy between a referenced MR/MW and a kernel buffer
 * @mr: MR or MW from a lookup
 * @iova: first byte in @mr (a window's offset if zero based)
 * @buf: kernel buffer
 * @len: bytes
 * @dir: SHCA_TO_MR or SHCA_FROM_MR
 *
 * Return: 0, -ENOENT if @mr was invalidated since the lookup, -ERANGE
 * outside @mr, -EFAULT for a DMA MR address outside the linear map.
 */
int shca_mr_copy(struct shca_mr *mr, u64 iova, void *buf, u32 len,
		 enum shca_copy_dir dir)
{
	struct shca_xfer x = { .dir = dir, .buf = buf };
	int ret;

	ret = shca_mr_xfer(mr, iova, len, &x);
	shca_xfer_account(mr->sdev, &x);
	return ret;
}

/**
 * shca_mr_copy_crc - copy out of a referenced MR/MW, adding to a CRC
 * @mr: MR or MW from a lookup
 * @iova: first byte in @mr (a window's offset if zero based)
 * @buf: kernel buffer
 * @len: bytes
 * @crc: raw CRC-32 state the bytes are added to (shca_crc32_le())
 *
 * One pass over the bytes for both (a READ response's payload, whose
 * ICRC then need not read it again).
 *
 * Return: as shca_mr_copy().
 */
int shca_mr_copy_crc(struct shca_mr *mr, u64 iova, void *buf, u32 len,
		     u32 *crc)
{
	struct shca_xfer x = { .dir = SHCA_FROM_MR, .buf = buf, .crc = crc };
	int ret;

	ret = shca_mr_xfer(mr, iova, len, &x);
	shca_xfer_account(mr->sdev, &x);
	return ret;
}

/**
 * shca_mr_copy_skb - copy between a referenced MR/MW and an skb
 * @mr: MR or MW from a lookup
 * @iova: first byte in @mr (a window's offset if zero based)
 * @skb: the skb; for SHCA_FROM_MR its data area must already cover
 *	[@skb_off, @skb_off + @len)
 * @skb_off: offset in @skb
 * @len: bytes
 * @dir: SHCA_TO_MR (skb to memory) or SHCA_FROM_MR (memory to skb)
 *
 * The data moves once, straight between the skb and the mapped page.
 *
 * Return: as shca_mr_copy(), or -EFAULT if the skb is too short.
 */
int shca_mr_copy_skb(struct shca_mr *mr, u64 iova, struct sk_buff *skb,
		     u32 skb_off, u32 len, enum shca_copy_dir dir)
{
	struct shca_xfer x = { .dir = dir, .skb = skb, .off = skb_off };
	int ret;

	ret = shca_mr_xfer(mr, iova, len, &x);
	shca_xfer_account(mr->sdev, &x);
	return ret;
}

/**
 * shca_mr_frag_skb - append bytes of a referenced MR/MW to an skb by
 *	reference
 * @mr: MR or MW from a lookup (read access checked by the caller)
 * @iova: first byte in @mr (a window's offset if zero based)
 * @skb: packet being built, not shared; the bytes go after its data
 * @len: bytes
 * @max_frags: most page fragments @skb may end up with
 *
 * See shca_sgl_frag().  On error @skb may hold some of the fragments:
 * free it.
 *
 * Return: 0, -E2BIG when the bytes cannot go by reference (the caller
 * copies them instead), or as shca_mr_copy().
 */
int shca_mr_frag_skb(struct shca_mr *mr, u64 iova, struct sk_buff *skb,
		     u32 len, unsigned int max_frags)
{
	struct shca_xfer x = { .dir = SHCA_FROM_MR, .skb = skb, .frag = true,
			       .max_frags = max_frags };

	return shca_mr_xfer(mr, iova, len, &x);
}

static int shca_mr_atomic_mr(struct shca_mr *o, u64 iova,
			     enum shca_atomic_op op, u64 compare_add,
			     u64 swap, u64 *orig)
{
	struct shca_mr_view v;
	struct shca_mr_map m;
	u64 *p;
	int ret;

	shca_mr_view(o, &v);
	if (v.state != SHCA_MRS_VALID)
		return -ENOENT;
	if (!shca_range_ok(v.iova, v.length, iova, sizeof(u64)))
		return -ERANGE;
	ret = shca_mr_map(o, &v, iova, sizeof(u64), &m);
	if (ret)
		return ret;
	p = m.addr;
	/* the memory itself must be aligned, whatever the MR's iova */
	if (m.len != sizeof(u64) || !IS_ALIGNED((unsigned long)p, 8)) {
		shca_mr_unmap(&m, false);
		return -EINVAL;
	}
	if (op == SHCA_ATOMIC_CMP_SWAP)
		*orig = cmpxchg64(p, compare_add, swap);
	else
		*orig = atomic64_fetch_add(compare_add, (atomic64_t *)p);
	shca_mr_unmap(&m, true);
	return 0;
}

/**
 * shca_mr_atomic - execute an RC atomic on a referenced MR/MW
 * @mr: MR or MW from a lookup
 * @iova: address of the 64-bit operand, 8-byte aligned
 * @op: compare-and-swap or fetch-and-add
 * @compare_add: compare value or addend
 * @swap: value stored when the compare matches
 * @orig: receives the operand's original value
 *
 * The operation is a CPU atomic on the operand, so it is atomic against
 * other atomics of this device and against the CPUs' atomics.
 *
 * Return: 0, -EINVAL if the operand is not 8-byte aligned, or as
 * shca_mr_copy().
 */
int shca_mr_atomic(struct shca_mr *mr, u64 iova, enum shca_atomic_op op,
		   u64 compare_add, u64 swap, u64 *orig)
{
	struct shca_mr *target;
	u64 mr_iova;
	int ret;

	if (!IS_ALIGNED(iova, 8) ||
	    (op != SHCA_ATOMIC_CMP_SWAP && op != SHCA_ATOMIC_FETCH_ADD))
		return -EINVAL;
	if (!shca_is_mw(mr))
		return shca_mr_atomic_mr(mr, iova, op, compare_add, swap, orig);
	ret = shca_mw_resolve(mr, iova, sizeof(u64), &target, &mr_iova);
	if (ret)
		return ret;
	if (IS_ALIGNED(mr_iova, 8))
		ret = shca_mr_atomic_mr(target, mr_iova, op, compare_add, swap,
					orig);
	else
		ret = -EINVAL;
	shca_mr_put(target);
	return ret;
}

/* total bytes of an SGE list (cannot overflow: u32 lengths) */
static u64 shca_sgl_bytes(const struct shca_sge *sgl, unsigned int num_sge)
{
	u64 total = 0;
	unsigned int i;

	for (i = 0; i < num_sge; i++)
		total += sgl[i].length;
	return total;
}

/*
 * Move @len bytes at @offset of an SGE list to/from @x, looking up each
 * SGE's lkey for exactly the bytes moved through it (any key: 0 is not
 * special).  A zero-length transfer checks no key.
 */
static int shca_sgl_xfer(struct shca_dev *sdev, struct shca_pd *pd,
			 const struct shca_sge *sgl, unsigned int num_sge,
			 u32 offset, u32 len, struct shca_xfer *x)
{
	int access = x->dir == SHCA_TO_MR ? IB_ACCESS_LOCAL_WRITE : 0;
	unsigned int i;
	int ret = -ENOENT;

	if (!len)
		return 0;
	if ((u64)offset + len > shca_sgl_bytes(sgl, num_sge))
		return -EINVAL;
	for (i = 0; i < num_sge && len; i++) {
		u32 sl = sgl[i].length, n;
		u64 addr = sgl[i].addr;
		struct shca_mr *mr;

		if (offset >= sl) {
			offset -= sl;
			continue;
		}
		n = min(sl - offset, len);
		addr += offset;
		mr = shca_mr_get_lkey(sdev, pd, sgl[i].lkey, addr, n, access,
				      &ret);
		if (!mr)
			return ret;
		ret = shca_mr_xfer(mr, addr, n, x);
		shca_mr_put(mr);
		if (ret)
			return ret;
		len -= n;
		offset = 0;
	}
	return 0;
}

/**
 * shca_sgl_copy - move data between a local SGE list and a buffer/skb
 * @sdev: device
 * @pd: PD the SGEs' lkeys must belong to
 * @sgl: validated kernel copy of the SGE list
 * @num_sge: entries in @sgl
 * @offset: byte offset into the concatenated SGE list
 * @buf: kernel buffer, or NULL when @skb is used
 * @skb: skb (when @buf is NULL), data at @skb_off
 * @skb_off: offset in @skb
 * @len: bytes
 * @dir: SHCA_TO_MR (scatter into the SGEs: needs LOCAL_WRITE) or
 *	SHCA_FROM_MR (gather from them)
 *
 * Each SGE's lkey is looked up (any key: 0 is not special) for exactly the
 * bytes moved through it.  A zero-length copy checks no key.  The bytes
 * copied count in payload_copy_bytes (and, into the SGEs, in
 * payload_rx_bytes).
 *
 * Return: 0, -ENOENT/-EACCES/-ERANGE on a bad lkey, -EINVAL when @offset +
 * @len exceeds the SGE list, -EFAULT if the skb is too short.
 */
int shca_sgl_copy(struct shca_dev *sdev, struct shca_pd *pd,
		  const struct shca_sge *sgl, unsigned int num_sge, u32 offset,
		  void *buf, struct sk_buff *skb, u32 skb_off, u32 len,
		  enum shca_copy_dir dir)
{
	struct shca_xfer x = { .dir = dir, .buf = buf, .skb = skb,
			       .off = buf ? 0 : skb_off };
	int ret;

	if (len && !buf && !skb)
		return -EINVAL;
	ret = shca_sgl_xfer(sdev, pd, sgl, num_sge, offset, len, &x);
	shca_xfer_account(sdev, &x);
	return ret;
}

/**
 * shca_sgl_frag - append bytes of a local SGE list to an skb by reference
 * @sdev: device
 * @pd: PD the SGEs' lkeys must belong to
 * @sgl: validated kernel copy of the SGE list
 * @num_sge: entries in @sgl
 * @offset: byte offset into the concatenated SGE list
 * @skb: packet being built, not shared; the bytes go after its data
 * @len: bytes
 * @max_frags: most page fragments @skb may end up with
 *
 * The pages holding the bytes become page fragments of @skb (adjacent
 * pieces of one page share a fragment), each taking a page reference that
 * freeing the skb drops: deregistering the MR while the packet waits in
 * a queue leaves the pages to the skb.  The keys are checked as by
 * shca_sgl_copy().  On error @skb may hold some of the fragments: free
 * it.
 *
 * Return: 0, -E2BIG when the bytes need more than @max_frags fragments or
 * sit in memory that must not be referenced (slab): the caller copies
 * them instead; or an error of shca_sgl_copy().
 */
int shca_sgl_frag(struct shca_dev *sdev, struct shca_pd *pd,
		  const struct shca_sge *sgl, unsigned int num_sge, u32 offset,
		  struct sk_buff *skb, u32 len, unsigned int max_frags)
{
	struct shca_xfer x = { .dir = SHCA_FROM_MR, .skb = skb, .frag = true,
			       .max_frags = max_frags };

	return shca_sgl_xfer(sdev, pd, sgl, num_sge, offset, len, &x);
}

/* --- object creation and destruction --- */

static struct shca_mr *shca_mr_new(struct shca_dev *sdev, u32 pdn,
				   enum shca_mr_kind kind)
{
	struct shca_mr *o = kzalloc(sizeof(*o), GFP_KERNEL);

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

/*
 * Give @o a key and make it visible to lookups in @state.  The object is
 * fully initialised before the key table publishes it.
 */
static int shca_mr_publish(struct shca_mr *o, enum shca_mr_state state)
{
	struct shca_mrt *t = shca_mrt(o->sdev);
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

/*
 * Mark @o dead and free its key (under the table lock).  Fails with -EBUSY
 * for an MR with bound windows.  Returns 1, and does nothing, when @o is
 * dead already (its translation was replaced by rereg_user_mr), else 0
 * with the key it had in *@key.
 */
static int shca_mr_retire(struct shca_mr *o, u32 *key)
{
	struct shca_mrt *t = shca_mrt(o->sdev);
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

/* Can remote operations hold @o's key in R_Key slots? */
static bool shca_mr_remote(const struct shca_mr *o)
{
	return o->kind == SHCA_MRK_FRMR || (o->access & SHCA_ACCESS_REMOTE);
}

/* Drop the registration's reference and wait for every lookup's. */
static void shca_mr_drain(struct shca_mr *o)
{
	shca_mr_put(o);
	while (!wait_for_completion_timeout(&o->done, 10 * HZ))
		pr_warn_ratelimited("shca: key %#x still referenced\n", o->key);
}

static void shca_mr_free(struct shca_mr *o)
{
	if (o->kind == SHCA_MRK_USER) {
		kvfree(o->m.pages);
		ib_umem_release(o->m.umem);
	} else if (o->kind == SHCA_MRK_FRMR) {
		kfree(o->m.blocks);
		kfree(o->m.staged);
	}
	kfree_rcu(o, rcu);
}

/* access rights of a new MR or a REG_MR work request */
static int shca_mr_check_access(struct ib_device *ibdev, int access)
{
	if (access & IB_ACCESS_ON_DEMAND)
		return -EOPNOTSUPP;
	if (access & IB_ZERO_BASED)
		return -EINVAL;
	return ib_check_mr_access(ibdev, access);
}

static struct ib_mr *shca_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct shca_dev *sdev = to_sdev(ibpd->device);
	struct shca_mr *o;
	int ret;

	ret = shca_mr_check_access(ibpd->device, access);
	if (ret)
		return ERR_PTR(ret);
	o = shca_mr_new(sdev, to_spd(ibpd)->pdn, SHCA_MRK_DMA);
	if (!o)
		return ERR_PTR(-ENOMEM);
	o->access = access & SHCA_MR_ACCESS;
	o->iova = 0;
	o->length = U64_MAX;
	o->m.shift = PAGE_SHIFT;
	ret = shca_mr_publish(o, SHCA_MRS_VALID);
	if (ret) {
		kfree(o);
		return ERR_PTR(ret);
	}
	shca_obj_get(SHCA_OBJ_MR);
	return &o->ibmr;
}

/* Fill the page array of a user MR from its umem. */
static int shca_mr_fill_pages(struct shca_mr *o, struct ib_umem *umem)
{
	struct sg_page_iter iter;
	size_t npages = ib_umem_num_pages(umem);
	u32 i = 0;

	if (!npages || npages > U32_MAX)
		return -EINVAL;
	o->m.pages = kvcalloc(npages, sizeof(*o->m.pages), GFP_KERNEL);
	if (!o->m.pages)
		return -ENOMEM;
	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		if (i == npages)
			break;
		o->m.pages[i++] = sg_page_iter_page(&iter);
	}
	if (i != npages)
		return -EFAULT;
	o->m.npages = npages;
	o->m.base = ib_umem_offset(umem);
	o->m.shift = PAGE_SHIFT;
	return 0;
}

static struct ib_mr *shca_reg_user_mr(struct ib_pd *ibpd, u64 start,
				      u64 length, u64 iova, int access,
				      struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibpd->device);
	struct ib_umem *umem;
	struct shca_mr *o;
	int ret;

	ret = shca_mr_check_access(ibpd->device, access);
	if (ret)
		return ERR_PTR(ret);
	if (!length || length > SHCA_MAX_MR_SIZE || iova > U64_MAX - length)
		return ERR_PTR(-EINVAL);
	o = shca_mr_new(sdev, to_spd(ibpd)->pdn, SHCA_MRK_USER);
	if (!o)
		return ERR_PTR(-ENOMEM);
	umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(umem)) {
		ret = PTR_ERR(umem);
		goto err_free;
	}
	o->m.umem = umem;
	ret = shca_mr_fill_pages(o, umem);
	if (ret)
		goto err_umem;
	o->access = access & SHCA_MR_ACCESS;
	o->iova = iova;
	o->length = length;
	o->ibmr.iova = iova;
	o->ibmr.length = length;
	ret = shca_mr_publish(o, SHCA_MRS_VALID);
	if (ret)
		goto err_umem;
	shca_obj_get(SHCA_OBJ_MR);
	return &o->ibmr;

err_umem:
	kvfree(o->m.pages);
	ib_umem_release(umem);
err_free:
	kfree(o);
	return ERR_PTR(ret);
}

static struct ib_mr *shca_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
				   u32 max_num_sg)
{
	struct shca_dev *sdev = to_sdev(ibpd->device);
	struct shca_mr *o;
	int ret;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EINVAL);
	if (!max_num_sg || max_num_sg > SHCA_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);
	o = shca_mr_new(sdev, to_spd(ibpd)->pdn, SHCA_MRK_FRMR);
	if (!o)
		return ERR_PTR(-ENOMEM);
	o->m.blocks = kcalloc(max_num_sg, sizeof(*o->m.blocks), GFP_KERNEL);
	o->m.staged = kcalloc(max_num_sg, sizeof(*o->m.staged), GFP_KERNEL);
	if (!o->m.blocks || !o->m.staged) {
		ret = -ENOMEM;
		goto err_free;
	}
	o->m.max_pages = max_num_sg;
	o->m.shift = PAGE_SHIFT;
	ret = shca_mr_publish(o, SHCA_MRS_FREE);
	if (ret)
		goto err_blocks;
	shca_obj_get(SHCA_OBJ_MR);
	return &o->ibmr;

err_blocks:
	kfree(o->m.blocks);
	kfree(o->m.staged);
err_free:
	kfree(o);
	return ERR_PTR(ret);
}

static int shca_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct shca_mr *o = to_smr(ibmr);

	if (o->m.mapped >= o->m.max_pages)
		return -ENOMEM;
	o->m.staged[o->m.mapped++] = addr;
	return 0;
}

/*
 * The blocks (in m.staged) take effect at the next REG_MR
 * (shca_mr_fast_reg()); the registration in effect, if any, keeps its own
 * until then.  On a virtual-DMA device the "DMA addresses" are kernel
 * virtual addresses.
 */
static int shca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
			  int sg_nents, unsigned int *sg_offset)
{
	struct shca_mr *o = to_smr(ibmr);

	if (o->kind != SHCA_MRK_FRMR)
		return -EINVAL;
	o->m.mapped = 0;
	o->m.staged_new = true;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, shca_set_page);
}

static int shca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct shca_mr *o = to_smr(ibmr);
	u32 key;
	int ret;

	ret = shca_mr_retire(o, &key);
	if (ret < 0)
		return ret;
	if (!ret && shca_mr_remote(o))
		shca_rkey_sweep(o->sdev, o->pdn, key);
	shca_mr_drain(o);
	shca_mr_free(o);
	shca_obj_put(SHCA_OBJ_MR);
	return 0;
}

/*
 * rereg_user_mr of the PD and/or the rights only: in place, the key and
 * the translation stay.  Operations in flight that the change forbids
 * (another PD, a right taken away) are swept.
 */
static int shca_rereg_in_place(struct shca_mr *o, int flags, u32 pdn,
			       int access)
{
	struct shca_mrt *t = shca_mrt(o->sdev);
	int old_access, ret;
	u32 old_pdn;
	bool sweep;

	spin_lock_bh(&t->lock);
	if (o->state != SHCA_MRS_VALID || o->m.num_mw) {
		ret = o->m.num_mw ? -EBUSY : -EINVAL;
		spin_unlock_bh(&t->lock);
		return ret;
	}
	old_pdn = o->pdn;
	old_access = o->access;
	write_seqcount_begin(&o->seq);
	if (flags & IB_MR_REREG_PD)
		o->pdn = pdn;
	if (flags & IB_MR_REREG_ACCESS)
		o->access = access & SHCA_MR_ACCESS;
	write_seqcount_end(&o->seq);
	sweep = o->pdn != old_pdn ||
		(old_access & ~o->access & SHCA_ACCESS_REMOTE);
	spin_unlock_bh(&t->lock);
	if (sweep)
		shca_rkey_sweep(o->sdev, old_pdn, o->key);
	return 0;
}

/*
 * rereg_user_mr with a new translation: a new MR (new pages, new key)
 * replaces @o, which dies here (its operations in flight swept) and is
 * deregistered by the RDMA core once the new one is installed.
 */
static struct ib_mr *shca_rereg_new(struct shca_mr *o, u64 start, u64 length,
				    u64 iova, int access, struct ib_pd *pd)
{
	struct ib_mr *ibmr;
	u32 key;
	int ret;

	ibmr = shca_reg_user_mr(pd, start, length, iova, access, NULL);
	if (IS_ERR(ibmr))
		return ibmr;
	ret = shca_mr_retire(o, &key);
	if (ret) {
		shca_dereg_mr(ibmr, NULL);
		return ERR_PTR(ret < 0 ? ret : -EINVAL);
	}
	if (shca_mr_remote(o))
		shca_rkey_sweep(o->sdev, o->pdn, key);
	return ibmr;
}

/**
 * shca_rereg_user_mr - ibv_rereg_mr
 * @ibmr: a user MR
 * @flags: IB_MR_REREG_TRANS, _PD, _ACCESS
 * @start: new user address (TRANS)
 * @length: new length (TRANS)
 * @iova: new I/O virtual address (TRANS)
 * @access: new rights (ACCESS)
 * @pd: the MR's PD after the call (the core passes the old one without
 *	IB_MR_REREG_PD)
 * @udata: unused
 *
 * A PD or rights change keeps the key; a new translation gives a new MR
 * and key.  Either way the call returns only after the operations in
 * flight that the change ends have been swept, as an invalidation does.
 * Refused with -EBUSY while windows are bound to the MR.
 *
 * Return: NULL (changed in place), the new MR, or an ERR_PTR.
 */
static struct ib_mr *shca_rereg_user_mr(struct ib_mr *ibmr, int flags,
					u64 start, u64 length, u64 iova,
					int access, struct ib_pd *pd,
					struct ib_udata *udata)
{
	struct shca_mr *o = to_smr(ibmr);
	int ret;

	if (o->kind != SHCA_MRK_USER)
		return ERR_PTR(-EINVAL);
	if (!(flags & IB_MR_REREG_ACCESS))
		access = o->access;
	ret = shca_mr_check_access(ibmr->device, access);
	if (ret)
		return ERR_PTR(ret);
	if (flags & IB_MR_REREG_TRANS)
		return shca_rereg_new(o, start, length, iova, access, pd);
	ret = shca_rereg_in_place(o, flags, to_spd(pd)->pdn, access);
	return ret ? ERR_PTR(ret) : NULL;
}

static int shca_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibmw->device);
	struct shca_mw *smw = to_smw(ibmw);
	enum shca_mr_kind kind;
	struct shca_mr *o;
	int ret;

	if (ibmw->type == IB_MW_TYPE_1)
		kind = SHCA_MRK_MW1;
	else if (ibmw->type == IB_MW_TYPE_2)
		kind = SHCA_MRK_MW2;
	else
		return -EINVAL;
	o = shca_mr_new(sdev, to_spd(ibmw->pd)->pdn, kind);
	if (!o)
		return -ENOMEM;
	o->w.ibmw = ibmw;
	/* a type 1 window is valid (bound to nothing) from the start */
	ret = shca_mr_publish(o, kind == SHCA_MRK_MW1 ? SHCA_MRS_VALID :
						       SHCA_MRS_FREE);
	if (ret) {
		kfree(o);
		return ret;
	}
	ibmw->rkey = o->key;
	smw->obj = o;
	shca_obj_get(SHCA_OBJ_MW);
	return 0;
}

static int shca_dealloc_mw(struct ib_mw *ibmw)
{
	struct shca_mr *o = to_smw(ibmw)->obj;
	u32 key = 0;

	WARN_ON(shca_mr_retire(o, &key));
	shca_rkey_sweep(o->sdev, o->pdn, key);
	shca_mr_drain(o);
	shca_mr_free(o);
	shca_obj_put(SHCA_OBJ_MW);
	return 0;
}

/* --- work requests: REG_MR, LOCAL_INV / SEND_WITH_INV, BIND_MW --- */

/*
 * Commit the blocks of the last map_mr_sg as the FRMR's translation (the
 * staged array becomes the live one; the old live one is staged for the
 * next map).  Caller holds shca_mrt.lock and checked the state.
 */
static int shca_frmr_commit(struct shca_mr *o, u32 key, int access)
{
	struct shca_mrt *t = shca_mrt(o->sdev);
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
 * Return: 0 or a negative errno (see shca_mr.h).
 */
int shca_mr_fast_reg(struct shca_qp *qp, struct ib_mr *ibmr, u32 key,
		     int access)
{
	struct shca_mr *o;
	struct shca_mrt *t;
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
static int shca_mr_do_invalidate(struct shca_mr *o)
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
 * Return: 0 or a negative errno (see shca_mr.h).
 */
int shca_mr_invalidate(struct shca_dev *sdev, struct shca_pd *pd, u32 key,
		       bool remote)
{
	struct shca_mrt *t = shca_mrt(sdev);
	struct shca_mr *o = shca_mr_find(sdev, key);
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
	shca_mr_put(o);
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
static int shca_mw_bind_check(const struct shca_bind *b, struct shca_mr *mw,
			      struct shca_mr *mr)
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
static void shca_mw_do_bind(const struct shca_bind *b, struct shca_mr *mw,
			    struct shca_mr *mr)
{
	struct shca_mrt *t = shca_mrt(mw->sdev);

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

/**
 * shca_mw_bind - execute a BIND_MW work request (type 1 or type 2)
 * @qp: the posting QP
 * @mw_rkey: the window's current rkey
 * @new_rkey: its rkey after the bind: same index, consumer's key byte
 * @mr_lkey: lkey of the MR to bind to (ignored when @length is 0)
 * @addr: MR iova of the window's first byte
 * @length: window length; 0 unbinds a type 1 window
 * @access: IB_ACCESS_REMOTE_READ/WRITE/ATOMIC, IB_ZERO_BASED (type 2)
 *
 * Window, MR and QP must share a PD; the MR must allow IB_ACCESS_MW_BIND,
 * hold the window, and have local write if the window grants remote write
 * or atomic.  A type 2 window must be free and is tied to @qp.  Rebinding
 * a bound type 1 window sweeps its old key.
 *
 * Return: 0 or a negative errno (see shca_mr.h).
 */
int shca_mw_bind(struct shca_qp *qp, u32 mw_rkey, u32 new_rkey, u32 mr_lkey,
		 u64 addr, u64 length, int access)
{
	struct shca_dev *sdev = to_sdev(qp->ibqp.device);
	struct shca_bind b = {
		.qp = qp, .pdn = to_spd(qp->ibqp.pd)->pdn,
		.mw_rkey = mw_rkey, .new_rkey = new_rkey, .mr_lkey = mr_lkey,
		.addr = addr, .length = length, .access = access,
	};
	struct shca_mrt *t = shca_mrt(sdev);
	struct shca_mr *mw, *mr = NULL;
	bool was_bound = false;
	int ret;

	if (access & ~SHCA_MW_ACCESS)
		return -EINVAL;
	mw = shca_mr_find(sdev, mw_rkey);
	if (!mw)
		return -ENOENT;
	ret = -EINVAL;
	if (!shca_is_mw(mw))
		goto out;
	ret = -ENOENT;
	if (length) {
		mr = shca_mr_find(sdev, mr_lkey);
		if (!mr)
			goto out;
	}
	spin_lock_bh(&t->lock);
	ret = shca_mw_bind_check(&b, mw, mr);
	if (!ret) {
		was_bound = mw->state == SHCA_MRS_VALID && mw->w.mr;
		shca_mw_do_bind(&b, mw, mr);
	}
	spin_unlock_bh(&t->lock);
	if (was_bound)
		shca_rkey_sweep(sdev, mw->pdn, mw_rkey);
out:
	shca_mr_put(mr);
	shca_mr_put(mw);
	return ret;
}

/* --- the table --- */

/**
 * shca_mr_table_init - create the device's key table
 * @sdev: device (from shca_dev_create(), before registration)
 *
 * Return: 0 or -ENOMEM.
 */
int shca_mr_table_init(struct shca_dev *sdev)
{
	struct shca_mrt *t;
	int ret = -ENOMEM;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return ret;
	t->mem = kvmalloc(shca_keytab_mem_size(shca_max_mr), GFP_KERNEL);
	if (!t->mem)
		goto err_free;
	ret = shca_keytab_init(&t->kt, shca_max_mr, t->mem);
	if (ret)
		goto err_mem;
	spin_lock_init(&t->lock);
	sdev->mrt.priv = t;
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
	struct shca_mrt *t = shca_mrt(sdev);

	if (!t)
		return;
	WARN(t->kt.used, "shca: %u keys still in use\n", t->kt.used);
	sdev->mrt.priv = NULL;
	kvfree(t->mem);
	kfree(t);
}

const struct ib_device_ops shca_mr_ops = {
	.alloc_mr = shca_alloc_mr,
	.alloc_mw = shca_alloc_mw,
	.dealloc_mw = shca_dealloc_mw,
	.dereg_mr = shca_dereg_mr,
	.get_dma_mr = shca_get_dma_mr,
	.map_mr_sg = shca_map_mr_sg,
	.reg_user_mr = shca_reg_user_mr,
	.rereg_user_mr = shca_rereg_user_mr,

	INIT_RDMA_OBJ_SIZE(ib_mw, shca_mw, ibmw),
};
