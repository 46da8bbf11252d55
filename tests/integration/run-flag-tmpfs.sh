#!/bin/bash
# run-flag-tmpfs: --tmpfs DEST mounts an empty writable tmpfs at DEST, hiding what the host has there; the
# writes stay in the sandbox.
. "$(dirname "$0")/lib.sh"

scenario() {
    mkdir -m 0755 "$WS/cache"
    echo host-content >"$WS/cache/old"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$WS/cache"
    OPTS=(--tmpfs "$WS/cache")
    probe ls "$WS/cache"
    expect_eq "$OUT" "OK 0" "listing of the --tmpfs dir inside ($(last))"
    expect_ok write "$WS/cache/new" x
    expect_eq "$(ls "$WS/cache")" old "host dir behind --tmpfs"
    sandbox /bin/sh -c 'grep -E " '"$WS"'/cache " /proc/self/mounts | cut -d" " -f3'
    expect_eq "$OUT" tmpfs "filesystem type at the --tmpfs dest ($(last))"
}
run_variants scenario
