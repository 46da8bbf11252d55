#!/bin/bash
# escape-git-nested: no repository the sandbox makes or changes inside the workspace runs a program on the host
# afterwards: a nested repository reached through a gitlink (also inside node_modules, which the workspace scan
# skips), one eleven levels deep, a submodule's git dir with a hook, a hooks directory moved in with old files, a
# bare repository with core.worktree. After each, the user runs `git status` and `git commit` at the top and in
# the subdirectory concerned: nothing may run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-git-attack.sh"

scenario() {
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

    # A hooks directory moved in whole: its hook keeps the ctime it had before the run.
    attack hooks-moved-in "nested" "
        git init -q nested && git -C nested -c user.name=a -c user.email=a@x commit -q --allow-empty -m x
        mv nested/.git/hooks nested/.git/hooks.orig && mv tools nested/.git/hooks"

    # A bare repository in a subdirectory with core.worktree: `git -C proj status` finds it.
    attack bare-worktree "proj" "
        git init -q --bare proj && git --git-dir=proj config core.bare false && git --git-dir=proj config core.worktree ..
        printf '%s\n' '$(fsmonitor bare-worktree)' >>proj/config"

    # A repository in a dependency directory, in no index at all: the user may still run git there.
    attack skipped-dir-repo "target/lib" "
        git init -q target/lib && printf '%s\n' '$(fsmonitor skipped-dir-repo)' >>target/lib/.git/config"

    # A bare repository whose objects/ is a symlink (git's own test follows it), with core.worktree.
    attack objects-symlink "vendor/m.git" "
        git init -q --bare vendor/m.git && mv vendor/m.git/objects vendor/store && ln -s ../store vendor/m.git/objects
        git --git-dir=vendor/m.git config core.bare false && git --git-dir=vendor/m.git config core.worktree ..
        printf '%s\n' '$(fsmonitor objects-symlink)' >>vendor/m.git/config"

    # A nested repository in a directory the check may not list (search permission only): git still enters it.
    attack unreadable-dir "hid" "
        git init -q hid && printf '%s\n' '$(fsmonitor unreadable-dir)' >>hid/.git/config && chmod 311 hid"
    chmod 755 "$WS/hid"
}
run_variants scenario
