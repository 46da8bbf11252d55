#!/bin/bash
# run-git-commit: with .git/hooks and .git/config read-only, `git commit` still works inside (objects,
# refs, index and logs are writable) and the commit is in the host's repository.
. "$(dirname "$0")/lib.sh"

scenario() {
    host git init -q "$WS"
    echo .probe/ >>"$WS/.git/info/exclude"
    echo hello >"$WS/README"
    [[ $SUITE_UID != 0 ]] || chown "$VUID:$VGID" "$WS/README"
    OPTS=(--env GIT_AUTHOR_NAME=Alice --env GIT_AUTHOR_EMAIL=alice@example.com
        --env GIT_COMMITTER_NAME=Alice --env GIT_COMMITTER_EMAIL=alice@example.com)
    sandbox /bin/sh -c 'git add README && git commit -q -m "from the sandbox" && git rev-parse HEAD'
    expect_eq "$RC" 0 "git add + commit inside ($(last))"
    local head=$OUT
    expect_match "$head" '^[0-9a-f]{40}$' "HEAD inside"
    expect_eq "$(host git -C "$WS" rev-parse HEAD)" "$head" "HEAD on the host"
    expect_eq "$(host git -C "$WS" log -1 --format='%an %s')" "Alice from the sandbox" "commit on the host"
    expect_eq "$(host git -C "$WS" status --porcelain)" "" "git status on the host"
}
run_variants scenario
