#!/bin/bash
# fallback-fs-write-outside: in fallback mode (--no-namespaces --best-effort), Landlock is the filesystem wall:
# creating, overwriting or deleting files in a directory next to the workspace fails with EACCES, and the host
# tree is unchanged.  (The workspace is moved out of /tmp, which is writable in this mode.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"
fallback_base

scenario() {
    fallback_layout
    local side=$FB_DIR/side before
    mkdir -m 0755 "$side"
    echo original >"$side/victim"
    chown -R "$VUID:$VGID" "$side"
    # Control: the variant's user may write there on the host.
    host_probe write "$side/host-control"
    expect_eq "$OUT" OK "host control: write next to the workspace ($(last))"
    rm -f "$side/host-control"
    before=$(tree_sum "$FB_DIR")

    set_mode fallback
    expect_errno EACCES write "$side/new-file"
    expect_errno EACCES write "$side/victim" overwritten
    expect_errno EACCES unlink "$side/victim"
    expect_errno EACCES mkdir "$side/new-dir"
    expect_errno EACCES write "$FB_DIR/in-the-parent"
    expect_eq "$(tree_sum "$FB_DIR")" "$before" "the host tree next to the workspace after the attempts"
}
run_variants scenario
