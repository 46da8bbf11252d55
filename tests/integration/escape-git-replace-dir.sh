#!/bin/bash
# escape-git-replace-dir: the read-only .git/hooks and .git/config cannot be side-stepped by moving them
# (or .git itself) out of the way and writing new ones: afterwards the host's .git has no new hook and an
# unchanged config.
. "$(dirname "$0")/lib.sh"

scenario() {
    host git init -q "$WS"
    echo .probe/ >>"$WS/.git/info/exclude"
    local config_before
    config_before=$(sha256sum <"$WS/.git/config")

    # Moving the read-only mounts themselves fails (they are mount points).
    sandbox mv "$WS/.git/hooks" "$WS/.git/hooks.old"
    [[ $RC != 0 ]] || fail "mv .git/hooks succeeded inside"
    sandbox mv "$WS/.git/config" "$WS/.git/config.old"
    [[ $RC != 0 ]] || fail "mv .git/config succeeded inside"

    # Moving .git away and planting a fresh one with a hook and a hooksPath.
    sandbox /bin/sh -c '
        mv .git .git.old || exit 0
        mkdir -p .git/hooks && cp -a .git.old/HEAD .git.old/objects .git.old/refs .git/ 2>/dev/null
        printf "#!/bin/sh\necho pwned\n" >.git/hooks/pre-commit && chmod +x .git/hooks/pre-commit
        printf "[core]\n\trepositoryformatversion = 0\n\thooksPath = .git/hooks\n" >.git/config'

    [[ ! -e $WS/.git/hooks/pre-commit ]] || fail "a pre-commit hook planted inside exists on the host ($(last))"
    expect_eq "$(sha256sum <"$WS/.git/config")" "$config_before" "host .git/config after the sandbox tried to replace .git"
}
run_variants scenario
