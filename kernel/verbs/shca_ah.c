// SPDX-License-Identifier: GPL-2.0
/*
 * shca address handle verbs: create (kernel and user: a process's UD
 * WQEs name the AH by the handle returned to it), query, destroy.
 */
#include "shca.h"
#include "shca_ah.h"
#include "shca_av.h"
#include "shca_obj.h"

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

int shca_create_user_ah(struct ib_ah *ibah,
			struct rdma_ah_init_attr *init,
			struct ib_udata *udata)
{
	struct shca_ah *ah = to_sah(ibah);
	struct shca_create_ah_resp resp = {};
	int ret;

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

int shca_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	shca_av_to_attr(to_sdev(ibah->device), &to_sah(ibah)->av, attr);
	return 0;
}

int shca_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	shca_ah_remove(to_sdev(ibah->device), to_sah(ibah));
	shca_obj_put(SHCA_OBJ_AH);
	return 0;
}
