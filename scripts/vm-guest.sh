#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm-guest.sh: PID 1 of the test VM after the initramfs switch_root'ed into
# the (read-only, 9p-shared) host root.  Not meant to be run by hand.
#
# Sets up the guest, runs the command scripts/vm.sh stored in the results
# share, records its output, exit status and the kernel log there, and
# powers the VM off.  Every process spawn costs ~25 ms under TCG: keep
# this lean and prefer bash builtins and /proc writes.
#
# Results share (mounted by the initramfs at /run/shca), written by vm.sh:
#   top         project top directory (one line)
#   cmd         the command and its arguments, each NUL-terminated
# and written here:
#   output.log  the command's stdout and stderr
#   dmesg.log   the kernel log after the command (then kmemleak's report,
#               on a kernel that has kmemleak)
#   rc          the command's exit status (written last)

out=/run/shca
bb=/bin/busybox

# proc, sys and dev were moved here by the initramfs; mount them if not.
[[ -e /proc/self ]] || $bb mount -t proc proc /proc
[[ -d /sys/kernel ]] || $bb mount -t sysfs sys /sys
[[ -e /dev/null ]] || $bb mount -t devtmpfs dev /dev
$bb mkdir -p /dev/pts /dev/shm
$bb mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
$bb mount -t tmpfs -o mode=1777 tmpfs /dev/shm
$bb mount -t debugfs debugfs /sys/kernel/debug
# configfs is loaded by the initramfs when it is a module.
[[ -d /sys/kernel/config ]] && $bb mount -t configfs configfs /sys/kernel/config

echo shca-vm > /proc/sys/kernel/hostname
echo 0 > /proc/sys/kernel/panic_on_warn
$bb ip link set lo up

read -r top < "$out/top"
read -r kver < /proc/sys/kernel/osrelease
mapfile -d '' -t argv < "$out/cmd"

# Run the command as root in the project dir, with a clean environment.
# Its output goes to the results share only; the console notes start and
# end, so that a crash report in console.log shows whether it was running.
echo "vm-guest.sh: running ${argv[*]}"
if cd "$top"; then
	/usr/bin/env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root SHCA_TOP="$top" SHCA_KVER="$kver" SHCA_OUT="$out" \
		"${argv[@]}" > "$out/output.log" 2>&1 < /dev/null
	rc=$?
else
	echo "vm-guest.sh: cannot cd to $top" > "$out/output.log"
	rc=126
fi
echo "vm-guest.sh: exit status $rc"

# A kernel with kmemleak: scan now, twice (an object is reported only
# once it has stayed unreferenced for 5 s, across scans); the scan logs a
# count to the kernel log, and the report follows it in dmesg.log.
leaks=/sys/kernel/debug/kmemleak
if [[ -w $leaks ]]; then
	echo scan > "$leaks"
	sleep 6
	echo scan > "$leaks"
fi

# The kernel log, then the exit status: rc present means all is written.
dmesg > "$out/dmesg.log" 2>&1
if [[ -r $leaks ]]; then
	echo "vm-guest.sh: kmemleak report:" >> "$out/dmesg.log"
	cat "$leaks" >> "$out/dmesg.log"
fi
echo "$rc" > "$out/rc"

# busybox poweroff -f syncs and powers off at once (no init to ask).
exec $bb poweroff -f
