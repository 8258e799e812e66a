#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Build the libshca rdma-core provider inside an rdma-core source tree.
#
#   scripts/rdma-core.sh [fetch] [prepare] [build] [check-abi]
#
#   fetch      get rdma-core_<version>.orig.tar.gz into build/dl/ (Debian
#              trixie deb-src, through a private apt state directory; the
#              system apt configuration is not touched)
#   prepare    unpack it to build/rdma-core-<version>, link provider/ in as
#              providers/shca and configure it with cmake (Ninja)
#   build      ninja shca, copy it to build/lib/libshca-rdmav34.so, with
#              libshca.so.1 and libshca.so linked to it; rdma-core's own
#              libibverbs and rxe provider stay in its build/lib (for the
#              test programs built against this release's verbs.h)
#   check-abi  check that every libibverbs symbol the provider imports is
#              exported by the installed libibverbs.so.1
#   is-prepared  exit 0 when the source is fetched, unpacked and configured
#
# With no argument: fetch prepare build check-abi.  Every step is
# idempotent and runs the steps it depends on when they have not been run.
#
# Environment: NINJA_JOBS (default: number of CPUs),
#              RDMA_CORE_WERROR=0 to configure without -Werror,
#              SYSTEM_LIBIBVERBS (default the Debian multiarch path).

set -euo pipefail

RC_VERSION=56.1
RC_SHA256=63ce7f2baa7242c2dbc76375dac957c420187dd27f8c5e148efc07971ee522a8
RC_SUITE=trixie
RC_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DL_DIR=$TOP/build/dl
APT_DIR=$DL_DIR/apt
TARBALL=$DL_DIR/rdma-core_$RC_VERSION.orig.tar.gz
SRC_DIR=$TOP/build/rdma-core-$RC_VERSION
BUILD_DIR=$SRC_DIR/build
LIB_DIR=$TOP/build/lib
PROVIDER=libshca-rdmav34.so
SYSTEM_LIBIBVERBS=${SYSTEM_LIBIBVERBS:-/usr/lib/x86_64-linux-gnu/libibverbs.so.1}
NINJA_JOBS=${NINJA_JOBS:-$(nproc)}
RDMA_CORE_WERROR=${RDMA_CORE_WERROR:-1}

