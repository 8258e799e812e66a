# SPDX-License-Identifier: GPL-2.0
#
# shca top-level build.
#
#   make                 kernel module (kernel/shca.ko for KVER, and the
#                        test modules of tests/kmod/), provider,
#                        selftest programs, benchmark tools
#   make KVER=<version>  build the module against another installed kernel
#   make setup           install everything needed (scripts/setup.sh)
#   make check           the tests (CI, every change): build, linters, unit
#                        tests, every in-VM selftest on the 6.12 Debian
#                        kernel and a set on the 6.1 one; ends "N passed,
#                        N failed"
#   make check-full      the same with every selftest on both kernels, at
#                        the tests' long sizes (before resolving an issue
#                        that touches kernel/ or provider/)
#   make check-debug     the selftests on debug kernels (KASAN, lockdep,
#                        kmemleak, UBSAN; KCSAN) built by scripts/kdebug.sh
#   make soak            fault, loss, interop, invalidation and multicast
#                        selftests in a loop on both kernels for
#                        SOAK_MINUTES (default 60)
#   make demo            boot the test VM, create shca0, show ibv_devinfo
#   make bench-native    the pure code's per-byte and per-packet costs on
#                        this machine's own CPU (not the VM), written into
#                        Documentation/performance.md
#   make unit            userspace unit tests of the pure engine code only
#   make fuzz            libFuzzer harnesses of the pure engine code, each
#                        FUZZ_SECONDS (default 60) on a copy of its corpus
#   make fuzz-smoke      the same, 5 seconds each
#   make checkpatch      kernel coding style of kernel/, tests/kmod/ and the
#                        uapi header
#   make install         the driver for KVER and the provider, where the
#                        system's depmod and libibverbs find them
#                        (DESTDIR honoured; Documentation/install.md)
#   make dkms            the driver's source under /usr/src, added to DKMS
#                        and installed for KVER
#   make deb             Debian packages in build/pkg (scripts/package.sh)
#   make check-install   the packages installed into a scratch copy of
#                        this machine's root, booted in the test VM
#   make check-pair      two test VMs (6.12 and 6.1) joined by a virtual
#                        Ethernet link, shca on each (scripts/pair.sh)
#   make clean

TOP := $(CURDIR)

# Default kernel: the running one if it has a build dir (a real machine),
# else the newest installed Debian 6.1 kernel headers (the test VM kernel).
RUNNING_KVER := $(shell uname -r)
DEFAULT_KVER := $(if $(wildcard /lib/modules/$(RUNNING_KVER)/build/Makefile),$(RUNNING_KVER),$(notdir $(lastword $(sort $(wildcard /usr/src/linux-headers-6.1.*-amd64)))))
DEFAULT_KVER := $(patsubst linux-headers-%,%,$(DEFAULT_KVER))
KVER ?= $(DEFAULT_KVER)
KDIR ?= /lib/modules/$(KVER)/build

# Kernels the test suite builds for: every installed 6.1 and 6.12 kernel
# that has headers.
TEST_KVERS := $(patsubst /usr/src/linux-headers-%,%,$(filter %-amd64,$(wildcard /usr/src/linux-headers-6.1.*-amd64 /usr/src/linux-headers-6.12.*-amd64)))

CC ?= cc
TEST_CFLAGS := -O2 -g -Wall -Wextra -Werror -I$(TOP)/include/uapi
# One program per tests/selftests/shca_NAME_test.c, built with the
# shca_NAME_*.c next to it (and shca_NAME.h if there is one).  Every
# program links shca_test_lib.o.
SELFTEST_SRCS := $(wildcard tests/selftests/shca_*_test.c)
SELFTEST_BINS := $(patsubst tests/selftests/%.c,build/tests/%,$(SELFTEST_SRCS))
SELFTEST_LIB := build/tests/shca_test_lib.o
SELFTEST_HDRS := tests/selftests/shca_test.h include/uapi/rdma/shca-abi.h
selftest_srcs = tests/selftests/$(1).c \
	$(filter-out %_test.c,$(wildcard tests/selftests/$(1:_test=)_*.c))
