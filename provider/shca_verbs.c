// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: rdma-core provider for the shca software RDMA HCA.
 *
 * Control path verbs.  Each one is a plain uverbs command; the driver
 * private data comes back in the shca_*_resp structs of <rdma/shca-abi.h>.
 */

#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

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

	return &pd->ibv_pd;
}

int shca_dealloc_pd(struct ibv_pd *ibpd)
{
	struct shca_pd *pd = to_shca_pd(ibpd);
	int ret;

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
