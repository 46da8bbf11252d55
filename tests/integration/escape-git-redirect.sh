#!/bin/bash
# escape-git-redirect: nothing a run writes sends git on the host to a config or hook the sandbox wrote: a
# commondir in the main git dir, a .git file leading to a git dir made in the workspace, config.worktree, a
# config created where the repository had none, a linked worktree's commondir pointed elsewhere. After each, the
# user runs `git status` and `git commit` on the host (and in the subdirectory concerned): nothing may run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-git-attack.sh"

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
}
run_variants scenario
