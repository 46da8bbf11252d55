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
# A repository with no hooks/ at all (made by a tool that copies no templates, or the user deleted it): the agent
# must not be able to create one. confine creates it empty, owned like .git, and binds it read-only; a run that
# fails to start removes it again.
no_hooks_dir() {
    rm -rf "$WS/.git/hooks"
    # explain describes the run and changes nothing: the hooks dir is made by a run only.
    host "$BIN/confine" explain --workspace "$WS" -- true >/dev/null || fail "confine explain failed"
    [[ ! -e $WS/.git/hooks ]] || fail "confine explain created .git/hooks"
    # A run that fails to start (here: no process left to clone, by the user's process limit, which root does
    # not have) takes back the directory it made for it.
    if [[ $VUID != 0 ]]; then
        try "${RUN_AS[@]}" env -i "${BASE_ENV[@]}" prlimit --nproc=1 "$CONF" -w "$WS" -- /bin/true
        expect_eq "$RC" 125 "a run that cannot clone ($(last))"
        expect_match "$ERRS" "cannot create the sandbox" "the run that cannot clone says so"
        [[ ! -e $WS/.git/hooks ]] || fail "a run that failed to start left the .git/hooks it made"
    fi
    # The same when the step itself fails part way: the profile's directories made before a .git/hooks that is a
    # link (refused) are taken back.
    [[ ! -e $H/.aider ]] || fail "the test's home already has ~/.aider (the test proves nothing)"
    ln -s /nonexistent "$WS/.git/hooks"
    try sb -w "$WS" --profile aider -- /bin/true
    rm "$WS/.git/hooks"
    expect_eq "$RC" 125 "a run whose .git/hooks is a link ($(last))"
    expect_match "$ERRS" "hooks. is not a directory" "the refused .git/hooks is named"
    [[ ! -e $H/.aider ]] || fail "a run that failed to start left the profile's directories it made: $(find "$H/.aider")"

    expect_errno EROFS write "$WS/.git/hooks/pre-commit" $'#!/bin/sh\necho pwned'
    expect_errno EROFS mkdir "$WS/.git/hooks/sub"
    [[ -d $WS/.git/hooks ]] || fail "no .git/hooks on the host after the run"
    expect_eq "$(find "$WS/.git/hooks" -mindepth 1 | wc -l)" 0 "entries in the created .git/hooks"
    expect_eq "$(stat -c %u:%g "$WS/.git/hooks")" "$(stat -c %u:%g "$WS/.git")" "owner of the created .git/hooks"
    # The user's own git can still install a hook in it afterwards.
    host sh -c "printf '#!/bin/sh\n' >'$WS/.git/hooks/pre-commit'" || fail "the workspace's owner cannot write the created hooks dir"
}

both() {
    scenario
    no_hooks_dir
}
run_variants both
