// SPDX-License-Identifier: GPL-2.0
/*
 * shca verbs: user contexts and protection domains.  The other verbs live
 * with their objects: shca_qp.c, shca_queue.c, shca_mr.c, shca_av.c.
 */
#include "shca.h"

static int shca_alloc_ucontext(struct ib_ucontext *ibuc,
			       struct ib_udata *udata)
{
	struct shca_alloc_ucontext_resp resp = {
		.caps = SHCA_CAP_DOORBELL_SUPPRESS | SHCA_CAP_CQ_ARM_WORD,
		.max_inline = SHCA_MAX_INLINE,
		.sqe_size = sizeof(struct shca_sqe),
		.cqe_size = sizeof(struct shca_cqe),
	};
	int ret;

	/*
	 * uverbs pins the module of a device only when the device cannot
	 * disassociate; shca can, so it pins itself for each context: rmmod
	 * stays refused while a process uses shca.
	 */
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	if (udata->outlen) {
		ret = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (ret) {
			module_put(THIS_MODULE);
			return ret;
		}
	}
	shca_obj_get(SHCA_OBJ_UCTX);
	return 0;
}

static void shca_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	shca_obj_put(SHCA_OBJ_UCTX);
	module_put(THIS_MODULE);
}

/*
 * The device is being unregistered (rdma link delete, its netdev or
 * namespace going away) while a process still has it open.  Providing
 * this callback lets the RDMA core detach the process instead of waiting
 * for it to close the device.  By the time it is called, the core has
 * sent the process IBV_EVENT_DEVICE_FATAL and destroyed every object of
 * the context (so the engine no longer touches its rings); the process's
 * later commands fail with EIO.  Nothing is left to do here: ring pages
 * the process still maps stay alive through its mapping's page
 * references and are used by nobody else.
 */
static void shca_disassociate_ucontext(struct ib_ucontext *ibuc)
{
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

const struct ib_device_ops shca_verbs_ops = {
	.alloc_pd = shca_alloc_pd,
	.alloc_ucontext = shca_alloc_ucontext,
	.dealloc_pd = shca_dealloc_pd,
	.dealloc_ucontext = shca_dealloc_ucontext,
	.disassociate_ucontext = shca_disassociate_ucontext,

	INIT_RDMA_OBJ_SIZE(ib_pd, shca_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, shca_ucontext, ibuc),
};
