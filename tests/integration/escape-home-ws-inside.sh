#!/bin/bash
# escape-home-ws-inside: the common layout, a workspace inside $HOME (~/src/app): the workspace is there
# and writable, but the rest of $HOME (~/.ssh, ~/.aws, sibling projects) stays invisible, and writes next
# to the workspace never reach the host's $HOME.
. "$(dirname "$0")/lib.sh"

scenario() {
    WS=$H/src/app
    mkdir -p -m 0755 "$WS/.probe" "$H/src/other-project"
    echo "CANARY-sibling" >"$H/src/other-project/notes"
    echo "readme" >"$WS/README"
    cp "$PROBE" "$WS/.probe/confine-test-probe"
    PIN=$WS/.probe/confine-test-probe
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$H"
    local before
    before=$(tree_sum "$H")

    expect_errno ENOENT read "$H/.ssh/id_rsa"
    expect_errno ENOENT read "$H/.aws/credentials"
    expect_errno ENOENT read "$H/src/other-project/notes"
    probe read "$WS/README"
    expect_eq "$OUT" "OK 7 readme" "read of a workspace file ($(last))"
    probe ls "$H/src"
    expect_eq "$OUT" "OK 1 app" "listing of ~/src inside ($(last))"
    expect_ok write "$WS/made-inside"
    probe write "$H/src/escape"
    probe write "$H/.bashrc" evil
    rm "$WS/made-inside"
    expect_eq "$(tree_sum "$H")" "$before" "host \$HOME around the workspace"
}
run_variants scenario
