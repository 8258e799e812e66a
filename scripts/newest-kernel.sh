#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# newest-kernel.sh: print the newest installed Debian kernel release of each
# SERIES given, one per line, in the order given.
#
# Usage: scripts/newest-kernel.sh SERIES...    (e.g. 6.1 6.12)
#
# A series with no /boot/vmlinuz-SERIES.* prints nothing for it; the exit
# status is then 1.

[[ $# -gt 0 ]] || { sed -n '4,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2; exit 2; }
rc=0
for series in "$@"; do
	k=$(printf '%s\n' /boot/vmlinuz-"$series".* | sed 's|^/boot/vmlinuz-||' |
		grep -v '\*' | sort -V | tail -n 1)
	if [[ -n $k ]]; then echo "$k"; else rc=1; fi
done
exit $rc
