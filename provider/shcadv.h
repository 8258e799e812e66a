/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shcadv.h - direct verbs of the shca provider (libshca): what the verbs
 * device-memory API has no word for.  Link with -lshca.
 *
 * A device-memory allocation (ibv_alloc_dm) of a shca device is an address
 * range of the device's window, with an address range register.  These
 * calls let the process produce into the range and consume from it
 * directly, and arm the register for a DRDMA transfer:
 *
 *  DRDMA WRITE: shcadv_dm_arm(dm, SHCADV_DM_WRITE, off, len); post an RDMA
 *  WRITE (or a SEND) whose SGE lies in a DM MR over the range: it waits in
 *  its send queue, holding back no other QP.  Write the data at
 *  shcadv_dm_map(dm) + off and call shcadv_dm_commit() for each piece;
 *  when the committed bytes reach len, the WQE sends, straight from the
 *  window's pages.
 *
 *  DRDMA READ: shcadv_dm_arm(dm, SHCADV_DM_READ, off, len); post an RDMA
 *  READ whose SGE lies in a DM MR over the range; the register's read_len
 *  grows as the response payload lands, and both valid flags are set when
 *  all of it has.
 *
 * Documentation/shcadv.md describes each call.
 *
 * Parent domains (ibv_alloc_parent_domain) with allocators: the provider
 * asks the alloc callback for the memory of its state of each QP, CQ and
 * SRQ created on the parent domain, with these resource types.
 */
#ifndef __SHCADV_H__
#define __SHCADV_H__

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* resource_type of a parent domain's alloc and free callbacks */
#define SHCADV_RES_TYPE_BASE	((uint64_t)0x73686361 << 32)	/* "shca" */
#define SHCADV_RES_TYPE_QP	(SHCADV_RES_TYPE_BASE + 1)
#define SHCADV_RES_TYPE_CQ	(SHCADV_RES_TYPE_BASE + 2)
#define SHCADV_RES_TYPE_SRQ	(SHCADV_RES_TYPE_BASE + 3)

enum shcadv_dm_dir {
	SHCADV_DM_NONE = 0,	/* disarm */
	SHCADV_DM_WRITE = 1,	/* DRDMA WRITE: producer -> range -> wire */
	SHCADV_DM_READ = 2,	/* DRDMA READ: wire -> range -> consumer */
};

/* shcadv_dm_regs.flags */
enum {
	SHCADV_DM_BUS_VALID = 1 << 0,	/* producer may write / consumer read */
	SHCADV_DM_PKT_VALID = 1 << 1,	/* the packet side holds it all */
};

/**
 * struct shcadv_dm_regs - a range's address range register
 * @total_len: bytes of the armed transfer
 * @write_count: DRDMA WRITE: bytes committed
 * @read_len: DRDMA READ: bytes landed, from the transfer's start
 * @block: first packet-memory block (page) of the range in the window
 * @nblocks: blocks of the range
 * @offset: first byte of the transfer in the range
 * @dir: enum shcadv_dm_dir
 * @flags: SHCADV_DM_*_VALID
 * @waiting: send WQEs waiting for the range
 * @gen: arms so far
 */
struct shcadv_dm_regs {
	uint32_t total_len;
	uint32_t write_count;
	uint32_t read_len;
	uint32_t block;
	uint32_t nblocks;
	uint32_t offset;
	uint8_t dir;
	uint8_t flags;
	uint16_t waiting;
	uint32_t gen;
};

/* The range mapped into the process; *length receives its bytes. */
void *shcadv_dm_map(struct ibv_dm *dm, size_t *length);

/* Arm (or disarm) the range's register; 0 or an errno value. */
int shcadv_dm_arm(struct ibv_dm *dm, enum shcadv_dm_dir dir, uint64_t offset,
		  uint32_t length);

/* The producer wrote @bytes more; *count (if not NULL) gets the total. */
int shcadv_dm_commit(struct ibv_dm *dm, uint32_t bytes, uint32_t *count);

/* Read the register (no system call); 0 or an errno value. */
int shcadv_dm_query(struct ibv_dm *dm, struct shcadv_dm_regs *regs);

#ifdef __cplusplus
}
#endif

#endif /* __SHCADV_H__ */
