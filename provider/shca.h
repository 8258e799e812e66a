/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libshca: rdma-core provider for the shca software RDMA HCA.
 */

#ifndef __SHCA_H__
#define __SHCA_H__

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pthread.h>

#include <infiniband/driver.h>
#include <ccan/minmax.h>
#include <util/util.h>

#include "shca_ring.h"

/* Content of <ibdev>/hca_type for every device the shca driver registers */

struct shca_device {
	struct verbs_device ibv_dev;
};

struct shca_context {
	struct verbs_context ibv_ctx;
	uint32_t caps;		/* SHCA_CAP_* */
	uint32_t max_inline;
	uint32_t sqe_size;
	uint32_t cqe_size;
	bool wr_flush_abi;	/* libibverbs has ibv_qp_ex.wr_flush */
};

/**
 * struct shca_lock - a spinlock an object promised to one thread does
 * without
 * @lock: the spinlock (initialised only when @single is false)
 * @single: the application accesses the object from one thread at a time
 *	(a thread domain, or a CQ created IBV_CREATE_CQ_ATTR_SINGLE_THREADED):
 *	posting and polling take no lock
 */
struct shca_lock {
	pthread_spinlock_t lock;
	bool single;
};

static inline int shca_lock_init(struct shca_lock *l, bool single)
{
	l->single = single;
	return single ? 0 : pthread_spin_init(&l->lock,
					       PTHREAD_PROCESS_PRIVATE);
}

static inline void shca_lock_destroy(struct shca_lock *l)
{
	if (!l->single)
		pthread_spin_destroy(&l->lock);
}

static inline void shca_lock(struct shca_lock *l)
{
	if (!l->single)
		pthread_spin_lock(&l->lock);
}

static inline void shca_unlock(struct shca_lock *l)
{
	if (!l->single)
		pthread_spin_unlock(&l->lock);
}

/**
 * struct shca_td - thread domain (ibv_alloc_td)
 * @ibv_td: libibverbs TD
 * @users: parent domains that name it (it cannot be freed before them)
 */
struct shca_td {
	struct ibv_td ibv_td;
	atomic_uint users;
};

/**
 * struct shca_pd - protection domain, or parent domain
 * @ibv_pd: libibverbs PD; a parent domain's carries its PD's handle
 * @pdn: PD number (a parent domain: its PD's)
 * @protection: parent domain: the PD it contains; NULL for a PD
 * @td: parent domain: its thread domain, or NULL
 * @alloc: parent domain: the application's allocator for the provider's
 *	objects created on it, or NULL
 * @free: parent domain: what gives back what @alloc returned
 * @pd_context: parent domain: passed to @alloc and @free
 * @users: a PD: its parent domains; a parent domain: the QPs, CQs and
 *	SRQs created on it.  Neither is freed while it has users.  An
 *	imported PD unimported while it has some gets SHCA_PD_UNIMPORTED
 *	here, and its last parent domain frees it.
 */
#define SHCA_PD_UNIMPORTED	(1U << 31)

struct shca_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
	struct shca_pd *protection;
	struct shca_td *td;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	void *pd_context;
	atomic_uint users;
};

/**
 * struct shca_objmem - where a provider object's memory came from
 * @pdom: the parent domain it was created on (holds a user count), or NULL
 * @ext: the parent domain's allocator gave the memory (its free returns it)
 */
struct shca_objmem {
	struct shca_pd *pdom;
	bool ext;
};

struct shca_mr {
	struct verbs_mr vmr;
};

/**
 * struct shca_dm - device memory: an address range of the device's window
 * @vdm: libibverbs DM
 * @map: the range, mapped
 * @map_size: bytes mapped (whole pages)
 * @length: bytes allocated (what ibv_memcpy_*_dm may touch)
 * @range: the range's index in the window
 * @reg: the range's address range register, mapped read only (the
 *	engine writes it)
 */
struct shca_dm {
	struct verbs_dm vdm;
	void *map;
	size_t map_size;
	uint64_t length;
	uint32_t range;
	const struct shca_arr_reg *reg;
};

/**
 * struct shca_cq - completion queue
 * @vcq: libibverbs CQ
 * @lock: serialises pollers and resize (a poller never sees the ring
 *	switched under it)
 * @ring: the CQE ring (kernel produces, this process consumes); not mapped
 *	when a resize lost it
 * @cqn: CQ number
 * @cur: extended poll: copy of the completion being read (under @lock
 *	from start_poll to end_poll)
 * @mem: where this struct's memory came from
 */
