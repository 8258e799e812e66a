#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm.sh: run a command as root in a throw-away QEMU guest booting a packaged
# Debian kernel, with the host root shared read-only over virtio-9p.
#
# Usage: scripts/vm.sh [--kver KVER] [--timeout SECS] [--mem MB] [--out DIR]
#                      [--root DIR] [--checks] [--nic] [--link DIR:N]
#                      [--] CMD [ARGS...]
#
#   --kver KVER     kernel to boot (/boot/vmlinuz-KVER, /lib/modules/KVER,
#                   or a debug kernel scripts/kdebug.sh built: the same
#                   files under build/kdebug/*/root/, whose modules the
#                   guest then sees at /lib/modules); default $SHCA_KVER,
#                   else the newest /boot/vmlinuz-6.1.*
#   --timeout SECS  wall-clock limit for the whole run (default 1800)
#   --mem MB        guest memory (default $SHCA_VM_MEM, else 1024; 2048 for
#                   a debug kernel, whose KASAN shadow needs the room)
#   --out DIR       results dir (default: a new $TOP/build/vm/run.XXXX)
#   --root DIR      the tree the guest boots as its root (default /, this
#                   machine's; scripts/install-check.sh passes a scratch
#                   copy with shca's packages installed); the kernel and
#                   the initramfs's modules still come from this machine
#   --checks        turn on the stock kernel's cheap memory checks: SLUB's
#                   consistency checks on every cache (slub_debug=FZPU) and
#                   KFENCE sampling where the kernel has KFENCE (Debian's
#                   6.12; off by default there); a debug kernel has KASAN
#                   instead and gets neither
#   --nic           give the guest a NIC: a virtio-net PCI device on QEMU's
#                   user-mode network with restrict=on (no packet leaves
#                   the host); its driver is not loaded (modprobe
#                   virtio_net), and it comes up as eth0 with no address
#   --link DIR:N    give the guest a NIC on a virtual Ethernet link to one
#                   other guest (N is 1 or 2; the other runs with the other
#                   N and the same DIR): a virtio-net PCI device on QEMU's
#                   dgram backend between the Unix sockets DIR/vmN.sock,
#                   MAC 52:54:00:5c:a0:0N; nothing leaves the host.  Its
#                   driver is not loaded either (scripts/pair.sh)
#
# In the guest CMD runs as root in the project top dir with a clean
# environment: PATH, HOME=/root, SHCA_TOP (project dir), SHCA_KVER (running
# kernel) and SHCA_OUT (the results dir, writable, shared with the host).
# /tmp, /run, /var/tmp, /var/log and /root are tmpfs; the rest is read-only.
#
# Results dir: output.log (CMD's stdout+stderr), dmesg.log (kernel log after
# CMD), rc (CMD's exit status), console.log (serial console), plus cmd and
# top (what the guest was asked to run), cpu (QEMU's -cpu value) and
# cmdline (the guest kernel's command line), written by this script.
#
# Exit status: CMD's, when the guest ran it and its kernel log is clean;
# 3 if CMD succeeded but scripts/check-dmesg.sh flagged the kernel log;
# 125 if the guest never reported an exit status (boot failure, kernel
# crash, timeout); 2 for usage errors.  output.log is copied to stdout;
# vm.sh's own messages and failure reports go to stderr.
#
# Every guest boots with tsc=unstable: under TCG the TSC drifts from the
# HPET, 6.12's clocksource watchdog then marks it unstable at run time, and
# the static key flip that follows has crashed the guest ("Oops: int3" in
# sched_clock_cpu; see Documentation/testing.md).  6.1 marks it unstable
# during boot anyway.
# A debug kernel boots with preempt=full (see the command line below).
# SHCA_VM_APPEND: more kernel command line (the harness uses it to check
# the boot watchdog with a kernel that cannot find its init).
# SHCA_VM_CPU: QEMU's -cpu value (default max,erms=off: TCG runs "rep
# movsb" a byte at a time, about 7x slower than "rep movsq" in this guest,
# and a 6.1 kernel whose CPU has ERMS copies and clears memory with it;
# see Documentation/testing.md).
#
# Boot watchdog: if the initramfs has not started SHCA_VM_BOOT_TIMEOUT
# seconds (default 60; 300 for a debug kernel) after QEMU did, QEMU is
# killed and the boot retried; a kernel that stops (panics) before its
# initramfs started is booted again the same way; 3 attempts in all (the console logs of failed boots
# are kept as console-hung-N.log and console-crashed-N.log).

set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
scripts=$top/scripts
vmdir=$top/build/vm

