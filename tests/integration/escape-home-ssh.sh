#!/bin/bash
# escape-home-ssh: the host's ~/.ssh/id_rsa cannot be read inside; $HOME is an empty tmpfs.
. "$(dirname "$0")/lib.sh"

scenario() {
    # Control: without confine, the variant's user can read the key.
    host_probe read "$H/.ssh/id_rsa"
    expect_eq "$OUT" "OK $((${#SSH_CANARY} + 1)) $SSH_CANARY" "host control read"

    expect_errno ENOENT read "$H/.ssh/id_rsa"
    expect_errno ENOENT ls "$H/.ssh"
    # $HOME exists inside and is empty.
    probe ls "$H"
    expect_eq "$OUT" "OK 0" "listing of \$HOME inside ($(last))"
    # The canary is nowhere in the sandbox's view of $HOME.
    sandbox /bin/sh -c 'grep -r -l -s -- "$1" "$HOME" || true' sh "$SSH_CANARY"
    expect_eq "$RC" 0 "grep -r \$HOME exit ($(last))"
    expect_eq "$OUT" "" "files containing the canary"
}
run_variants scenario