struct shca_cq {
	struct verbs_cq vcq;
	struct shca_objmem mem;
	struct shca_lock lock;
	struct shca_uring ring;
	uint32_t cqn;
	uint32_t arm_seq;	/* last sequence number written to the arm word */
	struct shca_cqe cur;
};

/**
 * struct shca_wq - one work queue of a QP or SRQ (this process produces)
 * @lock: serialises posters; caller of any shca_uring helper holds it
 * @ring: the WQE ring, not mapped for the RQ of a QP on an SRQ
 * @max_sge: SGEs per WQE (bounded by the slot size)
 * @max_inline: inline bytes per SQE (SQ only, bounded by the slot size)
 */
struct shca_wq {
	struct shca_lock lock;
	struct shca_uring ring;
	uint32_t max_sge;
	uint32_t max_inline;
};

/**
 * struct shca_qp - queue pair
 * @vqp: libibverbs QP (with struct ibv_qp_ex for the ibv_wr_* API)
 * @sq: send queue
 * @rq: receive queue
 * @qpn: QP number
 * @lim: what the SQ accepts (checked before a SQE is written)
 * @wr_idx: ibv_wr_* API: producer index past the WRs built so far
 * @wr_cur: ibv_wr_* API: header of the last SQE built, NULL before the first
 * @wr_err: ibv_wr_* API: first error, reported by wr_complete
 * @mem: where this struct's memory came from
 *
 * @wr_idx, @wr_cur and @wr_err are used under @sq.lock, held from
 * wr_start to wr_complete or wr_abort.
 */
struct shca_qp {
	struct verbs_qp vqp;
	struct shca_wq sq;
	struct shca_wq rq;
	uint32_t qpn;
	struct shca_sq_limits lim;
	uint32_t wr_idx;
	struct shca_sqe *wr_cur;
	int wr_err;
	struct shca_objmem mem;
};

/**
 * struct shca_srq - shared receive queue
 * @vsrq: libibverbs SRQ
 * @rq: its receive queue
 * @srqn: SRQ number
 * @mem: where this struct's memory came from
 */
struct shca_srq {
	struct verbs_srq vsrq;
	struct shca_wq rq;
	uint32_t srqn;
	struct shca_objmem mem;
};

/**
 * struct shca_ah - address handle
 * @ibv_ah: libibverbs AH
 * @handle: what a UD SQE names this address with
 */
struct shca_ah {
	struct ibv_ah ibv_ah;
	uint32_t handle;
};

static inline struct shca_device *to_shca_dev(struct ibv_device *ibdev)
{
	return container_of(ibdev, struct shca_device, ibv_dev.device);
}

static inline struct shca_context *to_shca_ctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct shca_context, ibv_ctx.context);
}

static inline struct shca_pd *to_shca_pd(struct ibv_pd *ibpd)
{
	return container_of(ibpd, struct shca_pd, ibv_pd);
}

static inline struct shca_td *to_shca_td(struct ibv_td *ibtd)
{
	return container_of(ibtd, struct shca_td, ibv_td);
}

static inline struct shca_dm *to_shca_dm(struct ibv_dm *ibdm)
{
	return container_of(ibdm, struct shca_dm, vdm.dm);
}

static inline struct shca_mr *to_shca_mr(struct verbs_mr *vmr)
{
	return container_of(vmr, struct shca_mr, vmr);
}

static inline struct shca_cq *to_shca_cq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct shca_cq, vcq.cq);
}

static inline struct shca_cq *ex_to_shca_cq(struct ibv_cq_ex *ibcq)
{
	return container_of(ibcq, struct shca_cq, vcq.cq_ex);
}

static inline struct shca_qp *to_shca_qp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct shca_qp, vqp.qp);
}

static inline struct shca_qp *ex_to_shca_qp(struct ibv_qp_ex *ibqp)
{
	return container_of(ibqp, struct shca_qp, vqp.qp_ex);
}

static inline struct shca_srq *to_shca_srq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct shca_srq, vsrq.srq);
}

static inline struct shca_ah *to_shca_ah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct shca_ah, ibv_ah);
}

int shca_query_device_ex(struct ibv_context *ibctx,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);
int shca_query_port(struct ibv_context *ibctx, uint8_t port,
		    struct ibv_port_attr *attr);
int shca_query_rt_values(struct ibv_context *ibctx,
			 struct ibv_values_ex *values);

