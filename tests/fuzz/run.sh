#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: <this script> --out DIR --seconds N [--rss-mb MB] -- \
#		NAME:PROGRAM:SEEDS[:OPTIONS]...
#
# Runs libFuzzer harnesses (built by the Makefile here) one after the
# other, each for N seconds (-max_total_time) on a fresh copy of its seed
# directory, DIR/corpus/NAME, which it grows.  OPTIONS are more libFuzzer
# options, separated by spaces.  A crash, leak, sanitizer report, timeout
# or memory limit (-rss_limit_mb, default 2048) leaves the input in
# DIR/artifacts/NAME-<kind>-<sha1>; each run's output is in
# DIR/logs/NAME.log.
#
# Inputs that once showed a bug, tests/fuzz/repro/NAME-*, join the copy of
# the seeds, so libFuzzer replays each of them before it mutates anything:
# a bug that comes back fails the run at once.
#
# Prints one line per harness (executions, executions per second, and the
# coverage libFuzzer reports: cov = edges, ft = features, corp = corpus
# units/bytes) and a summary line.  Exit status is 0 only if every harness
# ran its time without finding anything.
out='' seconds='' rss=2048
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--rss-mb) rss=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
if [ -z "$out" ] || [ -z "$seconds" ] || [ $# -eq 0 ]; then
	echo "usage: run.sh --out DIR --seconds N [--rss-mb MB] -- NAME:PROGRAM:SEEDS[:OPTIONS]..." >&2
	exit 2
fi

mkdir -p "$out/corpus" "$out/artifacts" "$out/logs" || exit 2
repro=$(cd "$(dirname "$0")" && pwd)/repro

# "key: value" of libFuzzer's -print_final_stats output
stat() {
	sed -n "s/^stat::$1: *//p" "$2" | tail -n 1
}

n=0 failed=0 failed_names=
for spec in "$@"; do
	IFS=: read -r name prog seeds opts <<<"$spec"
	n=$((n + 1))
	corpus=$out/corpus/$name
	log=$out/logs/$name.log
	rm -rf "$corpus"
	mkdir -p "$corpus"
	if [ -d "$seeds" ]; then
		cp -r "$seeds/." "$corpus/"
	fi
	for f in "$repro/$name"-*; do
		[ -f "$f" ] && cp "$f" "$corpus/repro-${f##*/}"
	done
	echo "# fuzz_$name: ${seconds}s, seeds $seeds"
	# shellcheck disable=SC2086	# OPTIONS are separate words
	"$prog" -max_total_time="$seconds" -rss_limit_mb="$rss" -timeout=25 \
		-print_final_stats=1 -artifact_prefix="$out/artifacts/$name-" \
		$opts "$corpus" >"$log" 2>&1
	rc=$?
	execs=$(stat number_of_executed_units "$log")
	rate=$(stat average_exec_per_sec "$log")
	# the last status line: "#N DONE cov: C ft: F corp: U/B ..."
	cov=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n 1 |
		sed -E 's/.*(cov: [0-9]+ ft: [0-9]+ corp: [^ ]+).*/\1/')
	if [ "$rc" -ne 0 ] || [ -z "$execs" ]; then
		failed=$((failed + 1))
		failed_names="$failed_names $name(rc=$rc)"
		echo "not ok $n - fuzz_$name: exit $rc, after ${execs:-?} execs;" \
		     "what it found (whole output in $log):"
		# the failed check or sanitizer report, and the saved input
		grep -E 'assertion failed|runtime error|ERROR:|SUMMARY:|Test unit written' \
			"$log" | awk '!seen[$0]++' | head -n 10 | sed 's/^/#   /'
	else
		echo "ok $n - fuzz_$name: ${execs} execs, ${rate} exec/s, $cov"
	fi
done

if [ "$failed" -eq 0 ]; then
	echo "# fuzz: PASS: $n harnesses, ${seconds}s each"
else
	echo "# fuzz: FAIL: $failed of $n harnesses:$failed_names;" \
	     "inputs in $out/artifacts/"
	exit 1
fi
