# lib-git-attack.sh: sourced (after lib.sh) by the escape-git-* tests that plant, from inside, a way for git on the
# host to run something the sandbox wrote, and judge it on the host afterwards. Each attack is first run on the
# host without confine (the control), where it must work: that proves the payload would run if confine missed it.

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
    try host git -C "$top" -c user.name=u -c user.email=u@x rebase --continue
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
    mkdir -m 0755 "$WS/.probe"
    if [[ -d $WS/.git/info ]]; then echo .probe/ >>"$WS/.git/info/exclude"; fi
    sandbox sh -c "$plant"
    [[ $RC == 0 ]] || fail "$name: the plant failed inside ($(last))"
    [[ -z $(marks) ]] || fail "$name: the payload ran during the run: $(marks)"
    local errs=$ERRS
    # shellcheck disable=SC2086
    host_git_afterwards "$WS" $subs
    [[ -z $(marks) ]] || fail "$name: git on the host ran what the sandbox planted: $(marks) ($(last))"
    expect_match "$errs" "set aside .*confine-untrusted" "$name: confine's message"
}