UCX_EXAMPLES := /usr/share/doc/libucx-dev/examples
MIDDLEWARE_BINS := build/tests/shca_mpi_test build/tests/ucp_client_server
KSRCS := $(filter-out %.mod.c,$(wildcard kernel/*.[ch] kernel/*/*.[ch] include/uapi/rdma/*.h)) Kbuild
# the test modules (tests/kmod/Kbuild), built by the same kbuild run
KTEST_SRCS := $(filter-out %.mod.c,$(wildcard tests/kmod/*.c)) tests/kmod/Kbuild

.PHONY: all module modules-all provider selftest-bins bench-tools unit \
	fuzz fuzz-smoke check check-full check-debug soak demo setup checkpatch \
	bench-native install install-module install-provider install-unit \
	install-dkms-src \
	dkms uninstall deb check-install check-pair \
	clean

all: module provider selftest-bins bench-tools

module:
	@test -f $(KDIR)/Makefile || { echo "no kernel build dir $(KDIR): run 'make setup' or pass KVER=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(TOP) modules

# One out-of-tree build per test kernel, each in its own directory of
# symlinks to the sources so the objects of two kernels never mix.  The
# driver and the test modules come from one kbuild run (a pattern rule
# with several targets makes all with one recipe); the touch dates all even
# when kbuild found some of them up to date.
KMODS := kernel/shca.ko tests/kmod/shca_ulp_test.ko tests/kmod/shca_dm_producer.ko \
	tests/kmod/shca_slow_client.ko
# The kbuild dir of kernel release $(1): a packaged kernel's, or that of a
# debug kernel scripts/kdebug.sh built (make build/kmod/<release>/kernel/shca.ko)
KDEBUG_DIR ?= $(or $(SHCA_KDEBUG_DIR),$(TOP)/build/kdebug)
kbuild_dir = $(patsubst %/Makefile,%,$(firstword \
	$(wildcard $(KDEBUG_DIR)/*/root/lib/modules/$(1)/build/Makefile) \
	/lib/modules/$(1)/build/Makefile))
modules-all: $(foreach k,$(TEST_KVERS),$(addprefix build/kmod/$(k)/,$(KMODS)))

build/kmod/%/kernel/shca.ko build/kmod/%/tests/kmod/shca_ulp_test.ko \
		build/kmod/%/tests/kmod/shca_dm_producer.ko \
		build/kmod/%/tests/kmod/shca_slow_client.ko: $(KSRCS) $(KTEST_SRCS)
	@for f in $(KSRCS) $(KTEST_SRCS); do \
		mkdir -p build/kmod/$*/$$(dirname $$f); \
		ln -sfn $(TOP)/$$f build/kmod/$*/$$f; done
	$(MAKE) -C $(call kbuild_dir,$*) M=$(TOP)/build/kmod/$* modules
	@touch $(addprefix build/kmod/$*/,$(KMODS))

provider:
	scripts/rdma-core.sh build

selftest-bins: $(SELFTEST_BINS) $(MIDDLEWARE_BINS)

$(SELFTEST_LIB): tests/selftests/shca_test_lib.c $(SELFTEST_HDRS)
	@mkdir -p build/tests
	$(CC) $(TEST_CFLAGS) -c -o $@ $<

# A program that calls libshca's direct verbs (shcadv.h) links libshca.so.1
# from build/lib (make provider first).
SHCADV_FLAGS := -I$(TOP)/provider -L$(TOP)/build/lib -lshca \
	-Wl,-rpath,$(TOP)/build/lib
SELFTEST_EXTRA_shca_drdma_test := $(SHCADV_FLAGS)
# shcadv.h's resource types only: no -lshca
SELFTEST_EXTRA_shca_pdom_test := -I$(TOP)/provider
# ibv_wr_flush: rdma-core 56.1's verbs.h, its libibverbs (make provider)
RC56_BUILD := $(TOP)/build/rdma-core-56.1/build
SELFTEST_EXTRA_shca_flush_test := -I$(RC56_BUILD)/include \
	-L$(RC56_BUILD)/lib -Wl,-rpath,$(RC56_BUILD)/lib

define selftest_rule
build/tests/$(1): $(call selftest_srcs,$(1)) $(SELFTEST_LIB) $(SELFTEST_HDRS) \
		$(wildcard tests/selftests/$(1:_test=).h)
	@mkdir -p build/tests
	$$(CC) $$(TEST_CFLAGS) -o $$@ $(call selftest_srcs,$(1)) \
		$$(SELFTEST_LIB) -libverbs $$(SELFTEST_EXTRA_$(1))
endef
$(foreach p,$(notdir $(SELFTEST_BINS)),$(eval $(call selftest_rule,$(p))))

# Middleware test programs: an MPI program, and UCX's own client/server
# example as Debian's libucx-dev ships it
build/tests/shca_mpi_test: tests/middleware/shca_mpi_test.c
	@mkdir -p build/tests
	mpicc -O2 -g -Wall -Wextra -Werror -o $@ $<

build/tests/ucp_client_server: $(UCX_EXAMPLES)/ucp_client_server.c
	@mkdir -p build/tests
	$(CC) -O2 -g -I$(UCX_EXAMPLES) -o $@ $< -lucp -lucs

