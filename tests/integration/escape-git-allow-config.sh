#!/bin/bash
# escape-git-allow-config: --allow-git-config lifts the read-only .git/hooks and .git/config (the opt-in
# works, and writes reach the host's repository).
. "$(dirname "$0")/lib.sh"

scenario() {
    host git init -q "$WS"
    OPTS=(--allow-git-config)
    expect_ok write "$WS/.git/hooks/pre-commit" $'#!/bin/sh\nexit 0\n'
    sandbox git config confine.test yes
    expect_eq "$RC" 0 "git config inside with --allow-git-config ($(last))"
    expect_eq "$(cat "$WS/.git/hooks/pre-commit")" $'#!/bin/sh\nexit 0' "host hook content"
    expect_eq "$(git config -f "$WS/.git/config" confine.test)" yes "host .git/config"
}
run_variants scenario
