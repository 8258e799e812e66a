// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libshca: rdma-core provider for the shca software RDMA HCA.
 *
 * Device memory: ibv_alloc_dm takes an address range of the device's
 * window and maps it (the kernel returns the mmap key through a driver
 * attribute of the DM_ALLOC method); ibv_memcpy_to_dm and
 * ibv_memcpy_from_dm copy through that mapping, in 4-byte words as on a
 * device; ibv_reg_dm_mr registers a zero-based MR over part of it.
 */

#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/cmd_write.h>

#include "shca.h"
#include "shca_abi.h"
#include "shcadv.h"

/* [@off, @off + @len) lies in @dm and both are whole 4-byte words */
static int shca_dm_check(const struct shca_dm *dm, uint64_t off, size_t len)
{
	if (off % SHCA_DM_ALIGN || len % SHCA_DM_ALIGN)
		return EINVAL;
	if (off > dm->length || len > dm->length - off)
		return EINVAL;
	return 0;
}

static int shca_memcpy_to_dm(struct ibv_dm *ibdm, uint64_t dm_offset,
			     const void *host_addr, size_t length)
{
	struct shca_dm *dm = to_shca_dm(ibdm);
	int ret = shca_dm_check(dm, dm_offset, length);

	if (ret)
		return ret;
	memcpy((char *)dm->map + dm_offset, host_addr, length);
	/* the bytes are in place before a later post hands them out */
	atomic_thread_fence(memory_order_release);
	return 0;
}

static int shca_memcpy_from_dm(void *host_addr, struct ibv_dm *ibdm,
			       uint64_t dm_offset, size_t length)
{
	struct shca_dm *dm = to_shca_dm(ibdm);
	int ret = shca_dm_check(dm, dm_offset, length);

	if (ret)
		return ret;
	atomic_thread_fence(memory_order_acquire);
	memcpy(host_addr, (char *)dm->map + dm_offset, length);
	return 0;
}

struct ibv_dm *shca_alloc_dm(struct ibv_context *ibctx,
			     struct ibv_alloc_dm_attr *attr)
{
	DECLARE_COMMAND_BUFFER(cmdb, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC,
			       3);
	long page = sysconf(_SC_PAGESIZE);
	uint64_t offset = 0, reg_offset = 0;
	void *reg;
	uint32_t range = 0;
	struct shca_dm *dm;
	int ret;

	if (attr->comp_mask || !attr->length || page <= 0) {
		errno = EINVAL;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm) {
		errno = ENOMEM;
		return NULL;
	}
	fill_attr_out(cmdb, SHCA_ATTR_ALLOC_DM_RESP_MMAP_OFFSET, &offset,
		      sizeof(offset));
	fill_attr_out(cmdb, SHCA_ATTR_ALLOC_DM_RESP_RANGE, &range,
		      sizeof(range));
	fill_attr_out(cmdb, SHCA_ATTR_ALLOC_DM_RESP_REG_OFFSET, &reg_offset,
		      sizeof(reg_offset));
	ret = ibv_cmd_alloc_dm(ibctx, attr, &dm->vdm, cmdb);
	if (ret)
		goto err_free;

	dm->length = attr->length;
	dm->range = range;
	dm->map_size = (attr->length + page - 1) / page * page;
	dm->map = mmap(NULL, dm->map_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ibctx->cmd_fd, offset);
	if (dm->map == MAP_FAILED) {
		ret = errno;
		ibv_cmd_free_dm(&dm->vdm);
		goto err_free;
	}
	reg = mmap(NULL, page, PROT_READ, MAP_SHARED, ibctx->cmd_fd,
		   reg_offset);
	if (reg == MAP_FAILED) {
		ret = errno;
		ibv_cmd_free_dm(&dm->vdm);
		munmap(dm->map, dm->map_size);
		goto err_free;
	}
	dm->reg = reg;
	dm->vdm.dm.memcpy_to_dm = shca_memcpy_to_dm;
	dm->vdm.dm.memcpy_from_dm = shca_memcpy_from_dm;
	return &dm->vdm.dm;

err_free:
	free(dm);
	errno = ret;
	return NULL;
}

