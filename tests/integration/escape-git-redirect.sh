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
    local aside
    aside=$(find "$WS/.git" -maxdepth 1 -name 'commondir.confine-untrusted-*')
    [[ -n $aside && ! -e $WS/.git/commondir ]] || fail "commondir: not renamed aside"
    expect_match "$(cat "$aside")" "info/c" "the set-aside commondir keeps its content"
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

    # A repository made by `git init` where there was none, with a config and a hook of the sandbox's.
    attack git-init "" "
        git init -q && printf '%s\n' '$(fsmonitor git-init)' >>.git/config
        printf '#!/bin/sh\ntouch $(mark_dir)/git-init-hook\n' >.git/hooks/post-commit && chmod +x .git/hooks/post-commit" "rm -rf .git"

    # A repository with no config at the start (so none to bind read-only): the one the sandbox writes.
    attack config-created "" "
        printf '%s\n' '$(fsmonitor config-created)' >.git/config" "rm .git/config"

    # A linked worktree made inside, whose commondir is then pointed at a repository the sandbox wrote.
    attack worktree-commondir "wt" "
        git worktree add -q wt -b wt-branch 2>/dev/null
        mkdir -p evil && cp -r .git/objects .git/refs evil/ && printf '%s\n' '$(fsmonitor worktree-commondir)' >evil/config
        echo ../../../evil >.git/worktrees/wt/commondir"

    # A .git file leading through a magic link: /proc/self/cwd names git's working directory, not confine's.
    attack proc-self-cwd "sub" "
        git init -q --bare .git/objects/zz/hid && git --git-dir=.git/objects/zz/hid config core.bare false
        printf '%s\n' '$(fsmonitor proc-self-cwd)' >>.git/objects/zz/hid/config
        mkdir -p sub && echo 'gitdir: /proc/self/cwd/../.git/objects/zz/hid' >sub/.git"

    # A .git file whose second line is part of the path git uses.
    attack gitfile-second-line "sub" "
        git init -q --bare .git/objects/zz/hid && git --git-dir=.git/objects/zz/hid config core.bare false
        printf '%s\n' '$(fsmonitor gitfile-second-line)' >>.git/objects/zz/hid/config
        git init -q --bare sub/x && mkdir \"sub/\$(printf 'x\\nz')\"
        printf 'gitdir: x\\nz/../../.git/objects/zz/hid\\n' >sub/.git"

    # A rebase left stopped, with an exec line next: the user's `git rebase --continue` runs it.
    attack rebase-exec "" "
        git -c user.name=a -c user.email=a@x commit -q --allow-empty -m two
        GIT_SEQUENCE_EDITOR=\"printf 'break\\nexec touch $(mark_dir)/rebase-exec\\n' >\" git -c user.name=a -c user.email=a@x rebase -q -i HEAD~1"
}
run_variants scenario
