#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check` (CI, every change): build everything, run the linters, the
# userspace unit tests and a short run of the fuzz harnesses, then boot
# the test VM and run every in-VM selftest on the newest 6.12 kernel and
# KERNEL_SET (below) on the newest 6.1 one.  Ends with one line "N passed,
# N failed, N skipped" and exits non-zero on any failure.
#
# `make check-full` (scripts/check.sh --full): the same builds and checks,
# then every selftest on both kernels, each at its long size (SHCA_LONG=1,
# tests/selftests/lib.sh).
#
# `make check-debug` (scripts/check.sh --debug): build the debug kernels
# (scripts/kdebug.sh; nothing is rebuilt when they are up to date), shca
# against them, and run every selftest on each KASAN kernel and
# KCSAN_SET (below) on each KCSAN kernel, at the long sizes, every one
# booted with preempt=full (scripts/vm.sh); the dmesg check fails the run
# on any KASAN, lockdep, UBSAN, debugobjects, sleep-in-atomic, kmemleak
# (kmemleak scans after the suite) or KCSAN report with a frame in shca
# (scripts/check-dmesg.sh).
#
# Every lane writes each selftest's time and each check's to
# build/check-times.tsv (scripts/check_times.py) and prints the slowest.
# make check and make check-full fail when the VM part of a whole run
# (every kernel's boot and selftests) takes more than 20 % over the
# lane's budget (BUDGET below; Documentation/testing.md).
#
# Environment:
#   SHCA_CHECK_KVERS  kernels to boot, each running every selftest
#                     (default: the lane's)
#   SHCA_SELFTESTS    selftests to run on every kernel (default: the lane's)
#   SHCA_KDEBUG_SERIES  KASAN debug kernels of --debug (default: "6.1 6.12";
#                     "" for none)
#   SHCA_KCSAN_SERIES   KCSAN debug kernels of --debug (default: "6.12";
#                     "" for none)
#   SHCA_PKTFUZZ_COUNT  packets of packet_fuzz.sh under --debug (default
#                     500000)
# A run narrowed by SHCA_CHECK_KVERS or SHCA_SELFTESTS has no budget.

set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 1

lane=check
case ${1:-} in
--debug) lane=debug ;;
--full) lane=full ;;
"") ;;
*) echo "usage: scripts/check.sh [--full | --debug]" >&2; exit 2 ;;
esac
debug=
[ "$lane" = debug ] && debug=1

# make check runs every selftest on the newest 6.12 kernel (the newer RDMA
# core, and KFENCE besides SLUB's checks), and on the newest 6.1 kernel
# the selftests of what differs between the two kernels, for shca or for
# what it works with (Documentation/testing.md, "The lanes", says why
# each):
# - shca's own version branches: dm.sh (a window page's mapcount),
#   hostile_rings.sh and provider.sh (read-only ring mappings, user CQs),
#   kernel_ulp.sh (kernel CQs and FRWR through the 6.1 core's ULP API),
#   trace.sh (the tracepoints' device name field);
# - the 6.1 RDMA core around the driver: device.sh (its GID table and
#   port attributes), lifecycle.sh (device registration, netdev events,
#   module unload), container.sh (network namespaces, exclusive mode),
#   rdma_cm.sh (its CM and the GSI QP), abi_fuzz.sh (its uverbs
#   validation ahead of shca's);
# - 6.1's rdma_rxe, the functional reference, on the wire: rxe_interop.sh.
KERNEL_SET="abi_fuzz.sh container.sh device.sh dm.sh hostile_rings.sh
	kernel_ulp.sh lifecycle.sh provider.sh rdma_cm.sh rxe_interop.sh
	trace.sh"
# The KCSAN kernel runs the selftests whose kernel paths run concurrently
# in several contexts: a packet's softirq against a verb's process
# context, a QP or an MR torn down under traffic, handlers, timers and
# work items against the data path, several processes or functions on
# one device (Documentation/testing.md, "Debug kernels").
KCSAN_SET="copies.sh dm.sh faults_dev.sh faults_kill.sh funcs.sh
	hostile_rings.sh invalidation.sh isolation.sh kernel_ulp.sh
	lifecycle.sh limits.sh loss.sh mcast.sh qp_lookup.sh rc_errors.sh"