PROG=${0##*/}

die()
{
	echo "$PROG: error: $*" >&2
	exit 1
}

info()
{
	echo "$PROG: $*"
}

need_tools()
{
	local t

	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 ||
			die "'$t' not found in PATH (install it first)"
	done
}

# The Debian archive this machine's apt already uses (not its security
# archive): the first URI of a deb822 .sources paragraph or of a one-line
# sources.list entry.
system_mirror()
{
	local uri

	uri=$(awk '
		/^$/ { if (u != "" && s !~ /-security/) { print u; exit } u = s = "" }
		/^URIs:/ { u = $2 }
		/^Suites:/ { s = $0 }
		END { if (u != "" && s !~ /-security/) print u }' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
	[ -n "$uri" ] || uri=$(awk '$1 == "deb" && $0 !~ /-security/ {
		for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) { print $i; exit } }' \
		/etc/apt/sources.list 2>/dev/null | head -n 1)
	[ -n "$uri" ] || die "fetch: no Debian archive found in the apt sources"
	echo "$uri"
}

tarball_ok()
{
	[ -f "$TARBALL" ] &&
		echo "$RC_SHA256  $TARBALL" | sha256sum --check --status
}

# apt-get with every piece of state redirected to $APT_DIR
private_apt()
{
	apt-get \
		-o Dir::Etc::SourceList=/dev/null \
		-o Dir::Etc::SourceParts="$APT_DIR/sources.list.d" \
		-o Dir::State::Lists="$APT_DIR/lists" \
		-o Dir::Cache="$APT_DIR/cache" \
		-o Dir::Cache::pkgcache= \
		-o Dir::Cache::srcpkgcache= \
		-o APT::Sandbox::User=root \
		"$@"
}

write_apt_sources()
{
	mkdir -p "$APT_DIR/sources.list.d" "$APT_DIR/lists/partial" \
		 "$APT_DIR/cache/archives/partial"
	cat >"$APT_DIR/sources.list.d/$RC_SUITE-src.sources" <<-EOF
	Types: deb-src
	URIs: $(system_mirror)
	Suites: $RC_SUITE
	Components: main
	Signed-By: $RC_KEYRING
	EOF
}

cmd_fetch()
{
	local log=$APT_DIR/apt.log

	if tarball_ok; then
		info "fetch: $TARBALL present (sha256 ok)"
		return
	fi
	need_tools apt-get sha256sum
	[ -r "$RC_KEYRING" ] || die "fetch: $RC_KEYRING missing (debian-archive-keyring)"

	info "fetch: rdma-core $RC_VERSION source from Debian $RC_SUITE"
	rm -f "$TARBALL"
	write_apt_sources
	: >"$log"
	private_apt update >>"$log" 2>&1 ||
		die "fetch: apt-get update failed, see $log:
$(tail -n 5 "$log")"

	# apt-get downloads the .orig and .debian tarballs into the current
	# directory and then fails on the .dsc (404 on this mirror): the exit
	# status means nothing, the checksum below decides.
	(cd "$DL_DIR" && private_apt source --download-only rdma-core) \
		>>"$log" 2>&1 || true

	[ -f "$TARBALL" ] ||
		die "fetch: apt did not download ${TARBALL##*/} (does $RC_SUITE still carry rdma-core $RC_VERSION?), see $log:
$(tail -n 5 "$log")"
	tarball_ok ||
		die "fetch: ${TARBALL##*/} has the wrong sha256 (want $RC_SHA256)"
	info "fetch: $TARBALL (sha256 ok)"
}

unpack()
{
	local tmp

	[ -f "$SRC_DIR/.shca-unpacked" ] && return
	tarball_ok || die "prepare: $TARBALL missing or corrupt, run fetch"

	info "prepare: unpacking to $SRC_DIR"
	rm -rf "$SRC_DIR"
	tmp=$(mktemp -d "$TOP/build/.rdma-core-unpack.XXXXXX")
	tar -xzf "$TARBALL" -C "$tmp" ||
		{ rm -rf "$tmp"; die "prepare: cannot unpack $TARBALL"; }
	[ -f "$tmp/rdma-core-$RC_VERSION/CMakeLists.txt" ] ||
		{ rm -rf "$tmp"; die "prepare: $TARBALL has no rdma-core-$RC_VERSION/"; }
	mv "$tmp/rdma-core-$RC_VERSION" "$SRC_DIR"
	rmdir "$tmp"
	touch "$SRC_DIR/.shca-unpacked"
}

link_provider()
{
	local link=$SRC_DIR/providers/shca
	local line='add_subdirectory(providers/shca)'

	if [ -e "$link" ] && [ ! -L "$link" ]; then
		die "prepare: $link exists and is not a symlink"
	fi
	ln -sfn "$TOP/provider" "$link"

	if ! grep -qxF "$line" "$SRC_DIR/CMakeLists.txt"; then
		printf '\n# shca provider, added by %s\n%s\n' "$PROG" "$line" \
			>>"$SRC_DIR/CMakeLists.txt"
	fi
}

configure()
{
	local stamp=$BUILD_DIR/.shca-cmake-args
	local werror=0
	local args

	[ "$RDMA_CORE_WERROR" = 1 ] && werror=1
	# No build-tree RPATH: the provider is copied out and must resolve
	# libibverbs.so.1 to the library of the process that loads it.
	args=(-GNinja -DNO_PYVERBS=1 -DNO_MAN_PAGES=1 -DENABLE_STATIC=0
	      -DENABLE_WERROR="$werror" -DCMAKE_SKIP_BUILD_RPATH=ON
	      -DSHCA_UAPI_DIR="$TOP/include/uapi")

	if [ -f "$BUILD_DIR/build.ninja" ] &&
	   [ "$(cat "$stamp" 2>/dev/null)" = "${args[*]}" ]; then
		return
	fi
	need_tools cmake ninja python3

	info "prepare: configuring $BUILD_DIR"
	mkdir -p "$BUILD_DIR"
	rm -f "$stamp"
	(cd "$BUILD_DIR" && cmake "${args[@]}" ..) \
		>"$BUILD_DIR/cmake.log" 2>&1 || {
		rm -f "$BUILD_DIR/build.ninja"
		die "prepare: cmake failed, see $BUILD_DIR/cmake.log:
$(tail -n 20 "$BUILD_DIR/cmake.log")"
	}
	echo "${args[*]}" >"$stamp"
	info "prepare: $BUILD_DIR configured"
}

cmd_prepare()
{
	need_tools tar
	tarball_ok || cmd_fetch
	unpack
	link_provider
	configure
}

cmd_build()
{
	local out=$BUILD_DIR/lib/$PROVIDER

	cmd_prepare
	need_tools ninja

	# with rdma-core's own libibverbs and rxe provider: the programs
	# that use this release's verbs (ibv_wr_flush) run on them
	ninja -C "$BUILD_DIR" -j "$NINJA_JOBS" shca ibverbs \
		librxe-rdmav34.so || die "build: ninja shca failed"
	[ -f "$out" ] || die "build: $out not produced"

	# Replace by rename: a running test may have the old copy mapped.
	# $PROVIDER is the library itself (what libibverbs loads); programs
	# that call the direct verbs link with -lshca (libshca.so.1).
	mkdir -p "$LIB_DIR"
	install -m 0755 "$out" "$LIB_DIR/.$PROVIDER.tmp"
	mv -f "$LIB_DIR/.$PROVIDER.tmp" "$LIB_DIR/$PROVIDER"
	ln -sfn "$PROVIDER" "$LIB_DIR/libshca.so.1"
	ln -sfn libshca.so.1 "$LIB_DIR/libshca.so"
	info "build: $LIB_DIR/$PROVIDER (and libshca.so.1)"
}

# "VERSION NAME" for each symbol of a libibverbs version an object imports
verbs_imports()
{
	objdump -T "$1" | awk 'NF > 2 && $0 ~ /\*UND\*/ && $(NF - 1) ~ /^\(?IBVERBS_/ {
		v = $(NF - 1); gsub(/[()]/, "", v); print v, $NF }' | sort -u
}

