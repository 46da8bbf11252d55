#!/bin/bash
# checkpoint-restore: `confine checkpoints restore` undoes a run's changes without asking, and refuses to
# overwrite what was changed after the run: a file edited by hand once the run had ended makes it exit 125 with
# one line naming the file, and nothing in the workspace changes; --force then restores. A run killed before it
# ended leaves no record of how it left the workspace: restore refuses too. Two checkpoints made in the same
# second get two ids; `confine checkpoints list` shows both; an unknown id is one line, exit 125. A FIFO in the
# workspace, which a checkpoint does not save, is named at the start and left alone by a restore.
. "$(dirname "$0")/lib.sh"

ws_state() {
    (cd "$WS" && find . \( -type d -printf '%p d %m %U\n' \) -o \( -type l -printf '%p l %l %U\n' \) \
        -o \( -type f -printf '%p f %m %U %s %T@\n' \) | sort && find . -type f -exec sha256sum {} + | sort)
}
as_user() { [[ $SUITE_UID != 0 ]] || chown -hR "$VUID:$VGID" "$@"; }

# refused WHY-REGEX ARGS...: restore exits 125 with one line matching WHY-REGEX and leaves the workspace as it was.
refused() {
    local regex=$1 state
    shift
    state=$(ws_state)
    try sb checkpoints restore -w "$WS" "$@"
    expect_eq "$RC" 125 "restore $* ($(last))"
    expect_match "$ERRS" '^confine: [^'$'\n'']+$' "restore $*: one line on stderr"
    expect_match "$ERRS" "$regex" "restore $*: the reason"
    expect_eq "$(ws_state)" "$state" "the workspace after a refused restore"
}

checkpoint_id() { sed -n 's/^confine: checkpoint \([^ ]*\) saved .*/\1/p' <<<"$1"; }

scenario() {
    echo original >"$WS/notes.txt"
    echo keep >"$WS/other.txt"
    mkfifo "$WS/pipe"  # not saved (said at the start), nor removed by a restore
    as_user "$WS"
    local before id
    before=$(ws_state)

    # A run's own changes: restore needs no --force.
    OPTS=(--checkpoint)
    sandbox /bin/sh -c 'echo agent >notes.txt; rm other.txt; mkdir made; echo x >made/file'
    expect_eq "$RC" 0 "the run ($(last))"
    id=$(checkpoint_id "$ERRS")
    [[ -n $id ]] || fail "no checkpoint id on the start-up line: $ERRS"
    expect_match "$ERRS" "warning: checkpoint $id did not save pipe \\(a FIFO: only files, directories and links are saved\\)" \
        "the start-up warning names the FIFO"
    try sb checkpoints restore -w "$WS" "$id"
    expect_eq "$RC" 0 "restore $id after the run ($(last))"
    expect_eq "$(ws_state)" "$before" "the workspace after restoring the run's own changes"
    [[ -p $WS/pipe ]] || fail "the restore removed the FIFO it had not saved"
    # Restoring again: the workspace is as the last restore left it.
    try sb checkpoints restore -w "$WS"
    expect_eq "$RC" 0 "a second restore, without --force ($(last))"

    # A hand edit after the run: refused, then --force.
    sandbox /bin/sh -c 'echo agent >notes.txt'
    expect_eq "$RC" 0 "the second run ($(last))"
    host /bin/sh -c "echo 'my own edit' >>'$WS/other.txt'"
    refused "the workspace changed after the last run with --checkpoint ended \\(other.txt changed\\).*--force" latest
    try sb checkpoints restore -w "$WS" latest --force
    expect_eq "$RC" 0 "restore --force ($(last))"
    expect_eq "$(ws_state)" "$before" "the workspace after restore --force"

    # A new file by hand counts too.
    sandbox /bin/true
    host /bin/sh -c "echo mine >'$WS/mine.txt'"
    refused "\\(mine.txt added\\)" latest
    host rm "$WS/mine.txt"

    # A run that never ended (confine killed): no record of how it left the workspace.
    sb_bg -w "$WS" --checkpoint -- /bin/sh -c 'echo half >notes.txt; sleep 60' 2>"$V/killed.err"
    local i
    for ((i = 0; i < 100; i++)); do
        [[ $(cat "$WS/notes.txt") == half ]] && break
        sleep 0.1
    done
    kill -KILL "$BG_PID"
    wait "$BG_PID" 2>/dev/null || true
    refused "no record of how the last run with --checkpoint left the workspace" latest
    try sb checkpoints restore -w "$WS" --force
    expect_eq "$RC" 0 "restore --force after a killed run ($(last))"
    expect_eq "$(cat "$WS/notes.txt")" original "notes.txt after restore --force"

    # Unique ids: two checkpoints started together until both fall in one second.
    local ids a b
    for ((i = 0; i < 10; i++)); do
        sb -w "$WS" --checkpoint -- /bin/true 2>"$V/a.err" &
        a=$!
        sb -w "$WS" --checkpoint -- /bin/true 2>"$V/b.err" &
        b=$!
        wait "$a" "$b"
        ids=$(checkpoint_id "$(cat "$V/a.err" "$V/b.err")")
        expect_eq "$(sort -u <<<"$ids" | wc -l)" 2 "two checkpoints, two ids ($ids)"
        [[ $(cut -c1-16 <<<"$ids" | sort -u | wc -l) == 1 ]] && break
    done
    ((i < 10)) || fail "no two checkpoints fell in the same second in 10 tries"
    expect_match "$ids" "Z-[0-9]+" "the second checkpoint of a second gets a number"
    try sb checkpoints list -w "$WS"
    while read -r id; do expect_match "$OUT" "  $id  " "checkpoint $id is listed"; done <<<"$ids"

    refused "\`nosuch\` is not a checkpoint id" nosuch
    refused "no checkpoint \`20000101T000000Z\` of $WS" 20000101T000000Z
    try sb checkpoints restore -w "$V/nowhere" latest
    expect_eq "$RC" 125 "restore in a missing workspace ($(last))"
}
# A directory that can be listed but not entered (0444): its names cannot be saved, so the checkpoint says so, and a
# restore leaves them where they are instead of removing what it never saved. Root enters any directory: user only.
unreachable_names() {
    WS=$V/ws-unreachable
    mkdir -p "$WS/d"
    echo precious >"$WS/d/x"
    as_user "$WS"
    chmod 444 "$WS/d"
    OPTS=(--checkpoint)
    sandbox /bin/true
    expect_eq "$RC" 0 "the run with a directory it cannot enter ($(last))"
    expect_match "$ERRS" "did not save d/x \\(Permission denied\\)" "the checkpoint names the file it could not save"
    try sb checkpoints restore -w "$WS" latest
    expect_eq "$RC" 0 "restore ($(last))"
    chmod 755 "$WS/d"
    expect_eq "$(cat "$WS/d/x" 2>&1)" "precious" "the file the checkpoint could not save, after the restore"
}
both() {
    scenario
    [[ $VUID == 0 ]] || unreachable_names
}
run_variants both
