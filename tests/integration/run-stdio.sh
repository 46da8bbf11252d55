#!/bin/bash
# run-stdio: stdin is piped through, stdout and stderr stay apart.
. "$(dirname "$0")/lib.sh"

pipe_hi() { echo hi | sb -w "$WS" -- cat; }

scenario() {
    try pipe_hi
    expect_eq "$RC:$OUT" "0:hi" "echo hi | confine -- cat ($(last))"
    OPTS=(-q)
    sandbox /bin/sh -c 'echo to-stdout; echo to-stderr >&2'
    expect_eq "$RC" 0 "exit ($(last))"
    expect_eq "$OUT" to-stdout "stdout"
    expect_eq "$ERRS" to-stderr "stderr (with -q)"
    # Closed stdin reads as EOF, not as a hang.
    try sb -w "$WS" -- cat </dev/null
    expect_eq "$RC:$OUT" "0:" "cat with stdin at EOF ($(last))"
}
run_variants scenario