# The VM part's budget of each lane, in seconds on a 2-core machine like
# CI's: the boots and selftests of every kernel of a whole run, a little
# over its usual time (Documentation/testing.md, "The budget").
declare -A BUDGET=([check]=1650 [full]=3300)

pass=0
fail=0
skip=0
failed_names=()

result() {	# STATUS(pass|fail|skip) NAME
	case $1 in
	pass) pass=$((pass + 1)) ;;
	skip) skip=$((skip + 1)) ;;
	*) fail=$((fail + 1)); failed_names+=("$2") ;;
	esac
	echo "check: $1: $2"
}

# step NAME CMD...: run a build or test step, one result (its time after
# the name).
step() {
	local name=$1 t0=$SECONDS

	shift
	echo "check: == $name"
	if "$@"; then
		result pass "$name ($((SECONDS - t0)) s)"
	else
		result fail "$name ($((SECONDS - t0)) s)"
		return 1
	fi
}

finish() {
	if [ "$fail" -gt 0 ]; then
		echo "check: failed: ${failed_names[*]}"
	fi
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" = 0 ]
	exit
}

scripts/setup.sh --if-needed || { result fail setup; finish; }
jobs=$(nproc)

# The debug lane: debug kernels, shca built against them; the selftests
# below then run on those kernels only.
check_debug_build() {
	local series k

	step "build: provider" make -s provider || finish
	step "build: selftest programs" make -s selftest-bins || finish
	kvers=
	for series in ${SHCA_KDEBUG_SERIES-6.1 6.12}; do
		debug_kernel "$series"
	done
	for series in ${SHCA_KCSAN_SERIES-6.12}; do
		debug_kernel --kcsan "$series"
	done
	[ -n "$kvers" ] || finish
}

# debug_kernel [--kcsan] SERIES: build one debug kernel and shca for it,
# and add it to kvers
debug_kernel() {
	local k

	echo "check: == debug kernel $* (scripts/kdebug.sh)"
	if k=$(scripts/kdebug.sh "$@"); then
		result pass "build: debug kernel $k"
	else
		result fail "build: debug kernel $*"
		return
	fi
	step "build: kernel module for $k" \
		make -s "build/kmod/$k/kernel/shca.ko" || return
	kvers="$kvers $k"
}

if [ -n "$debug" ]; then
	check_debug_build
