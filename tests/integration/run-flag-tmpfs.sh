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

    # Docker's options: size= bounds it (ENOSPC past it), mode= sets the root's mode; others are refused.
    OPTS=(--tmpfs "/scratch:size=1m,mode=0700")
    sandbox /bin/sh -c 'stat -c %a /scratch; head -c 2097152 /dev/zero >/scratch/big; echo "rc=$?"'
    expect_match "$OUT" $'^700
rc=1$' "--tmpfs /scratch:size=1m,mode=0700 ($(last))"
    expect_match "$ERRS" 'No space left on device' "writing 2 MiB into a 1 MiB tmpfs"
    OPTS=(--tmpfs "/scratch:exec")
    sandbox /bin/true
    expect_eq "$RC" 125 "--tmpfs with an unsupported option ($(last))"
    expect_match "$ERRS" 'option `exec` is not supported' "the error names the option"
}
run_variants scenario
