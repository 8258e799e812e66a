/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libshca: rdma-core provider for the shca software RDMA HCA.
 */

#ifndef __SHCA_H__
#define __SHCA_H__

#include <stddef.h>
#include <stdint.h>

#include <infiniband/driver.h>
#include <util/util.h>

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
};

struct shca_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
};

struct shca_mr {
	struct verbs_mr vmr;
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

static inline struct shca_mr *to_shca_mr(struct verbs_mr *vmr)
{
	return container_of(vmr, struct shca_mr, vmr);
}

int shca_query_device_ex(struct ibv_context *ibctx,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);
int shca_query_port(struct ibv_context *ibctx, uint8_t port,
		    struct ibv_port_attr *attr);

struct ibv_pd *shca_alloc_pd(struct ibv_context *ibctx);
int shca_dealloc_pd(struct ibv_pd *ibpd);

struct ibv_mr *shca_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			   uint64_t hca_va, int access);
int shca_dereg_mr(struct verbs_mr *vmr);

#endif /* __SHCA_H__ */
