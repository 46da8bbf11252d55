#!/bin/bash
# run-flag-user: --user UID:GID sets the ids the command sees inside; by default it is the caller's uid
# (the user variant) or, for root, the workspace owner's.
. "$(dirname "$0")/lib.sh"

scenario() {
    probe id
    expect_eq "$OUT" "OK uid=$VUID gid=$VGID euid=$VUID egid=$VGID" "default ids inside ($(last))"
    OPTS=(--user 1234:2345)
    probe id
    expect_eq "$OUT" "OK uid=1234 gid=2345 euid=1234 egid=2345" "ids inside with --user 1234:2345 ($(last))"
    # Still nothing privileged.
    probe status
    expect_match "$OUT" $'CapEff:\t0000000000000000' "CapEff with --user"
}
run_variants scenario
