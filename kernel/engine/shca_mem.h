/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca memory keys (shca_mem.c: lookups and data movement; shca_memreg.c:
 * registration state changes).
 *
 * shca memory keys: the objects behind the keys of memory regions and
 * memory windows, and the key table they share (R_Key slots: see
 * shca_rkey.h).
 *
 * Every MR and MW is a struct shca_mkey (for an MW, a separate object the
 * core's ib_mw points to, so that its memory can outlive the ib_mw under
 * RCU).  Its key indexes the device's shca_keytab; lkey == rkey.
 *
 * Locking and lifetime:
 *  - shca_mrt.lock (taken with spin_lock_bh) serialises every key table
 *    writer and every change of an object's mutable state: state, key,
 *    access, geometry, window binding, num_mw.
 *  - Those mutable fields are also covered by the object's seqcount, so
 *    readers take a consistent snapshot (struct shca_mkey_view) without the
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
#ifndef SHCA_MEM_H
#define SHCA_MEM_H

#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/seqlock.h>
#include <linux/skbuff.h>
#include <linux/types.h>
#include <linux/version.h>
#include <rdma/ib_verbs.h>
#include "shca_keytab.h"

struct shca_dev;
struct shca_pd;
struct shca_qp;
struct shca_sge;

/*
 * The rights to be the target of a FLUSH (IBA 1.5): Linux 6.2 and later.
 * Before, the RDMA core refuses them in an MR's access flags and there is
 * no FLUSH to allow.  Persistent placement needs persistent memory, which
 * this device does not offer (query_device does not report it, so the
 * core refuses IB_ACCESS_FLUSH_PERSISTENT).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define SHCA_ACCESS_FLUSH_GLOBAL	IB_ACCESS_FLUSH_GLOBAL
#define SHCA_ACCESS_FLUSH_PERSISTENT	IB_ACCESS_FLUSH_PERSISTENT
#else
#define SHCA_ACCESS_FLUSH_GLOBAL	0
#define SHCA_ACCESS_FLUSH_PERSISTENT	0
#endif
#define SHCA_ACCESS_FLUSH	(SHCA_ACCESS_FLUSH_GLOBAL | \
				 SHCA_ACCESS_FLUSH_PERSISTENT)

#define SHCA_ACCESS_REMOTE	(IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_ATOMIC | SHCA_ACCESS_FLUSH)

#define SHCA_ACCESS_WRITES	(IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_ATOMIC)

/* the rights an MR keeps (others are accepted and ignored) */
#define SHCA_MR_ACCESS		(IB_ACCESS_LOCAL_WRITE | SHCA_ACCESS_REMOTE | \
				 IB_ACCESS_MW_BIND)

/* the rights a window bind may ask for */
#define SHCA_MW_ACCESS		(IB_ACCESS_LOCAL_WRITE | SHCA_ACCESS_REMOTE | \
				 IB_ZERO_BASED)

enum shca_mkey_kind {
	SHCA_MRK_USER,		/* reg_user_mr: pinned user pages */
	SHCA_MRK_DMA,		/* get_dma_mr: iova is a kernel address */
	SHCA_MRK_FRMR,		/* alloc_mr(MEM_REG): fast registration */
	SHCA_MRK_MW1,		/* memory window type 1 */
	SHCA_MRK_MW2,		/* memory window type 2 */
	SHCA_MRK_DM,		/* reg_dm_mr: pages of a device-memory range */
};

enum shca_mkey_state {
	SHCA_MRS_FREE,		/* FRMR not registered, MW2 not bound */
	SHCA_MRS_VALID,
	SHCA_MRS_DEAD,		/* being destroyed */
};

/**
 * struct shca_mr_table - the device's key table of MRs and MWs
 * @lock: serialises @kt writers and object state changes (spin_lock_bh)
 * @kt: the keys
 * @mem: @kt's slot memory
 */
struct shca_mr_table {
	spinlock_t lock;
	struct shca_keytab kt;
	void *mem;
};

