// SPDX-License-Identifier: GPL-2.0
/*
 * shca's own uverbs ioctl attributes and methods (<rdma/shca-abi.h>),
 * the device's driver_def: device memory's (shca_dm.c), and what a
 * process needs to import a context and its PDs (ibv_import_device,
 * ibv_import_pd).  UVERBS_METHOD_QUERY_CONTEXT gains
 * the context's driver data (shca_query_ucontext() in shca_ctx.c), and PD
 * objects gain SHCA_METHOD_PD_QUERY, which returns the number of the PD a
 * handle names.  The RDMA core resolves the handle in the caller's own
 * file and checks every attribute's size before a handler runs.
 */
#define UVERBS_MODULE_NAME shca_ib
#include <rdma/uverbs_ioctl.h>
#include <rdma/uverbs_named_ioctl.h>
#include <rdma/uverbs_std_types.h>
#include "shca.h"
#include "shca_dm.h"
#include "shca_uapi.h"

static int UVERBS_HANDLER(SHCA_METHOD_PD_QUERY)(struct uverbs_attr_bundle *attrs)
{
	struct ib_pd *pd = uverbs_attr_get_obj(attrs, SHCA_ATTR_QUERY_PD_HANDLE);
	u32 pdn;

	if (IS_ERR(pd))
		return PTR_ERR(pd);
	pdn = to_spd(pd)->pdn;
	return uverbs_copy_to(attrs, SHCA_ATTR_QUERY_PD_RESP_PDN, &pdn,
			      sizeof(pdn));
}

DECLARE_UVERBS_NAMED_METHOD(SHCA_METHOD_PD_QUERY,
			    UVERBS_ATTR_IDR(SHCA_ATTR_QUERY_PD_HANDLE,
					    UVERBS_OBJECT_PD,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(SHCA_ATTR_QUERY_PD_RESP_PDN,
						UVERBS_ATTR_TYPE(u32),
						UA_MANDATORY));

ADD_UVERBS_METHODS(shca_pd_methods, UVERBS_OBJECT_PD,
		   &UVERBS_METHOD(SHCA_METHOD_PD_QUERY));

ADD_UVERBS_ATTRIBUTES_SIMPLE(shca_query_context_attrs, UVERBS_OBJECT_DEVICE,
			     UVERBS_METHOD_QUERY_CONTEXT,
			     UVERBS_ATTR_PTR_OUT(SHCA_ATTR_QUERY_CONTEXT_RESP,
						 UVERBS_ATTR_STRUCT(struct shca_alloc_ucontext_resp,
								    cqe_size),
						 UA_OPTIONAL));

/* the device's driver_def: what shca adds to the RDMA core's objects */
const struct uapi_definition shca_uapi_defs[] = {
	UAPI_DEF_CHAIN(shca_dm_uapi_defs),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DEVICE, &shca_query_context_attrs),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_PD, &shca_pd_methods),
	{},
};
