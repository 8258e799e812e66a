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

#endif /* __SHCA_PROV_ABI_H__ */