# scripts/bench.sh's helpers; icrc_bw links the pure ICRC code, pkt_ops
# the per-packet pure code (make bench-native)
bench-tools: build/bench/memcpy_bw build/bench/icrc_bw build/bench/pkt_ops

build/bench/memcpy_bw: tests/bench/memcpy_bw.c tests/bench/bench_util.h
	@mkdir -p build/bench
	$(CC) -O2 -Wall -Wextra -Werror -o $@ $<

ICRC_BW_SRCS := kernel/mech/shca_crc.c kernel/mech/shca_crc_table.c \
	kernel/mech/shca_crc_clmul.c
build/bench/icrc_bw: tests/bench/icrc_bw.c tests/bench/bench_util.h \
		tests/unit/crc_impls.h $(ICRC_BW_SRCS) $(ICRC_BW_SRCS:.c=.h) \
		kernel/mech/shca_pure.h
	@mkdir -p build/bench
	$(CC) -O2 -Wall -Wextra -Werror -Ikernel/mech -Itests/unit -o $@ $< \
		$(ICRC_BW_SRCS)

PKT_OPS_SRCS := kernel/mech/shca_hdr.c kernel/mech/shca_llq.c \
	kernel/mech/shca_txhist.c kernel/mech/shca_keytab.c
build/bench/pkt_ops: tests/bench/pkt_ops.c tests/bench/bench_util.h \
		$(PKT_OPS_SRCS) $(PKT_OPS_SRCS:.c=.h) kernel/mech/shca_pure.h
	@mkdir -p build/bench
	$(CC) -O2 -Wall -Wextra -Werror -Ikernel/mech -o $@ $< $(PKT_OPS_SRCS)

# the pure code's per-byte and per-packet costs on this machine's CPU,
# outside the VM; writes its table into Documentation/performance.md
bench-native: build/bench/icrc_bw build/bench/pkt_ops
	python3 scripts/bench_native.py build/bench

unit:
	$(MAKE) -C tests/unit check TOP=$(TOP)

# tests/fuzz/Makefile: build/fuzz/fuzz_<name>, crash inputs in
# build/fuzz/artifacts/; FUZZ_SECONDS=n and HARNESSES="hdr llq" pass through
fuzz:
	$(MAKE) -C tests/fuzz fuzz TOP=$(TOP)

fuzz-smoke:
	$(MAKE) -C tests/fuzz smoke TOP=$(TOP)

setup:
	scripts/setup.sh

check:
	scripts/check.sh

check-full:
	scripts/check.sh --full

check-debug:
	scripts/check.sh --debug

# the fault, loss and interop selftests in a loop on both kernels
SOAK_MINUTES ?= 60
soak:
	scripts/soak.sh --minutes $(SOAK_MINUTES)

demo:
	scripts/demo.sh

checkpatch:
	scripts/checkpatch.sh

# --- Installing (Documentation/install.md) ----------------------------------
#
# Where things go.  LIBDIR is libibverbs' own (Debian's multiarch directory,
# /usr/lib64 on Fedora, RHEL and SUSE), read from its pkg-config file; the
# provider goes into LIBDIR/libibverbs, where libibverbs looks for
# lib<driver>-rdmav34.so, and a shca.driver file into its configuration
# directory.  The module goes into /lib/modules/KVER/updates.
VERSION := $(shell cat $(TOP)/VERSION)
PREFIX ?= /usr
LIBDIR ?= $(or $(shell pkg-config --variable=libdir libibverbs 2>/dev/null),$(PREFIX)/lib64)
INCLUDEDIR ?= $(PREFIX)/include
IBV_PROVIDER_DIR ?= $(LIBDIR)/libibverbs
IBV_CONF_DIR ?= /etc/libibverbs.d
SYSTEMD_UNIT_DIR ?= $(or $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null),/lib/systemd/system)
DKMS_SRC = /usr/src/shca-$(VERSION)
SHCA_LIB = libshca.so.1.$(VERSION)
# the module's sources as DKMS builds them: the driver alone, no tests
DKMS_FILES := Kbuild VERSION include/uapi/rdma/shca-abi.h \
	$(filter-out %.mod.c,$(wildcard kernel/*.[ch] kernel/*/*.[ch]))

install: install-module install-provider install-unit

