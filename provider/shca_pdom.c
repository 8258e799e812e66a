// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: rdma-core provider for the shca software RDMA HCA.
 *
 * Thread domains and parent domains: provider-only objects, the kernel
 * never sees them.
 *
 * A thread domain is the application's promise that the objects of a
 * parent domain naming it are used by one thread at a time: their QPs and
 * SRQs post, and their CQs poll, without taking a lock.
 *
 * A parent domain stands for its PD wherever a PD is taken (it carries the
 * PD's handle, so the kernel sees the PD).  With allocators, the memory of
 * the provider's state of each QP, CQ and SRQ created on it (the lock,
 * ring indices and limits every post and poll touch) comes from the
 * application's alloc callback, with the resource types of shcadv.h; the
 * rings themselves are the device's, mapped from the kernel.
 */

#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shca.h"
#include "shcadv.h"

/* Alignment asked of an allocator: one cache line */
#define SHCA_OBJ_ALIGN	64

struct ibv_td *shca_alloc_td(struct ibv_context *ibctx,
			     struct ibv_td_init_attr *attr)
{
	struct shca_td *td;

	if (attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (!td)
		return NULL;
	td->ibv_td.context = ibctx;
	atomic_init(&td->users, 0);
	return &td->ibv_td;
}

int shca_dealloc_td(struct ibv_td *ibtd)
{
	struct shca_td *td = to_shca_td(ibtd);

	if (atomic_load(&td->users))
		return EBUSY;
	free(td);
	return 0;
}

static int shca_pdom_check(struct ibv_context *ibctx,
			   const struct ibv_parent_domain_init_attr *attr)
{
	const uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;

	if (!attr->pd || attr->pd->context != ibctx ||
	    (attr->td && attr->td->context != ibctx))
		return EINVAL;
	/* a parent domain contains a PD, not another parent domain */
	if (to_shca_pd(attr->pd)->protection)
		return EINVAL;
	if (attr->comp_mask & ~known)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	    (!attr->alloc || !attr->free))
		return EINVAL;
	return 0;
}

struct ibv_pd *shca_alloc_parent_domain(struct ibv_context *ibctx,
					struct ibv_parent_domain_init_attr *attr)
{
	struct shca_pd *pdom, *pd;
	int ret;

	ret = shca_pdom_check(ibctx, attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	pdom = calloc(1, sizeof(*pdom));
	if (!pdom)
		return NULL;

	pd = to_shca_pd(attr->pd);
	pdom->ibv_pd.context = ibctx;
	pdom->ibv_pd.handle = pd->ibv_pd.handle;
	pdom->pdn = pd->pdn;
	pdom->protection = pd;
	atomic_init(&pdom->users, 0);
	atomic_fetch_add(&pd->users, 1);
	if (attr->td) {
		pdom->td = to_shca_td(attr->td);
		atomic_fetch_add(&pdom->td->users, 1);
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pdom->alloc = attr->alloc;
		pdom->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pdom->pd_context = attr->pd_context;
	return &pdom->ibv_pd;
}

/* A parent domain on @pd goes; the last one frees a PD already unimported */
static void shca_pd_put_user(struct shca_pd *pd)
{
	if (atomic_fetch_sub(&pd->users, 1) == (SHCA_PD_UNIMPORTED | 1))
		free(pd);
}

/**
 * shca_dealloc_parent_domain - free a parent domain
 * @pdom: the parent domain
 *
 * Return: 0, or EBUSY while a QP, CQ or SRQ created on it exists.
 */
int shca_dealloc_parent_domain(struct shca_pd *pdom)
{
	if (atomic_load(&pdom->users))
		return EBUSY;
	shca_pd_put_user(pdom->protection);
	if (pdom->td)
		atomic_fetch_sub(&pdom->td->users, 1);
	free(pdom);
	return 0;
}

/**
 * shca_pd_single_thread - do objects created on @ibpd go without locks?
 * @ibpd: a PD or a parent domain
 *
 * Return: true for a parent domain with a thread domain.
 */
bool shca_pd_single_thread(struct ibv_pd *ibpd)
{
	return ibpd && to_shca_pd(ibpd)->td;
}

/**
 * shca_obj_alloc - zeroed memory for the provider's state of a QP, CQ or
 * SRQ
 * @ibpd: the PD or parent domain the object is created on, or NULL
 * @size: bytes
 * @type: SHCADV_RES_TYPE_*, passed to a parent domain's allocator
 * @mem: filled with where the memory came from (the caller keeps it in
 *	the object, for shca_obj_free())
 *
 * On a parent domain with allocators the memory comes from its alloc
 * callback, unless that answers IBV_ALLOCATOR_USE_DEFAULT; the parent
 * domain counts the object as a user either way.
 *
 * Return: the memory, or NULL with errno set.
 */
void *shca_obj_alloc(struct ibv_pd *ibpd, size_t size, uint64_t type,
		     struct shca_objmem *mem)
{
	struct shca_pd *pdom = ibpd ? to_shca_pd(ibpd) : NULL;
	void *p = IBV_ALLOCATOR_USE_DEFAULT;
	bool ext = false;

	if (pdom && !pdom->protection)
		pdom = NULL;
	if (pdom && pdom->alloc)
		p = pdom->alloc(&pdom->ibv_pd, pdom->pd_context, size,
				SHCA_OBJ_ALIGN, type);
	if (p == IBV_ALLOCATOR_USE_DEFAULT) {
		p = calloc(1, size);
	} else if (p) {
		memset(p, 0, size);
		ext = true;
	}
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	if (pdom)
		atomic_fetch_add(&pdom->users, 1);
	mem->pdom = pdom;
	mem->ext = ext;
	return p;
}

/**
 * shca_obj_free - give back what shca_obj_alloc() returned
 * @obj: the object's memory
 * @mem: its shca_objmem (inside @obj: copied before the memory goes)
 * @type: the type it was allocated with
 */
void shca_obj_free(void *obj, struct shca_objmem *mem, uint64_t type)
{
	struct shca_objmem m = *mem;

	if (m.ext)
		m.pdom->free(&m.pdom->ibv_pd, m.pdom->pd_context, obj, type);
	else
		free(obj);
	if (m.pdom)
		atomic_fetch_sub(&m.pdom->users, 1);
}
