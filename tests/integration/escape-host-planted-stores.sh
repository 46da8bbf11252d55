#!/bin/bash
# escape-host-planted-stores: the directories confine keeps or makes on the host (the workspace scan cache, the
# checkpoint store, a --worktree, an empty .git/hooks) are never reached through a link an earlier run's sandbox
# planted, and never kept where a sandbox can write. Run 1 plants, in its workspace, a link to a canary directory
# outside it where run 2 will look: the cache directory, the checkpoint store's directory, the worktree's name,
# .git/hooks (run 1 with --allow-git-config). Run 2 must leave the canary directory exactly as it was: the cache
# is not used (a warning says why, the run goes on), --checkpoint and --worktree and the hooks refuse with exit
# 125 and one line naming the link. A cache or checkpoint store inside the workspace is not used either.
. "$(dirname "$0")/lib.sh"

command -v git >/dev/null || skip "git is not installed"

vault_state() { (cd "$VAULT" && find . -printf '%p %s %m %U\n' | sort && find . -type f -exec sha256sum {} + | sort); }

# refused WHAT REGEX CONFINE-ARGS...: exit 125, one line on stderr matching REGEX, the command did not run.
refused() {
    local what=$1 regex=$2
    shift 2
    try sb "$@" -- sh -c 'echo ran > ran-marker'
    expect_eq "$RC" 125 "$what: exit code ($(last))"
    expect_match "$ERRS" '^confine: [^'$'\n'']+$' "$what: stderr must be one line 'confine: ...'"
    expect_match "$ERRS" "$regex" "$what: the reason"
    [[ -z $(find "$V" -name ran-marker) ]] || fail "$what: the command ran"
}

git_as_user() { host git -c user.name=t -c user.email=t@example.com "$@"; }

scenario() {
    VAULT=$V/vault
    local other=$V/other before
    mkdir -m 0700 "$VAULT"
    echo precious >"$VAULT/keep"
    mkdir -m 0755 "$other"
    chown -R "$VUID:$VGID" "$VAULT" "$other"
    before=$(vault_state)

    # The scan cache, planted by a run whose workspace held it, used by a run on another workspace.
    XENV=(XDG_CACHE_HOME="$other/cache")
    try sb -w "$other" -- sh -c "mkdir -p cache/confine && rm -rf cache/confine/scan && ln -s '$VAULT' cache/confine/scan"
    expect_eq "$RC" 0 "run 1 plants the cache link ($(last))"
    try sb -w "$WS" -- true
    expect_eq "$RC" 0 "a run with a planted cache link still runs ($(last))"
    expect_match "$ERRS" "\`$other/cache/confine/scan\`: is a symbolic link.*the cache is not used" "cache link: the warning"
    # A cache the sandbox itself can write is not used at all (it decides what is masked).
    XENV=(XDG_CACHE_HOME="$WS/cache")
    try sb -w "$WS" -- sh -c "mkdir -p cache/confine && ln -s '$VAULT' cache/confine/scan"
    try sb -w "$WS" -- true
    expect_eq "$RC" 0 "a run with its cache in the workspace still runs ($(last))"
    expect_match "$ERRS" "scan cache is not used: \`$WS/cache/confine/scan\` is writable inside the sandbox" "cache in the workspace"
    XENV=()

    # The checkpoint store.
    XENV=(XDG_DATA_HOME="$other/data")
    try sb -w "$other" -- sh -c "mkdir -p data && ln -s '$VAULT' data/confine"
    expect_eq "$RC" 0 "run 1 plants the store link ($(last))"
    refused "--checkpoint through a planted link" "\`$other/data/confine\` is a symbolic link" -w "$WS" --checkpoint
    XENV=(XDG_DATA_HOME="$WS/data")
    refused "--checkpoint store in the workspace" "the store \`$WS/data/confine/checkpoints/[0-9a-f]+\` would be in the workspace of the sandbox" \
        -w "$WS" --checkpoint
    XENV=()

    # The worktree: `git worktree add ../repo-feat`, whose name a run on the parent directory can plant.
    local repo=$other/repo
    git_as_user init -q "$repo"
    git_as_user -C "$repo" commit -q --allow-empty -m init
    try sb -w "$other" -- ln -s "$VAULT" "$other/repo-feat"
    expect_eq "$RC" 0 "run 1 plants the worktree link ($(last))"
    refused "--worktree through a planted link" "--worktree \`$other/repo-feat\`: is a symbolic link" -w "$repo" --worktree feat

    # .git/hooks, replaced by a link in a run that was allowed to write git's configuration.
    git_as_user init -q "$WS"
    try sb -w "$WS" --allow-git-config -- sh -c "rm -rf .git/hooks && ln -s '$VAULT' .git/hooks"
    expect_eq "$RC" 0 "run 1 plants the hooks link ($(last))"
    refused ".git/hooks through a planted link" "\`$WS/.git/hooks\` is not a directory" -w "$WS"

    expect_eq "$(vault_state)" "$before" "the canary directory after every run 2"
}
run_variants scenario
