#!/bin/bash
# checkpoint-incremental: a second checkpoint of an unchanged workspace copies nothing: the start-up line says
# every file is unchanged since the previous checkpoint and 0 B were copied, and on the host each of its files is
# the previous checkpoint's file (the same inode), never a workspace file's. A sandbox that then writes a file in
# place and sets its size and mtime back (a forged "unchanged") does not change what either checkpoint holds: the
# next checkpoint copies the file anew, the older one still holds the old bytes, and restoring it brings them back.
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
    [[ -d $store/$second/tree ]] || fail "no store found in: $OUT"
    # NAME INODE of every file below a tree.
    inodes() { (cd "$1" && find . -type f -printf '%P %i\n' | sort); }
    expect_eq "$(inodes "$store/$second/tree")" "$(inodes "$store/$first/tree")" "the second checkpoint's files are the first's"
    expect_eq "$(comm -12 <(inodes "$store/$second/tree") <(inodes "$WS"))" "" "checkpoint files that are workspace files"
    expect_eq "$(inodes "$store/$second/tree" | wc -l)" "$files" "the files of the second checkpoint"

    # In place, then size and mtime set back: the ctime still tells.
    sandbox /bin/sh -c 'touch -r big.bin stamp; printf XXXX | dd of=big.bin bs=1 seek=100 conv=notrunc status=none; touch -r stamp big.bin; rm stamp'
    expect_eq "$RC" 0 "the run that forges an unchanged file ($(last))"
    cmp -s "$WS/big.bin" "$V/big.orig" && fail "the run did not change big.bin (the test proves nothing)"
    cmp -s "$store/$second/tree/big.bin" "$V/big.orig" || fail "a write in the workspace changed the second checkpoint's copy"
    cmp -s "$store/$first/tree/big.bin" "$V/big.orig" || fail "a write in the workspace changed the first checkpoint's copy"
    sandbox /bin/true
    third=$(checkpoint_id "$ERRS")
    expect_match "$ERRS" "checkpoint $third saved \\($files files, (1\\.0 MiB copied|0 B copied, 1 cloned), $((files - 1)) unchanged" \
        "the next checkpoint copies the forged file anew"
    cmp -s "$store/$third/tree/big.bin" "$WS/big.bin" || fail "the third checkpoint does not hold the changed big.bin"
    cmp -s "$store/$second/tree/big.bin" "$V/big.orig" || fail "the third checkpoint changed the second's copy"

    try sb checkpoints restore -w "$WS" "$second"
    expect_eq "$RC" 0 "restore $second ($(last))"
    cmp -s "$WS/big.bin" "$V/big.orig" || fail "restoring $second did not bring back big.bin's bytes"
}
run_variants scenario
