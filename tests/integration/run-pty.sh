#!/bin/bash
# run-pty: on a terminal, the command inside keeps it: isatty, terminal ioctls, and ttyname (the caller's
# terminal is bound at /dev/console, since the sandbox's own devpts cannot hold it).
. "$(dirname "$0")/lib.sh"

scenario() {
    local cmd
    cmd=$(printf '%q ' "${RUN_AS[@]}" env -i "${BASE_ENV[@]}" "$CONF" -w "$WS" -- sh -c 'tty && stty size >/dev/null && test -t 0 && test -t 1 && echo terminal-ok')
    try timeout -k 5 30 script -qec "$cmd" /dev/null </dev/null
    OUT=${OUT//$'\r'/}
    expect_eq "$RC" 0 "script -qec 'confine -- tty' ($(last))"
    expect_eq "$OUT" $'/dev/console\nterminal-ok' "tty inside"
    # Without a terminal, there is none inside either.
    try sb -w "$WS" -- tty </dev/null
    expect_eq "$RC:$OUT" "1:not a tty" "tty inside without a terminal ($(last))"
}
run_variants scenario
