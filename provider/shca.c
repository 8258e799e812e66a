// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: rdma-core provider for the shca software RDMA HCA.
 *
 * Device matching and the device and context lifetimes.
 */

#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "shca.h"
#include "shca_abi.h"

static void shca_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops shca_ctx_ops = {
	.alloc_dm = shca_alloc_dm,
	.alloc_mw = shca_alloc_mw,
	.alloc_parent_domain = shca_alloc_parent_domain,
	.alloc_pd = shca_alloc_pd,
	.alloc_td = shca_alloc_td,
	.attach_mcast = ibv_cmd_attach_mcast,
	.bind_mw = shca_bind_mw,
	.create_ah = shca_create_ah,
	.create_cq = shca_create_cq,
	.create_cq_ex = shca_create_cq_ex,
	.create_qp = shca_create_qp,
	.create_qp_ex = shca_create_qp_ex,
	.create_srq = shca_create_srq,
	.dealloc_mw = shca_dealloc_mw,
	.dealloc_pd = shca_dealloc_pd,
	.dealloc_td = shca_dealloc_td,
	.dereg_mr = shca_dereg_mr,
	.destroy_ah = shca_destroy_ah,
	.destroy_cq = shca_destroy_cq,
	.destroy_qp = shca_destroy_qp,
	.destroy_srq = shca_destroy_srq,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = shca_free_context,
	.free_dm = shca_free_dm,
	.import_mr = shca_import_mr,
	.import_pd = shca_import_pd,
	.modify_qp = shca_modify_qp,
	.modify_srq = shca_modify_srq,
	.poll_cq = shca_poll_cq,
	.post_recv = shca_post_recv,
	.post_send = shca_post_send,
	.post_srq_recv = shca_post_srq_recv,
	.query_device_ex = shca_query_device_ex,
	.query_port = shca_query_port,
	.query_qp = shca_query_qp,
	.query_rt_values = shca_query_rt_values,
	.query_srq = shca_query_srq,
	.reg_dm_mr = shca_reg_dm_mr,
	.reg_mr = shca_reg_mr,
	.rereg_mr = shca_rereg_mr,
	.req_notify_cq = shca_req_notify_cq,
	.resize_cq = shca_resize_cq,
	.unimport_mr = shca_unimport_mr,
	.unimport_pd = shca_unimport_pd,
};

/*
 * The kernel reports the entry sizes it was built with; refuse a kernel
 * whose ring layout differs from ours.  Zero means "not reported".
 */
static int shca_check_abi_sizes(struct shca_context *ctx)
{
	if (ctx->sqe_size && ctx->sqe_size != sizeof(struct shca_sqe)) {
		verbs_err(&ctx->ibv_ctx,
			  "shca: kernel SQE size %u, expected %zu\n",
			  ctx->sqe_size, sizeof(struct shca_sqe));
		return EPROTO;
	}
	if (ctx->cqe_size && ctx->cqe_size != sizeof(struct shca_cqe)) {
		verbs_err(&ctx->ibv_ctx,
			  "shca: kernel CQE size %u, expected %zu\n",
			  ctx->cqe_size, sizeof(struct shca_cqe));
		return EPROTO;
	}
	return 0;
}

/**
 * shca_context_set - take the context's driver data
 * @ctx: the context
 * @resp: what alloc_ucontext (or, for an imported context, query_context)
 *	returned
 *
 * Return: 0, or EPROTO for a kernel whose ring entries differ from ours.
 */
int shca_context_set(struct shca_context *ctx,
		     const struct shca_alloc_ucontext_resp *resp)
{
	ctx->caps = resp->caps;
	ctx->max_inline = resp->max_inline;
	ctx->sqe_size = resp->sqe_size;
	ctx->cqe_size = resp->cqe_size;
	return shca_check_abi_sizes(ctx);
}

static int shca_get_context(struct shca_context *ctx)
{
	struct ushca_get_context_resp resp = {};
	struct ibv_get_context cmd = {};
	int ret;

	ret = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (ret)
		return ret;
	return shca_context_set(ctx, &resp.drv_payload);
}

/**
 * shca_context_new - a context on a command file
 * @ibdev: the device
 * @cmd_fd: the file (the context owns it)
 * @get: fills the context's driver data from the kernel: a new context's
 *	(shca_get_context()) or an imported one's (shca_query_context())
 *
 * Return: the context, or NULL with errno set.
 */
struct verbs_context *shca_context_new(struct ibv_device *ibdev, int cmd_fd,
				       int (*get)(struct shca_context *ctx))
{
	struct shca_context *ctx;
	int ret;

	/* An out-of-tree driver has no driver id of its own */
	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	ret = get(ctx);
	if (ret) {
		verbs_uninit_context(&ctx->ibv_ctx);
		free(ctx);
		errno = ret;
		return NULL;
	}

	ctx->wr_flush_abi = shca_have_wr_flush();
	verbs_set_ops(&ctx->ibv_ctx, &shca_ctx_ops);

	return &ctx->ibv_ctx;
}

static struct verbs_context *shca_alloc_context(struct ibv_device *ibdev,
						int cmd_fd,
						void *private_data)
{
	return shca_context_new(ibdev, cmd_fd, shca_get_context);
}

static void shca_free_context(struct ibv_context *ibctx)
{
	struct shca_context *ctx = to_shca_ctx(ibctx);

	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static struct verbs_device *shca_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct shca_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;

	return &dev->ibv_dev;
}

static void shca_uninit_device(struct verbs_device *vdev)
{
	struct shca_device *dev = to_shca_dev(&vdev->device);

	free(dev);
}

/*
 * The table match is only a hint: the device name is chosen by whoever
 * runs "rdma link add", and the driver id is RDMA_DRIVER_UNKNOWN.  The
 * driver's hca_type attribute decides, so a shca device may have any name
 * and another driver's device called shcaX is left alone.
 */
static bool shca_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char hca_type[16];

	if (ibv_read_ibdev_sysfs_file(hca_type, sizeof(hca_type), sysfs_dev,
				      "hca_type") <= 0)
		return false;

	return strcmp(hca_type, SHCA_HCA_TYPE) == 0;
}

static const struct verbs_match_ent shca_match_table[] = {
	VERBS_NAME_MATCH("shca", NULL),
	{},
};

static const struct verbs_device_ops shca_dev_ops;

/**
 * shca_is_dm - is @ibdm an allocation of a shca device (shcadv.h calls)?
 * @ibdm: any device's DM
 *
 * Return: true for a shca device's.
 */
bool shca_is_dm(struct ibv_dm *ibdm)
{
	return ibdm && ibdm->context &&
	       verbs_get_device(ibdm->context->device)->ops == &shca_dev_ops;
}

static const struct verbs_device_ops shca_dev_ops = {
	.name = "shca",
	.match_min_abi_version = SHCA_UVERBS_ABI_VERSION,
	.match_max_abi_version = SHCA_UVERBS_ABI_VERSION,
	.match_table = shca_match_table,
	.match_device = shca_match_device,
	.alloc_device = shca_alloc_device,
	.uninit_device = shca_uninit_device,
	.alloc_context = shca_alloc_context,
	.import_context = shca_import_context,
};

PROVIDER_DRIVER(shca, shca_dev_ops);
