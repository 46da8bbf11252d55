#!/bin/bash
# escape-checkpoint-links: neither the checkpoint store nor a restore is a way out of the workspace.
# - The run replaces a directory, a file and .git/objects of the checkpoint with symbolic links to a canary
#   directory outside the workspace (and puts a link where the checkpoint has nothing). The restore, which
#   writes every one of those names, must remove the links and write real files and directories: the canary
#   directory is exactly as it was, judged on the host. The checkpoint restored refers, for the unchanged
#   workspace, to an older one, whose own older one has been removed (what it held handed over): the links are
#   refused the same way through the references.
# - The run tries to plant a file in the store, at its path on the host: it cannot (the store is not in the
#   sandbox), and the restore brings back the checkpoint, not something planted.
# - A restore never makes a set-user-ID file, even of one the checkpoint saved with the bit.
. "$(dirname "$0")/lib.sh"

canary_state() { (cd "$CANARY" && find . -printf '%p %s %m %U\n' | sort && find . -type f -exec sha256sum {} + | sort); }

scenario() {
    CANARY=$V/canary
    mkdir -p "$CANARY/objects" "$CANARY/sub"
    echo precious >"$CANARY/victim.txt"
    echo precious >"$CANARY/sub/f.txt"
    mkdir -p "$WS/sub" "$WS/.git/objects/ab"
    echo mine >"$WS/sub/f.txt"
    echo top >"$WS/top.txt"
    echo object >"$WS/.git/objects/ab/cdef"
    echo 'ref: refs/heads/main' >"$WS/.git/HEAD"
    printf '#!/bin/sh\n' >"$WS/tool"
    chmod 0777 "$CANARY" "$CANARY/objects" "$CANARY/sub"
    chmod 0666 "$CANARY/victim.txt" "$CANARY/sub/f.txt"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$WS"
    chmod 4755 "$WS/tool"
    local before store_before
    before=$(canary_state)

    OPTS=(--checkpoint)
    local oldest
    sandbox /bin/true
    oldest=$(sed -n 's/^confine: checkpoint \([^ ]*\) saved .*/\1/p' <<<"$ERRS")
    sandbox /bin/true
    expect_match "$ERRS" "0 B copied" "the second checkpoint copies nothing"
    sandbox /bin/sh -c "rm -rf sub top.txt .git/objects tool &&
        ln -s '$CANARY/sub' sub && ln -s '$CANARY/victim.txt' top.txt && ln -s '$CANARY/objects' .git/objects &&
        ln -s '$CANARY' planted"
    expect_eq "$RC" 0 "the run plants its links ($(last))"
    [[ -L $WS/sub && -L $WS/top.txt && -L $WS/.git/objects ]] || fail "the links were not planted (the test proves nothing)"

    local store
    store=$(sed -n 's/^checkpoints of .* (store \(.*\)):$/\1/p' <<<"$(sb checkpoints list -w "$WS")")
    [[ -n $store && -d $store ]] || fail "no store listed"
    store_before=$(cd "$store" && find . -printf '%p %s %m %U\n' | sort && find . -type f -exec sha256sum {} + | sort)
    OPTS=()
    sandbox /bin/sh -c "mkdir -p '$store/x' && echo planted >'$store/x/f' || true
        for d in '$store'/*/tree; do echo planted >\"\$d/top.txt\"; done; true"
    expect_eq "$(cd "$store" && find . -printf '%p %s %m %U\n' | sort && find . -type f -exec sha256sum {} + | sort)" \
        "$store_before" "the store after a run that tried to plant in it"

    try sb checkpoints rm -w "$WS" "$oldest"
    expect_eq "$RC" 0 "removing the oldest checkpoint ($(last))"
    # No --force: the links are the checkpointed run's own changes.
    try sb checkpoints restore -w "$WS"
    expect_eq "$RC" 0 "restore over the planted links ($(last))"
    expect_eq "$(canary_state)" "$before" "the canary directory outside the workspace"
    [[ -d $WS/sub && ! -L $WS/sub && -f $WS/top.txt && ! -L $WS/top.txt && -d $WS/.git/objects && ! -L $WS/.git/objects ]] ||
        fail "restore left a link: $(ls -la "$WS" "$WS/.git")"
    [[ ! -e $WS/planted && ! -L $WS/planted ]] || fail "restore left the planted link"
    expect_eq "$(cat "$WS/sub/f.txt") $(cat "$WS/top.txt") $(cat "$WS/.git/objects/ab/cdef")" "mine top object" "the restored files"
    expect_eq "$(stat -c %a "$WS/tool")" 755 "a restored file's mode, without its set-user-ID bit"
}
run_variants scenario
