// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: rdma-core provider for the shca software RDMA HCA.
 *
 * Importing what another process (or another context of this one) made:
 * a context from a duplicate of its command file (ibv_import_device), its
 * PDs and MRs by handle (ibv_import_pd, ibv_import_mr).  The kernel
 * answers only for objects of that file, and checks each handle again
 * whenever an imported object is used.
 */

#include <config.h>

#include <errno.h>
#include <stdlib.h>

#include <infiniband/cmd_write.h>

#include "shca.h"
#include "shca_abi.h"

/* An imported context's driver data: UVERBS_METHOD_QUERY_CONTEXT's */
static int shca_query_context(struct shca_context *ctx)
{
	DECLARE_COMMAND_BUFFER_LINK(drv, UVERBS_OBJECT_DEVICE,
				    UVERBS_METHOD_QUERY_CONTEXT, 1, NULL);
	struct shca_alloc_ucontext_resp resp = {};
	int ret;

	fill_attr_out_ptr(drv, SHCA_ATTR_QUERY_CONTEXT_RESP, &resp);
	ret = ibv_cmd_query_context(&ctx->ibv_ctx.context, drv);
	return ret ? ret : shca_context_set(ctx, &resp);
}

/**
 * shca_import_context - a context on an existing command file
 * @ibdev: the device the file belongs to
 * @cmd_fd: the file (the new context owns it)
 *
 * The driver data comes from the kernel again, with the layout checks of
 * a new context.
 *
 * Return: the context, or NULL with errno set.
 */
struct verbs_context *shca_import_context(struct ibv_device *ibdev,
					  int cmd_fd)
{
	return shca_context_new(ibdev, cmd_fd, shca_query_context);
}

struct ibv_pd *shca_import_pd(struct ibv_context *ibctx, uint32_t pd_handle)
{
	DECLARE_COMMAND_BUFFER(cmd, UVERBS_OBJECT_PD, SHCA_METHOD_PD_QUERY, 2);
	struct shca_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	fill_attr_in_obj(cmd, SHCA_ATTR_QUERY_PD_HANDLE, pd_handle);
	fill_attr_out_ptr(cmd, SHCA_ATTR_QUERY_PD_RESP_PDN, &pd->pdn);
	ret = execute_ioctl(ibctx, cmd);
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	pd->ibv_pd.context = ibctx;
	pd->ibv_pd.handle = pd_handle;
	atomic_init(&pd->users, 0);
	return &pd->ibv_pd;
}

/*
 * The PD object stays the exporter's: only this process's copy goes, and
 * only once no parent domain made on it is left.  Unimport cannot refuse
 * (it returns nothing): the last parent domain's dealloc frees the copy.
 */
void shca_unimport_pd(struct ibv_pd *ibpd)
{
	struct shca_pd *pd = to_shca_pd(ibpd);

	if (!atomic_fetch_or(&pd->users, SHCA_PD_UNIMPORTED))
		free(pd);
}

struct ibv_mr *shca_import_mr(struct ibv_pd *ibpd, uint32_t mr_handle)
{
	struct shca_mr *mr;
	int ret;

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;

	ret = ibv_cmd_query_mr(ibpd, &mr->vmr, mr_handle);
	if (ret) {
		free(mr);
		errno = ret;
		return NULL;
	}
	return &mr->vmr.ibv_mr;
}

void shca_unimport_mr(struct ibv_mr *ibmr)
{
	free(to_shca_mr(verbs_get_mr(ibmr)));
}