# "VERSION NAME" for each symbol a library exports under a libibverbs version
verbs_exports()
{
	objdump -T "$1" | awk 'NF > 2 && $0 !~ /\*UND\*/ && $(NF - 1) ~ /^\(?IBVERBS_/ {
		v = $(NF - 1); gsub(/[()]/, "", v); print v, $NF }' | sort -u
}

cmd_check_abi()
{
	local so=$LIB_DIR/$PROVIDER
	local imports exports missing sym

	need_tools objdump awk comm
	[ -f "$so" ] || die "check-abi: $so not built, run build"
	[ -f "$SYSTEM_LIBIBVERBS" ] ||
		die "check-abi: $SYSTEM_LIBIBVERBS not found (libibverbs1)"

	imports=$(verbs_imports "$so")
	exports=$(verbs_exports "$SYSTEM_LIBIBVERBS")
	[ -n "$imports" ] || die "check-abi: $so imports no libibverbs symbol?"

	missing=$(comm -23 <(echo "$imports") <(echo "$exports"))
	if [ -n "$missing" ]; then
		echo "$PROG: check-abi: $SYSTEM_LIBIBVERBS does not export:" >&2
		while read -r sym; do
			echo "    $sym" >&2
		done <<<"$missing"
		exit 1
	fi
	info "check-abi: all $(echo "$imports" | wc -l) libibverbs imports of $PROVIDER are exported by $SYSTEM_LIBIBVERBS"
}

main()
{
	local cmd

	[ $# -gt 0 ] || set -- fetch prepare build check-abi
	for cmd in "$@"; do
		case $cmd in
		fetch|prepare|build)
			"cmd_$cmd"
			;;
		check-abi)
			cmd_check_abi
			;;
		is-prepared)
			tarball_ok && [ -f "$SRC_DIR/.shca-unpacked" ] &&
				[ -f "$BUILD_DIR/build.ninja" ]
			;;
		-h|--help|help)
			sed -n '3,/^$/s/^# \{0,1\}//p' "$0"
			;;
		*)
			die "unknown command '$cmd' (fetch|prepare|build|check-abi)"
			;;
		esac
	done
}

main "$@"
