// SPDX-License-Identifier: GPL-2.0
/*
 * shca object accounting.  Every object the module allocates (devices,
 * contexts, PDs, rings and their mappings, CQs, SRQs, QPs, MRs, MWs, AHs,
 * device-memory allocations) is counted while it lives, so that tests can
 * watch the counts come back and module unload can report what leaked.
 */
#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/debugfs.h>
#include <linux/printk.h>
#include <linux/seq_file.h>
#include "shca_obj.h"

static atomic_t shca_objs[SHCA_NUM_OBJ_TYPES];
static const char * const shca_obj_names[SHCA_NUM_OBJ_TYPES] = {
	[SHCA_OBJ_DEV] = "device",
	[SHCA_OBJ_UCTX] = "ucontext",
	[SHCA_OBJ_PD] = "pd",
	[SHCA_OBJ_MMAP] = "mmap",
	[SHCA_OBJ_RING] = "ring",
	[SHCA_OBJ_CQ] = "cq",
	[SHCA_OBJ_SRQ] = "srq",
	[SHCA_OBJ_QP] = "qp",
	[SHCA_OBJ_MR] = "mr",
	[SHCA_OBJ_MW] = "mw",
	[SHCA_OBJ_AH] = "ah",
	[SHCA_OBJ_DM] = "dm",
};

/**
 * shca_obj_get - account one live object of type @t
 * @t: object type
 */
void shca_obj_get(enum shca_obj_type t)
{
	atomic_inc(&shca_objs[t]);
}

/**
 * shca_obj_put - account the release of one object of type @t
 * @t: object type
 */
void shca_obj_put(enum shca_obj_type t)
{
	WARN_ON_ONCE(atomic_dec_return(&shca_objs[t]) < 0);
}

/**
 * shca_obj_check_leaks - report every object still counted (module unload)
 */
void shca_obj_check_leaks(void)
{
	int i, n;

	for (i = 0; i < SHCA_NUM_OBJ_TYPES; i++) {
		n = atomic_read(&shca_objs[i]);
		if (n)
			pr_err("shca: leak: %d %s object(s) still allocated at unload\n",
			       n, shca_obj_names[i]);
	}
}

/* "shca/objects": one "<type> <count>" line per object type */
static int shca_objects_show(struct seq_file *s, void *unused)
{
	int i;

	for (i = 0; i < SHCA_NUM_OBJ_TYPES; i++)
		seq_printf(s, "%s %d\n", shca_obj_names[i],
			   atomic_read(&shca_objs[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(shca_objects);

/**
 * shca_obj_debugfs - create the debugfs file "objects" under @parent
 * @parent: the module's debugfs directory
 */
void shca_obj_debugfs(struct dentry *parent)
{
	debugfs_create_file("objects", 0444, parent, NULL, &shca_objects_fops);
}
