// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: rdma-core provider for the shca software RDMA HCA.
 *
 * Mapping the kernel's rings into the process.
 */

#include <config.h>

#include <errno.h>
#include <sys/mman.h>

#include "shca.h"

/**
 * shca_ring_map - map a ring the kernel described
 * @ibctx: context whose command fd the ring is mapped from
 * @r: ring to set up
 * @info: what the kernel returned for it
 * @min_stride: smallest acceptable slot size
 * @producer: this process produces (SQ/RQ/SRQ) rather than consumes (CQ)
 *
 * Return: 0, EPROTO when @info makes no sense, or mmap's errno.
 */
int shca_ring_map(struct ibv_context *ibctx, struct shca_uring *r,
		  const struct shca_ring_info *info, uint32_t min_stride,
		  bool producer)
{
	void *map;

	if (!shca_ring_info_ok(info, min_stride)) {
		verbs_err(&to_shca_ctx(ibctx)->ibv_ctx,
			  "shca: bad ring from the kernel: %u x %u bytes in %llu\n",
			  info->entries, info->stride,
			  (unsigned long long)info->mmap_size);
		return EPROTO;
	}

	map = mmap(NULL, info->mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   ibctx->cmd_fd, info->mmap_offset);
	if (map == MAP_FAILED)
		return errno;

	shca_ring_attach(r, map, info, producer);
	return 0;
}

/**
 * shca_ring_unmap - undo shca_ring_map(); harmless on a ring never mapped
 * @r: ring
 */
void shca_ring_unmap(struct shca_uring *r)
{
	if (r->map)
		munmap(r->map, r->map_size);
	r->map = NULL;
	r->ctrl = NULL;
	r->slots = NULL;
}
