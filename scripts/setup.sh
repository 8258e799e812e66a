#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install everything shca needs to build and test, from Debian's packages,
# and fetch the rdma-core source the provider builds against.  Idempotent:
# `scripts/setup.sh --if-needed` returns at once when nothing is missing.
#
# Needs root (apt-get).  Says which step failed.

set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)

# Debian 12 packages: the test VM, both test kernels, the RDMA userspace,
# what the provider build needs, the network tools the tests use, and perf
# (scripts/bench.sh counts system calls with perf stat), trace-cmd
# (Documentation/tracing.md's examples), strace
# (tests/selftests/doorbell.sh counts them with strace), ethtool
# (tests/selftests/copies.sh turns scatter-gather off), and the middleware
# the middleware selftests run: UCX (with its example sources), libfabric,
# Open MPI, fio and nvme-cli; the kernel ULPs' user-space tools
# (nfs-kernel-server: rpc.nfsd, rpc.mountd, rpcbind, mount.nfs;
# open-iscsi: iscsid and iscsiadm for iSER); and
# for `make lint`, shellcheck and pyflakes3;
# clang and its runtime libraries (libFuzzer, ASan, UBSan) for `make fuzz`;
# Debian's kernel sources and what building them needs, for the debug
# kernels of `make check-debug` (scripts/kdebug.sh); DKMS and Debian's
# packaging tools for `make deb` and `make check-install`; matplotlib for
# the benchmarks' figures (scripts/bench_plot.py).
PACKAGES=(
	qemu-system-x86 busybox-static kmod cpio xz-utils
	linux-image-amd64 linux-headers-amd64
	linux-image-6.12-amd64 linux-headers-6.12-amd64
	rdma-core libibverbs-dev ibverbs-utils ibverbs-providers
	rdmacm-utils perftest python3-pyverbs
	build-essential cmake ninja-build pkg-config python3
	libnl-3-dev libnl-route-3-dev libudev-dev
	iproute2 valgrind linux-source-6.1 linux-source-6.12 linux-perf
	trace-cmd strace ethtool flex bison bc libelf-dev libssl-dev
	ucx-utils libucx-dev libfabric-bin openmpi-bin libopenmpi-dev
	fio nvme-cli nfs-kernel-server open-iscsi
	shellcheck pyflakes3
	clang libclang-rt-14-dev
	dkms dh-dkms debhelper lintian fakeroot python3-matplotlib
)

# Commands and files whose presence means the set-up has been done.
missing() {
	local p

	for p in qemu-system-x86_64 busybox ibv_devinfo rping ib_write_bw \
		 cmake ninja valgrind rdma perf trace-cmd strace ethtool ucx_perftest \
		 fi_pingpong mpicc mpirun fio nvme rpc.nfsd mount.nfs shellcheck pyflakes3 clang \
		 flex bison bc dkms dh_dkms lintian dpkg-buildpackage; do
		command -v "$p" >/dev/null 2>&1 || { echo "command $p"; return 0; }
	done
	ls /boot/vmlinuz-6.1.* >/dev/null 2>&1 || { echo "6.1 kernel"; return 0; }
	ls /boot/vmlinuz-6.12.* >/dev/null 2>&1 || { echo "6.12 kernel"; return 0; }
	ls -d /usr/src/linux-headers-6.1.*-amd64 >/dev/null 2>&1 ||
		{ echo "6.1 headers"; return 0; }
	ls -d /usr/src/linux-headers-6.12.*-amd64 >/dev/null 2>&1 ||
		{ echo "6.12 headers"; return 0; }
	[ -f /usr/include/infiniband/verbs.h ] || { echo "libibverbs-dev"; return 0; }
	[ -f "$(clang --print-runtime-dir)/libclang_rt.fuzzer-$(uname -m).a" ] ||
		{ echo "libclang-rt-14-dev (libFuzzer)"; return 0; }
	[ -f /usr/share/doc/libucx-dev/examples/ucp_client_server.c ] ||
		{ echo "libucx-dev"; return 0; }
	[ -f /usr/src/linux-source-6.1.tar.xz ] ||
		{ echo "linux-source-6.1 (checkpatch, debug kernel)"; return 0; }
	[ -f /usr/src/linux-source-6.12.tar.xz ] ||
		{ echo "linux-source-6.12 (debug kernel)"; return 0; }
	[ -f /usr/include/libelf.h ] || { echo "libelf-dev"; return 0; }
	[ -d /usr/lib/python3/dist-packages/matplotlib ] ||
		{ echo "python3-matplotlib"; return 0; }
	"$TOP/scripts/rdma-core.sh" is-prepared >/dev/null 2>&1 ||
		{ echo "rdma-core source"; return 0; }
	return 1
}

fail() {
	echo "setup.sh: FAILED: $*" >&2
	exit 1
}

if [ "${1:-}" = "--if-needed" ]; then
	what=$(missing) || exit 0
	echo "setup.sh: $what missing, running set-up"
fi

[ "$(id -u)" = 0 ] || fail "must run as root (apt-get install)"

echo "setup.sh: apt-get update"
apt-get update -q >/dev/null || fail "apt-get update"

echo "setup.sh: installing ${#PACKAGES[@]} packages"
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	"${PACKAGES[@]}" >/dev/null ||
	fail "apt-get install ${PACKAGES[*]}"

echo "setup.sh: rdma-core source for the provider"
"$TOP/scripts/rdma-core.sh" fetch prepare || fail "scripts/rdma-core.sh fetch prepare"

if what=$(missing); then
	fail "still missing after set-up: $what"
fi
echo "setup.sh: done"