int shca_free_dm(struct ibv_dm *ibdm)
{
	struct shca_dm *dm = to_shca_dm(ibdm);
	int ret;

	/*
	 * Free first: the kernel refuses while an MR uses the memory, and
	 * then the mapping must stay.
	 */
	ret = ibv_cmd_free_dm(&dm->vdm);
	if (ret)
		return ret;
	munmap(dm->map, dm->map_size);
	munmap((void *)dm->reg, sysconf(_SC_PAGESIZE));
	free(dm);
	return 0;
}

struct ibv_mr *shca_reg_dm_mr(struct ibv_pd *ibpd, struct ibv_dm *ibdm,
			      uint64_t dm_offset, size_t length,
			      unsigned int access)
{
	struct shca_dm *dm = to_shca_dm(ibdm);
	struct shca_mr *mr;
	int ret;

	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_reg_dm_mr(ibpd, &dm->vdm, dm_offset, length, access,
				&mr->vmr, NULL);
	if (ret) {
		free(mr);
		errno = ret;
		return NULL;
	}
	return &mr->vmr.ibv_mr;
}

/* ---- direct verbs (shcadv.h) --------------------------------------------- */

void *shcadv_dm_map(struct ibv_dm *ibdm, size_t *length)
{
	struct shca_dm *dm;

	if (!shca_is_dm(ibdm)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	dm = to_shca_dm(ibdm);
	if (length)
		*length = dm->length;
	return dm->map;
}

int shcadv_dm_arm(struct ibv_dm *ibdm, enum shcadv_dm_dir dir,
		  uint64_t offset, uint32_t length)
{
	DECLARE_COMMAND_BUFFER(cmdb, UVERBS_OBJECT_DM, SHCA_METHOD_DM_ARM, 4);
	struct shca_dm *dm;

	if (!shca_is_dm(ibdm))
		return EOPNOTSUPP;
	dm = to_shca_dm(ibdm);
	fill_attr_in_obj(cmdb, SHCA_ATTR_DM_ARM_HANDLE, dm->vdm.handle);
	fill_attr_in_uint32(cmdb, SHCA_ATTR_DM_ARM_DIR, dir);
	fill_attr_in_uint64(cmdb, SHCA_ATTR_DM_ARM_OFFSET, offset);
	fill_attr_in_uint32(cmdb, SHCA_ATTR_DM_ARM_LENGTH, length);
	return execute_ioctl(ibdm->context, cmdb);
}

int shcadv_dm_commit(struct ibv_dm *ibdm, uint32_t bytes, uint32_t *count)
{
	DECLARE_COMMAND_BUFFER(cmdb, UVERBS_OBJECT_DM, SHCA_METHOD_DM_COMMIT,
			       3);
	struct shca_dm *dm;
	uint32_t now = 0;
	int ret;

	if (!shca_is_dm(ibdm))
		return EOPNOTSUPP;
	dm = to_shca_dm(ibdm);
	/* the data is in the range before the engine may send it */
	atomic_thread_fence(memory_order_release);
	fill_attr_in_obj(cmdb, SHCA_ATTR_DM_COMMIT_HANDLE, dm->vdm.handle);
	fill_attr_in_uint32(cmdb, SHCA_ATTR_DM_COMMIT_BYTES, bytes);
	fill_attr_out(cmdb, SHCA_ATTR_DM_COMMIT_COUNT, &now, sizeof(now));
	ret = execute_ioctl(ibdm->context, cmdb);
	if (!ret && count)
		*count = now;
	return ret;
}

int shcadv_dm_query(struct ibv_dm *ibdm, struct shcadv_dm_regs *regs)
{
	const volatile struct shca_arr_reg *reg;
	uint32_t gen;
	int tries;

	if (!shca_is_dm(ibdm))
		return EOPNOTSUPP;
	reg = to_shca_dm(ibdm)->reg;
	/* a consistent copy: no arm came in between */
	for (tries = 0; tries < 1000; tries++) {
		gen = reg->gen;
		atomic_thread_fence(memory_order_acquire);
		regs->total_len = reg->total_len;
		regs->write_count = reg->write_count;
		regs->read_len = reg->read_len;
		regs->block = reg->block;
		regs->nblocks = reg->nblocks;
		regs->offset = reg->offset;
		regs->dir = reg->dir;
		regs->flags = reg->flags;
		regs->waiting = reg->waiting;
		atomic_thread_fence(memory_order_acquire);
		regs->gen = reg->gen;
		if (regs->gen == gen)
			return 0;
	}
	return EAGAIN;
}
