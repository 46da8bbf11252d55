#!/bin/bash
# escape-ws-symlink: symlinks in the workspace that point out of it (to ~/.ssh, the host's /tmp, the
# workspace's parent) resolve inside the sandbox's view, where the targets do not exist (ENOENT).
. "$(dirname "$0")/lib.sh"

scenario() {
    echo "CANARY-parent-$VARIANT" >"$V/outside-secret"
    chmod 0644 "$V/outside-secret"
    host ln -s "$H/.ssh/id_rsa" "$WS/link"
    host ln -s "$V/outside-secret" "$WS/link-parent"
    host ln -s ../outside-secret "$WS/link-relative"
    host_probe read "$WS/link"
    expect_eq "$RC" 0 "host control: the symlink works outside ($(last))"

    expect_errno ENOENT read "$WS/link"
    expect_errno ENOENT read "$WS/link-parent"
    expect_errno ENOENT read "$WS/link-relative"
    expect_errno ENOENT read "$WS/../outside-secret"
    # A symlink created inside does not help either.
    sandbox ln -s "$H/.aws/credentials" "$WS/link-made-inside"
    expect_eq "$RC" 0 "ln -s inside ($(last))"
    expect_errno ENOENT read "$WS/link-made-inside"
}
run_variants scenario
