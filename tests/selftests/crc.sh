#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The data path's CRC-32 (wire/shca_crcsel.c): the module times every
# CRC-32 and copy-with-CRC-32 the guest CPU offers at load, reports them
# and its choice in dmesg and reads the choice back from its parameters
# crc and crc_copy; a name it does not have is refused.  Then each
# choice, forced by the parameters (the CRCs and the copies paired off,
# each at least once), carries RC READs and WRITEs of 1 MiB with data
# checks with rdma_rxe both ways (and, at the long size, between two
# shca devices too): an implementation that got one ICRC wrong would
# have its packets dropped by rxe, whose ICRC is the kernel's own, and a
# copy that got one byte wrong would fail the data check.  Each way READs
# and WRITEs: shca sends both requests' payloads (WRITEs, READ responses)
# to rxe and receives both from it.
. "$(dirname "$0")/lib.sh"

if ! modprobe rdma_rxe 2>/dev/null; then
	echo "1..0 # SKIP rdma_rxe not available"
	exit $KSFT_SKIP
fi
modprobe -a ib_uverbs udp_tunnel ip6_udp_tunnel
shca_unload

# choice_line WHAT: the load's dmesg line for WHAT ("CRC-32" or "copy
# with CRC-32"), e.g. "shca: CRC-32, MiB/s: table 700 lib 690; using
# table (fastest)"
choice_line() {
	dmesg | grep "shca: $1, MiB/s:" | tail -1
}

# cands LINE: the candidates' names in a choice line
cands() {
	local s=${1#*MiB/s:} w out='' i=0

	s=${s%%;*}
	for w in $s; do
		((i++ % 2 == 0)) && out+=" $w"
	done
	echo "$out"
}

param() {
	cat "/sys/module/shca/parameters/$1"
}

# loaded_auto: the module loads, reports both choices and reads them back
loaded_auto() {
	local c k

	dmesg -C
	shca_load || return 1
	c=$(choice_line CRC-32)
	k=$(choice_line "copy with CRC-32")
	[[ $c == *"; using $(param crc) (fastest)" ]] &&
	[[ $k == *"; using $(param crc_copy) (fastest)" ]] &&
	[[ " $(cands "$c") " == *" table "* ]]
}
# the plan comes last: one round per candidate
echo "TAP version 13"
tap_check "module loads, times each CRC-32 and reports its choice" loaded_auto
diag "$(choice_line CRC-32)"
diag "$(choice_line "copy with CRC-32")"
diag "$(dmesg | grep 'shca: crypto is')"
read -r -a crcs <<< "$(cands "$(choice_line CRC-32)")"
read -r -a copies <<< "$(cands "$(choice_line "copy with CRC-32")")"
diag "CRC-32s: ${crcs[*]}; copies: ${copies[*]}"
shca_unload

# refused PARAM=VALUE: insmod fails, says why, leaves nothing loaded
refused() {
	dmesg -C
	! insmod "$SHCA_KO" "$1" 2>/dev/null &&
	dmesg | grep -q "shca: $1: no such" &&
	! lsmod | grep -q '^shca '
}
refusals() {
	local r

	for r in crc=bogus crc_copy=tablex crc=; do
		refused "$r" || { diag "$r not refused"; return 1; }
	done
	# a candidate this CPU does not have (TCG has no AVX-512)
	if [[ " ${crcs[*]} " != *" vclmul "* ]]; then
		refused crc=vclmul || return 1
	fi
}
tap_check "an unknown or missing CRC-32 or copy is refused" refusals

# Each forced pair, then the same traffic: shca <-> shca, shca <-> rxe.
forced() {	# CRC COPY
	dmesg -C
	shca_load crc="$1" crc_copy="$2" &&
	[ "$(param crc)" = "$1" ] && [ "$(param crc_copy)" = "$2" ] &&
	choice_line CRC-32 | grep -q "; using $1 (forced)" &&
	choice_line "copy with CRC-32" | grep -q "; using $2 (forced)"
}
between_shca() {
	two_hosts 1500 || return 1
	g1=$(gid_index shca_ns1 198.18.0.1)
	g2=$(gid_index shca_ns2 198.18.0.2)
	rc_cases shca_ns1 "$g1" shca_ns2 "$g2" read_1m write_1m
	local rc=$?
	two_hosts_del
	return "$rc"
}
with_rxe() {
	rxe_peer 1500 || return 1
	# rxe checks the ICRCs of shca's READ responses (copies with CRC-32)
	# and WRITEs, shca those of rxe's
	rc_cases rxe_i "$gr" shca_i "$gs" read_1m write_1m &&
	rc_cases shca_i "$gs" rxe_i "$gr" write_1m read_1m
	local rc=$?
	rxe_peer_del
	return "$rc"
}
n=${#crcs[@]}
[ ${#copies[@]} -gt "$n" ] && n=${#copies[@]}
for ((i = 0; i < n; i++)); do
	c=${crcs[i % ${#crcs[@]}]}
	k=${copies[i % ${#copies[@]}]}
	tap_check "crc=$c crc_copy=$k: loads, reports the forced choice" \
		forced "$c" "$k"
	[ -n "$SHCA_LONG" ] &&
		tap_check "crc=$c crc_copy=$k: RC between two shca devices" \
			between_shca
	tap_check "crc=$c crc_copy=$k: RC with rdma_rxe, both ways" with_rxe
	shca_unload
done
modprobe -r rdma_ucm rdma_cm rdma_rxe 2>/dev/null
echo "1..$_tap_n"
tap_done