else
	kvers=${SHCA_CHECK_KVERS:-$(scripts/newest-kernel.sh 6.1 6.12 | tr '\n' ' ')}
	# make check: the 6.1 kernel runs KERNEL_SET only
	if [ "$lane" = check ] && [ -z "${SHCA_CHECK_KVERS:-}" ] &&
	   [ -z "${SHCA_SELFTESTS:-}" ]; then
		k61=$(scripts/newest-kernel.sh 6.1)
	fi

	step "build: kernel module for every test kernel" make -s -j"$jobs" modules-all || finish
	step "build: provider" make -s provider || finish
	step "build: selftest programs" make -s -j"$jobs" selftest-bins || finish
	step "build: benchmark tools" make -s bench-tools || finish
	step "provider imports only what libibverbs 44 exports" \
		scripts/rdma-core.sh check-abi
	step "checkpatch: kernel/, tests/kmod/ and the uapi header" scripts/checkpatch.sh
	step "lint: shellcheck, pyflakes and kernel-doc" make -s lint

	# The dmesg check must catch what it is there for.
	dmesg_catches() {
		local f=build/vm/dmesg-selfcheck.log

		mkdir -p build/vm
		printf '[ 1.0] shca: loading out-of-tree module taints kernel.\n' > "$f"
		scripts/check-dmesg.sh "$f" >/dev/null || return 1
		printf '[ 2.0] WARNING: CPU: 0 PID: 1 at x.c:1 f+0x0/0x0\n' >> "$f"
		! scripts/check-dmesg.sh "$f" >/dev/null || return 1
		printf '[ 1.0] shca: leak: 1 pd object(s) still allocated at unload\n' > "$f"
		! scripts/check-dmesg.sh "$f" >/dev/null || return 1
		printf '[ 3.0] BUG kmalloc-64 (Tainted: G           OE     ): %s\n' \
			'Redzone overwritten' > "$f"
		! scripts/check-dmesg.sh "$f" >/dev/null || return 1
		printf '[ 4.0] BUG: KFENCE: out-of-bounds write in f+0x1/0x2\n' > "$f"
		! scripts/check-dmesg.sh "$f" >/dev/null || return 1
		# KCSAN: a race of the kernel's own is not counted, one with a
		# frame in shca is
		kcsan_report() {
			printf '[ 5.0] %s\n' "$(printf '=%.0s' {1..66})" \
				'BUG: KCSAN: data-race in f / g' '' \
				'write to 0x1 of 4 bytes by task 1 on cpu 0:' \
				" f+0x1/0x2$1" '' \
				'read to 0x1 of 4 bytes by task 2 on cpu 1:' \
				' g+0x1/0x2' "$(printf '=%.0s' {1..66})"
		}
		kcsan_report "" > "$f"
		scripts/check-dmesg.sh "$f" >/dev/null 2>&1 || return 1
		kcsan_report " [shca]" > "$f"
		! scripts/check-dmesg.sh "$f" >/dev/null
	}
	step "harness: dmesg check passes a clean log, flags a WARN, a leak, SLUB, KFENCE and shca's KCSAN reports" \
		dmesg_catches

	# A kernel that stops before its init runs is booted again (vm.sh's boot
	# watchdog): one that can never find its init is tried 3 times, then
	# reported as a boot failure.
	boot_retried() {
		local out=build/vm/boot-selfcheck rc

		rm -rf "$out"
		mkdir -p build/vm
		SHCA_VM_APPEND="rdinit=/nonexistent root=/dev/nonexistent" \
			scripts/vm.sh --kver "${kvers%% *}" --timeout 300 --out "$out" \
			true > "$out.log" 2>&1
		rc=$?
		if ! { [ "$rc" = 125 ] && [ -f "$out/console-crashed-3.log" ] &&
		       grep -q "retrying (3/3)" "$out.log"; }; then
			tail -20 "$out.log"
			return 1
		fi
	}
	step "harness: a kernel that stops before init is booted again, 3 times" \
		boot_retried

	# Unit tests (ASan + UBSan build): one result per test program.
	echo "check: == unit tests"
	if make -s -j"$jobs" -C tests/unit all; then
		for t in build/unit/asan/test_*; do
			[ -x "$t" ] || continue
			case $t in *.*) continue ;; esac
			if "$t" > "$t.log" 2>&1 && ! grep -q '^not ok' "$t.log"; then
				result pass "unit: $(basename "$t")"
			else
				sed 's/^/    /' "$t.log" | grep -v '^    ok ' | tail -40
				result fail "unit: $(basename "$t")"
			fi
		done
	else
		result fail "unit: build"
	fi

	# libFuzzer harnesses of the pure mechanisms, 5 s each (`make fuzz` runs
	# them longer): replays every known-bug input, then mutates.
	step "fuzz: every harness for 5 s (make fuzz-smoke)" make -s fuzz-smoke

fi

