#!/bin/bash
# checkpoint-progress: a save or restore that lasts more than a second says how far it is on stderr; a fast one
# prints nothing of the kind. (The test build takes CONFINE_TEST_PROGRESS_AFTER_MS, the second, shortened, so a
# small workspace shows the lines.) -q silences the progress and the "saved" line, never the warning about what a
# checkpoint did not save, nor the restore's about what it cannot bring back.
. "$(dirname "$0")/lib.sh"

scenario() {
    local i
    mkdir -p "$WS/src"
    for ((i = 0; i < 200; i++)); do echo "$i" >"$WS/src/f$i"; done
    mkfifo "$WS/pipe"
    [[ $SUITE_UID != 0 ]] || chown -hR "$VUID:$VGID" "$WS"

    OPTS=(--checkpoint)
    sandbox /bin/true
    expect_eq "$RC" 0 "a fast save ($(last))"
    expect_no_match "$ERRS" "saving a checkpoint" "a fast save shows no progress"
    try sb checkpoints restore -w "$WS"
    expect_no_match "$ERRS" "restoring checkpoint" "a fast restore shows no progress"

    XENV=(CONFINE_TEST_PROGRESS_AFTER_MS=0)
    sandbox /bin/sh -c 'rm -r src pipe'
    expect_eq "$RC" 0 "a save past the (shortened) second ($(last))"
    expect_match "$ERRS" "(^|"$'\n'")confine: saving a checkpoint of the workspace: [0-9]+ names, [0-9]+ s"$'\n' \
        "a slow save says how far it is"
    try sb checkpoints restore -w "$WS"
    expect_eq "$RC" 0 "a restore past the (shortened) second ($(last))"
    expect_match "$ERRS" "(^|"$'\n'")confine: restoring checkpoint [^ ]+: [0-9]+ names, [0-9]+ s"$'\n' "a slow restore says how far it is"
    [[ -f $WS/src/f199 ]] || fail "the restore did not bring back src/"

    # -q: no progress, no "saved" line; the warnings about data stay.
    host mkfifo "$WS/pipe"
    OPTS=(-q --checkpoint)
    sandbox /bin/sh -c 'rm -r src pipe'
    expect_eq "$RC" 0 "a quiet save ($(last))"
    expect_no_match "$ERRS" "saving a checkpoint|checkpoint [^ ]+ saved" "-q: no progress, no saved line"
    expect_match "$ERRS" "confine: warning: checkpoint [^ ]+ did not save pipe" "-q keeps the warning about what was not saved"
    try sb -q checkpoints restore -w "$WS"
    expect_eq "$RC" 0 "a quiet restore ($(last))"
    expect_no_match "$ERRS" "restoring checkpoint" "-q: no progress on restore"
    expect_match "$ERRS" "confine: warning: not brought back: pipe" "-q keeps the warning about what cannot be brought back"
}
run_variants scenario