# the driver built for KVER (no test modules), compressed and signed as
# the kernel's build directory says; depmod unless DESTDIR is set (a
# package's maintainer scripts run it).  Debian's kernel headers have no
# signing key and no System.map: kbuild says so and goes on.
install-module:
	@test -f $(KDIR)/Makefile || { echo "no kernel build dir $(KDIR): pass KVER=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(TOP) SHCA_DRIVER_ONLY=1 modules
	$(MAKE) -C $(KDIR) M=$(TOP) SHCA_DRIVER_ONLY=1 \
		INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=updates \
		DEPMOD=true modules_install
	$(if $(DESTDIR),,depmod -a $(KVER))

# the template unit that makes a device on a named netdev at boot
install-unit:
	install -D -m 0644 dist/shca@.service $(DESTDIR)$(SYSTEMD_UNIT_DIR)/shca@.service

# the provider as make provider built it: the library (its SONAME
# libshca.so.1 carries the direct verbs), the link libibverbs loads, the
# driver file, and the direct verbs' header
install-provider:
	@test -f build/lib/libshca-rdmav34.so || { echo "run make provider first" >&2; exit 1; }
	install -D -m 0644 build/lib/libshca-rdmav34.so $(DESTDIR)$(LIBDIR)/$(SHCA_LIB)
	ln -sfn $(SHCA_LIB) $(DESTDIR)$(LIBDIR)/libshca.so.1
	ln -sfn libshca.so.1 $(DESTDIR)$(LIBDIR)/libshca.so
	install -d $(DESTDIR)$(IBV_PROVIDER_DIR)
	ln -sfn $(shell realpath -m --relative-to=$(IBV_PROVIDER_DIR) $(LIBDIR)/$(SHCA_LIB)) \
		$(DESTDIR)$(IBV_PROVIDER_DIR)/libshca-rdmav34.so
	install -D -m 0644 provider/shca.driver $(DESTDIR)$(IBV_CONF_DIR)/shca.driver
	install -D -m 0644 provider/shcadv.h $(DESTDIR)$(INCLUDEDIR)/infiniband/shcadv.h

# the module's source where DKMS wants it, with its dkms.conf
install-dkms-src:
	@for f in $(DKMS_FILES); do \
		install -D -m 0644 $$f $(DESTDIR)$(DKMS_SRC)/$$f || exit 1; done
	sed 's/#MODULE_VERSION#/$(VERSION)/' dist/dkms.conf > $(DESTDIR)$(DKMS_SRC)/dkms.conf

# DKMS by hand (no package): add, build and install for KVER; later
# kernels get it from DKMS's own kernel hooks
dkms: install-dkms-src
	dkms status -m shca -v $(VERSION) | grep -q . || dkms add -m shca -v $(VERSION)
	dkms install -m shca -v $(VERSION) -k $(KVER)

uninstall:
	rm -f $(DESTDIR)/lib/modules/$(KVER)/updates/kernel/shca.ko*
	-test -n "$(DESTDIR)" || depmod -a $(KVER)
	rm -f $(DESTDIR)$(LIBDIR)/$(SHCA_LIB) $(DESTDIR)$(LIBDIR)/libshca.so.1 \
		$(DESTDIR)$(LIBDIR)/libshca.so \
		$(DESTDIR)$(IBV_PROVIDER_DIR)/libshca-rdmav34.so \
		$(DESTDIR)$(IBV_CONF_DIR)/shca.driver \
		$(DESTDIR)$(INCLUDEDIR)/infiniband/shcadv.h \
		$(DESTDIR)$(SYSTEMD_UNIT_DIR)/shca@.service

deb:
	scripts/package.sh

check-install:
	scripts/install-check.sh

check-pair:
	scripts/pair.sh

# make lint: every shell script is shellcheck clean (settings in
# .shellcheckrc), every Python file pyflakes clean, and the kernel's
# kernel-doc comments parse without a warning (the kernel's own
# scripts/kernel-doc, from the headers the module builds against), and
# Documentation/datapath.md's lock tables match the code
# (scripts/lock_table.py).
LINT_SH = $(wildcard scripts/*.sh tests/*/*.sh) .ci/run
LINT_PY = $(wildcard scripts/*.py tests/*/*.py tests/*/*/*.py)
LINT_KDOC = $(wildcard kernel/*.[ch] kernel/*/*.[ch])
# (shellcheck split among one process per CPU: it is most of the time)
.PHONY: lint
lint:
	printf '%s\n' $(LINT_SH) | xargs -P $$(nproc) -n 8 shellcheck
	pyflakes3 $(LINT_PY)
	python3 scripts/lock_table.py check
	perl $(KDIR)/scripts/kernel-doc -none -Werror $(LINT_KDOC)

clean:
	-$(MAKE) -C $(KDIR) M=$(TOP) clean
	rm -rf build/kmod build/tests build/unit build/fuzz build/lib build/vm
