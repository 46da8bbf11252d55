#!/bin/bash
# git-everyday: what agents do with git every day works inside — commit, branch, rebase, stash, `git worktree add`,
# `git init` of a new project, `git submodule update` — and afterwards the host's git sees the result. The check
# after the run sets aside only the configs of repositories made during it (their settings could run programs),
# never the linked worktree's files, and the repositories stay usable on the host.
. "$(dirname "$0")/lib.sh"

G=(git -c user.name=agent -c user.email=agent@example.com)

scenario() {
    # A submodule registered by the user but not cloned yet: `git submodule update` inside fetches it from a
    # repository in the workspace (no network).
    host git init -q --bare "$WS/subsrc.git"
    host sh -c "cd '$WS' && git init -q . && echo one >a.txt && git add a.txt && ${G[*]} commit -q -m one"
    host sh -c "cd '$WS' && git clone -q subsrc.git /tmp/.sub-$$-$VARIANT 2>/dev/null; cd /tmp/.sub-$$-$VARIANT && echo s >s.txt && git add s.txt && ${G[*]} commit -q -m s && git push -q origin HEAD:refs/heads/master"
    rm -rf "/tmp/.sub-$$-$VARIANT"
    host sh -c "cd '$WS' && git -c protocol.file.allow=always submodule add -q ./subsrc.git sub && ${G[*]} commit -q -m sub"
    rm -rf "$WS/sub" "$WS/.git/modules/sub" && mkdir "$WS/sub" && chown "$VUID:$VGID" "$WS/sub"
    printf '.probe/\nsubsrc.git/\n' >>"$WS/.git/info/exclude"

    sandbox sh -ec "
        ${G[*]} commit -q --allow-empty -m on-main
        git branch feature && git checkout -q feature && echo f >f.txt && git add f.txt && ${G[*]} commit -q -m f
        git checkout -q master && echo two >>a.txt && ${G[*]} commit -q -am two
        git checkout -q feature && ${G[*]} rebase -q master && git checkout -q master
        echo dirty >>a.txt && git stash -q && git stash pop -q && git checkout -q -- a.txt
        git worktree add -q wt -b wt-branch && echo w >wt/w.txt && git -C wt add w.txt && ${G[*]} -C wt commit -q -m w
        git init -q newproj && echo n >newproj/n.txt && git -C newproj add n.txt && ${G[*]} -C newproj commit -q -m n
        git -c protocol.file.allow=always submodule update -q
        test -f sub/s.txt
        echo everyday-ok"
    [[ $RC == 0 && $OUT == *everyday-ok* ]] || fail "everyday git inside failed ($(last))"

    # The host's git sees every change.
    expect_eq "$(host git -C "$WS" log -n3 --format=%s master | tr '\n' ' ')" "two on-main sub " "master's history"
    expect_eq "$(host git -C "$WS" log -n3 --format=%s feature | tr '\n' ' ')" "f two on-main " "feature rebased onto master"
    expect_eq "$(host git -C "$WS" stash list | wc -l)" 0 "stash entries"
    expect_eq "$(host git -C "$WS/wt" log --format=%s -1)" "w" "the linked worktree on the host"
    expect_eq "$(host git -C "$WS/newproj" log --format=%s -1)" "n" "the new project on the host"
    expect_eq "$(host git -C "$WS/sub" log --format=%s -1)" "s" "the submodule on the host"
    host git -C "$WS" submodule status >/dev/null || fail "git submodule status fails on the host"

    # Set aside: only what a new repository's config could run; the worktree's commondir and .git file stay.
    local aside
    aside=$(cd "$WS" && find . -name '*.confine-untrusted-*' | sed 's/-[0-9a-f]*$//' | sort | tr '\n' ' ')
    expect_eq "$aside" "./.git/modules/sub/config.confine-untrusted ./newproj/.git/config.confine-untrusted " "set aside"
    expect_match "$ERRS" "set aside $WS/newproj/.git/config" "the message naming the new project's config"
}
run_variants scenario
