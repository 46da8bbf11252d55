#!/bin/bash
# escape-ws-secrets-unreadable: a directory the secret scan cannot list (run 1 made it write-only, `chmod 333 cfg`;
# then the user wrote cfg/.env) is masked whole, with a warning: run 2 cannot chmod it back and read the secret.
# Root reads every directory, so there the file itself is found and masked; either way the canary stays out.
. "$(dirname "$0")/lib.sh"

scenario() {
    local canary="CANARY-unreadable-$RANDOM$RANDOM"
    echo "just a readme" >"$WS/README"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$WS"
    sandbox sh -c 'mkdir cfg && chmod 333 cfg'
    expect_eq "$RC" 0 "run 1 makes cfg write-only ($(last))"
    # The user, on the host, writes a secret into it (write and search permission are enough).
    host sh -c "echo $canary >'$WS/cfg/.env'"
    # Control: with the permission back, the file is readable on the host.
    expect_eq "$(host sh -c "chmod 755 '$WS/cfg' && cat '$WS/cfg/.env' && chmod 333 '$WS/cfg'")" "$canary" "host control"

    sandbox sh -c 'chmod 755 cfg 2>/dev/null; cat cfg/.env 2>/dev/null; cat README'
    [[ $OUT != *"$canary"* ]] || fail "run 2 read the secret in a directory the scan could not list ($(last))"
    expect_match "$OUT" "just a readme" "the rest of the workspace stays readable ($(last))"
    if [[ $VARIANT == user ]]; then
        expect_match "$ERRS" "masked $WS/cfg/ whole: the scan for secret files could not read it" "the warning"
        # Masked whole: the sandbox could not even chmod the host's directory back.
        expect_eq "$(stat -c %a "$WS/cfg")" 333 "the host directory's mode"
    fi
    chmod 755 "$WS/cfg"
    expect_eq "$(cat "$WS/cfg/.env")" "$canary" "the host file"
}
run_variants scenario