/**
 * struct shca_mkey - the object behind a memory key: a memory region or
 * a memory window
 * @ibmr: RDMA core MR (unused for windows)
 * @sdev: device
 * @kind: enum shca_mkey_kind, fixed
 * @ref: references: the registration's, one per lookup, one per R_Key
 *	slot holding the object (shca_rkey.c)
 * @done: completed when @ref drops to zero
 * @rcu: for kfree_rcu()
 * @seq: guards the fields below for lockless readers; written under
 *	shca_mrt.lock
 * @pdn: PD number (a user MR's may change: rereg_user_mr)
 * @state: enum shca_mkey_state
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
 * @m.pages: user MR: the pinned pages; DM MR: the device-memory window's
 *	pages from the MR's first one (not the MR's to free)
 * @m.blocks: FRMR: kernel virtual address of each block of the
 *	registration in effect; swapped with @m.staged by a REG_MR
 * @m.staged: FRMR: the blocks map_mr_sg writes, which take effect at the
 *	next REG_MR: mapping a registered MR does not move its translation
 * @m.umem: user MR: the pinned region
 * @m.dm_range: DM MR: the device-memory range it lies in
 * @m.dm_gen: DM MR: that range's allocation generation
 * @m.dm_off: DM MR: byte offset of the MR's first byte in the range
 * @m.dm_users: DM MR of a kernel allocation: its count of MRs, decremented
 *	when the MR is deregistered (shca_kdm.c); NULL otherwise
 * @w: window part
 * @w.mr: the MR the window is bound to, NULL if unbound or zero length
 * @w.zero_based: remote addresses are offsets from the window start
 * @w.qp_serial: type 2: the serial number (shca_qp.serial) of the QP the
 *	window is bound to; 0 when unbound.  Not a pointer: a QP destroyed
 *	and another allocated at its address must not inherit the window
 * @w.ibmw: the core's object (valid until dealloc_mw marks @state DEAD)
 */
struct shca_mkey {
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
			u32 dm_range;
			u32 dm_gen;
			u64 dm_off;
			atomic_t *dm_users;
		} m;
		struct {
			struct shca_mkey *mr;
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
	struct shca_mkey *obj;
};

static inline struct shca_mkey *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct shca_mkey, ibmr);
}

static inline struct shca_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct shca_mw, ibmw);
}

static inline struct shca_mr_table *shca_mrt(struct shca_dev *sdev)
{
	return sdev->mrt;
}

static inline bool shca_is_mw(const struct shca_mkey *o)
{
	return o->kind == SHCA_MRK_MW1 || o->kind == SHCA_MRK_MW2;
}

/* [@iova, @iova + @len) inside [@start, @start + @length)?  No overflow. */
static inline bool shca_range_ok(u64 start, u64 length, u64 iova, u64 len)
{
	return iova >= start && len <= length && iova - start <= length - len;
}

/*
 * Limits for query_device.  MRs and MWs share one key table of
 * shca_max_mr entries, so max_mr and max_mw are each the whole
 * table.  On-demand paging is not supported (IB_ACCESS_ON_DEMAND is
 * refused): do not report IBK_ON_DEMAND_PAGING.  Do not report
 * IBK_LOCAL_DMA_LKEY either: the core then gets each kernel PD's
 * local_dma_lkey from get_dma_mr.
 */
/*
 * A user MR's page array is one kvmalloc() allocation, which may not
 * exceed INT_MAX bytes; an MR starting anywhere in its first page spans
 * at most one page more than its length: max_mr_size is about 1 TiB with
 * 4 KiB pages.  A fast-registered MR is held to the same length.
 */
#define SHCA_MAX_MR_PAGES		((u64)INT_MAX / sizeof(struct page *))
#define SHCA_MAX_MR_SIZE		((SHCA_MAX_MR_PAGES - 1) << PAGE_SHIFT)
#define SHCA_MAX_FAST_REG_PAGES		512

/**
 * struct shca_bind_wr - a window bind as a work request asks for it
 * @addr: MR iova of the window's first byte
 * @length: window length; 0 unbinds a type 1 window
 * @mr_lkey: lkey of the MR to bind to (ignored when @length is 0)
 * @mw_rkey: the window's current rkey
 * @rkey: its rkey after the bind: same index, consumer's key byte
 * @access: IB_ACCESS_REMOTE_READ/WRITE/ATOMIC, IB_ZERO_BASED (type 2)
 */
struct shca_bind_wr {
	u64 addr;
	u64 length;
	u32 mr_lkey;
	u32 mw_rkey;
	u32 rkey;
	int access;
};

/* direction of a copy between MR memory and a kernel buffer or skb */
enum shca_copy_dir {
	SHCA_TO_MR,		/* write into the MR */
	SHCA_FROM_MR,		/* read out of the MR */
};

/* the atomic operations of RC ATOMIC requests */
enum shca_atomic_op {
	SHCA_ATOMIC_CMP_SWAP,
	SHCA_ATOMIC_FETCH_ADD,
	SHCA_ATOMIC_STORE,
};

/**
 * struct shca_atomic - one ATOMIC operation on a 64-bit operand
 * @op: compare-and-swap, fetch-and-add, or a store (ATOMIC WRITE)
 * @compare_add: compare value or addend
 * @swap: value stored when the compare matches, or by a store (its 8
 *	bytes as they came, in memory order)
 * @orig: result: the operand's value before the operation
 */
