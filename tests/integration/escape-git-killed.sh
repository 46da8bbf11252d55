#!/bin/bash
# escape-git-killed: confine killed (SIGKILL) while its sandbox has planted a commondir cannot check what the run
# left; the record of the pending check it wrote before the sandbox started survives it, and the next confine run
# does the check first: the commondir is set aside before the user's git runs it.
. "$(dirname "$0")/lib.sh"

scenario() {
    mkdir -m 1777 "$V/marks"
    host git init -q "$WS"
    host git -C "$WS" -c user.name=u -c user.email=u@x commit -q --allow-empty -m init
    echo .probe/ >>"$WS/.git/info/exclude"

    sb_bg -w "$WS" -- sh -c "
        mkdir -p .git/info/c && cp -r .git/objects .git/refs .git/HEAD .git/info/c/
        printf '[core]\n\tfsmonitor = \"touch $V/marks/killed; false\"\n' >.git/info/c/config
        echo info/c >.git/commondir && touch planted && exec sleep 60"
    local confine_pid=$BG_PID i
    for ((i = 0; i < 500; i++)); do [[ -e $WS/planted ]] && break; sleep 0.02; done
    [[ -e $WS/planted ]] || fail "the sandbox never planted"
    kill -KILL "$confine_pid"
    wait "$confine_pid" 2>/dev/null || true
    [[ -e $WS/.git/commondir ]] || fail "the commondir is gone although confine was killed before its check"
    local pending
    pending=$(find "$XDG/confine/scan" -name 'pending-git-check.*' 2>/dev/null | wc -l)
    expect_eq "$pending" 1 "pending checks recorded"

    # The next run, in another workspace, finishes the killed run's check before anything else.
    local other=$V/other
    mkdir -p "$other" && chown "$VUID:$VGID" "$other"
    try sb -w "$other" -- true
    expect_eq "$RC" 0 "the next run ($(last))"
    expect_match "$ERRS" "ended before confine could check" "the next run says it checks the killed run"
    expect_match "$ERRS" "set aside $WS/.git/commondir" "the next run names the commondir"
    [[ ! -e $WS/.git/commondir && -n $(find "$WS/.git" -maxdepth 1 -name 'commondir.confine-untrusted-*') ]] ||
        fail "the commondir was not set aside"
    expect_eq "$(find "$XDG/confine/scan" -name 'pending-git-check.*' | wc -l)" 0 "pending checks left"

    try host git -C "$WS" status
    [[ -z $(find "$V/marks" -mindepth 1) ]] || fail "git on the host ran the killed run's plant"
}
run_variants scenario
