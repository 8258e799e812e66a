#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# soak-guest.sh TEST...: in the test VM (scripts/soak.sh boots it), run the
# selftests one after the other, round after round, for SHCA_SOAK_SECONDS.
# Writes to the results share ($SHCA_OUT): soak.log, one line per test run
# ("ROUND TEST ok|fail SECONDS [failed checks]", plus "ROUND TEST dmesg"
# when the kernel log turned bad during it), and failures.log, the whole
# output of every failed run.  Exit status 0 when every run passed and the
# kernel log stayed clean.

dir=$(cd "$(dirname "$0")/.." && pwd)
cd "$dir" || exit 1
deadline=$((SECONDS + ${SHCA_SOAK_SECONDS:-1200}))
log=$SHCA_OUT/soak.log
: > "$log"
: > "$SHCA_OUT/failures.log"
round=0
bad=0
dirty=
while ((SECONDS < deadline)); do
	round=$((round + 1))
	for t in "$@"; do
		t0=$SECONDS
		tests/selftests/run.sh "$t" > /tmp/soak.out 2>&1
		rc=$?
		secs=$((SECONDS - t0))
		if [ "$rc" = 0 ]; then
			echo "$round $t ok $secs" >> "$log"
		else
			bad=1
			checks=$(grep '^# not ok' /tmp/soak.out | sed 's/^# //' |
				 tr '\n' ';')
			echo "$round $t fail $secs $checks" >> "$log"
			{
				echo "=== round $round: $t"
				cat /tmp/soak.out
			} >> "$SHCA_OUT/failures.log"
		fi
		if [ -z "$dirty" ]; then
			dmesg > /tmp/soak.dmesg
			if ! scripts/check-dmesg.sh /tmp/soak.dmesg > /dev/null; then
				dirty=1
				bad=1
				echo "$round $t dmesg" >> "$log"
			fi
		fi
		((SECONDS < deadline)) || break
	done
done
exit $bad