struct shca_atomic {
	enum shca_atomic_op op;
	u64 compare_add;
	u64 swap;
	u64 orig;
};

/**
 * struct shca_key_use - an access a key lookup checks
 * @key: the untrusted key
 * @iova: first byte accessed (for a zero-based window, its offset)
 * @len: bytes accessed
 * @access: rights needed: IB_ACCESS_LOCAL_WRITE, IB_ACCESS_REMOTE_READ,
 *	_WRITE or _ATOMIC, SHCA_ACCESS_FLUSH_*; 0 = read by the local HCA,
 *	always allowed for an lkey
 * @whole: the whole MR or MW (a FLUSH of the region): @iova and @len are
 *	not checked
 */
struct shca_key_use {
	u32 key;
	u64 iova;
	u64 len;
	int access;
	bool whole;
};

/*
 * Key lookups.  Each checks, in this order: the key names a valid MR/MW of
 * the current generation (else -ENOENT), its PD is the QP's (else
 * -EACCES; for an rkey of a type 2 window bound to a QP, the QP must be
 * that one), it grants the access, and the bytes lie inside it (else
 * -ERANGE).  On success a reference is taken: shca_mkey_put().  Safe in
 * softirq context.  Local keys are looked up by the SGE list functions
 * below.
 */
struct shca_mkey *shca_mkey_get_rkey(struct shca_qp *qp,
				     const struct shca_key_use *u, int *err);
struct shca_mkey *shca_mkey_get_lkey(struct shca_qp *qp,
				     const struct shca_key_use *u, int *err);
void shca_mkey_put(struct shca_mkey *mr);

/*
 * Data movement into and out of a referenced MR or MW (bounds already
 * checked by the lookup; these check again and return -ERANGE rather than
 * touch anything outside it).  For a window, @iova is in the window's
 * address space (an offset if zero based).  Also -ENOENT if the MR/MW was
 * invalidated since the lookup, -EFAULT for a DMA MR address outside the
 * kernel's linear map or an skb too short, and for atomics -EINVAL unless
 * the operand is 8-byte aligned.  Safe in softirq context.
 */
int shca_mkey_copy(struct shca_mkey *mr, u64 iova, void *buf, u32 len,
		   enum shca_copy_dir dir);

/**
 * struct shca_mkey_ref - an MR or MW and the key it was found by
 * @obj: the object, referenced
 * @key: the key an R_Key slot holds for it
 *
 * The remote accesses below go through the object only while its key is
 * still @key (else -ENOENT): a type 1 window rebound under an open slot
 * keeps its object but not its key.
 */
struct shca_mkey_ref {
	struct shca_mkey *obj;
	u32 key;
};

int shca_mkey_copy_crc(const struct shca_mkey_ref *ref, u64 iova, void *buf,
		       u32 len, u32 *crc);
int shca_mkey_copy_skb(const struct shca_mkey_ref *ref, u64 iova,
		       struct sk_buff *skb, u32 skb_off, u32 len,
		       enum shca_copy_dir dir);
int shca_mkey_atomic(const struct shca_mkey_ref *ref, u64 iova,
		     struct shca_atomic *a);
int shca_mkey_frag_skb(struct shca_mkey *mr, u64 iova, struct sk_buff *skb,
		       u32 len, unsigned int max_frags);

/**
 * struct shca_sgl - a local SGE list and where its lkeys must be valid
 * @sdev: device
 * @pd: PD the lkeys must belong to
 * @sge: validated kernel copy of the SGEs
 * @num_sge: entries in @sge
 */
struct shca_sgl {
	struct shca_dev *sdev;
	struct shca_pd *pd;
	const struct shca_sge *sge;
	unsigned int num_sge;
};

/* the SGE list @sge_ (@n_ entries) of a WQE of QP @qp_ */
#define SHCA_SGL(qp_, sge_, n_) ((struct shca_sgl){			\
	.sdev = (qp_)->sdev, .pd = (qp_)->pd, .sge = (sge_), .num_sge = (n_) })

int shca_sgl_copy_buf(const struct shca_sgl *sgl, u32 offset, void *buf,
		      u32 len, enum shca_copy_dir dir);
int shca_sgl_copy_skb(const struct shca_sgl *sgl, u32 offset,
		      struct sk_buff *skb, u32 skb_off, u32 len,
		      enum shca_copy_dir dir);
int shca_sgl_frag(const struct shca_sgl *sgl, u32 offset,
		  struct sk_buff *skb, u32 len, unsigned int max_frags);

/* shca_mem.c: internal to the key objects */
struct shca_mkey *shca_mkey_find(struct shca_dev *sdev, u32 key);

#endif /* SHCA_MEM_H */
