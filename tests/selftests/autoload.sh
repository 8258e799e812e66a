#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `rdma link add ... type shca` loads the module on demand through its
# rdma-link-shca alias.  The host root is read-only in the VM, so the
# module is depmod'ed into a private tree and the kernel's modprobe helper
# is pointed at a wrapper that uses that tree.
. "$(dirname "$0")/lib.sh"

tap_plan 4

shca_unload
modprobe -a ib_uverbs udp_tunnel ip6_udp_tunnel
root=/tmp/modroot
mkdir -p "$root/lib/modules/$SHCA_KVER/extra"
cp "$SHCA_KO" "$root/lib/modules/$SHCA_KVER/extra/"
tap_check "depmod finds the rdma-link-shca alias" \
	sh -c "depmod -b $root $SHCA_KVER 2>/dev/null &&
	       grep -q 'alias rdma-link-shca shca' $root/lib/modules/$SHCA_KVER/modules.alias"
cat > /tmp/modprobe-wrapper <<EOW
#!/bin/sh
exec /sbin/modprobe -d $root "\$@"
EOW
chmod +x /tmp/modprobe-wrapper
old=$(cat /proc/sys/kernel/modprobe)
echo /tmp/modprobe-wrapper > /proc/sys/kernel/modprobe
tap_check "rdma link add autoloads shca" \
	rdma link add shca0 type shca netdev lo
echo "$old" > /proc/sys/kernel/modprobe
tap_check "module is loaded and device present" \
	sh -c 'lsmod | grep -q "^shca " && [ -e /sys/class/infiniband/shca0 ]'
rdma link delete shca0
tap_check "rmmod shca" shca_unload
tap_done
