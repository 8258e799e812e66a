#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-dmesg.sh FILE: scan a kernel log for warnings, bugs, lockdep and
# sanitizer reports (KASAN, KFENCE, UBSAN, kmemleak, and SLUB's own
# consistency checks under slub_debug: "BUG <cache> (...): Redzone
# overwritten" and the like), stalls and shca leak reports.  Prints the offending
# lines and exits 1 if there are any, exits 0 when the log is clean (2 if
# FILE cannot be read).  The notices an out-of-tree, unsigned module causes
# ("loading out-of-tree module taints kernel", "module verification
# failed") are expected and not reported.

set -uo pipefail

if [[ $# -ne 1 ]]; then
	echo "usage: check-dmesg.sh FILE" >&2
	exit 2
fi
if [[ ! -r $1 ]]; then
	echo "check-dmesg.sh: cannot read $1" >&2
	exit 2
fi

patterns=(
	'WARNING:'
	'BUG:'
	'Oops'
	'general protection fault'
	'Kernel panic'
	'Call Trace:'
	'possible circular locking'
	'possible recursive locking'
	'inconsistent lock state'
	'suspicious RCU usage'
	'lockdep is turned off'
	'DEBUG_LOCKS_WARN_ON'
	'held lock freed'
	'lock held when returning to user space'
	'refcount_t:'
	'kmemleak: .*suspected memory leak'
	'unreferenced object'
	'ODEBUG:'
	'INFO: trying to register non-static key'
	'INFO: possible .*dependency'
	'UBSAN:'
	'KASAN:'
	'KFENCE:'
	'BUG [^ ]+ \((Not tainted|Tainted:[^)]*)\):'
	'Slab corruption'
	'Freechain corrupt'
	'list_add corruption'
	'list_del corruption'
	'stack-protector'
	'hung_task'
	'blocked for more than'
	'soft lockup'
	'self-detected stall'
	'detected stalls on CPUs'
	'shca.*leak'
)

# Join the patterns into one extended regex: a single grep pass.
regex=$(IFS='|'; echo "${patterns[*]}")

# grep exits 0 when something matched: that is a failure here.
if grep -aE -- "$regex" "$1"; then
	exit 1
fi
exit 0
