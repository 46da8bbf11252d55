#!/bin/bash
# fallback-fs-write-ws-tmp: in fallback mode the workspace is writable (files land on the host, owned by the
# caller) and so is /tmp — which is the host's /tmp in this mode (a promise confine lists as lost).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"
fallback_base

scenario() {
    fallback_layout
    local tmpfile=/tmp/confine-it-fallback-$VARIANT-$$-$RANDOM
    set_mode fallback
    expect_ok write "$WS/created-inside" "hello from fallback"
    expect_eq "$(cat "$WS/created-inside")" "hello from fallback" "workspace file on the host"
    expect_eq "$(stat -c %u "$WS/created-inside")" "$VUID" "owner of the new workspace file"
    expect_ok mkdir "$WS/subdir"
    expect_ok write "$WS/subdir/f"
    expect_ok unlink "$WS/subdir/f"

    expect_ok write "$tmpfile" "tmp from fallback"
    expect_eq "$(cat "$tmpfile")" "tmp from fallback" "/tmp file, seen on the host (shared /tmp)"
    rm -f "$tmpfile"
}
run_variants scenario
