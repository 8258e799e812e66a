#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest 2 of the two-guest lane (scripts/pair.sh): the link up, then the
# commands guest 1 sends (agent.py) until it says quit.  Its exit status
# is the agent's; the harness checks this guest's kernel log too.

# shellcheck source=../selftests/lib.sh
. "$SHCA_TOP/tests/selftests/lib.sh"
# shellcheck source=lib.sh
. "$SHCA_TOP/tests/pair/lib.sh"

link_up 2 || { echo "peer: eth0 did not come up"; exit 1; }
ip addr show eth0
exec "${AGENT[@]}" serve "$PAIR_PORT"
