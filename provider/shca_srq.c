// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: rdma-core provider for the shca software RDMA HCA.
 *
 * Shared receive queues: one receive ring the kernel maps into the process
 * (posting is in shca_qp.c, shared with the receive queue of a QP).
 */

#include <config.h>

#include <errno.h>
#include <stdlib.h>

#include "shca.h"
#include "shca_abi.h"
#include "shcadv.h"

struct ibv_srq *shca_create_srq(struct ibv_pd *ibpd,
				struct ibv_srq_init_attr *attr)
{
	struct ushca_create_srq_resp resp = {};
	struct ibv_create_srq cmd = {};
	struct shca_objmem mem;
	struct shca_srq *srq;
	int ret;

	srq = shca_obj_alloc(ibpd, sizeof(*srq), SHCADV_RES_TYPE_SRQ, &mem);
	if (!srq)
		return NULL;
	srq->mem = mem;

	ret = ibv_cmd_create_srq(ibpd, &srq->vsrq.srq, attr, &cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	ret = shca_ring_map(ibpd->context, &srq->rq.ring, &resp.drv_payload.rq,
			    sizeof(struct shca_rqe), true);
	if (ret)
		goto err_destroy;

	ret = shca_lock_init(&srq->rq.lock, shca_pd_single_thread(ibpd));
	if (ret)
		goto err_unmap;

	/* attr->attr holds what the kernel granted */
	srq->rq.max_sge = min_t(uint32_t, attr->attr.max_sge,
				shca_slot_max_sge(srq->rq.ring.stride,
						  sizeof(struct shca_rqe)));
	srq->srqn = resp.srqn;
	return &srq->vsrq.srq;

err_unmap:
	shca_ring_unmap(&srq->rq.ring);
err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_free:
	shca_obj_free(srq, &srq->mem, SHCADV_RES_TYPE_SRQ);
	errno = ret;
	return NULL;
}

/*
 * The ring cannot be replaced after creation: a resize (IBV_SRQ_MAX_WR) is
 * refused; arming the limit is passed on.
 */
int shca_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		    int attr_mask)
{
	struct ibv_modify_srq cmd = {};

	if (attr_mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP;

	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

int shca_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int shca_destroy_srq(struct ibv_srq *ibsrq)
{
	struct shca_srq *srq = to_shca_srq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;

	shca_ring_unmap(&srq->rq.ring);
	shca_lock_destroy(&srq->rq.lock);
	shca_obj_free(srq, &srq->mem, SHCADV_RES_TYPE_SRQ);
	return 0;
}
