// SPDX-License-Identifier: GPL-2.0
/*
 * shca verbs: user contexts and protection domains.
 *
 * The transport verbs (CQ, QP, MR, post/poll) are not implemented yet and
 * answer -EOPNOTSUPP; the RDMA core requires them to be present.
 */
#include "shca.h"

static int shca_alloc_ucontext(struct ib_ucontext *ibuc,
			       struct ib_udata *udata)
{
	struct shca_alloc_ucontext_resp resp = {
		.caps = 0,
		.max_inline = 0,
		.sqe_size = sizeof(struct shca_sqe),
		.cqe_size = sizeof(struct shca_cqe),
	};
	int ret;

	if (udata->outlen) {
		ret = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (ret)
			return ret;
	}
	shca_obj_get(SHCA_OBJ_UCTX);
	return 0;
}

static void shca_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	shca_obj_put(SHCA_OBJ_UCTX);
}

static int shca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibpd->device);
	struct shca_pd *pd = to_spd(ibpd);
	struct shca_alloc_pd_resp resp = {};
	int id, ret;

	id = ida_alloc_range(&sdev->pd_ida, 1, SHCA_MAX_PD, GFP_KERNEL);
	if (id < 0)
		return id == -ENOSPC ? -ENOMEM : id;
	pd->pdn = id;

	if (udata && udata->outlen) {
		resp.pdn = pd->pdn;
		ret = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (ret)
			goto err_id;
	}
	shca_obj_get(SHCA_OBJ_PD);
	return 0;

err_id:
	ida_free(&sdev->pd_ida, id);
	return ret;
}

static int shca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibpd->device);

	ida_free(&sdev->pd_ida, to_spd(ibpd)->pdn);
	shca_obj_put(SHCA_OBJ_PD);
	return 0;
}

/* Not implemented yet: required by the RDMA core to register a device. */

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
static int shca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *a,
			  struct uverbs_attr_bundle *attrs)
#else
static int shca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *a,
			  struct ib_udata *udata)
#endif
{
	return -EOPNOTSUPP;
}

static int shca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

static int shca_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc)
{
	return -EOPNOTSUPP;
}

static int shca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags f)
{
	return -EOPNOTSUPP;
}

static int shca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
			  struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

static int shca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			  int mask, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

static int shca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

static int shca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad_wr)
{
	*bad_wr = wr;
	return -EOPNOTSUPP;
}

static int shca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	*bad_wr = wr;
	return -EOPNOTSUPP;
}

static struct ib_mr *shca_get_dma_mr(struct ib_pd *ibpd, int access)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static struct ib_mr *shca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 len,
				      u64 iova, int access,
				      struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static int shca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

const struct ib_device_ops shca_verbs_ops = {
	.alloc_pd = shca_alloc_pd,
	.alloc_ucontext = shca_alloc_ucontext,
	.create_cq = shca_create_cq,
	.create_qp = shca_create_qp,
	.dealloc_pd = shca_dealloc_pd,
	.dealloc_ucontext = shca_dealloc_ucontext,
	.dereg_mr = shca_dereg_mr,
	.destroy_cq = shca_destroy_cq,
	.destroy_qp = shca_destroy_qp,
	.get_dma_mr = shca_get_dma_mr,
	.modify_qp = shca_modify_qp,
	.poll_cq = shca_poll_cq,
	.post_recv = shca_post_recv,
	.post_send = shca_post_send,
	.reg_user_mr = shca_reg_user_mr,
	.req_notify_cq = shca_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, shca_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, shca_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, shca_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, shca_ucontext, ibuc),
};
