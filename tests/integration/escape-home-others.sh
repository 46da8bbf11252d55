#!/bin/bash
# escape-home-others: /home/* and /root show no host content inside.
. "$(dirname "$0")/lib.sh"

# As root, plant canaries in a fake /home/<user> and in /root (removed at exit).
HOME_CANARY="CANARY-home-$RANDOM$RANDOM"
OTHER_HOME=/home/confine-it-$$
ROOT_CANARY_FILE=/root/.confine-it-canary-$$
if [[ $SUITE_UID == 0 ]]; then
    at_exit "rm -rf '$OTHER_HOME' '$ROOT_CANARY_FILE'"
    mkdir -p -m 0755 "$OTHER_HOME/.ssh"
    echo "$HOME_CANARY" >"$OTHER_HOME/.ssh/id_rsa"
    chmod 0644 "$OTHER_HOME/.ssh/id_rsa"
    echo "$HOME_CANARY" >"$ROOT_CANARY_FILE"
fi

# A hidden directory is either absent or empty: both mean "no host content".
expect_hidden_dir() {
    probe ls "$1"
    [[ ($RC == 0 && $OUT == "OK 0") || ($RC == 1 && $OUT == ENOENT) ]] ||
        fail "$1 inside should be empty or absent, got $(last)"
}

scenario() {
    expect_hidden_dir /home
    expect_hidden_dir /root
    if [[ $SUITE_UID == 0 ]]; then
        host_probe read "$OTHER_HOME/.ssh/id_rsa"
        expect_eq "$RC" 0 "host control read of $OTHER_HOME/.ssh/id_rsa ($(last))"
        expect_errno ENOENT read "$OTHER_HOME/.ssh/id_rsa"
        expect_errno ENOENT read "$ROOT_CANARY_FILE"
    fi
    # Whatever exists on the host under /home is not visible.
    local entry
    for entry in /home/*; do
        [[ -e $entry ]] || continue
        expect_errno ENOENT stat "$entry"
    done
}
run_variants scenario
