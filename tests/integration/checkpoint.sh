#!/bin/bash
# checkpoint: --checkpoint saves the workspace outside it before the run. An agent that deletes everything it can
# (files, untracked ones, .git) changes nothing of the checkpoint; the printed command restores every file byte
# for byte; `confine checkpoints` lists it; the user's repository (HEAD, index) is untouched by the checkpoint.
. "$(dirname "$0")/lib.sh"

# git as the variant's user (the workspace is theirs: git refuses a repository owned by someone else).
g() { host git -C "$WS" -c user.name=t -c user.email=t@t "$@"; }

scenario() {
    [[ $SUITE_UID != 0 ]] || chown "$VUID:$VGID" "$WS"
    g init -q
    echo one >"$WS/tracked.txt"
    [[ $SUITE_UID != 0 ]] || chown "$VUID:$VGID" "$WS/tracked.txt"
    g add tracked.txt
    g commit -qm init
    echo modified >"$WS/tracked.txt"
    echo fresh >"$WS/untracked.txt"
    mkdir -p "$WS/src/deep" && head -c 65536 /dev/urandom >"$WS/src/deep/blob.bin"
    echo "API_KEY=x" >"$WS/.env"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$WS"
    local before head_before index_before restore
    before=$(cd "$WS" && find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 sha256sum)

    OPTS=(--checkpoint)
    sandbox /bin/sh -c 'rm -rf ./* ./.[!.]* 2>/dev/null; rm -rf .git/objects 2>/dev/null; true'
    expect_eq "$RC" 0 "the destructive run ($(last))"
    restore=$(sed -n 's/^confine: checkpoint saved; to put every file back: //p' <<<"$ERRS")
    [[ $restore == git\ --git-dir=* ]] || fail "no restore command printed: $ERRS"
    [[ ! -e $WS/untracked.txt ]] || fail "the run did not delete untracked.txt (the test proves nothing)"

    try host /bin/sh -c "$restore"
    expect_eq "$RC" 0 "the printed restore command ($(last))"
    expect_eq "$(cd "$WS" && find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 sha256sum)" "$before" \
        "every file restored byte for byte"

    try sb checkpoints -w "$WS"
    expect_eq "$RC" 0 "confine checkpoints ($(last))"
    expect_match "$OUT" 'refs/confine/checkpoints/[0-9]{8}T[0-9]{6}Z' "the checkpoint is listed"

    # A second run in a fresh repository: the checkpoint alone must not move HEAD or change the index.
    OPTS=(--checkpoint)
    rm -rf "$WS/.git"
    g init -q
    g add tracked.txt
    g commit -qm again
    head_before=$(g rev-parse HEAD)
    index_before=$(sha256sum <"$WS/.git/index")
    sandbox /bin/true
    expect_eq "$RC" 0 "a run with --checkpoint ($(last))"
    expect_eq "$(g rev-parse HEAD)" "$head_before" "HEAD after a checkpoint"
    expect_eq "$(sha256sum <"$WS/.git/index")" "$index_before" "the index after a checkpoint"
}
run_variants scenario
