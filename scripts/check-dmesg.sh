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
#
# A KCSAN data-race report (the KCSAN debug kernel, scripts/kdebug.sh
# --kcsan) counts when either of its stacks has a frame in shca or one of
# its test modules ("[shca]", "[shca_ulp_test]", ...).  A report whose
# stacks are all the kernel's own (its core, net or mm code racing with
# itself) is not shca's to fix: its header line is printed on stderr as
# not counted, and the rest of the log is checked as usual.

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

# The log with every KCSAN report that has no shca frame cut out (each
# report sits between two lines of "=" signs); those reports' headers go
# to stderr.
kcsan_ours() {
	awk '
	function flush() {
		if (!inrep)
			return
		if (ours)
			printf "%s", buf
		else
			print "check-dmesg.sh: KCSAN report with no shca frame, not counted: " head > "/dev/stderr"
		inrep = 0; buf = ""; head = ""; ours = 0
	}
	/BUG: KCSAN:/ && !inrep {
		inrep = 1; buf = sep; head = $0; sub(/^\[[^]]*\] */, "", head)
	}
	inrep {
		buf = buf $0 "\n"
		if ($0 ~ /\[shca[a-z0-9_]*\]/)
			ours = 1
		if ($0 ~ /====================/) {
			flush()
			sep = ""
			next
		}
		next
	}
	/====================/ { sep = $0 "\n"; next }
	{ if (sep != "") { printf "%s", sep; sep = "" } print }
	END { flush(); if (sep != "") printf "%s", sep }
	' "$1"
}

# grep exits 0 when something matched: that is a failure here.
if kcsan_ours "$1" | grep -aE -- "$regex"; then
	exit 1
fi
exit 0
