#!/bin/bash
# worktree: `--worktree BRANCH` runs the command in a linked worktree beside the repository (created with
# `git worktree add ../<repo>-<branch> -b BRANCH`, reused by a later run), where commits land on BRANCH while
# the main checkout stays out of sight; the repository's hooks and config and the worktree's .git file stay
# read-only. A plain run in a linked worktree can commit too. A planted .git file (one the repository does not
# list back) gets nothing bound: the sandbox never sees the git dir it names.
. "$(dirname "$0")/lib.sh"

# git on the host as the variant's user (the repositories are theirs: git refuses someone else's).
g() { host git -c user.name=t -c user.email=t@t "$@"; }
# confine as the variant's user, with the given flags.
run() { try sb "$@"; }
# mkdir on the host, owned by the variant's user.
mkdir_owned() {
    mkdir -p "$@"
    [[ $SUITE_UID != 0 ]] || chown "$VUID:$VGID" "$@"
}
COMMIT_INSIDE='git -c user.name=x -c user.email=y -c core.hooksPath=/dev/null commit -qam'

scenario() {
    # The worktree is made beside the repository, so the repository's parent must be the user's: $WS/repo.
    local repo=$WS/repo wt=$WS/repo-agent-one
    mkdir_owned "$repo"
    g init -q "$repo"
    echo hello >"$repo/README"
    echo "CANARY-main-$RANDOM" >"$repo/marker.txt"
    [[ $SUITE_UID != 0 ]] || chown "$VUID:$VGID" "$repo/README" "$repo/marker.txt"
    g -C "$repo" add README marker.txt
    g -C "$repo" commit -qm init
    local main_ref main_head main_files
    main_ref=$(g -C "$repo" symbolic-ref HEAD)
    main_head=$(g -C "$repo" rev-parse HEAD)
    main_files=$(tree_sum "$repo" | grep -v '\./\.git' || true)

    # --- 1. a fresh worktree: pwd is the worktree, a commit inside lands on agent/one.
    run -w "$repo" --worktree agent/one -- /bin/sh -c \
        "pwd && echo changed >>README && $COMMIT_INSIDE 'from the sandbox' && git symbolic-ref HEAD"
    expect_eq "$RC" 0 "--worktree agent/one: first run ($(last))"
    expect_eq "$OUT" "$wt"$'\n'"refs/heads/agent/one" "pwd and branch inside the worktree"
    expect_match "$ERRS" "git -C $repo worktree remove $wt" "the removal hint on stderr"
    expect_match "$ERRS" "branch -D agent/one" "the branch removal hint on stderr"
    [[ -d $wt && -f $wt/.git ]] || fail "no linked worktree at $wt after the run"
    expect_eq "$(g -C "$wt" symbolic-ref HEAD)" "refs/heads/agent/one" "the worktree's branch on the host"
    expect_eq "$(g -C "$repo" log -1 --format=%s agent/one)" "from the sandbox" "the commit made inside, on agent/one"
    expect_eq "$(g -C "$repo" rev-parse agent/one~1)" "$main_head" "agent/one's parent"
    expect_eq "$(cat "$wt/README")" $'hello\nchanged' "README in the worktree"
    expect_eq "$(g -C "$repo" symbolic-ref HEAD)" "$main_ref" "the main checkout's branch"
    expect_eq "$(g -C "$repo" rev-parse HEAD)" "$main_head" "the main checkout's HEAD"
    expect_eq "$(tree_sum "$repo" | grep -v '\./\.git' || true)" "$main_files" "the main checkout's files"
    expect_eq "$(g -C "$repo" status --porcelain)" "" "git status of the main checkout"

    # --- 2. inside the worktree: the repository's hooks and config, and the .git file, are read-only; the main
    # checkout's files are not there. Each run reuses the worktree.
    local hooks_before config_before dotgit_before
    hooks_before=$(tree_sum "$repo/.git/hooks")
    config_before=$(sha256sum <"$repo/.git/config")
    dotgit_before=$(cat "$wt/.git")

    run -w "$repo" --worktree agent/one -- /bin/sh -c "echo 'echo pwned' >'$repo/.git/hooks/pre-commit'"
    [[ $RC != 0 ]] || fail "writing the repository's hooks/pre-commit succeeded inside ($(last))"
    expect_match "$ERRS" "pre-commit: Read-only file system" "writing hooks/pre-commit inside"

    run -w "$repo" --worktree agent/one -- git config core.hooksPath /tmp
    [[ $RC != 0 ]] || fail "git config core.hooksPath succeeded inside ($(last))"
    # config.lock can be made in the writable git dir, but it cannot be renamed over the read-only mount.
    expect_match "$ERRS" "could not (lock|write) config file $repo/\\.git/config.*: (Read-only file system|Device or resource busy)" \
        "git config core.hooksPath inside"

    run -w "$repo" --worktree agent/one -- /bin/sh -c "echo 'gitdir: /tmp' >'$wt/.git'"
    [[ $RC != 0 ]] || fail "overwriting the worktree's .git file succeeded inside ($(last))"
    expect_match "$ERRS" "\\.git: Read-only file system" "overwriting the worktree's .git file inside"

    expect_eq "$(tree_sum "$repo/.git/hooks")" "$hooks_before" "the repository's hooks on the host"
    expect_eq "$(sha256sum <"$repo/.git/config")" "$config_before" "the repository's config on the host"
    expect_eq "$(cat "$wt/.git")" "$dotgit_before" "the worktree's .git file on the host"

    run -w "$repo" --worktree agent/one -- /bin/ls -A "$repo"
    expect_eq "$RC" 0 "listing the main checkout inside ($(last))"
    expect_eq "$OUT" ".git" "the main checkout inside: only its git dir"
    run -w "$repo" --worktree agent/one -- /bin/cat "$repo/marker.txt"
    [[ $RC != 0 && $OUT != *CANARY* ]] || fail "the main checkout's marker.txt was readable inside ($(last))"
    expect_match "$ERRS" "marker.txt: No such file or directory" "reading the main checkout's marker.txt inside"
    run -w "$repo" --worktree agent/one -- /bin/cat "$H/.ssh/id_rsa"
    [[ $RC != 0 && $OUT != *CANARY* ]] || fail "the home's ssh key was readable inside ($(last))"
    expect_match "$ERRS" "No such file or directory" "reading ~/.ssh/id_rsa inside"

    # --- 3. reuse, and the refusals.
    run -w "$repo" --worktree agent/one -- git log -1 --format=%s
    expect_eq "$RC" 0 "--worktree agent/one: reuse ($(last))"
    expect_eq "$OUT" "from the sandbox" "the earlier commit, in the reused worktree"
    expect_match "$ERRS" "worktree remove $wt" "the removal hint after a reuse"

    local squat=$WS/repo-agent-two
    mkdir_owned "$squat"
    echo mine >"$squat/file"
    run -w "$repo" --worktree agent/two -- /bin/true
    expect_eq "$RC" 125 "--worktree agent/two with a plain directory at $squat ($(last))"
    expect_match "$ERRS" "$squat" "the refusal names the squatting directory"
    expect_eq "$(ls -A "$squat")" "file" "the squatting directory after the refusal"
    try g -C "$repo" rev-parse --verify -q refs/heads/agent/two
    [[ $RC != 0 ]] || fail "branch agent/two was created despite the refusal"

    run -w "$repo" --worktree 'bad..name' -- /bin/true
    expect_eq "$RC" 125 "--worktree 'bad..name' ($(last))"
    expect_match "$ERRS" "not a valid branch name" "the refusal of 'bad..name'"
    [[ ! -e "$WS/repo-bad..name" ]] || fail "a worktree directory was made for 'bad..name'"

    mkdir_owned "$WS/plain"
    run -w "$WS/plain" --worktree x -- /bin/true
    expect_eq "$RC" 125 "--worktree x outside any repository ($(last))"
    expect_match "$ERRS" "not inside a git repository" "the refusal outside a repository"
    [[ ! -e "$WS/plain-x" ]] || fail "a worktree directory was made outside a repository"

    # --- 4. a plain run (no --worktree) in a linked worktree made on the host: git commit works.
    local manual=$WS/repo-manual
    g -C "$repo" worktree add -q -b manual "$manual"
    run -w "$manual" -- /bin/sh -c "echo more >>README && $COMMIT_INSIDE 'plain run' && git rev-parse HEAD"
    expect_eq "$RC" 0 "git commit in a linked worktree, plain run ($(last))"
    expect_eq "$(g -C "$repo" rev-parse manual)" "$OUT" "branch manual on the host"
    expect_eq "$(g -C "$repo" log -1 --format=%s manual)" "plain run" "the plain run's commit on the host"
    expect_eq "$(g -C "$repo" rev-parse HEAD)" "$main_head" "the main checkout's HEAD after the plain run"

    # --- 5. planted .git files: nothing they name becomes visible.
    # Another repository with a real worktree: its worktrees/<name>/gitdir names that worktree, not ours.
    local other=$WS/other planted=$WS/planted canary="CANARY-other-$RANDOM$RANDOM"
    mkdir_owned "$other" "$planted"
    g init -q "$other"
    echo "$canary" >"$other/.git/secret-marker"
    g -C "$other" commit -q --allow-empty -m other
    g -C "$other" worktree add -q -b side "$WS/other-side"
    [[ -f $other/.git/worktrees/other-side/gitdir ]] || fail "test setup: no worktrees/other-side/gitdir"
    # A directory that looks like a worktree's git dir and a repository in one, but whose back-link names
    # another workspace.
    local vault=$V/vault vault_canary="CANARY-vault-$RANDOM$RANDOM"
    mkdir -p "$vault/objects"
    echo "$vault_canary" >"$vault/secret-marker"
    echo "ref: refs/heads/main" >"$vault/HEAD"
    echo . >"$vault/commondir"
    echo "$WS/elsewhere/.git" >"$vault/gitdir"
    host cat "$other/.git/secret-marker" "$vault/secret-marker" >/dev/null # controls: readable on the host

    local target
    for target in "$other/.git/worktrees/other-side" "../other/.git/worktrees/other-side" "$vault" "$H/.ssh"; do
        echo "gitdir: $target" >"$planted/.git"
        [[ $SUITE_UID != 0 ]] || chown "$VUID:$VGID" "$planted/.git"
        run -w "$planted" -- /bin/cat "$other/.git/secret-marker"
        [[ $OUT != *CANARY* ]] || fail "planted .git ($target): the other repository's git dir is bound inside"
        expect_match "$ERRS" "secret-marker: No such file or directory" "planted .git ($target): other/.git inside"
        run -w "$planted" -- /bin/cat "$vault/secret-marker"
        [[ $OUT != *CANARY* ]] || fail "planted .git ($target): the vault directory is bound inside"
        expect_match "$ERRS" "secret-marker: No such file or directory" "planted .git ($target): the vault inside"
        run -w "$planted" -- /bin/cat "$H/.ssh/id_rsa"
        [[ $OUT != *CANARY* ]] || fail "planted .git ($target): ~/.ssh is bound inside"
        expect_match "$ERRS" "id_rsa: No such file or directory" "planted .git ($target): ~/.ssh inside"
        run -w "$planted" -- git status
        [[ $RC != 0 ]] || fail "planted .git ($target): git status worked inside ($(last))"
    done

    # The whole worktree git dir planted inside the workspace: .git -> .evil, whose back-link (written by the
    # agent too) names this workspace and whose commondir leads to the other repository. Only a repository's own
    # worktrees/<name> entry may vouch for a worktree; this one must get nothing bound.
    local planted2=$WS/planted2
    mkdir_owned "$planted2" "$planted2/.evil"
    echo "gitdir: .evil" >"$planted2/.git"
    echo "$planted2/.git" >"$planted2/.evil/gitdir"
    echo "$other/.git" >"$planted2/.evil/commondir"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$planted2"
    run -w "$planted2" -- /bin/sh -c "cat '$other/.git/secret-marker'; echo planted >'$other/.git/refs/heads/planted'"
    [[ $OUT != *CANARY* ]] || fail "a .git file with its gitdir inside the workspace got the other repository bound ($(last))"
    expect_match "$ERRS" "secret-marker: No such file or directory" "self-vouched .git file: other/.git inside"
    [[ ! -e $other/.git/refs/heads/planted ]] || fail "a self-vouched .git file let the sandbox write the other repository's refs"

    # Control: once the other repository does list this workspace back (something only the host can write),
    # the same .git file gets that repository bound, so the cat above did test for the bind.
    echo "gitdir: $other/.git/worktrees/other-side" >"$planted/.git"
    echo "$planted/.git" >"$other/.git/worktrees/other-side/gitdir"
    run -w "$planted" -- /bin/cat "$other/.git/secret-marker"
    expect_eq "$RC:$OUT" "0:$canary" "control: the back-linked repository's git dir inside ($(last))"
}
run_variants scenario
