/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca device memory for kernel producers (shca_kdm.c): the exported
 * functions an I/O device driver or a kernel ULP uses to take an address
 * range of a shca device's window, produce into its pages, register it
 * for its QPs and arm and commit DRDMA transfers, as a process does
 * through ibv_alloc_dm and the direct verbs (Documentation/shcadv.md).
 *
 * Process context for shca_kdm_alloc(), shca_kdm_reg_mr() and
 * shca_kdm_free(); shca_kdm_arm(), shca_kdm_commit() and shca_kdm_regs()
 * may be called from any context but hardirq.
 */
#ifndef SHCA_KDM_H
#define SHCA_KDM_H

#include <linux/mm_types.h>
#include <rdma/ib_verbs.h>
#include <rdma/shca-abi.h>

struct shca_kdm;

struct shca_kdm *shca_kdm_alloc(struct ib_device *ibdev, u64 length);
int shca_kdm_free(struct shca_kdm *kdm);
struct page **shca_kdm_pages(struct shca_kdm *kdm, u32 *npages);
struct ib_mr *shca_kdm_reg_mr(struct ib_pd *pd, struct shca_kdm *kdm,
			      u64 offset, u64 length, int access);
int shca_kdm_arm(struct shca_kdm *kdm, u32 dir, u64 offset, u32 length);
int shca_kdm_commit(struct shca_kdm *kdm, u32 bytes, u32 *count);
void shca_kdm_regs(struct shca_kdm *kdm, struct shca_arr_reg *regs);

#endif /* SHCA_KDM_H */
