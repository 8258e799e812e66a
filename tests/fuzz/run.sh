#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: <this script> --out DIR --seconds N [--rss-mb MB] [--jobs J] -- \
#		NAME:PROGRAM:SEEDS[:OPTIONS]...
#
# Runs libFuzzer harnesses (built by the Makefile here), J at a time
# (default 1: one after the other; each harness is one process on one
# CPU), each for N seconds (-max_total_time) on a fresh copy of its seed
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
out='' seconds='' rss=2048 jobs=1
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--rss-mb) rss=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
if [ -z "$out" ] || [ -z "$seconds" ] || [ $# -eq 0 ]; then
	echo "usage: run.sh --out DIR --seconds N [--rss-mb MB] [--jobs J] -- NAME:PROGRAM:SEEDS[:OPTIONS]..." >&2
	exit 2
fi
case $jobs in
[1-9]|[1-9][0-9]) ;;
*) echo "run.sh: --jobs takes 1 to 99" >&2; exit 2 ;;
esac

mkdir -p "$out/corpus" "$out/artifacts" "$out/logs" || exit 2
repro=$(cd "$(dirname "$0")" && pwd)/repro

# "key: value" of libFuzzer's -print_final_stats output
stat() {
	sed -n "s/^stat::$1: *//p" "$2" | tail -n 1
}

# run_one N SPEC: harness SPEC as the Nth; its result lines go to
# DIR/logs/NAME.result, its status to DIR/logs/NAME.rc
run_one() {
	local n=$1 name prog seeds opts corpus log res rc execs rate cov f

	IFS=: read -r name prog seeds opts <<<"$2"
	corpus=$out/corpus/$name
	log=$out/logs/$name.log
	res=$out/logs/$name.result
	rm -rf "$corpus"
	mkdir -p "$corpus"
	if [ -d "$seeds" ]; then
		cp -r "$seeds/." "$corpus/"
	fi
	for f in "$repro/$name"-*; do
		[ -f "$f" ] && cp "$f" "$corpus/repro-${f##*/}"
	done
	echo "# fuzz_$name: ${seconds}s, seeds $seeds" > "$res"
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
		{
		echo "not ok $n - fuzz_$name: exit $rc, after ${execs:-?} execs;" \
		     "what it found (whole output in $log):"
		# the failed check or sanitizer report, and the saved input
		grep -E 'assertion failed|runtime error|ERROR:|SUMMARY:|Test unit written' \
			"$log" | awk '!seen[$0]++' | head -n 10 | sed 's/^/#   /'
		} >> "$res"
		echo "$rc" > "$out/logs/$name.rc"
	else
		echo "ok $n - fuzz_$name: ${execs} execs, ${rate} exec/s, $cov" >> "$res"
		echo 0 > "$out/logs/$name.rc"
	fi
}

n=0
names=()
for spec in "$@"; do
	n=$((n + 1))
	names+=("${spec%%:*}")
	rm -f "$out/logs/${spec%%:*}.rc"
	# at most J harnesses at a time
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n
	done
	run_one "$n" "$spec" &
done
wait
failed=0 failed_names=
for name in "${names[@]}"; do
	cat "$out/logs/$name.result" 2>/dev/null
	rc=$(cat "$out/logs/$name.rc" 2>/dev/null || echo "?")
	if [ "$rc" != 0 ]; then
		failed=$((failed + 1))
		failed_names="$failed_names $name(rc=$rc)"
	fi
done
if [ "$failed" -eq 0 ]; then
	echo "# fuzz: PASS: $n harnesses, ${seconds}s each"
else
	echo "# fuzz: FAIL: $failed of $n harnesses:$failed_names;" \
	     "inputs in $out/artifacts/"
	exit 1
fi
