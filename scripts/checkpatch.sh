#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Kernel coding style of the module, the test modules (tests/kmod/) and
# the uapi header, checked with the kernel's checkpatch.pl.  It is not in
# the headers packages: it is taken once from the newest Debian
# linux-source tarball installed into build/checkpatch/<its name>/.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 1
# The newest source installed (6.12's checkpatch is the stricter); each
# version's copy has its own directory.
src=$(printf '%s\n' /usr/src/linux-source-*.tar.xz | sort -V | tail -n 1)
[ -f "$src" ] || {
	echo "checkpatch: no /usr/src/linux-source-*.tar.xz (run make setup)" >&2
	exit 1
}
dir=build/checkpatch/$(basename "$src" .tar.xz)
cp=$dir/scripts/checkpatch.pl

if [ ! -f "$cp" ]; then
	mkdir -p "$dir"
	tar -xJf "$src" -C "$dir" --strip-components=1 --wildcards \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch' || exit 1
fi

# LINUX_VERSION_CODE: the module supports several kernel versions.
files=$(git ls-files 'kernel/*.[ch]' 'tests/kmod/*.[ch]' \
	include/uapi/rdma/shca-abi.h 2>/dev/null)
if [ -z "$files" ]; then
	# (in git's order)
	for f in include/uapi/rdma/shca-abi.h kernel/*.[ch] kernel/*/*.[ch] \
		tests/kmod/*.[ch]; do
		case $f in *.mod.c) continue ;; esac
		[ -e "$f" ] && files="$files $f"
	done
fi
# the files split among one checkpatch per CPU (xargs exits 123 when
# any of them found something)
read -rd "" -a list <<< "$files"
cpus=$(nproc)
printf '%s\n' "${list[@]}" |
	xargs -P "$cpus" -n $(( (${#list[@]} + cpus - 1) / cpus )) \
	perl "$cp" --no-tree --quiet --show-types \
	--ignore FILE_PATH_CHANGES,LINUX_VERSION_CODE,CONSTANT_COMPARISON -f
