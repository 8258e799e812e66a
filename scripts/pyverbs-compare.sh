#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pyverbs-compare.sh: run rdma-core's Python test suite (pyverbs, shipped in
# python3-pyverbs) against rdma_rxe and against shca in one test VM and
# write the results side by side to Documentation/pyverbs.md.
#
# Usage: scripts/pyverbs-compare.sh [--kver KVER] [--timeout SECS]
#            [--dev-limit SECS] [--stall SECS] [--devices "rxe shca"]
#            [--modules "test_qp test_mr ..."] [--parse-only]
#            [--out DIR] [--report FILE]
#
#   --kver KVER       guest kernel (default: vm.sh's, the newest 6.1)
#   --timeout SECS    wall-clock limit of the whole VM run (default 4200)
#   --dev-limit SECS  wall-clock limit of the suite on one device (1800)
#   --stall SECS      a test printing nothing for this long is aborted and
#                     counted as a hang (default 240)
#   --devices LIST    which devices to test, in order (default "rxe shca")
#   --modules LIST    only these test modules; the report then goes to
#                     build/pyverbs/report.md, not Documentation/pyverbs.md
#   --parse-only      do not boot: rebuild the report from the raw logs
#   --out DIR         raw results dir (default build/pyverbs/vm, or
#                     build/pyverbs/vm-modules with --modules)
#   --report FILE     where to write the report
#
# Needs the module and provider built (`make -s modules-all provider`); it
# does not build them.  They are copied to <results dir>/snap/ first, so a
# rebuild during the run does not mix versions.  Raw logs: build/pyverbs/vm/
# (<device>/<module>.<part>.log is unittest's stderr, .out its stdout,
# .status the watchdog's verdict, <module>.dmesg the kernel log lines the
# module caused).  Prints the summary table; exits 0 when the VM run
# completed, 1 otherwise.
#
# Inside the guest (scripts/pyverbs-compare-guest.sh, started by vm.sh)
# each test module runs in its own `run_tests.py -v` process, under a
# watchdog: when neither its stdout nor its stderr grows for --stall
# seconds, the process gets SIGABRT (python3 -X faulthandler prints every
# thread's Python stack), then SIGKILL, and the tests of the module that
# had not started run in a new process.  A test that was running when its
# process was aborted or died is reported as a hang or crash with that
# stack.  scripts/pyverbs_report.py parses the raw logs into the report.

set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
me=$top/scripts/pyverbs-compare.sh

usage() {
	sed -n '4,/^$/s/^# \{0,1\}//p' "$me" >&2
	exit 2
}

kver=
timeout=4200
dev_limit=1800
stall=240
devices="rxe shca"
mods=
parse_only=
out_opt=
report_opt=

while [[ $# -gt 0 ]]; do
	case $1 in
	--kver|--timeout|--dev-limit|--stall|--devices|--modules|--out|--report)
		[[ $# -ge 2 ]] || usage
		opt=${1#--}
		opt=${opt//-/_}
		case $opt in
		modules) opt=mods ;;
		out|report) opt+=_opt ;;
		esac
		printf -v "$opt" '%s' "$2"
		shift 2 ;;
	--parse-only)
		parse_only=1
		shift ;;
	-h|--help)
		usage ;;
	*)
		echo "pyverbs-compare.sh: unknown argument $1" >&2
		usage ;;
	esac
done
for v in timeout dev_limit stall; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "pyverbs-compare.sh: bad $v" >&2; exit 2; }
done

if [[ -z $kver ]]; then
	kver=${SHCA_KVER:-$("$top/scripts/newest-kernel.sh" 6.1)}
fi
work=$top/build/pyverbs
if [[ -n $mods ]]; then
	out=$work/vm-modules
	report=$work/report.md
else
	out=$work/vm
	report=$top/Documentation/pyverbs.md
fi
out=${out_opt:-$out}
report=${report_opt:-$report}
snap=$out/snap

if [[ -z $parse_only ]]; then
	ko=$top/build/kmod/$kver/kernel/shca.ko
	so=$top/build/lib/libshca-rdmav34.so
	for f in "$ko" "$so"; do
		[[ -f $f ]] || {
			echo "pyverbs-compare.sh: $f missing: run make -s modules-all provider" >&2
			exit 2
		}
	done
	rm -rf "$out"/{rxe,shca,snap,list.txt,list.err,params,vm.rc,vm.log,results.tsv,boot.dmesg}
	mkdir -p "$snap" || exit 1
	# the guest runs the suite from another directory
	snap=$(cd "$snap" && pwd -P) || exit 1
	cp "$ko" "$snap/shca.ko" && cp "$so" "$snap/libshca-rdmav34.so" || exit 1
	commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null)
	git -C "$top" status --porcelain -- kernel provider include |
		grep -q . && commit+=" with uncommitted changes"
	{
		echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "commit=${commit:-?}"
		echo "pyverbs=$(dpkg-query -W -f='${Version}' python3-pyverbs 2>/dev/null)"
		echo "kver=$kver"
		echo "stall=$stall"
		echo "dev_limit=$dev_limit"
		echo "devices=$devices"
		echo "mods=$mods"
	} > "$out/params"
	echo "pyverbs-compare.sh: booting $kver; progress: tail -f $out/output.log"
	"$top/scripts/vm.sh" --kver "$kver" --timeout "$timeout" --out "$out" --nic -- \
		"$top/scripts/pyverbs-compare-guest.sh" "$snap" "$dev_limit" \
		"$stall" "$devices" "$mods" \
		> "$out/vm.log" 2>&1
	echo "$?" > "$out/vm.rc"
fi
[[ -f $out/list.txt && -f $out/params ]] || {
	echo "pyverbs-compare.sh: no results in $out (see $out/vm.log)" >&2
	exit 1
}

# Flag the kernel log lines each module caused (scripts/check-dmesg.sh).
for f in "$out"/*/*.dmesg; do
	[[ -f $f ]] || continue
	"$top/scripts/check-dmesg.sh" "$f" > "${f%.dmesg}.kcheck" 2>&1 ||
		true
done

/usr/bin/python3 "$top/scripts/pyverbs_report.py" "$out" "$report"
prc=$?
vm_rc=$(cat "$out/vm.rc" 2>/dev/null)
[[ $prc == 0 ]] || exit 1
[[ $vm_rc == 0 || $vm_rc == 3 ]]
