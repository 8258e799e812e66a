// SPDX-License-Identifier: GPL-2.0
/*
 * shca fault injection for tests: hold points (shca_fault.h) configured
 * through debugfs, under shca/fault/:
 *
 *   rkey_hold_at      0: between an RDMA access's R_Key slot check and its
 *                     copy; 1: a built READ response, before it leaves;
 *                     2: a QP lookup (a received packet's), between
 *                     finding the QP and taking its reference; 3: a
 *                     deferred ACK (the receive path's), before it is
 *                     built, with its QP's lock dropped
 *   rkey_hold_after   packets to let through that point before the held one
 *   rkey_hold_ms      how long the hold lasts (at most 3000 ms)
 *   rkey_hold_arm     write 1 to arm one hold with the values above, 0 to
 *                     disarm; reads 1 while armed
 *   rkey_holds        holds begun (read only)
 *   rkey_holds_done   holds ended (read only)
 *
 * A test arms, starts its transfer, waits for rkey_holds to move, acts
 * (invalidates), and reads rkey_holds_done to learn whether the hold was
 * still on when its action completed.  The settings are global: every
 * shca device's packets count.
 *
 * A hold between a slot check and a copy busy-waits where it is, with
 * the QP's and the slot set's locks held: that is the window it widens.
 * A READ response held before it leaves is set aside instead, and its
 * QP sends no other response until a timer sends it (shca_resp_tx.c), so
 * no CPU waits for it.
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include "shca_fault.h"

#define SHCA_HOLD_MAX_MS	3000

DEFINE_STATIC_KEY_FALSE(shca_fault_armed);

static DEFINE_MUTEX(shca_fault_mutex);	/* arm and disarm */
static struct dentry *shca_fault_dir;
static u32 shca_hold_at;
static u32 shca_hold_after;
static u32 shca_hold_ms;
static bool shca_hold_armed;		/* under shca_fault_mutex */
/* packets still to let through; the one that takes it to -1 is held */
static atomic_t shca_hold_countdown = ATOMIC_INIT(-1);
static atomic_t shca_holds;
static atomic_t shca_holds_done;
static atomic_t shca_holds_out;		/* begun, not ended */

/**
 * shca_fault_take - is this the packet the armed hold waits for?
 * @at: the hold point reached
 * @ms: receives the hold's length when it is
 *
 * Only while armed.  The packet that uses up the countdown is the one;
 * the hold is counted as begun, and the caller must call
 * shca_fault_hold_done() when it ends.
 *
 * Return: true for that packet, false for every other one.
 */
bool shca_fault_take(enum shca_hold_at at, u32 *ms)
{
	if (at != READ_ONCE(shca_hold_at) ||
	    atomic_dec_if_positive(&shca_hold_countdown) != -1 ||
	    atomic_cmpxchg(&shca_hold_countdown, 0, -1) != 0)
		return false;
	*ms = min_t(u32, READ_ONCE(shca_hold_ms), SHCA_HOLD_MAX_MS);
	atomic_inc(&shca_holds_out);
	atomic_inc(&shca_holds);
	return true;
}

/**
 * shca_fault_hold_done - a hold begun by shca_fault_take() has ended
 */
void shca_fault_hold_done(void)
{
	atomic_inc(&shca_holds_done);
	atomic_dec(&shca_holds_out);
}

/**
 * shca_fault_hold - the slow path of shca_fault_point()
 * @at: the hold point reached
 *
 * Busy-waits (the callers may hold spinlocks, BHs off) if this is the
 * packet the armed hold waits for.
 */
void shca_fault_hold(enum shca_hold_at at)
{
	u32 ms;

	if (!shca_fault_take(at, &ms))
		return;
	mdelay(ms);
	shca_fault_hold_done();
}

/*
 * Before the hold points go quiet: a packet still held (a deferred READ
 * response) must leave first, or later ones would pass it.  Its timer
 * ends it within SHCA_HOLD_MAX_MS.
 */
static void shca_fault_wait_holds(void)
{
	int i;

	for (i = 0; i < 2 * SHCA_HOLD_MAX_MS / 20 &&
	     atomic_read(&shca_holds_out); i++)
		msleep(20);
}

static int shca_fault_arm_get(void *data, u64 *val)
{
	*val = READ_ONCE(shca_hold_armed);
	return 0;
}

static int shca_fault_arm_set(void *data, u64 val)
{
	mutex_lock(&shca_fault_mutex);
	if (val) {
		atomic_set(&shca_hold_countdown, READ_ONCE(shca_hold_after));
		if (!shca_hold_armed)
			static_branch_enable(&shca_fault_armed);
		shca_hold_armed = true;
	} else if (shca_hold_armed) {
		shca_fault_wait_holds();
		static_branch_disable(&shca_fault_armed);
		atomic_set(&shca_hold_countdown, -1);
		shca_hold_armed = false;
	}
	mutex_unlock(&shca_fault_mutex);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(shca_fault_arm_fops, shca_fault_arm_get,
			 shca_fault_arm_set, "%llu\n");

/**
 * shca_fault_init - create shca/fault/ in debugfs
 * @parent: the driver's debugfs directory
 *
 * A failure only costs the files: debugfs calls need no checks.
 */
void shca_fault_init(struct dentry *parent)
{
	shca_fault_dir = debugfs_create_dir("fault", parent);
	debugfs_create_u32("rkey_hold_at", 0600, shca_fault_dir,
			   &shca_hold_at);
	debugfs_create_u32("rkey_hold_after", 0600, shca_fault_dir,
			   &shca_hold_after);
	debugfs_create_u32("rkey_hold_ms", 0600, shca_fault_dir,
			   &shca_hold_ms);
	debugfs_create_file_unsafe("rkey_hold_arm", 0600, shca_fault_dir,
				   NULL, &shca_fault_arm_fops);
	debugfs_create_atomic_t("rkey_holds", 0400, shca_fault_dir,
				&shca_holds);
	debugfs_create_atomic_t("rkey_holds_done", 0400, shca_fault_dir,
				&shca_holds_done);
}

/**
 * shca_fault_exit - disarm (before the driver's debugfs directory goes)
 */
void shca_fault_exit(void)
{
	shca_fault_arm_set(NULL, 0);
}
