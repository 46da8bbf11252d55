#!/bin/bash
# run-pty: on a terminal, the command inside keeps it: isatty, terminal ioctls, ttyname at the terminal's own name
# (the /dev/pts/N that `tty` prints outside, on the same pty: the sandbox's own devpts holds it bound there, and at
# /dev/console), and job control in an interactive shell.
. "$(dirname "$0")/lib.sh"

# on_pty SHELL-CODE: run it under `script` on a fresh pty; sets RC, OUT (carriage returns dropped), ERRS.
on_pty() {
    try timeout -k 5 30 script -qec "$1" /dev/null </dev/null
    OUT=${OUT//$'\r'/}
}

scenario() {
    local confine
    confine=$(printf '%q ' "${RUN_AS[@]}" env -i "${BASE_ENV[@]}" "$CONF" -w "$WS" --)
    on_pty "tty; $confine sh -c 'tty && stty size >/dev/null && test -t 0 && test -t 1 && test -c /dev/console && echo terminal-ok'"
    expect_eq "$RC" 0 "script -qec 'tty; confine -- tty' ($(last))"
    local outside=${OUT%%$'\n'*}
    expect_match "$outside" '^/dev/pts/[0-9]+$' "tty outside, on script's pty"
    expect_eq "$OUT" "$outside"$'\n'"$outside"$'\nterminal-ok' "tty inside: the same name as outside"

    # Job control: an interactive shell inside gets the terminal's process groups (no "no job control" warning),
    # and a background job is listed.
    on_pty "$confine bash --norc -ic 'sleep 0.3 & jobs; wait; echo done'"
    expect_eq "$RC" 0 "interactive bash inside on a pty ($(last))"
    expect_no_match "$OUT" 'no job control' "interactive bash inside"
    expect_match "$OUT" $'\\[1\\]\\+ +Running +sleep 0\\.3 &\n' "jobs inside"
    expect_match "$OUT" $'\ndone$' "the background job waited for"

    # Without a terminal, there is none inside either.
    try sb -w "$WS" -- tty </dev/null
    expect_eq "$RC:$OUT" "1:not a tty" "tty inside without a terminal ($(last))"
}
run_variants scenario
