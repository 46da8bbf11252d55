#!/bin/bash
# escape-git-after-run: nothing a run writes makes git on the host run a program afterwards. Each attack plants,
# from inside, a way for git to pick up a config or hook the sandbox wrote — a commondir, a .git file, a nested
# repository reached through a gitlink, a submodule's git dir, `git init`, config.worktree, a linked worktree's
# commondir, a hooks directory moved in with old files, a bare repository with core.worktree — then the user runs
# `git status`, `git commit` and `git -C SUBDIR status` on the host. Every attack is first run on the host without
# confine (the control), where it must work: that proves the payload would run if confine missed it.
. "$(dirname "$0")/lib.sh"

# The payload: an fsmonitor or hook that leaves a mark on the host.
mark_dir() { echo "$V/marks"; }
fsmonitor() { printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch %s/%s; false"\n' "$(mark_dir)" "$1"; }
hook() { printf '#!/bin/sh\ntouch %s/%s\n' "$(mark_dir)" "$1"; }

# A fresh repository with one commit at $1, owned by the variant's user, holding tools/post-commit: a hook-like
# script written before the run (so with a ctime older than the run), which an attack can move into place.
fresh_repo() {
    rm -rf "$1" && mkdir -p "$1/tools"
    hook moved-in >"$1/tools/post-commit" && chmod +x "$1/tools/post-commit"
    chown -R "$VUID:$VGID" "$1"
    host git -C "$1" init -q
    host git -C "$1" -c user.name=u -c user.email=u@x commit -q --allow-empty -m init
    echo tools/ >>"$1/.git/info/exclude"
    if [[ -n $HOST_SETUP ]]; then (cd "$1" && host sh -c "$HOST_SETUP"); fi
}

# The git commands a user runs afterwards, at the top and in the given subdirectories.
host_git_afterwards() {
    local top=$1 sub
    shift
    try host git -C "$top" status
    try host git -C "$top" -c user.name=u -c user.email=u@x commit -q --allow-empty -m after
    for sub in "$@"; do
        try host git -C "$top/$sub" status
        try host git -C "$top/$sub" -c user.name=u -c user.email=u@x commit -q --allow-empty -m after
    done
}

marks() { find "$(mark_dir)" -mindepth 1 -printf '%f ' | sort; }

# attack NAME SUBDIRS PLANT-SCRIPT [HOST-SETUP]: the control on the host must leave the mark; through confine it
# must not. HOST-SETUP is what the user did to the repository before the run.
attack() {
    local name=$1 subs=$2 plant=$3
    HOST_SETUP=${4:-}
    rm -rf "$(mark_dir)" && mkdir -m 1777 "$(mark_dir)"
    local control=$V/control
    fresh_repo "$control"
    (cd "$control" && host sh -c "$plant") || fail "$name: the plant failed on the host (control)"
    # shellcheck disable=SC2086
    host_git_afterwards "$control" $subs
    [[ -n $(marks) ]] || fail "$name: the control left no mark: the attack does not work, so the test proves nothing"

    rm -rf "$(mark_dir)" && mkdir -m 1777 "$(mark_dir)"
    fresh_repo "$WS"
    mkdir -m 0755 "$WS/.probe" && echo .probe/ >>"$WS/.git/info/exclude"
    sandbox sh -c "$plant"
    [[ $RC == 0 ]] || fail "$name: the plant failed inside ($(last))"
    [[ -z $(marks) ]] || fail "$name: the payload ran during the run: $(marks)"
    expect_match "$ERRS" "set aside .*confine-untrusted" "$name: confine's message"
    # shellcheck disable=SC2086
    host_git_afterwards "$WS" $subs
    [[ -z $(marks) ]] || fail "$name: git on the host ran what the sandbox planted: $(marks) ($(last))"
}

scenario() {
    OPTS=(--report "$XDG/report.json")
    attack commondir "" "
        mkdir -p .git/info/c/hooks && cp -r .git/objects .git/refs .git/HEAD .git/info/c/
        printf '%s\n' '$(fsmonitor commondir)' >.git/info/c/config
        echo info/c >.git/commondir"
    [[ -e $WS/.git/commondir.confine-untrusted ]] || fail "commondir: not renamed aside"
    expect_match "$(cat "$WS/.git/commondir.confine-untrusted")" "info/c" "the set-aside commondir keeps its content"
    expect_match "$(grep '"event":"git"' "$XDG/report.json")" "\"set_aside\":\[.*\"$WS/.git/commondir\"" "--report's git line"
    OPTS=()

    # A .git file leading to a git dir the sandbox made elsewhere in the workspace.
    attack gitfile "sub" "
        git init -q --bare stash/g && printf '%s\n' '$(fsmonitor gitfile)' >>stash/g/config
        git --git-dir=stash/g config core.bare false
        mkdir -p sub && echo 'gitdir: ../stash/g' >sub/.git"

    # A nested repository made a submodule through the index: the top-level `git status` runs git inside it.
    attack gitlink "" "
        git init -q lib && git -C lib -c user.name=a -c user.email=a@x commit -q --allow-empty -m x
        printf '%s\n' '$(fsmonitor gitlink)' >>lib/.git/config
        git update-index --add --cacheinfo 160000,\$(git -C lib rev-parse HEAD),lib"

    # The same inside node_modules, which the workspace scan does not enter: the gitlink leads the check there.
    attack gitlink-skipped-dir "" "
        git init -q node_modules/dep && git -C node_modules/dep -c user.name=a -c user.email=a@x commit -q --allow-empty -m x
        printf '%s\n' '$(fsmonitor gitlink-skipped-dir)' >>node_modules/dep/.git/config
        git update-index --add --cacheinfo 160000,\$(git -C node_modules/dep rev-parse HEAD),node_modules/dep"

    # A repository deep in the tree, where the user may run git later.
    attack deep-repo "a/b/c/d/e/f/g/h/i/j/k" "
        git init -q a/b/c/d/e/f/g/h/i/j/k && printf '%s\n' '$(fsmonitor deep-repo)' >>a/b/c/d/e/f/g/h/i/j/k/.git/config"

    # A submodule whose git dir lives in .git/modules, with a hook in it.
    attack modules "mod" "
        git init -q --bare .git/modules/mod && git --git-dir=.git/modules/mod config core.bare false
        mkdir -p mod .git/modules/mod/hooks && echo 'gitdir: ../.git/modules/mod' >mod/.git
        printf '%s\n' '$(hook modules)' >.git/modules/mod/hooks/post-commit && chmod +x .git/modules/mod/hooks/post-commit"

    # config.worktree, read when the repository enables it (the user did, before the run).
    attack config-worktree "" "
        printf '%s\n' '$(fsmonitor config-worktree)' >.git/config.worktree" "git config extensions.worktreeConfig true"

    # A repository with no config at the start (so none to bind read-only): the one the sandbox writes.
    attack config-created "" "
        printf '%s\n' '$(fsmonitor config-created)' >.git/config" "rm .git/config"

    # A linked worktree made inside, whose commondir is then pointed at a repository the sandbox wrote.
    attack worktree-commondir "wt" "
        git worktree add -q wt -b wt-branch 2>/dev/null
        mkdir -p evil && cp -r .git/objects .git/refs evil/ && printf '%s\n' '$(fsmonitor worktree-commondir)' >evil/config
        echo ../../../evil >.git/worktrees/wt/commondir"

    # A hooks directory moved in whole: its hook keeps the ctime it had before the run.
    attack hooks-moved-in "nested" "
        git init -q nested && git -C nested -c user.name=a -c user.email=a@x commit -q --allow-empty -m x
        mv nested/.git/hooks nested/.git/hooks.orig && mv tools nested/.git/hooks"

    # A bare repository in a subdirectory with core.worktree: `git -C proj status` finds it.
    attack bare-worktree "proj" "
        git init -q --bare proj && git --git-dir=proj config core.bare false && git --git-dir=proj config core.worktree ..
        printf '%s\n' '$(fsmonitor bare-worktree)' >>proj/config"
}

run_variants scenario
