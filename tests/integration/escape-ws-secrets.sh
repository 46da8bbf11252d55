#!/bin/bash
# escape-ws-secrets: workspace secrets are masked: .env, .env.*, *.pem, id_rsa* read as empty files,
# secrets/ as an empty directory; ordinary files stay readable; the host files are unchanged afterwards.
. "$(dirname "$0")/lib.sh"

scenario() {
    local f
    mkdir -m 0755 "$WS/secrets"
    for f in .env .env.local key.pem id_rsa_deploy secrets/token; do
        echo "CANARY-$f-$RANDOM" >"$WS/$f"
    done
    echo "just a readme" >"$WS/README"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$WS"
    local before
    before=$(tree_sum "$WS")

    for f in .env .env.local key.pem id_rsa_deploy; do
        probe read "$WS/$f"
        expect_eq "$OUT" "OK 0" "read $f inside ($(last))"
    done
    expect_errno ENOENT read "$WS/secrets/token"
    probe ls "$WS/secrets"
    expect_eq "$OUT" "OK 0" "listing secrets/ inside ($(last))"
    probe read "$WS/README"
    expect_eq "$OUT" "OK 14 just a readme" "read README inside (masking must not be too broad) ($(last))"
    # Relative paths and tools see the same.
    sandbox /bin/sh -c 'cat .env key.pem id_rsa_deploy; ls -A secrets'
    expect_eq "$OUT" "" "cat of masked files inside ($(last))"

    # Writing through the masks must not change the host files.
    for f in .env .env.local key.pem id_rsa_deploy secrets/token; do
        probe write "$WS/$f" overwritten
    done
    sandbox /bin/sh -c 'rm -rf secrets .env key.pem 2>/dev/null; mv .env.local x 2>/dev/null; true'
    expect_eq "$(tree_sum "$WS")" "$before" "host workspace after writes to the masked files"
}
run_variants scenario
