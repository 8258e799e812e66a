#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# latency-split.sh: where a 64-byte ping-pong's round trip goes, stage by
# stage, on shca and on rdma_rxe in the same test VM boot.
#
# Usage: scripts/latency-split.sh [--kver KVER] [--iters N] [--reps N]
#                                 [--out DIR] [--doc] [--no-build]
#
#   --kver KVER   guest kernel (default: the newest 6.1, as scripts/bench.sh)
#   --iters N     iterations of each perftest run (default 2000)
#   --reps N      runs of each case (default 2)
#   --out DIR     results directory (default build/split)
#   --doc         write the split into Documentation/performance.md
#                 (between its "latency-split" markers)
#   --no-build    do not run make first
#
# One VM boot (scripts/latency-split-guest.sh says what it runs): one
# device talking to itself and two devices of one host, ib_send_lat and
# ib_write_lat, each on shca and rxe alternately, untraced and then with
# shca's tracepoints (Documentation/tracing.md) or kprobes at rxe's
# stages on; scripts/latency_split.py turns the traces into one table per
# case and device: each stage's median and 99th percentile.  Prints the
# report (also in DIR/report.md).
set -uo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
kver=
iters=2000
reps=2
out=$top/build/split
doc=0
build=1

msg() { echo "latency-split: $*" >&2; }
usage() {
	sed -n '4,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
}

while [[ $# -gt 0 ]]; do
	case $1 in
	--kver) kver=$2; shift 2 ;;
	--iters) iters=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--doc) doc=1; shift ;;
	--no-build) build=0; shift ;;
	*) usage ;;
	esac
done
[[ $iters =~ ^[1-9][0-9]*$ && $reps =~ ^[1-9][0-9]?$ ]] || usage
[[ -n $kver ]] || kver=${SHCA_KVER:-$("$top/scripts/newest-kernel.sh" 6.1)}

if [[ $build == 1 ]]; then
	"$top/scripts/setup.sh" --if-needed || exit 1
	make -s -C "$top" modules-all provider || { msg "build failed"; exit 1; }
fi
for f in "$top/build/kmod/$kver/kernel/shca.ko" \
	 "$top/build/lib/libshca-rdmav34.so"; do
	[[ -f $f ]] || { msg "$f missing: run make modules-all provider"; exit 2; }
done

rm -rf "$out"
mkdir -p "$out"
# each perftest run: a few seconds of set-up, then the iterations
timeout=$((600 + reps * iters / 2))
msg "booting $kver; progress: tail -f $out/vm/output.log"
"$top/scripts/vm.sh" --kver "$kver" --timeout "$timeout" --out "$out/vm" -- \
	scripts/latency-split-guest.sh "$iters" "$reps" > "$out/vm.log" 2>&1
vm_rc=$?
[[ $vm_rc == 0 ]] || msg "the VM run ended with rc $vm_rc (see $out/vm.log)"
[[ -f $out/vm/split/guest-info ]] || exit 1
python3 "$top/scripts/latency_split.py" report "$out/vm/split" > "$out/report.md" ||
	exit 1
cat "$out/report.md"
if [[ $doc == 1 ]]; then
	python3 "$top/scripts/latency_split.py" doc "$out/vm/split" \
		"$top/Documentation/performance.md" || exit 1
	msg "wrote Documentation/performance.md"
fi
exit "$vm_rc"
