#!/bin/bash
# checkpoint-sparse: a 2 GiB sparse file (`truncate -s 2G`, 1 MiB of data in the middle) does not slow the
# start: a run with --checkpoint takes well under 5 s, and a restore after the run deleted the file brings it
# back sparse (same size, same data, a few blocks). A file with more data than a checkpoint copies of one file
# (1 GiB: `fallocate -l 1100M`) is not saved and not silently: the start-up warning and `confine checkpoints
# list` name it and say why; a restore leaves it where it is, and once a run has deleted it, a restore names it as
# not brought back (with -q too).
. "$(dirname "$0")/lib.sh"

command -v fallocate >/dev/null || skip "fallocate (util-linux) is not installed"

scenario() {
    truncate -s 2G "$WS/big.img"
    head -c 1048576 /dev/urandom >"$V/middle"
    dd if="$V/middle" of="$WS/big.img" bs=1M seek=1024 conv=notrunc status=none
    fallocate -l 1100M "$WS/huge.bin"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$WS"
    local huge_ino start elapsed
    huge_ino=$(stat -c %i "$WS/huge.bin")

    OPTS=(--checkpoint)
    start=$(date +%s%N)
    sandbox /bin/sh -c 'rm big.img'
    elapsed=$((($(date +%s%N) - start) / 1000000))
    expect_eq "$RC" 0 "the run ($(last))"
    ((elapsed < 5000)) || fail "a run with --checkpoint and a 2 GiB sparse file took ${elapsed} ms (bound: 5000 ms)"
    expect_match "$ERRS" "confine: warning: checkpoint [^ ]+ did not save huge\\.bin \\(1\\.[0-9] GiB of data, more than the 1\\.0 GiB a checkpoint copies of one file\\)" \
        "the start-up warning names the file past the budget"
    [[ ! -e $WS/big.img ]] || fail "the run did not delete big.img (the test proves nothing)"

    try sb checkpoints list -w "$WS"
    expect_match "$OUT" "not saved: huge\\.bin \\(1\\.[0-9] GiB of data, more than" "checkpoints list names the file not saved"

    try sb checkpoints restore -w "$WS" latest
    expect_eq "$RC" 0 "restore ($(last))"
    expect_eq "$(stat -c %s "$WS/big.img")" 2147483648 "big.img's size after the restore"
    (($(stat -c %b "$WS/big.img") * $(stat -c %B "$WS/big.img") <= 4 * 1048576)) ||
        fail "big.img was restored with $(stat -c %b "$WS/big.img") blocks: not sparse"
    expect_eq "$(dd if="$WS/big.img" bs=1M skip=1024 count=1 status=none | sha256sum)" "$(sha256sum <"$V/middle")" "big.img's data"
    expect_eq "$(dd if="$WS/big.img" bs=1M skip=1023 count=1 status=none | tr -d '\0' | wc -c)" 0 "big.img's hole reads as zeros"
    expect_eq "$(stat -c %i "$WS/huge.bin")" "$huge_ino" "the file not saved is left as it was"

    # A run deletes the file no checkpoint saved: the restore says it cannot bring it back, -q or not.
    sandbox /bin/sh -c 'rm huge.bin'
    expect_eq "$RC" 0 "the run that deletes huge.bin ($(last))"
    try sb -q checkpoints restore -w "$WS" latest
    expect_eq "$RC" 0 "restore after huge.bin was deleted ($(last))"
    expect_match "$ERRS" "confine: warning: not brought back: huge\\.bin is gone and checkpoint [^ ]+ did not save it \\(1\\.[0-9] GiB of data" \
        "the restore names the file it cannot bring back"
    expect_match "$ERRS" "restored checkpoint [^ ]+ into $WS, but for the 1 file named above" "the restore does not just say restored"
}
run_variants scenario
