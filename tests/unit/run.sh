#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: <this script> [--wrap "CMD ARGS"] PROGRAM...
#
# Runs TAP unit test programs (built by the Makefile here).
#
# Prints each program's TAP output, then one summary line.  A program fails
# if it exits non-zero, prints "not ok", or prints no plan.  Exit status is
# 0 only if every program passed.
wrap=
if [ "$1" = "--wrap" ]; then
	wrap=$2
	shift 2
fi

tmp=$(mktemp) || exit 2
trap 'rm -f "$tmp"' EXIT

progs=0 failed=0 pass=0 fail=0 failed_names=
for prog in "$@"; do
	name=$(basename "$prog")
	progs=$((progs + 1))
	echo "# ---- $name ----"
	# shellcheck disable=SC2086
	$wrap "$prog" 2>&1 | tee "$tmp"
	rc=${PIPESTATUS[0]}
	p=$(grep -c '^ok ' "$tmp")
	f=$(grep -c '^not ok ' "$tmp")
	pass=$((pass + p))
	fail=$((fail + f))
	if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ] || ! grep -q '^1\.\.[0-9]' "$tmp"
	then
		failed=$((failed + 1))
		failed_names="$failed_names $name(rc=$rc)"
	fi
done

if [ "$failed" -eq 0 ]; then
	echo "# unit: PASS: $progs programs, $pass tests passed"
else
	echo "# unit: FAIL: $failed of $progs programs failed:$failed_names;" \
	     "$pass tests passed, $fail failed"
	exit 1
fi
