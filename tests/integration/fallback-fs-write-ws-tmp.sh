#!/bin/bash
# fallback-fs-write-ws-tmp: in fallback mode the workspace is writable (files land on the host, owned by the
# caller), and $TMPDIR (the run's own); the host's shared /tmp is not, though the caller may write it outside.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"
fallback_base

scenario() {
    fallback_layout
    local tmpfile=/tmp/confine-it-fallback-$VARIANT-$$-$RANDOM
    set_mode fallback
    expect_ok write "$WS/created-inside" "hello from fallback"
    expect_eq "$(cat "$WS/created-inside")" "hello from fallback" "workspace file on the host"
    expect_eq "$(stat -c %u "$WS/created-inside")" "$VUID" "owner of the new workspace file"
    expect_ok mkdir "$WS/subdir"
    expect_ok write "$WS/subdir/f"
    expect_ok unlink "$WS/subdir/f"

    sandbox sh -c 'echo tmp from fallback >"$TMPDIR/f" && cat "$TMPDIR/f"'
    expect_eq "$RC:$OUT" "0:tmp from fallback" "a file in \$TMPDIR ($(last))"
    host_probe write "$tmpfile"
    expect_eq "$OUT" OK "host control: the caller writes $tmpfile outside ($(last))"
    rm -f "$tmpfile"
    expect_errno EACCES write "$tmpfile" "tmp from fallback"
    [[ ! -e $tmpfile ]] || fail "$tmpfile was created from the sandbox"
}
run_variants scenario
