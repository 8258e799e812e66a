// SPDX-License-Identifier: GPL-2.0
/*
 * shca memory keys in the data path: looking a key up (lkey of a local
 * SGE, rkey of a remote request) and moving bytes into and out of the
 * memory it names, by copy, by page reference (transmit without a copy)
 * or as an atomic operation.  Safe in softirq context.  The locking and
 * lifetime rules are in shca_mem.h.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include "shca.h"
#include "shca_drdma.h"
#include "shca_icrc.h"
#include "shca_mem.h"
#include "shca_qpc.h"

/* a consistent copy of an object's mutable fields */
struct shca_mkey_view {
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
	struct shca_mkey *mr;
	bool zero_based;
	u64 qp_serial;
};

/*
 * A consistent snapshot @v of MR or MW @o's mutable state, taken under
 * the object's seqcount, without the lock.
 */
static void shca_mkey_view(struct shca_mkey *o, struct shca_mkey_view *v)
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
 * shca_mkey_put - drop a reference taken by a lookup
 * @mr: the MR/MW, or NULL
 */
void shca_mkey_put(struct shca_mkey *mr)
{
	if (mr && refcount_dec_and_test(&mr->ref))
		complete(&mr->done);
}

/**
 * shca_mkey_find - the object a key names, whatever its state
 * @sdev: device
 * @key: untrusted key
 *
 * Any context.  The caller checks state, key and rights on a snapshot.
 *
 * Return: the object, referenced (shca_mkey_put()), or NULL.
 */
struct shca_mkey *shca_mkey_find(struct shca_dev *sdev, u32 key)
{
	struct shca_mkey *o;

	rcu_read_lock();
	o = shca_keytab_lookup(&shca_mrt(sdev)->kt, key);
	if (o && !refcount_inc_not_zero(&o->ref))
		o = NULL;
	rcu_read_unlock();
	return o;
}

/* Window bounds are in the remote address space (offsets if zero based). */
static bool shca_view_range_ok(const struct shca_mkey *o,
			       const struct shca_mkey_view *v, u64 iova, u64 len)
{
	if (shca_is_mw(o) && v->zero_based)
		return shca_range_ok(0, v->length, iova, len);
	return shca_range_ok(v->iova, v->length, iova, len);
}

/* The lookup checks of shca_mem.h, in order, on a referenced object. */
static int shca_mkey_check(struct shca_mkey *o, struct shca_pd *pd,
			   struct shca_qp *qp, const struct shca_key_use *u)
{
	struct shca_mkey_view v;

	shca_mkey_view(o, &v);
	if (v.state != SHCA_MRS_VALID || v.key != u->key)
		return -ENOENT;
	if (!pd || v.pdn != pd->pdn)
		return -EACCES;
	if (o->kind == SHCA_MRK_MW2 && (!qp || v.qp_serial != qp->serial))
		return -EACCES;
	if ((v.access & u->access) != u->access)
		return -EACCES;
	if (!u->whole && !shca_view_range_ok(o, &v, u->iova, u->len))
		return -ERANGE;
	return 0;
}

static struct shca_mkey *shca_mkey_get(struct shca_dev *sdev,
				       struct shca_pd *pd, struct shca_qp *qp,
				       const struct shca_key_use *u, int *err)
{
	struct shca_mkey *o = shca_mkey_find(sdev, u->key);
	int ret = -ENOENT;

	/* only a remote access (@qp set) may name a window */
	if (o && (qp || !shca_is_mw(o)))
		ret = shca_mkey_check(o, pd, qp, u);
	if (ret) {
		shca_mkey_put(o);
		o = NULL;
	}
	if (err)
		*err = ret;
	return o;
}

/**
 * shca_mkey_get_rkey - look up a remote key for an incoming RDMA access
 * @qp: the responder QP (its PD; a type 2 window must be bound to it)
 * @u: the access: untrusted key from the packet, first byte (for a
 *	zero-based window, its offset), length, IB_ACCESS_REMOTE_READ,
 *	_WRITE or _ATOMIC
 * @err: if not NULL, receives 0 or the error (see shca_mem.h)
 *
 * Return: the MR or MW, referenced (shca_mkey_put()), or NULL.
 */
struct shca_mkey *shca_mkey_get_rkey(struct shca_qp *qp,
				     const struct shca_key_use *u, int *err)
{
	return shca_mkey_get(qp->sdev, qp->pd, qp, u, err);
}

