#!/bin/bash
# escape-fs-write-ws-parent: only the workspace itself is writable.  For a workspace in an ordinary host
# directory (here under /mnt), the directories leading to it are part of the sandbox's read-only root:
# creating files next to the workspace fails with EROFS.  For a workspace under /tmp, its parent is on the
# sandbox's private /tmp: whatever happens there, nothing reaches the host's parent directory.
. "$(dirname "$0")/lib.sh"

MNT=
if [[ $SUITE_UID == 0 ]]; then
    MNT=$(mktemp -d /mnt/confine-it.XXXXXXXX)
    chmod 0755 "$MNT"
    at_exit "rm -rf '$MNT'"
fi

scenario() {
    # Workspace under /tmp: the host's parent directory is unchanged, whatever the sandbox writes there.
    local before
    before=$(tree_sum "$V")
    probe write "$V/escape"
    echo "write next to a workspace under /tmp: $(last)"
    probe write "$WS/../escape2"
    [[ ! -e $V/escape && ! -e $V/escape2 ]] || fail "a file written inside appeared in the workspace's parent on the host"
    expect_eq "$(tree_sum "$V")" "$before" "host tree of the workspace's parent"

    [[ -n $MNT ]] || skip "a workspace outside /tmp and \$HOME needs root to create (under /mnt)"
    local parent=$MNT/$VARIANT
    mkdir -m 0755 "$parent"
    WS=$parent/ws
    mkdir -m 0755 "$WS" "$WS/.probe"
    cp "$PROBE" "$WS/.probe/confine-test-probe"
    PIN=$WS/.probe/confine-test-probe
    chown -R "$VUID:$VGID" "$WS"
    before=$(tree_sum "$MNT")

    expect_ok write "$WS/inside-is-fine"
    expect_errno EROFS write "$parent/escape"
    expect_errno EROFS mkdir "$parent/escape-dir"
    expect_errno EROFS write "$WS/../escape2"
    expect_errno EROFS write "$MNT/escape3"
    rm "$WS/inside-is-fine"
    expect_eq "$(tree_sum "$MNT")" "$before" "host tree around the workspace"
}
run_variants scenario
