/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libshca: command and response layouts exchanged with the shca kernel
 * driver, built from the driver's uAPI structs.
 */

#ifndef __SHCA_PROV_ABI_H__
#define __SHCA_PROV_ABI_H__

#include <infiniband/kern-abi.h>
#include <rdma/shca-abi.h>
#include <kernel-abi/shca-abi.h>

DECLARE_DRV_CMD(ushca_get_context, IB_USER_VERBS_CMD_GET_CONTEXT,
		empty, shca_alloc_ucontext_resp);
DECLARE_DRV_CMD(ushca_alloc_pd, IB_USER_VERBS_CMD_ALLOC_PD,
		empty, shca_alloc_pd_resp);
DECLARE_DRV_CMD(ushca_create_cq, IB_USER_VERBS_CMD_CREATE_CQ,
		empty, shca_create_cq_resp);
DECLARE_DRV_CMD(ushca_create_cq_ex, IB_USER_VERBS_EX_CMD_CREATE_CQ,
		empty, shca_create_cq_resp);
DECLARE_DRV_CMD(ushca_resize_cq, IB_USER_VERBS_CMD_RESIZE_CQ,
		empty, shca_create_cq_resp);
DECLARE_DRV_CMD(ushca_create_qp, IB_USER_VERBS_CMD_CREATE_QP,
		empty, shca_create_qp_resp);
DECLARE_DRV_CMD(ushca_create_qp_ex, IB_USER_VERBS_EX_CMD_CREATE_QP,
		empty, shca_create_qp_resp);
DECLARE_DRV_CMD(ushca_create_srq, IB_USER_VERBS_CMD_CREATE_SRQ,
		empty, shca_create_srq_resp);
DECLARE_DRV_CMD(ushca_create_ah, IB_USER_VERBS_CMD_CREATE_AH,
		empty, shca_create_ah_resp);

#endif /* __SHCA_PROV_ABI_H__ */
