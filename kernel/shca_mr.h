/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca memory registration: memory regions, memory windows and the key
 * table they share (seed 003).  Interface used by the engine.
 */
#ifndef SHCA_MR_H
#define SHCA_MR_H

#include <linux/types.h>
#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

struct shca_dev;
struct shca_pd;
struct shca_qp;
struct shca_sge;

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

/* direction of a copy between MR memory and a kernel buffer or skb */
enum shca_copy_dir {
	SHCA_TO_MR,		/* write into the MR */
	SHCA_FROM_MR,		/* read out of the MR */
};

/* the atomic operations of RC ATOMIC requests */
enum shca_atomic_op {
	SHCA_ATOMIC_CMP_SWAP,
	SHCA_ATOMIC_FETCH_ADD,
};

/**
 * struct shca_mr - a memory region or memory window (internal layout is
 * private to shca_mr.c; the engine uses it only through the functions
 * below)
 */
struct shca_mr;

/**
 * struct shca_mr_table - the device's key table (embedded in shca_dev)
 * @priv: private to shca_mr.c
 */
struct shca_mr_table {
	void *priv;
};

int shca_mr_table_init(struct shca_dev *sdev);
void shca_mr_table_destroy(struct shca_dev *sdev);

/*
 * Key lookups.  Each checks, in this order: the key names a valid MR/MW of
 * the current generation (else -ENOENT), its PD is @pd (else -EACCES; for
 * an rkey of a type 2 window bound to a QP, @qp must be that QP), it
 * grants @access (IB_ACCESS_LOCAL_WRITE / IB_ACCESS_REMOTE_READ /
 * IB_ACCESS_REMOTE_WRITE / IB_ACCESS_REMOTE_ATOMIC; 0 = read by the local
 * HCA, always allowed for an lkey), and [@iova, @iova + @len) lies inside
 * it (else -ERANGE).  On success a reference is taken: shca_mr_put().
 * Safe in softirq context.
 */
struct shca_mr *shca_mr_get_lkey(struct shca_dev *sdev, struct shca_pd *pd,
				 u32 lkey, u64 iova, u64 len, int access,
				 int *err);
struct shca_mr *shca_mr_get_rkey(struct shca_dev *sdev, struct shca_pd *pd,
				 struct shca_qp *qp, u32 rkey, u64 iova,
				 u64 len, int access, int *err);
void shca_mr_put(struct shca_mr *mr);

/*
 * Data movement into and out of a referenced MR or MW (bounds already
 * checked by the lookup; these check again and return -ERANGE rather than
 * touch anything outside it).  For a window, @iova is in the window's
 * address space (an offset if zero based).  Also -ENOENT if the MR/MW was
 * invalidated since the lookup, -EFAULT for a DMA MR address outside the
 * kernel's linear map or an skb too short, and for atomics -EINVAL unless
 * the operand is 8-byte aligned.  Safe in softirq context.
 */
int shca_mr_copy(struct shca_mr *mr, u64 iova, void *buf, u32 len,
		 enum shca_copy_dir dir);
int shca_mr_copy_crc(struct shca_mr *mr, u64 iova, void *buf, u32 len,
		     u32 *crc);
int shca_mr_copy_skb(struct shca_mr *mr, u64 iova, struct sk_buff *skb,
		     u32 skb_off, u32 len, enum shca_copy_dir dir);
int shca_mr_atomic(struct shca_mr *mr, u64 iova, enum shca_atomic_op op,
		   u64 compare_add, u64 swap, u64 *orig);
int shca_mr_frag_skb(struct shca_mr *mr, u64 iova, struct sk_buff *skb,
		     u32 len, unsigned int max_frags);

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
 * @dir: SHCA_TO_MR (scatter a received payload: needs LOCAL_WRITE) or
 *	SHCA_FROM_MR (gather a payload to send)
 *
 * Return: 0, -ENOENT/-EACCES/-ERANGE on a bad lkey (the caller turns it
 * into a local protection error), -EINVAL when @offset + @len exceeds the
 * SGE list.
 */
int shca_sgl_copy(struct shca_dev *sdev, struct shca_pd *pd,
		  const struct shca_sge *sgl, unsigned int num_sge, u32 offset,
		  void *buf, struct sk_buff *skb, u32 skb_off, u32 len,
		  enum shca_copy_dir dir);

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
 * Transmit without a copy: the pages become page fragments of @skb, each
 * with a page reference of its own (shca_mr_frag_skb() does the same for
 * a referenced MR/MW).  On error @skb may hold some fragments: free it.
 *
 * Return: 0, -E2BIG when the bytes cannot go by reference (too many
 * fragments, slab memory): copy them instead; or as shca_sgl_copy().
 */
int shca_sgl_frag(struct shca_dev *sdev, struct shca_pd *pd,
		  const struct shca_sge *sgl, unsigned int num_sge, u32 offset,
		  struct sk_buff *skb, u32 len, unsigned int max_frags);

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
int shca_mw_bind(struct shca_qp *qp, u32 mw_rkey, u32 new_rkey, u32 mr_lkey,
		 u64 addr, u64 length, int access);

/*
 * The MR/MW verbs (get_dma_mr, reg_user_mr, dereg_mr, alloc_mr, map_mr_sg,
 * alloc_mw, dealloc_mw and the ib_mw object size), set on the device with
 * ib_set_device_ops().
 */
extern const struct ib_device_ops shca_mr_ops;

#endif /* SHCA_MR_H */
