#!/bin/bash
# checkpoint-incremental: a second checkpoint of an unchanged workspace copies nothing: the start-up line says
# every file is unchanged since the previous checkpoint and 0 B were copied, and on the host it stores no tree of
# its own (it refers to the first). A sandbox that then writes a file in place and sets its size and mtime back (a
# forged "unchanged") does not change what either checkpoint holds: the next checkpoint copies the file anew, the
# older ones still hold the old bytes, and restoring one brings them back. Removing the first checkpoint hands its
# tree to the second (the same inodes, nothing copied), which still restores, and is refused while what the second
# refers to cannot be read; a changed directory of a later
# checkpoint holds only what changed in it, and once prune has left it alone it restores the whole workspace.
. "$(dirname "$0")/lib.sh"

checkpoint_id() { sed -n 's/^confine: checkpoint \([^ ]*\) saved .*/\1/p' <<<"$1"; }
store_of() { sed -n 's/.*(store \(.*\)):$/\1/p' <<<"$1"; }

scenario() {
    local i
    mkdir -p "$WS/src"
    for ((i = 0; i < 300; i++)); do echo "file $i" >"$WS/src/f$i.txt"; done
    head -c 1048576 /dev/urandom >"$WS/big.bin"
    cp "$WS/big.bin" "$V/big.orig"
    [[ $SUITE_UID != 0 ]] || chown -hR "$VUID:$VGID" "$WS"
    local files
    files=$(find "$WS" -type f | wc -l)

    OPTS=(--checkpoint)
    sandbox /bin/true
    expect_eq "$RC" 0 "the first run ($(last))"
    local first second third
    first=$(checkpoint_id "$ERRS")
    sandbox /bin/true
    expect_eq "$RC" 0 "the second run ($(last))"
    second=$(checkpoint_id "$ERRS")
    expect_match "$ERRS" "checkpoint $second saved \\($files files, 0 B copied, $files unchanged since the previous checkpoint\\)" \
        "the second checkpoint copies nothing"

    try sb checkpoints list -w "$WS"
    local store
    store=$(store_of "$OUT")
    [[ -d $store/$first/tree ]] || fail "no store found in: $OUT"
    [[ -e $store/$second/tree ]] && fail "the unchanged second checkpoint stored a tree of its own"
    # NAME INODE of every file below a tree.
    inodes() { (cd "$1" && find . -type f -printf '%P %i\n' | sort); }
    expect_eq "$(comm -12 <(inodes "$store/$first/tree") <(inodes "$WS"))" "" "checkpoint files that are workspace files"
    expect_eq "$(inodes "$store/$first/tree" | wc -l)" "$files" "the files of the first checkpoint"
    local first_inodes
    first_inodes=$(inodes "$store/$first/tree")

    # In place, then size and mtime set back: the ctime still tells.
    sandbox /bin/sh -c 'touch -r big.bin stamp; printf XXXX | dd of=big.bin bs=1 seek=100 conv=notrunc status=none; touch -r stamp big.bin; rm stamp'
    expect_eq "$RC" 0 "the run that forges an unchanged file ($(last))"
    cmp -s "$WS/big.bin" "$V/big.orig" && fail "the run did not change big.bin (the test proves nothing)"
    cmp -s "$store/$first/tree/big.bin" "$V/big.orig" || fail "a write in the workspace changed the first checkpoint's copy"
    sandbox /bin/true
    third=$(checkpoint_id "$ERRS")
    expect_match "$ERRS" "checkpoint $third saved \\($files files, (1\\.0 MiB copied|0 B copied, 1 cloned), $((files - 1)) unchanged" \
        "the next checkpoint copies the forged file anew"
    cmp -s "$store/$third/tree/big.bin" "$WS/big.bin" || fail "the third checkpoint does not hold the changed big.bin"
    [[ -e $store/$third/tree/src ]] && fail "the third checkpoint stored the unchanged src/ again"
    cmp -s "$store/$first/tree/big.bin" "$V/big.orig" || fail "the third checkpoint changed the first's copy"

    try sb checkpoints restore -w "$WS" "$second"
    expect_eq "$RC" 0 "restore $second ($(last))"
    cmp -s "$WS/big.bin" "$V/big.orig" || fail "restoring $second did not bring back big.bin's bytes"

    # A list of what the second refers to that cannot be read (here: not the store owner's file) is not taken for
    # an empty one: removing the first would delete what the second and third still need.
    local owner
    owner=$(stat -c %u:%g "$store/$second/shared")
    chown 54321:54321 "$store/$second/shared"
    try sb checkpoints rm -w "$WS" "$first"
    chown "$owner" "$store/$second/shared"
    expect_eq "$RC" 125 "removing the first while the second's list cannot be read ($(last))"
    expect_match "$ERRS" "checkpoints rm: removing checkpoint $first: checkpoint $second: reading .shared." \
        "the refused removal names the list it could not read"
    [[ -d $store/$first/tree ]] || fail "the refused removal deleted the first checkpoint's tree"

    # The first goes: the second (and through it the third) gets its tree, moved, not copied.
    try sb checkpoints rm -w "$WS" "$first"
    expect_eq "$RC" 0 "removing the first checkpoint ($(last))"
    [[ -e $store/$first ]] && fail "the first checkpoint is still there"
    expect_eq "$(inodes "$store/$second/tree")" "$first_inodes" "the second checkpoint holds the first's files after its removal"
    OPTS=()
    sandbox /bin/sh -c 'rm -r src; echo new >big.bin'
    try sb checkpoints restore -w "$WS" --force "$third"
    expect_eq "$RC" 0 "restore $third after the first was removed ($(last))"
    expect_eq "$(cat "$WS/src/f7.txt")" "file 7" "src/ of the third checkpoint, kept by the second"
    cmp -s "$WS/big.bin" "$store/$third/tree/big.bin" || fail "restoring $third did not bring back its big.bin"
    expect_eq "$(find "$WS" -type f | wc -l)" "$files" "the files restored from $third"

    # Only the newest stays: it gets all it referred to, and alone brings the workspace back.
    try sb checkpoints prune -w "$WS" --keep 1
    expect_eq "$RC" 0 "prune --keep 1 ($(last))"
    expect_eq "$(ls "$store" | grep -c '^[0-9]')" 1 "checkpoints left after prune --keep 1"
    sandbox /bin/sh -c 'rm -rf ./* ./.[!.]*'
    try sb checkpoints restore -w "$WS" --force "$third"
    expect_eq "$RC" 0 "restore $third, the only one left ($(last))"
    expect_eq "$(cat "$WS/src/f299.txt")" "file 299" "src/ of the third checkpoint after prune"
    expect_eq "$(find "$WS" -type f | wc -l)" "$files" "the files restored from $third alone"
}
run_variants scenario