# The initramfs prints this as soon as it runs (see vm-initramfs.sh).
marker=SHCA-VM-INIT-STARTED
boot_timeout=${SHCA_VM_BOOT_TIMEOUT:-60}	# seconds from QEMU start to the marker
cpu=${SHCA_VM_CPU:-max,erms=off}
boot_attempts=3		# about 1 boot in 65 hangs in the firmware: retry
[[ $boot_timeout =~ ^[1-9][0-9]*$ ]] || { echo "vm.sh: bad SHCA_VM_BOOT_TIMEOUT" >&2; exit 2; }

# Print the header comment above as help.
usage() {
	sed -n '4,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
}

msg() { echo "vm.sh: $*" >&2; }

# --- Options ---------------------------------------------------------------

kver=${SHCA_KVER:-}
timeout=1800
mem=${SHCA_VM_MEM:-}
out=
root=/
checks=
nic=(-nic none)
link=()

while [[ $# -gt 0 ]]; do
	case $1 in
	--kver|--timeout|--mem|--out|--root)
		[[ $# -ge 2 ]] || usage
		opt=${1#--}
		printf -v "$opt" '%s' "$2"
		shift 2 ;;
	--kver=*|--timeout=*|--mem=*|--out=*|--root=*)
		opt=${1%%=*}
		opt=${opt#--}
		printf -v "$opt" '%s' "${1#*=}"
		shift ;;
	--checks)
		checks=1
		shift ;;
	--link|--link=*)
		if [[ $1 == --link ]]; then
			[[ $# -ge 2 ]] || usage
			spec=$2
			shift
		else
			spec=${1#--link=}
		fi
		shift
		n=${spec##*:}
		ldir=${spec%:*}
		[[ $n == [12] && -d $ldir && $ldir != *,* ]] ||
			{ msg "bad --link: $spec"; exit 2; }
		# shellcheck disable=SC2054	# the commas are QEMU's
		link=(-netdev "dgram,id=shcalink,local.type=unix,local.path=$ldir/vm$n.sock,remote.type=unix,remote.path=$ldir/vm$((3 - n)).sock"
		      -device "virtio-net-pci,netdev=shcalink,mac=52:54:00:5c:a0:0$n")
		rm -f "$ldir/vm$n.sock" ;;
	--nic)
		# shellcheck disable=SC2054	# the commas are QEMU's
		nic=(-netdev user,id=shcanic,restrict=on
		     -device virtio-net-pci,netdev=shcanic)
		shift ;;
	-h|--help)
		usage ;;
	--)
		shift
		break ;;
	-*)
		msg "unknown option $1"
		usage ;;
	*)
		break ;;
	esac
done
[[ $# -gt 0 ]] || usage
[[ $timeout =~ ^[1-9][0-9]*$ ]] || { msg "bad --timeout: $timeout"; exit 2; }
[[ -d $root/usr/bin ]] || { msg "bad --root: $root"; exit 2; }
[[ -z $mem || $mem =~ ^[1-9][0-9]*$ ]] || { msg "bad --mem: $mem"; exit 2; }

if [[ -z $kver ]]; then
	kver=$("$scripts/newest-kernel.sh" 6.1) ||
		{ msg "no /boot/vmlinuz-6.1.* found; use --kver"; exit 2; }
fi
# The root the kernel's files are under: / for a packaged kernel, else the
# debug kernel's install root.
kroot=/
if [[ ! -f /boot/vmlinuz-$kver ]]; then
	for d in "${SHCA_KDEBUG_DIR:-$top/build/kdebug}"/*/root; do
		[[ -f $d/boot/vmlinuz-$kver ]] && kroot=$d/
	done
fi
# A debug kernel (KASAN) boots several times slower: 6.12's took over a
# minute to reach its initramfs.
[[ $kroot == / || -n ${SHCA_VM_BOOT_TIMEOUT:-} ]] || boot_timeout=300
[[ -f ${kroot}boot/vmlinuz-$kver && -d ${kroot}lib/modules/$kver ]] ||
	{ msg "kernel $kver not installed (/boot/vmlinuz-$kver, /lib/modules/$kver, or a debug kernel under build/kdebug)"; exit 2; }
if [[ -z $mem ]]; then
	mem=1024
	[[ $kroot == / ]] || mem=2048
fi

# The guest's kernel command line: see the header comment.
cmdline="console=ttyS0 panic=-1 log_buf_len=4M tsc=unstable"
if [[ -n $checks && $kroot == / ]]; then
	cmdline+=" slub_debug=FZPU"
	grep -qx 'CONFIG_KFENCE=y' "/boot/config-$kver" 2>/dev/null &&
		cmdline+=" kfence.sample_interval=10"
fi
# A debug kernel (KASAN or KCSAN) runs fully preemptible: Debian's kernels
# are built PREEMPT_DYNAMIC and boot voluntary preemption, where an RCU
# reader or a spinlock-free section in process context is never preempted;
# preempt=full lets the scheduler stop them anywhere, as a user's
# preempt=full or a realtime kernel would, and opens those race windows.
[[ $kroot == / ]] || cmdline+=" preempt=full"
cmdline+=${SHCA_VM_APPEND:+ $SHCA_VM_APPEND}

# --- Results dir -----------------------------------------------------------

mkdir -p "$vmdir" || exit 125
if [[ -n $out ]]; then
	mkdir -p "$out" || exit 125
else
	out=$(mktemp -d "$vmdir/run.XXXX") || exit 125
fi
out=$(cd "$out" && pwd -P)
rm -f "$out"/{rc,output.log,dmesg.log,console.log,qemu.log,console-hung-*.log,kmods}

# What the guest reads (vm-initramfs.sh's /init, vm-guest.sh): the project
# dir, and the command as NUL-terminated words, so no quoting is involved.
[[ $top != *$'\n'* ]] || { msg "project path contains a newline"; exit 2; }
echo "$top" > "$out/top"
echo "$cpu" > "$out/cpu"
echo "$cmdline" > "$out/cmdline"
printf '%s\0' "$@" > "$out/cmd"
# A kernel not in /boot: the initramfs puts its modules at /lib/modules.
[[ $kroot == / ]] || echo "${kroot}lib/modules" > "$out/kmods"

# --- Kernel and initramfs --------------------------------------------------

initrd=$vmdir/initramfs-$kver.cpio.gz
"$scripts/vm-initramfs.sh" "$kver" "$initrd" "${kroot}lib/modules/$kver" ||
	{ msg "initramfs build failed"; exit 125; }

# Is FILE a complete ELF image (its section header table inside the file)?
elf_complete() {
	local f=$1 size shoff shentsize shnum
	size=$(stat -c %s "$f")
	((size >= 64)) || return 1
	[[ $(head -c 4 "$f" | od -An -c | tr -d ' ') == '177ELF' ]] || return 1
	shoff=$(od -An -tu8 -j 40 -N 8 "$f")
	read -r shentsize shnum < <(od -An -tu2 -j 58 -N 4 "$f")
	((shoff + shentsize * shnum <= size))
}

# The uncompressed kernel, booted through its PVH entry point, skips the
# in-guest decompression of vmlinuz (~3 s under TCG).  Extract it once from
# the bzImage: find the payload's compression magic, decompress from there
# and keep the first result that is a complete ELF file.  Prints the image
# to boot: the cached vmlinux, or vmlinuz when extraction is not possible.
kernel_image() {
	local vmlinuz=${kroot}boot/vmlinuz-$kver vmlinux=$vmdir/vmlinux-$kver
	local tmp magic cmd off offs

	# A debug kernel (KASAN) does not boot through the PVH entry point.
	if [[ $kroot != / ]]; then
		echo "$vmlinuz"
		return
	fi
	if [[ -f $vmlinux && $vmlinux -nt $vmlinuz ]]; then
		echo "$vmlinux"
		return
	fi
	if ! grep -qx 'CONFIG_PVH=y' "${kroot}boot/config-$kver" 2>/dev/null; then
		echo "$vmlinuz"
		return
	fi
	tmp=$(mktemp "$vmlinux.XXXXXX") || { echo "$vmlinuz"; return; }
	for magic in '\xfd7zXZ\x00:xz -dcq --single-stream' \
		     '\x28\xb5\x2f\xfd:zstd -dcq' \
		     '\x1f\x8b\x08:gzip -dcq'; do
		cmd=${magic#*:}
		magic=${magic%%:*}
		# Byte offsets of the magic: "OFFSET:MATCH" lines.
		mapfile -t offs < <(LC_ALL=C grep -obUaP "$magic" "$vmlinuz" | cut -d: -f1)
		for off in "${offs[@]}"; do
			# Decompressors complain about the trailing data: ignore
			# their status, check the result instead.
			tail -c +$((off + 1)) "$vmlinuz" | $cmd > "$tmp" 2>/dev/null
			if elf_complete "$tmp"; then
				chmod 644 "$tmp"
				mv -f "$tmp" "$vmlinux"
				echo "$vmlinux"
				return
			fi
		done
	done
	rm -f "$tmp"
	msg "cannot extract vmlinux from $vmlinuz; booting it compressed"
	echo "$vmlinuz"
}
kernel=$(kernel_image)

# qboot is a faster firmware than the default SeaBIOS.
bios=()
[[ -f /usr/share/qemu/qboot.rom ]] && bios=(-bios /usr/share/qemu/qboot.rom)

# QEMU option values escape ',' as ',,'.
qroot=${root//,/,,}
qout=${out//,/,,}
qtop=${top//,/,,}

# shellcheck disable=SC2054	# the commas are QEMU's
qemu_cmd=(
	qemu-system-x86_64
	-accel tcg,thread=multi -cpu "$cpu" -smp 2 -m "$mem"
	-nodefaults -no-user-config -display none -no-reboot "${nic[@]}"
	"${link[@]}"
	"${bios[@]}"
	-serial "file:$out/console.log"
	-kernel "$kernel" -initrd "$initrd"
	-append "$cmdline"
	-fsdev "local,id=shcaroot,path=$qroot,security_model=none,readonly=on,multidevs=remap"
	-device virtio-9p-pci,fsdev=shcaroot,mount_tag=shcaroot
	-fsdev "local,id=shcaout,path=$qout,security_model=none,multidevs=remap"
	-device virtio-9p-pci,fsdev=shcaout,mount_tag=shcaout
	-fsdev "local,id=shcatop,path=$qtop,security_model=none,readonly=on,multidevs=remap"
	-device virtio-9p-pci,fsdev=shcatop,mount_tag=shcatop
)

# --- Run -------------------------------------------------------------------

qemu_pid=

kill_qemu() {
	if [[ -n $qemu_pid ]]; then
		kill "$qemu_pid" 2>/dev/null
		wait "$qemu_pid" 2>/dev/null
		qemu_pid=
	fi
}
trap kill_qemu EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# Print what we know after the guest failed to report, and exit 125.
guest_failed() {
	msg "$1"
	if [[ -s $out/output.log ]]; then
		msg "partial output of the command:"
		cat "$out/output.log" >&2
	fi
	if [[ -s $out/qemu.log ]]; then
		msg "QEMU said:"
		cat "$out/qemu.log" >&2
	fi
	msg "last 80 lines of $out/console.log:"
	tail -n 80 "$out/console.log" 2>/dev/null | tr -d '\r' >&2
	msg "FAILED: no exit status from the guest (results: $out)"
	exit 125
}

t_start=$EPOCHREALTIME
deadline=$((SECONDS + timeout))
attempt=1
while :; do
	: > "$out/console.log"
	"${qemu_cmd[@]}" < /dev/null > "$out/qemu.log" 2>&1 &
	qemu_pid=$!
	boot_deadline=$((SECONDS + boot_timeout))
	booted=
	hung=
	done_at=

	# Poll until QEMU exits; watch for the boot marker and the deadlines.
	while kill -0 "$qemu_pid" 2>/dev/null; do
		if [[ -z $booted ]]; then
			if grep -aqF "$marker" "$out/console.log"; then
				booted=1
			elif ((SECONDS >= boot_deadline)); then
				hung=1
				break
			fi
		fi
		if ((SECONDS >= deadline)); then
			kill_qemu
			guest_failed "timeout: killed the VM after $timeout s"
		fi
		# The guest wrote rc and powers off: should it not manage
		# to, do not wait for the timeout.
		if [[ -z $done_at && -f $out/rc ]]; then
			done_at=$SECONDS
		elif [[ -n $done_at ]] && ((SECONDS - done_at >= 10)); then
			msg "the guest did not power off after writing rc: killing QEMU"
			break
		fi
		sleep 0.1
	done
	kill_qemu

	# A kernel that stopped before its initramfs ran (a hang, or a
	# crash in the kernel's own boot: under TCG, 6.12 has been seen to
	# oops in its boot-time code patching) never ran our code: boot
	# again.  Once init started, a crash is the run's result.
	if [[ -n $hung ]]; then
		why="boot hung (no init after $boot_timeout s)"
		kept=$out/console-hung-$attempt.log
	elif [[ -z $booted ]] && ! grep -aqF "$marker" "$out/console.log"; then
		why="the kernel stopped before init started"
		kept=$out/console-crashed-$attempt.log
	else
		break
	fi
	mv -f "$out/console.log" "$kept"
	if ((attempt >= boot_attempts)); then
		cp "$kept" "$out/console.log"
		guest_failed "the guest did not boot in $boot_attempts attempts"
	fi
	attempt=$((attempt + 1))
	msg "$why, retrying ($attempt/$boot_attempts); its console: $kept"
done

# Wall time of the run (EPOCHREALTIME is seconds.microseconds).
t_us=$((${EPOCHREALTIME/./} - ${t_start/./}))
elapsed=$((t_us / 1000000)).$((t_us / 100000 % 10))

rc=
[[ -f $out/rc ]] && read -r rc < "$out/rc"
[[ ${rc:-} =~ ^[0-9]+$ ]] || guest_failed "the guest stopped without reporting an exit status"

# --- Report ----------------------------------------------------------------

cat "$out/output.log"

if ! problems=$("$scripts/check-dmesg.sh" "$out/dmesg.log"); then
	msg "kernel log problems:"
	echo "$problems" >&2
	msg "full kernel log ($out/dmesg.log):"
	cat "$out/dmesg.log" >&2
	msg "dmesg check FAILED"
	((rc == 0)) && rc=3
fi

msg "rc=$rc, $kver, ${elapsed} s, results in $out"
exit "$rc"
