#!/bin/bash
# run-exit-codes: confine exits with the command's own code, 128+N when it died by signal N, 126 when the
# command is not executable and 127 when it does not exist.
. "$(dirname "$0")/lib.sh"

scenario() {
    sandbox true
    expect_eq "$RC" 0 "true ($(last))"
    sandbox /bin/sh -c 'exit 42'
    expect_eq "$RC" 42 "sh -c 'exit 42' ($(last))"
    sandbox /bin/sh -c 'kill -TERM $$'
    expect_eq "$RC" 143 "sh killing itself with SIGTERM ($(last))"
    sandbox /bin/sh -c 'kill -KILL $$'
    expect_eq "$RC" 137 "sh killing itself with SIGKILL ($(last))"

    printf '#!/bin/sh\necho should-not-run\n' >"$WS/not-executable"
    chmod 0644 "$WS/not-executable"
    [[ $SUITE_UID != 0 ]] || chown "$VUID:$VGID" "$WS/not-executable"
    sandbox "$WS/not-executable"
    expect_eq "$RC" 126 "non-executable file ($(last))"
    expect_no_match "$OUT" should-not-run "output of a non-executable file"
    sandbox "$WS"
    expect_eq "$RC" 126 "a directory as the command ($(last))"

    sandbox confine-no-such-command-$$
    expect_eq "$RC" 127 "missing command on PATH ($(last))"
    sandbox "$WS/no-such-file"
    expect_eq "$RC" 127 "missing command by path ($(last))"
}
run_variants scenario
