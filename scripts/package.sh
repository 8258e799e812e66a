#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build shca's Debian packages from the tree: shca-dkms (the module's
# source for DKMS and the shca@.service template), ibverbs-provider-shca (libshca) and libshca-dev, then check
# them with lintian.
#
#   scripts/package.sh [OUTDIR]     (default build/pkg)
#
# The build runs in a copy of the tree's files (tracked and untracked, not
# ignored), with the rdma-core source tarball the provider builds in
# (scripts/rdma-core.sh fetch), so it needs no network and leaves the tree
# alone.  Lintian errors fail the build; each remaining warning is
# justified in debian/*.lintian-overrides.

set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${1:-$TOP/build/pkg}
VERSION=$(cat "$TOP/VERSION")

die() { echo "package.sh: $*" >&2; exit 1; }

for t in dpkg-buildpackage dh dh_dkms lintian; do
	command -v "$t" >/dev/null || die "$t not found (scripts/setup.sh installs it)"
done
"$TOP/scripts/rdma-core.sh" fetch >/dev/null

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
src=$OUT/shca-$VERSION
rm -rf "$src" "$OUT"/*.deb "$OUT"/*.changes "$OUT"/*.buildinfo
mkdir -p "$src/build/dl"
(cd "$TOP" && git ls-files -z -c -o --exclude-standard) |
	(cd "$TOP" && xargs -0 cp -a --parents -t "$src")
cp "$TOP"/build/dl/rdma-core_*.orig.tar.gz "$src/build/dl/"

echo "package.sh: dpkg-buildpackage in $src"
(cd "$src" && dpkg-buildpackage -b -uc -us -j"$(nproc)") > "$OUT/build.log" 2>&1 ||
	die "dpkg-buildpackage failed, see $OUT/build.log: $(tail -n 5 "$OUT/build.log")"
rm -rf "$src"

changes=$OUT/shca_${VERSION}_$(dpkg --print-architecture).changes
[[ -f $changes ]] || die "no $changes"
echo "package.sh: lintian"
lintian --fail-on error,warning --info "$changes" | tee "$OUT/lintian.log" ||
	die "lintian found errors or warnings ($OUT/lintian.log)"
ls -1 "$OUT"/*.deb
