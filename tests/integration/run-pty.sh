#!/bin/bash
# run-pty: on a terminal, the command inside has a terminal too (tty prints a /dev/pts path).
. "$(dirname "$0")/lib.sh"

scenario() {
    local cmd
    cmd=$(printf '%q ' "${RUN_AS[@]}" env -i "${BASE_ENV[@]}" "$CONF" -w "$WS" -- tty)
    try timeout -k 5 30 script -qec "$cmd" /dev/null </dev/null
    OUT=${OUT//$'\r'/}
    expect_eq "$RC" 0 "script -qec 'confine -- tty' ($(last))"
    expect_match "$OUT" '^/dev/pts/[0-9]+$' "tty inside"
    # Without a terminal, there is none inside either.
    try sb -w "$WS" -- tty </dev/null
    expect_eq "$RC:$OUT" "1:not a tty" "tty inside without a terminal ($(last))"
}
run_variants scenario