# In-VM selftests: one result per selftest, plus one for the VM run (boot,
# dmesg clean).
vm_secs=0
times_logs=()
for kver in $kvers; do
	tests=${SHCA_SELFTESTS:-}
	[ "$kver" = "${k61:-}" ] && tests=$KERNEL_SET
	case $kver in *-shca-kcsan) tests=${SHCA_SELFTESTS:-$KCSAN_SET} ;; esac
	# shellcheck disable=SC2086	# (one line, the words of the list)
	echo "check: == selftests on $kver:" ${tests:-all}
	out=$(mktemp -d "$TOP/build/vm/check.XXXXXX" 2>/dev/null ||
	      { mkdir -p "$TOP/build/vm"; mktemp -d "$TOP/build/vm/check.XXXXXX"; })
	# vm.sh reports a dirty kernel log on stderr: keep it in check.log,
	# where the dmesg verdict below looks for it (its exit status says so
	# only when every selftest passed)
	# --checks: SLUB's consistency checks (red zones, poisoning, sanity
	# checks) on every cache, and KFENCE sampling where the kernel has it;
	# a debug kernel has KASAN instead (vm.sh's header)
	# the whole suite takes 20 to 30 minutes per stock kernel (at the long
	# sizes), so vm.sh's default limit of 30 would fail any run the host
	# slows a little; run.sh's limit per selftest already stops a hung one
	limit=3600
	runner=(tests/selftests/run.sh)
	[ "$lane" = full ] && runner=(env SHCA_LONG=1 tests/selftests/run.sh)
	# a debug kernel runs the suite several times slower (the selftests
	# stretch their time bounds on it: SHCA_TIME_SCALE in
	# tests/selftests/lib.sh); the packet fuzzer sends half a million
	# packets there
	if [ -n "$debug" ]; then
		limit=14400
		runner=(env SHCA_LONG=1
			"SHCA_PKTFUZZ_COUNT=${SHCA_PKTFUZZ_COUNT:-500000}"
			tests/selftests/run.sh)
	fi
	t0=$SECONDS
	# --nic: pyverbs.sh needs an RDMA device whose parent owns its netdev
	# shellcheck disable=SC2086
	scripts/vm.sh --kver "$kver" --out "$out" --checks --nic \
		--timeout "$limit" -- "${runner[@]}" $tests 2>&1 |
		tee "$out/check.log"
	rc=${PIPESTATUS[0]}
	secs=$((SECONDS - t0))
	echo "check: $kver: the VM part took $secs s"
	vm_secs=$((vm_secs + secs))
	times_logs+=("$kver=$out/output.log")
	# a failed selftest's result names its failed checks ("# not ok"
	# lines of its TAP), and a failed case of a test program it ran
	# ("# # not ok", nested TAP) with the last two diagnostics printed
	# before it (the program's reasons), so the summary says what broke
	subfail=
	why1=
	why2=
	while IFS= read -r line; do
		line=${line% ([0-9]*s)}
		case $line in
		"# # # "*)
			why1=$why2
			why2=${line#\# \# \# }
			why2=${why2:0:200} ;;
		"# # ok "*)
			why1=
			why2= ;;
		"# # not ok "*)
			subfail="$subfail [${line#\# \# }: ${why1:+$why1 / }$why2]"
			why1=
			why2= ;;
		"# not ok "*)
			subfail="$subfail [${line#\# }]" ;;
		"not ok "*" selftests: "*)
			result fail "$kver: ${line#* selftests: shca: }$subfail"
			subfail= ;;
		"ok "*" selftests: "*"# SKIP"*)
			subfail=
			result skip "$kver: ${line#* selftests: shca: }" ;;
		"ok "*" selftests: "*)
			subfail=
			result pass "$kver: ${line#* selftests: shca: }" ;;
		esac
	done < "$out/output.log"
	if grep -q "vm.sh: dmesg check FAILED" "$out/check.log"; then
		result fail "$kver: dmesg shows a kernel warning or leak"
	elif [ "$rc" = 125 ]; then
		result fail "$kver: VM boot or timeout"
	elif [ "$rc" = 0 ] || [ "$rc" = 1 ]; then
		result pass "$kver: VM run, dmesg clean"
	else
		result fail "$kver: VM run (exit $rc)"
	fi
done

# Where the time went: every selftest's and check's time in
# build/check-times.tsv, the slowest printed.
if [ "${#times_logs[@]}" -gt 0 ] &&
   scripts/check_times.py collect build/check-times.tsv "${times_logs[@]}"; then
	scripts/check_times.py top build/check-times.tsv 10
fi

# The lane's budget: a whole run's VM part may take up to 20 % more.
budget=${BUDGET[$lane]:-}
if [ -n "$budget" ] && [ -z "${SHCA_CHECK_KVERS:-}${SHCA_SELFTESTS:-}" ]; then
	name="budget: the VM part took $vm_secs s; the $lane lane's budget is $budget s (fails past $((budget * 6 / 5)) s)"
	if [ "$vm_secs" -le $((budget * 6 / 5)) ]; then
		result pass "$name"
	else
		result fail "$name"
	fi
fi

finish
