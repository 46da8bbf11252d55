#!/bin/bash
# escape-ws-secrets-cached: the workspace-scan cache never lets a secret through. After runs that filled the cache
# (directories old enough to be trusted from it), a secret added deep in a cached directory, a secret directory
# that replaces a plain one, and a secret under a directory that was unreadable before are all masked next run.
. "$(dirname "$0")/lib.sh"

scenario() {
    local d
    mkdir -p "$WS/src/app/lib/deep" "$WS/docs/old" "$WS/locked/inner"
    echo "readme" >"$WS/src/app/README"
    chmod 000 "$WS/locked"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$WS"
    # Directories changed within the last 2 s are never trusted from the cache (coarse ctimes): age them first.
    sleep 2.2
    sandbox /bin/true
    expect_eq "$RC" 0 "first run (fills the cache) ($(last))"
    sandbox /bin/true
    expect_eq "$RC" 0 "second run (from the cache) ($(last))"
    [[ -n $(find "$XDG" -type f 2>/dev/null) ]] || fail "no scan cache was written under $XDG"

    echo "CANARY-deep-$RANDOM" >"$WS/src/app/lib/deep/.env"
    rmdir "$WS/docs/old" && mkdir "$WS/docs/secrets" && echo "CANARY-dir-$RANDOM" >"$WS/docs/secrets/token"
    chmod 0755 "$WS/locked" && echo "CANARY-locked-$RANDOM" >"$WS/locked/inner/id_rsa"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$WS"

    probe read "$WS/src/app/lib/deep/.env"
    expect_eq "$OUT" "OK 0" "secret added in a cached directory ($(last))"
    expect_errno ENOENT read "$WS/docs/secrets/token"
    probe read "$WS/locked/inner/id_rsa"
    expect_eq "$OUT" "OK 0" "secret under a directory that was unreadable at the last scan ($(last))"
    probe read "$WS/src/app/README"
    expect_eq "$OUT" "OK 7 readme" "ordinary file still readable ($(last))"
}
run_variants scenario
