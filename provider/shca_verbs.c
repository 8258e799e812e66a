// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: rdma-core provider for the shca software RDMA HCA.
 *
 * Control path verbs (device, port, PD, MR, MW, AH).  Each one is a plain
 * uverbs command; the driver private data comes back in the shca_*_resp
 * structs of <rdma/shca-abi.h>.
 */

#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "shca.h"
#include "shca_abi.h"

/* The kernel packs the firmware version as major:16 minor:16 sub:16 */
static void shca_format_fw_ver(char *buf, size_t len, uint64_t fw_ver)
{
	snprintf(buf, len, "%u.%u.%u",
		 (unsigned int)((fw_ver >> 32) & 0xffff),
		 (unsigned int)((fw_ver >> 16) & 0xffff),
		 (unsigned int)(fw_ver & 0xffff));
}

int shca_query_device_ex(struct ibv_context *ibctx,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	int ret;

	ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	shca_format_fw_ver(attr->orig_attr.fw_ver,
			   sizeof(attr->orig_attr.fw_ver), resp.base.fw_ver);

	return 0;
}

/*
 * The device clock is CLOCK_MONOTONIC in nanoseconds (hca_core_clock 1 GHz):
 * read here with no system call, as tv_nsec with tv_sec 0, the way
 * libibverbs users read a raw clock in device cycles.
 */
int shca_query_rt_values(struct ibv_context *ibctx, struct ibv_values_ex *values)
{
	struct timespec now;
	uint32_t mask = 0;

	if (!(to_shca_ctx(ibctx)->caps & SHCA_CAP_CQ_TIMESTAMP))
		return EOPNOTSUPP;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = now.tv_sec * 1000000000LL +
					    now.tv_nsec;
		mask |= IBV_VALUES_MASK_RAW_CLOCK;
	}
	values->comp_mask = mask;
	return 0;
}

int shca_query_port(struct ibv_context *ibctx, uint8_t port,
		    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

struct ibv_pd *shca_alloc_pd(struct ibv_context *ibctx)
{
	struct ushca_alloc_pd_resp resp = {};
	struct ibv_alloc_pd cmd = {};
	struct shca_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	ret = ibv_cmd_alloc_pd(ibctx, &pd->ibv_pd, &cmd, sizeof(cmd),
			       &resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}

	pd->pdn = resp.pdn;
	atomic_init(&pd->users, 0);

	return &pd->ibv_pd;
}

/* A PD or a parent domain; a PD only once no parent domain contains it */
int shca_dealloc_pd(struct ibv_pd *ibpd)
{
	struct shca_pd *pd = to_shca_pd(ibpd);
	int ret;

	if (pd->protection)
		return shca_dealloc_parent_domain(pd);
	if (atomic_load(&pd->users))
		return EBUSY;

	ret = ibv_cmd_dealloc_pd(ibpd);
	if (ret)
		return ret;

	free(pd);
	return 0;
}

struct ibv_mr *shca_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			   uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp = {};
	struct ibv_reg_mr cmd = {};
	struct shca_mr *mr;
	int ret;

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;

	ret = ibv_cmd_reg_mr(ibpd, addr, length, hca_va, access, &mr->vmr,
			     &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(mr);
		errno = ret;
		return NULL;
	}

	return &mr->vmr.ibv_mr;
}

int shca_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		  void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp = {};
	struct ibv_rereg_mr cmd = {};
	int ret;

	ret = ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
			       access, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret)
		errno = ret;
	return ret;
}

int shca_dereg_mr(struct verbs_mr *vmr)
{
	struct shca_mr *mr = to_shca_mr(vmr);
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;

	free(mr);
	return 0;
}

struct ibv_mw *shca_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct ibv_alloc_mw cmd = {};
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;

	ret = ibv_cmd_alloc_mw(ibpd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}

	return mw;
}

int shca_dealloc_mw(struct ibv_mw *mw)
{
	int ret;

	ret = ibv_cmd_dealloc_mw(mw);
	if (ret)
		return ret;

	free(mw);
	return 0;
}

/*
 * A UD send names its destination with the handle the kernel returns; the
 * address vector itself stays in the kernel.
 */
struct ibv_ah *shca_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
	struct ushca_create_ah_resp resp = {};
	struct shca_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;

	ret = ibv_cmd_create_ah(ibpd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}

	ah->handle = resp.ah;
	return &ah->ibv_ah;
}

int shca_destroy_ah(struct ibv_ah *ibah)
{
	struct shca_ah *ah = to_shca_ah(ibah);
	int ret;

	ret = ibv_cmd_destroy_ah(ibah);
	if (ret)
		return ret;

	free(ah);
	return 0;
}
