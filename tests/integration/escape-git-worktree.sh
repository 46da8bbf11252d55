#!/bin/bash
# escape-git-worktree: with --worktree the sandbox writes the main checkout's git dir (commits need it). What it
# plants there — a commondir sending the main checkout's git to a config it wrote, an entry of its own under
# worktrees/ — is set aside after the run, so the user's `git status` in the main checkout runs nothing. And
# confine's own `git worktree add` runs no fsmonitor, hook or other program the repository's config names, and
# --checkpoint runs no filter the user's global config defines.
. "$(dirname "$0")/lib.sh"

g() { host git -c user.name=t -c user.email=t@t "$@"; }
mkdir_owned() {
    mkdir -p "$@"
    [[ $SUITE_UID != 0 ]] || chown "$VUID:$VGID" "$@"
}
marks() { find "$V/marks" -mindepth 1 -printf '%f ' | sort; }

scenario() {
    mkdir -m 1777 "$V/marks"
    local repo=$WS/repo wt=$WS/repo-agent-x
    mkdir_owned "$repo"
    g init -q "$repo"
    g -C "$repo" commit -q --allow-empty -m init
    local common=$repo/.git

    # From inside the worktree, the main checkout's git dir is writable: plant a commondir there, and a second
    # worktree entry whose commondir leads to a config the sandbox wrote.
    try sb -w "$repo" --worktree agent/x -- sh -c "
        mkdir -p $common/info/c && cp -r $common/objects $common/refs $common/HEAD $common/info/c/
        printf '[core]\n\tfsmonitor = \"touch $V/marks/commondir; false\"\n' >$common/info/c/config
        echo info/c >$common/commondir
        mkdir -p $common/worktrees/evil $WS/repo-agent-x/evil-wt
        cp $common/HEAD $common/worktrees/evil/ && echo ../../info/c >$common/worktrees/evil/commondir
        echo 'gitdir: $common/worktrees/evil' >$WS/repo-agent-x/evil-wt/.git
        echo planted"
    expect_match "$OUT" "planted" "the plant ran inside ($(last))"
    local errs=$ERRS

    try g -C "$repo" status
    try g -C "$repo" commit -q --allow-empty -m after
    try g -C "$wt" status
    try g -C "$wt/evil-wt" status
    [[ -z $(marks) ]] || fail "git on the host ran what the sandbox planted in the main git dir: $(marks)"
    expect_match "$errs" "set aside $common/commondir" "confine names the commondir it set aside"
    [[ -n $(find "$common" -maxdepth 1 -name 'commondir.confine-untrusted-*') ]] || fail "the planted commondir was not set aside"
    [[ ! -e $common/worktrees/evil/commondir ]] || fail "the planted worktree entry's commondir is still in place"

    # A repository whose config names programs (left by anything): confine's own git worktree add runs none.
    printf '[core]\n\tfsmonitor = "touch %s/marks/fsmonitor; false"\n\tpager = "touch %s/marks/pager; cat"\n' "$V" "$V" >>"$common/config"
    printf '#!/bin/sh\ntouch %s/marks/post-checkout\n' "$V" >"$common/hooks/post-checkout"
    chmod +x "$common/hooks/post-checkout"
    [[ $SUITE_UID != 0 ]] || chown "$VUID:$VGID" "$common/hooks/post-checkout"
    try sb -w "$repo" --worktree agent/y -- true
    expect_eq "$RC" 0 "--worktree agent/y ($(last))"
    [[ -d $WS/repo-agent-y ]] || fail "--worktree agent/y made no worktree"
    [[ -z $(marks) ]] || fail "confine's own git ran a program the repository names: $(marks)"

    # --checkpoint copies files and runs no git: a filter the user defines in their config (as git-lfs does) is not
    # run on the workspace's files because the workspace's .gitattributes (which the agent writes) names it.
    printf '[filter "evil"]\n\tclean = "touch %s/marks/filter; cat"\n' "$V" >"$H/.gitconfig"
    echo '* filter=evil' >"$repo/.gitattributes"
    echo data >"$repo/file.txt"
    [[ $SUITE_UID != 0 ]] || chown "$VUID:$VGID" "$H/.gitconfig" "$repo/.gitattributes" "$repo/file.txt"
    try host git -C "$repo" add file.txt  # the control: the user's own git does run it
    [[ -e $V/marks/filter ]] || fail "the control: git add ran no clean filter, so the test proves nothing"
    rm -f "$V/marks/"*
    try sb -w "$repo" --checkpoint -- true
    expect_eq "$RC" 0 "--checkpoint ($(last))"
    [[ -z $(marks) ]] || fail "--checkpoint's git ran a filter from the user's config: $(marks)"
}
run_variants scenario
