#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: build shca, boot the test VM, load the module, create shca0
# on an Ethernet netdev and show what verbs tools see.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 1

scripts/setup.sh --if-needed || exit 1
make -s modules-all provider selftest-bins || {
	echo "demo: build failed" >&2
	exit 1
}
exec scripts/vm.sh "$@" -- scripts/demo-guest.sh
