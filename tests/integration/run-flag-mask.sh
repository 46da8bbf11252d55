#!/bin/bash
# run-flag-mask: --mask hides a workspace file (reads as empty) or directory (empty), given relative to the
# workspace or absolute; the host copies are unchanged.
. "$(dirname "$0")/lib.sh"

scenario() {
    mkdir -m 0755 "$WS/private"
    echo "CANARY-mask-file" >"$WS/config.toml"
    echo "CANARY-mask-dir" >"$WS/private/data"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$WS"
    local before
    before=$(tree_sum "$WS")

    probe read "$WS/config.toml"
    expect_eq "$OUT" "OK 17 CANARY-mask-file" "without --mask the file is readable ($(last))"
    OPTS=(--mask config.toml --mask "$WS/private")
    probe read "$WS/config.toml"
    expect_eq "$OUT" "OK 0" "--mask config.toml (relative) reads as empty ($(last))"
    probe ls "$WS/private"
    expect_eq "$OUT" "OK 0" "--mask of a directory lists as empty ($(last))"
    expect_errno ENOENT read "$WS/private/data"
    expect_eq "$(tree_sum "$WS")" "$before" "host workspace"
}
run_variants scenario
