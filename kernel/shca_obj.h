/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca object accounting: a live count per object type, shown in debugfs
 * (shca/objects) and checked for leaks when the module unloads.
 */
#ifndef SHCA_OBJ_H
#define SHCA_OBJ_H

struct dentry;

enum shca_obj_type {
	SHCA_OBJ_DEV,
	SHCA_OBJ_UCTX,
	SHCA_OBJ_PD,
	SHCA_OBJ_MMAP,
	SHCA_OBJ_RING,
	SHCA_OBJ_CQ,
	SHCA_OBJ_SRQ,
	SHCA_OBJ_QP,
	SHCA_OBJ_MR,
	SHCA_OBJ_MW,
	SHCA_OBJ_AH,
	SHCA_OBJ_DM,
	SHCA_NUM_OBJ_TYPES
};

void shca_obj_get(enum shca_obj_type t);
void shca_obj_put(enum shca_obj_type t);
void shca_obj_debugfs(struct dentry *parent);
void shca_obj_check_leaks(void);

#endif /* SHCA_OBJ_H */
