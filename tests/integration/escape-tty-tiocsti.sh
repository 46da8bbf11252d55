#!/bin/bash
# escape-tty-tiocsti: a sandboxed command on the caller's terminal cannot push keystrokes into that
# terminal's input queue (TIOCSTI, CVE-2017-5226 in bubblewrap), which the caller's shell would read and
# run outside the sandbox once confine exits.  Run under `script`; after confine, the outer shell reads what
# is pending on the terminal: it must be nothing.
. "$(dirname "$0")/lib.sh"

# run_on_pty INNER-COMMAND-STRING: run "INNER; read -t 1 line; echo got=[$line]" on a fresh pty; sets OUT.
run_on_pty() {
    # Keep script's stdin open (and empty) while it runs, so script does not send EOF to the terminal.
    try bash -c 'sleep 2 | SHELL=/bin/bash timeout -k 5 30 script -qec "$1"'"'"'; read -t 1 line; echo "got=[$line]"'"'"' /dev/null' _ "$1"
    OUT=${OUT//$'\r'/}
}

scenario() {
    local canary="echo CANARY-tiocsti-$RANDOM"
    # Control: without confine, the injection reaches the outer shell.
    run_on_pty "$(printf '%q ' "${RUN_AS[@]}" "$PROBE_BIN" tiocsti "$canary\\n")"
    expect_match "$OUT" "got=\\[$canary\\]" "host control: TIOCSTI without confine ($(last))"

    run_on_pty "$(printf '%q ' "${RUN_AS[@]}" env -i "${BASE_ENV[@]}" "$CONF" -w "$WS" -- "$PIN" tiocsti "$canary\\n")"
    echo "probe inside: $OUT"
    expect_match "$OUT" "got=\\[\\]" "what the outer shell read from the terminal after confine exited ($(last))"
}
run_variants scenario