struct ibv_pd *shca_alloc_pd(struct ibv_context *ibctx);
int shca_dealloc_pd(struct ibv_pd *ibpd);

struct ibv_mr *shca_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			   uint64_t hca_va, int access);
int shca_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		  void *addr, size_t length, int access);
int shca_dereg_mr(struct verbs_mr *vmr);

/* shca.c */
struct shca_alloc_ucontext_resp;
int shca_context_set(struct shca_context *ctx,
		     const struct shca_alloc_ucontext_resp *resp);
struct verbs_context *shca_context_new(struct ibv_device *ibdev, int cmd_fd,
				       int (*get)(struct shca_context *ctx));

/* shca_import.c */
struct verbs_context *shca_import_context(struct ibv_device *ibdev,
					  int cmd_fd);
struct ibv_pd *shca_import_pd(struct ibv_context *ibctx, uint32_t pd_handle);
void shca_unimport_pd(struct ibv_pd *ibpd);
struct ibv_mr *shca_import_mr(struct ibv_pd *ibpd, uint32_t mr_handle);
void shca_unimport_mr(struct ibv_mr *ibmr);

/* shca_pdom.c */
struct ibv_td *shca_alloc_td(struct ibv_context *ibctx,
			     struct ibv_td_init_attr *attr);
int shca_dealloc_td(struct ibv_td *ibtd);
struct ibv_pd *shca_alloc_parent_domain(struct ibv_context *ibctx,
					struct ibv_parent_domain_init_attr *attr);
int shca_dealloc_parent_domain(struct shca_pd *pdom);
void *shca_obj_alloc(struct ibv_pd *ibpd, size_t size, uint64_t type,
		     struct shca_objmem *mem);
void shca_obj_free(void *obj, struct shca_objmem *mem, uint64_t type);
bool shca_pd_single_thread(struct ibv_pd *ibpd);

/* shca_dm.c */
struct ibv_dm *shca_alloc_dm(struct ibv_context *ibctx,
			     struct ibv_alloc_dm_attr *attr);
int shca_free_dm(struct ibv_dm *ibdm);
bool shca_is_dm(struct ibv_dm *ibdm);
struct ibv_mr *shca_reg_dm_mr(struct ibv_pd *ibpd, struct ibv_dm *ibdm,
			      uint64_t dm_offset, size_t length,
			      unsigned int access);

struct ibv_mw *shca_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type);
int shca_dealloc_mw(struct ibv_mw *ibmw);
int shca_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *ibmw,
		 struct ibv_mw_bind *mw_bind);

struct ibv_ah *shca_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr);
int shca_destroy_ah(struct ibv_ah *ibah);

/* shca_ring.c */
int shca_ring_map(struct ibv_context *ibctx, struct shca_uring *r,
		  const struct shca_ring_info *info, uint32_t min_stride,
		  bool producer);
void shca_ring_unmap(struct shca_uring *r);

/* shca_cq.c */
struct ibv_cq *shca_create_cq(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector);
struct ibv_cq_ex *shca_create_cq_ex(struct ibv_context *ibctx,
				    struct ibv_cq_init_attr_ex *attr);
int shca_destroy_cq(struct ibv_cq *ibcq);
void shca_cq_clean(struct ibv_cq *ibcq, uint32_t qpn);
int shca_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc);
int shca_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
int shca_resize_cq(struct ibv_cq *ibcq, int cqe);

/* shca_qp.c */
bool shca_have_wr_flush(void);
struct ibv_qp *shca_create_qp(struct ibv_pd *ibpd,
			      struct ibv_qp_init_attr *attr);
struct ibv_qp *shca_create_qp_ex(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr);
int shca_destroy_qp(struct ibv_qp *ibqp);
int shca_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask);
int shca_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask, struct ibv_qp_init_attr *init_attr);
int shca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr);
int shca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);
bool shca_sq_doorbell_needed(struct shca_qp *qp);
int shca_sq_doorbell(struct shca_qp *qp);

/* shca_wr.c */
int shca_qp_set_send_ops(struct shca_qp *qp, enum ibv_qp_type qp_type,
			 uint64_t send_ops_flags, struct shca_context *ctx);

/* shca_srq.c */
struct ibv_srq *shca_create_srq(struct ibv_pd *ibpd,
				struct ibv_srq_init_attr *attr);
int shca_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		    int attr_mask);
int shca_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int shca_destroy_srq(struct ibv_srq *ibsrq);
int shca_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);

#endif /* __SHCA_H__ */
