#!/bin/bash
# run-pipe-100mb: 100 MB go through `confine -- cat` unchanged in size (no truncation, no deadlock).
. "$(dirname "$0")/lib.sh"

scenario() {
    local n
    n=$(head -c 100M /dev/zero | sb -w "$WS" -- cat | wc -c)
    expect_eq "$n" 104857600 "bytes through confine -- cat"
    # And the other way round: the sandbox produces it.
    n=$(sb -w "$WS" -- head -c 100M /dev/zero | wc -c)
    expect_eq "$n" 104857600 "bytes out of confine -- head"
}
run_variants scenario
