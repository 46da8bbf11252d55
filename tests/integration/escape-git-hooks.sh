#!/bin/bash
# escape-git-hooks: .git/hooks and .git/config are read-only inside (EROFS), so the sandbox cannot plant a
# hook or a config (core.hooksPath, core.fsmonitor, aliases) that the host's git would run later.
. "$(dirname "$0")/lib.sh"

scenario() {
    host git init -q "$WS"
    echo .probe/ >>"$WS/.git/info/exclude"
    local before
    before=$(tree_sum "$WS/.git/hooks"; sha256sum <"$WS/.git/config")

    expect_errno EROFS write "$WS/.git/hooks/pre-commit" $'#!/bin/sh\necho pwned'
    expect_errno EROFS write "$WS/.git/hooks/post-checkout" $'#!/bin/sh\necho pwned'
    expect_errno EROFS write "$WS/.git/config" $'[core]\n\tfsmonitor = echo pwned'
    expect_errno EROFS mkdir "$WS/.git/hooks/sub"
    # git writes config.lock and renames it over config: that must fail too.
    sandbox git config core.hooksPath /tmp/evil
    [[ $RC != 0 ]] || fail "git config core.hooksPath succeeded inside ($(last))"

    expect_eq "$(tree_sum "$WS/.git/hooks"; sha256sum <"$WS/.git/config")" "$before" "host .git/hooks and .git/config"
}
run_variants scenario
