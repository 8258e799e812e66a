// SPDX-License-Identifier: GPL-2.0
/*
 * shca address handle verbs: create (kernel and user: a process's UD
 * WQEs name the AH by the handle returned to it), query, destroy.
 */
#include "shca.h"
#include "shca_ah.h"
#include "shca_av.h"
#include "shca_ctx.h"
#include "shca_obj.h"
#include "shca_wq.h"

static int shca_ah_init(struct ib_ah *ibah, struct rdma_ah_init_attr *init)
{
	struct shca_dev *sdev = to_sdev(ibah->device);
	struct shca_ah *ah = to_sah(ibah);
	int ret;

	ret = shca_av_from_attr(sdev, &ah->av, init->ah_attr);
	if (ret)
		return ret;
	return shca_ah_insert(sdev, ah,
			      init->flags & RDMA_CREATE_AH_SLEEPABLE);
}

/**
 * shca_create_ah - create an address handle for a kernel user
 * @ibah: the RDMA core's AH, allocated by the core
 * @init: its attribute (a RoCEv2 GID with a GRH) and flags
 * @udata: NULL (kernel users)
 *
 * Resolves the addresses once and publishes the AH under a handle, which
 * the UD send path looks up.  May run in atomic context when @init's
 * flags lack RDMA_CREATE_AH_SLEEPABLE.
 *
 * Return: 0, -EINVAL for an attribute that is not RoCEv2, or -ENOMEM.
 */
int shca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		   struct ib_udata *udata)
{
	int ret;

	ret = shca_ah_init(ibah, init);
	if (ret)
		return ret;
	shca_obj_get(SHCA_OBJ_AH);
	return 0;
}

/**
 * shca_create_user_ah - create an address handle for a process
 * @ibah: the RDMA core's AH, allocated by the core
 * @init: its attribute (a RoCEv2 GID with a GRH) and flags
 * @udata: receives struct shca_create_ah_resp: the handle the process
 *	puts in its UD send WQEs
 *
 * The engine checks that a WQE's handle names an AH of the QP's PD.
 *
 * Return: 0, -EINVAL for an attribute that is not RoCEv2 or driver
 * input, -ENOMEM, or -EFAULT when the response cannot be copied out.
 */
int shca_create_user_ah(struct ib_ah *ibah,
			struct rdma_ah_init_attr *init,
			struct ib_udata *udata)
{
	struct shca_ah *ah = to_sah(ibah);
	struct shca_create_ah_resp resp = {};
	int ret;

	ret = shca_udata_check_in(udata);
	if (!ret)
		ret = shca_ah_init(ibah, init);
	if (ret)
		return ret;
	if (udata && udata->outlen) {
		resp.ah = ah->handle;
		ret = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (ret)
			goto err_remove;
	}
	shca_obj_get(SHCA_OBJ_AH);
	return 0;

err_remove:
	shca_ah_remove(to_sdev(ibah->device), ah);
	return ret;
}

/**
 * shca_query_ah - report an address handle's attribute
 * @ibah: the AH
 * @attr: rebuilt from the resolved address vector
 *
 * Return: 0.
 */
int shca_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	shca_av_to_attr(to_sdev(ibah->device), &to_sah(ibah)->av, attr);
	return 0;
}

/**
 * shca_destroy_ah - remove an address handle
 * @ibah: the AH
 * @flags: RDMA_DESTROY_AH_SLEEPABLE or 0; the removal never sleeps
 *
 * A UD WQE that looked the handle up before keeps its copy of the
 * address vector; later lookups fail.  A process's handle is looked up
 * first by every send its UD QPs of the AH's PD have posted
 * (shca_qp_fetch_pd()).
 *
 * Return: 0.
 */
int shca_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	if (ibah->uobject && (flags & RDMA_DESTROY_AH_SLEEPABLE))
		shca_qp_fetch_pd(to_sdev(ibah->device), to_spd(ibah->pd));
	shca_ah_remove(to_sdev(ibah->device), to_sah(ibah));
	shca_obj_put(SHCA_OBJ_AH);
	return 0;
}
