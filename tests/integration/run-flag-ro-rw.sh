#!/bin/bash
# run-flag-ro-rw: --ro binds a host path read-only (reads work, writes fail with EROFS), --rw read-write
# (writes reach the host); SRC:DEST binds at another absolute path (a new directory at the root, under
# $HOME, under /tmp); relative SRC is relative to the current directory.
. "$(dirname "$0")/lib.sh"

in_dir() {
    local dir=$1
    shift
    (cd "$dir" && "$@")
}

scenario() {
    local data=$V/data out=$V/out
    mkdir -m 0755 "$data" "$out"
    echo "shared-data" >"$data/file"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$data" "$out"

    OPTS=(--ro "$data" --rw "$out")
    expect_ok read "$data/file"
    expect_errno EROFS write "$data/file" changed
    expect_errno EROFS write "$data/new" x
    expect_ok write "$out/result" made-inside
    expect_eq "$(cat "$data/file")" shared-data "host file behind --ro"
    expect_eq "$(cat "$out/result")" made-inside "host file written through --rw"

    local d
    for d in "/confine-data-$$" "$H/.config/data" "/tmp/data-$$"; do
        OPTS=(--ro "$data:$d" --rw "$out:$d-out")
        probe read "$d/file"
        expect_eq "$OUT" "OK 12 shared-data" "read through --ro SRC:$d ($(last))"
        expect_errno EROFS write "$d/file" changed
        expect_ok write "$d-out/result2" "via $d"
        expect_eq "$(cat "$out/result2")" "via $d" "host file written through --rw SRC:$d-out"
    done
    [[ ! -e /confine-data-$$ && ! -e $H/.config ]] || fail "confine created a DEST on the host"

    # Relative SRC: relative to confine's current directory.
    OPTS=(--ro "data:/confine-rel-$$")
    try in_dir "$V" sb -w "$WS" "${OPTS[@]}" -- "$PIN" read "/confine-rel-$$/file"
    expect_eq "$OUT" "OK 12 shared-data" "read through --ro with a relative SRC ($(last))"
}
run_variants scenario