/**
 * shca_mkey_get_lkey - look up the local key of one of a QP's SGEs
 * @qp: the QP (its PD)
 * @u: the SGE: untrusted key, address, length, access wanted (0: read)
 * @err: if not NULL, receives 0 or the error (see shca_mem.h)
 *
 * Return: the MR, referenced (shca_mkey_put()), or NULL.
 */
struct shca_mkey *shca_mkey_get_lkey(struct shca_qp *qp,
				     const struct shca_key_use *u, int *err)
{
	return shca_mkey_get(qp->sdev, qp->pd, NULL, u, err);
}

/*
 * Where a transfer's other end is: a buffer or an skb.  With @frag set
 * (SHCA_FROM_MR into @skb only) the MR's pages are attached to @skb as
 * page fragments, each with its own page reference, instead of being
 * copied; at most @max_frags fragments.  @copied counts the bytes the CPU
 * copied.  With @crc (SHCA_FROM_MR into @buf only) the bytes are added
 * to that raw CRC-32 state as they are copied (shca_crc32_copy()).  With
 * @key set, the MR or window must still have the key *@key.
 */
struct shca_xfer {
	enum shca_copy_dir dir;
	const u32 *key;
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

/*
 * Map the piece of MR @o (snapshot @v) that holds @iova, at most @len bytes
 * and never across a kernel page.  Bounds were checked by the caller.
 */
static int shca_mr_map(struct shca_mkey *o, const struct shca_mkey_view *v,
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
	if (o->kind == SHCA_MRK_USER || o->kind == SHCA_MRK_DM) {
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
static int shca_mw_resolve(struct shca_mkey *mw, const u32 *key, u64 iova,
			   u64 len, struct shca_mkey **mr, u64 *mr_iova)
{
	struct shca_mkey_view v;
	int ret = 0;

	rcu_read_lock();
	shca_mkey_view(mw, &v);
	if (v.state != SHCA_MRS_VALID || (key && v.key != *key))
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

/*
 * A transfer through a DM MR finished: bytes sent from device memory by
 * reference are counted, bytes placed in it may complete a DRDMA READ.
 */
static void shca_mr_xfer_dm(struct shca_mkey *o, u64 iova, u32 len,
			    const struct shca_xfer *x)
{
	if (x->frag)
		shca_stat_add(o->sdev, SHCA_CNT_DM_TX_BYTES, len);
	else if (x->dir == SHCA_TO_MR)
		shca_drdma_landed(o->sdev, o->m.dm_range, o->m.dm_gen,
				  o->m.dm_off + iova, len);
}

/* Move @len bytes at @iova of MR @o (not a window) to/from @x. */
static int shca_mr_xfer_mr(struct shca_mkey *o, u64 iova, u32 len,
			   struct shca_xfer *x)
{
	u64 first = iova, total = len;
	struct shca_mkey_view v;
	struct shca_mr_map m;
	int ret;

	shca_mkey_view(o, &v);
	if (v.state != SHCA_MRS_VALID || (x->key && v.key != *x->key))
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
	if (o->kind == SHCA_MRK_DM)
		shca_mr_xfer_dm(o, first, total, x);
	return 0;
}

static int shca_mkey_xfer(struct shca_mkey *o, u64 iova, u32 len,
			  struct shca_xfer *x)
{
	struct shca_mkey *mr;
	u64 mr_iova;
	int ret;

	if (!len)
		return 0;
	if (!shca_is_mw(o))
		return shca_mr_xfer_mr(o, iova, len, x);
	ret = shca_mw_resolve(o, x->key, iova, len, &mr, &mr_iova);
	if (ret)
		return ret;
	/* the window's key was the one to check; the MR's is its own */
	x->key = NULL;
	ret = shca_mr_xfer_mr(mr, mr_iova, len, x);
	shca_mkey_put(mr);
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
 * shca_mkey_copy - copy between a referenced MR/MW and a kernel buffer
 * @mr: MR or MW from a lookup
 * @iova: first byte in @mr (a window's offset if zero based)
 * @buf: kernel buffer
 * @len: bytes
 * @dir: SHCA_TO_MR or SHCA_FROM_MR
 *
 * Return: 0, -ENOENT if @mr was invalidated since the lookup, -ERANGE
 * outside @mr, -EFAULT for a DMA MR address outside the linear map.
 */
int shca_mkey_copy(struct shca_mkey *mr, u64 iova, void *buf, u32 len,
		   enum shca_copy_dir dir)
{
	struct shca_xfer x = { .dir = dir, .buf = buf };
	int ret;

	ret = shca_mkey_xfer(mr, iova, len, &x);
	shca_xfer_account(mr->sdev, &x);
	return ret;
}

/**
 * shca_mkey_copy_crc - copy out of a referenced MR/MW, adding to a CRC
 * @ref: MR or MW from a lookup, and its key
 * @iova: first byte in @mr (a window's offset if zero based)
 * @buf: kernel buffer
 * @len: bytes
 * @crc: raw CRC-32 state the bytes are added to (shca_crc32_le())
 *
 * One pass over the bytes for both (a READ response's payload, whose
 * ICRC then need not read it again).
 *
 * Return: as shca_mkey_copy().
 */
int shca_mkey_copy_crc(const struct shca_mkey_ref *ref, u64 iova, void *buf,
		       u32 len, u32 *crc)
{
	struct shca_xfer x = { .dir = SHCA_FROM_MR, .key = &ref->key,
			       .buf = buf, .crc = crc };
	int ret;

	ret = shca_mkey_xfer(ref->obj, iova, len, &x);
	shca_xfer_account(ref->obj->sdev, &x);
	return ret;
}

/**
 * shca_mkey_copy_skb - copy between a referenced MR/MW and an skb
 * @ref: MR or MW from a lookup, and its key
 * @iova: first byte in @mr (a window's offset if zero based)
 * @skb: the skb; for SHCA_FROM_MR its data area must already cover
 *	[@skb_off, @skb_off + @len)
 * @skb_off: offset in @skb
 * @len: bytes
 * @dir: SHCA_TO_MR (skb to memory) or SHCA_FROM_MR (memory to skb)
 *
 * The data moves once, straight between the skb and the mapped page.
 *
 * Return: as shca_mkey_copy(), or -EFAULT if the skb is too short.
 */
int shca_mkey_copy_skb(const struct shca_mkey_ref *ref, u64 iova,
		       struct sk_buff *skb, u32 skb_off, u32 len,
		       enum shca_copy_dir dir)
{
	struct shca_xfer x = { .dir = dir, .key = &ref->key, .skb = skb,
			       .off = skb_off };
	int ret;

	ret = shca_mkey_xfer(ref->obj, iova, len, &x);
	shca_xfer_account(ref->obj->sdev, &x);
	return ret;
}

/**
 * shca_mkey_frag_skb - append bytes of a referenced MR/MW to an skb by
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
 * copies them instead), or as shca_mkey_copy().
 */
int shca_mkey_frag_skb(struct shca_mkey *mr, u64 iova, struct sk_buff *skb,
		       u32 len, unsigned int max_frags)
{
	struct shca_xfer x = { .dir = SHCA_FROM_MR, .skb = skb, .frag = true,
			       .max_frags = max_frags };

	return shca_mkey_xfer(mr, iova, len, &x);
}

static int shca_mr_atomic_mr(struct shca_mkey *o, const u32 *key, u64 iova,
			     struct shca_atomic *a)
{
	struct shca_mkey_view v;
	struct shca_mr_map m;
	u64 *p;
	int ret;

	shca_mkey_view(o, &v);
	if (v.state != SHCA_MRS_VALID || (key && v.key != *key))
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
	if (a->op == SHCA_ATOMIC_CMP_SWAP)
		a->orig = cmpxchg64(p, a->compare_add, a->swap);
	else if (a->op == SHCA_ATOMIC_FETCH_ADD)
		a->orig = atomic64_fetch_add(a->compare_add, (atomic64_t *)p);
	else	/* one 8-byte store, after everything placed before it */
		smp_store_release(p, a->swap);
	shca_mr_unmap(&m, true);
	return 0;
}

/**
 * shca_mkey_atomic - execute an RC atomic or ATOMIC WRITE on a referenced
 *	MR/MW
 * @ref: MR or MW from a lookup, and its key
 * @iova: address of the 64-bit operand, 8-byte aligned
 * @a: the operation; a->orig receives the operand's original value (not
 *	for a store)
 *
 * The operation is a CPU atomic on the operand, so it is atomic against
 * other atomics of this device and against the CPUs' atomics; a store is
 * one 8-byte store with release order: no CPU sees it before what the
 * device placed earlier.
 *
 * Return: 0, -EINVAL if the operand is not 8-byte aligned, or as
 * shca_mkey_copy().
 */
int shca_mkey_atomic(const struct shca_mkey_ref *ref, u64 iova,
		     struct shca_atomic *a)
{
	struct shca_mkey *mr = ref->obj, *target;
	u64 mr_iova;
	int ret;

	if (!IS_ALIGNED(iova, 8) || a->op > SHCA_ATOMIC_STORE)
		return -EINVAL;
	if (!shca_is_mw(mr))
		return shca_mr_atomic_mr(mr, &ref->key, iova, a);
	ret = shca_mw_resolve(mr, &ref->key, iova, sizeof(u64), &target,
			      &mr_iova);
	if (ret)
		return ret;
	if (IS_ALIGNED(mr_iova, 8))
		ret = shca_mr_atomic_mr(target, NULL, mr_iova, a);
	else
		ret = -EINVAL;
	shca_mkey_put(target);
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
 * special; windows have no lkey).  A zero-length transfer checks no key.
 */
static int shca_sgl_xfer(const struct shca_sgl *sgl, u32 offset, u32 len,
			 struct shca_xfer *x)
{
	struct shca_key_use u = {
		.access = x->dir == SHCA_TO_MR ? IB_ACCESS_LOCAL_WRITE : 0,
	};
	const struct shca_sge *sge = sgl->sge;
	unsigned int i;
	int ret = -ENOENT;

	if (!len)
		return 0;
	if ((u64)offset + len > shca_sgl_bytes(sge, sgl->num_sge))
		return -EINVAL;
	for (i = 0; i < sgl->num_sge && len; i++) {
		u32 sl = sge[i].length, n;
		struct shca_mkey *mr;

		if (offset >= sl) {
			offset -= sl;
			continue;
		}
		n = min(sl - offset, len);
		u.key = sge[i].lkey;
		u.iova = sge[i].addr + offset;
		u.len = n;
		mr = shca_mkey_get(sgl->sdev, sgl->pd, NULL, &u, &ret);
		if (!mr)
			return ret;
		ret = shca_mkey_xfer(mr, u.iova, n, x);
		shca_mkey_put(mr);
		if (ret)
			return ret;
		len -= n;
		offset = 0;
	}
	return 0;
}

/**
 * shca_sgl_copy_buf - move data between a local SGE list and a buffer
 * @sgl: the SGE list
 * @offset: byte offset into the concatenated SGE list
 * @buf: kernel buffer
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
 * @len exceeds the SGE list.
 */
int shca_sgl_copy_buf(const struct shca_sgl *sgl, u32 offset, void *buf,
		      u32 len, enum shca_copy_dir dir)
{
	struct shca_xfer x = { .dir = dir, .buf = buf };
	int ret;

	ret = shca_sgl_xfer(sgl, offset, len, &x);
	shca_xfer_account(sgl->sdev, &x);
	return ret;
}

/**
 * shca_sgl_copy_skb - move data between a local SGE list and an skb
 * @sgl: the SGE list
 * @offset: byte offset into the concatenated SGE list
 * @skb: the packet, data at @skb_off
 * @skb_off: offset in @skb
 * @len: bytes
 * @dir: SHCA_TO_MR or SHCA_FROM_MR, as for shca_sgl_copy_buf()
 *
 * Return: as shca_sgl_copy_buf(), or -EFAULT if the skb is too short.
 */
int shca_sgl_copy_skb(const struct shca_sgl *sgl, u32 offset,
		      struct sk_buff *skb, u32 skb_off, u32 len,
		      enum shca_copy_dir dir)
{
	struct shca_xfer x = { .dir = dir, .skb = skb, .off = skb_off };
	int ret;

	ret = shca_sgl_xfer(sgl, offset, len, &x);
	shca_xfer_account(sgl->sdev, &x);
	return ret;
}

/**
 * shca_sgl_frag - append bytes of a local SGE list to an skb by reference
 * @sgl: the SGE list
 * @offset: byte offset into the concatenated SGE list
 * @skb: packet being built, not shared; the bytes go after its data
 * @len: bytes
 * @max_frags: most page fragments @skb may end up with
 *
 * The pages holding the bytes become page fragments of @skb (adjacent
 * pieces of one page share a fragment), each taking a page reference that
 * freeing the skb drops: deregistering the MR while the packet waits in
 * a queue leaves the pages to the skb.  The keys are checked as by
 * shca_sgl_copy_buf().  On error @skb may hold some of the fragments:
 * free it.
 *
 * Return: 0, -E2BIG when the bytes need more than @max_frags fragments or
 * sit in memory that must not be referenced (slab): the caller copies
 * them instead; or an error of shca_sgl_copy_skb().
 */
int shca_sgl_frag(const struct shca_sgl *sgl, u32 offset,
		  struct sk_buff *skb, u32 len, unsigned int max_frags)
{
	struct shca_xfer x = { .dir = SHCA_FROM_MR, .skb = skb, .frag = true,
			       .max_frags = max_frags };

	return shca_sgl_xfer(sgl, offset, len, &x);
}
