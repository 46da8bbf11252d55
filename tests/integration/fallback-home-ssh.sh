#!/bin/bash
# fallback-home-ssh: in fallback mode, $HOME/.ssh/id_rsa and $HOME/.aws/credentials cannot be read (EACCES:
# Landlock grants nothing under the home directory), nor the home directory listed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"
fallback_base

scenario() {
    fallback_layout
    host_probe read "$H/.ssh/id_rsa"
    expect_match "$OUT" "^OK [0-9]+ $SSH_CANARY\$" "host control: read ~/.ssh/id_rsa ($(last))"

    set_mode fallback
    expect_errno EACCES read "$H/.ssh/id_rsa"
    expect_no_match "$OUT" "$SSH_CANARY" "probe output"
    expect_errno EACCES read "$H/.aws/credentials"
    expect_errno EACCES ls "$H/.ssh"
    expect_errno EACCES ls "$H"
    sandbox /bin/sh -c 'cat "$HOME/.ssh/id_rsa" "$HOME"/.aws/* 2>&1; true'
    expect_no_match "$OUT" "CANARY" "cat of the home secrets through a shell"
}
run_variants scenario
