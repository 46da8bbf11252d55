#!/bin/bash
# escape-nested-sandbox: with --allow-nested the command may build its own sandbox, and real bwrap (user, mount,
# pid, net namespaces, mounts inside them, its own /proc) runs inside confine; without it, bwrap is refused. Then
# the attacks a nested sandbox makes possible, from a user and mount namespace of its own where it holds every
# capability: a plain bind of the workspace (to see it without confine's masks), unmounting a mask, remounting a
# read-only system directory writable, a tmpfs over a system directory. Confine's mounts are locked in every
# namespace made inside, so each fails or stays inside; judged on the host afterwards (no file appeared, the
# secret never printed, the workspace and /usr unchanged). As root, the command runs as the workspace owner: a
# workspace of root's makes the command root inside, where no nested sandbox can map its user (CAP_SETFCAP), and
# confine says so and how to fix it.
. "$(dirname "$0")/lib.sh"

command -v bwrap >/dev/null || skip "bubblewrap is not installed (apt-get install bubblewrap)"
command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"

NESTED_UID=1000  # the root variant's workspace owner: any id but 0 (see the header)
SECRET=nested-secret-$RANDOM$RANDOM

# bwrap as an agent runs it: the whole view read-only, the workspace writable, fresh /dev and /proc, every namespace.
bwrap_in() { sandbox bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --die-with-parent --bind "$WS" "$WS" -- "$@"; }

# Run in a user and mount namespace of the command's own, as root there (every capability over that namespace).
ATTACKS='
ws=$1
mkdir -p /tmp/plain /tmp/rec
mount --bind "$ws" /tmp/plain 2>/dev/null && echo "plain-bind-made"
cat /tmp/plain/.env 2>/dev/null
umount "$ws/.env" 2>/dev/null && echo "mask-unmounted"
umount -l "$ws/.env" 2>/dev/null && echo "mask-detached"
cat "$ws/.env"
mount --rbind "$ws" /tmp/rec && cat /tmp/rec/.env
mount -o remount,bind,rw /usr 2>/dev/null && echo "usr-made-writable"
touch /usr/confine-nested-evil 2>/dev/null && echo "usr-written"
mount -t tmpfs none /usr/local && touch /usr/local/confine-nested-evil && echo "own-tmpfs"
echo attacks-done
'

scenario() {
    echo "$SECRET" >"$WS/.env"
    if [[ $VARIANT == root ]]; then chown -R "$NESTED_UID:$NESTED_UID" "$WS"; fi
    local ws_before usr_before
    ws_before=$(tree_sum "$WS")
    usr_before=$(ls -la /usr /usr/local | sha256sum)

    # The control: without --allow-nested, bwrap cannot make its namespaces.
    bwrap_in /bin/sh -c 'echo inner-ok'
    [[ $RC != 0 && $OUT != *inner-ok* ]] || fail "bwrap ran without --allow-nested ($(last))"

    OPTS=(--allow-nested)
    bwrap_in /bin/sh -c 'echo "inner-ok $(id -u) $(readlink /proc/self/ns/user)"; cat .env; echo made >nested-wrote'
    expect_eq "$RC" 0 "bwrap inside confine --allow-nested ($(last))"
    expect_match "$OUT" "^inner-ok" "the command inside bwrap ran ($(last))"
    expect_no_match "$OUT" "$SECRET" "the masked .env read inside bwrap"
    expect_eq "$(cat "$WS/nested-wrote" 2>/dev/null)" made "a write to the workspace from inside bwrap reaches it"
    rm -f "$WS/nested-wrote"
    expect_match "$ERRS" "Landlock's filesystem rules step back" "the start says what --allow-nested costs"

    sandbox unshare --user --map-root-user --mount /bin/sh -c "$ATTACKS" attacks "$WS"
    expect_eq "$RC" 0 "the attacks ran ($(last))"
    expect_match "$OUT" "attacks-done" "the attack script reached its end ($(last))"
    expect_match "$OUT" "own-tmpfs" "mounting in its own namespace works (the command did hold the capability)"
    local refused
    for refused in plain-bind-made mask-unmounted mask-detached usr-made-writable usr-written; do
        expect_no_match "$OUT" "^$refused\$" "nested attack: $refused"
    done
    expect_no_match "$OUT" "$SECRET" "the secret printed"

    # On the host, after the run.
    [[ ! -e /usr/confine-nested-evil && ! -e /usr/local/confine-nested-evil ]] || fail "a file from inside reached /usr on the host"
    expect_eq "$(ls -la /usr /usr/local | sha256sum)" "$usr_before" "/usr on the host after the run"
    expect_eq "$(tree_sum "$WS")" "$ws_before" "the workspace after the run"

    if [[ $VARIANT == root ]]; then
        # A workspace of root's: the command is root inside, which no nested sandbox can map; confine says why.
        chown -R 0:0 "$WS"
        bwrap_in /bin/sh -c 'echo inner-ok'
        [[ $RC != 0 ]] || fail "bwrap mapped root inside without CAP_SETFCAP ($(last))"
        expect_match "$ERRS" "runs as root inside.*--user" "the start names the cause and the fix"
        OPTS=(--allow-nested --user "$NESTED_UID:$NESTED_UID")
        bwrap_in /bin/sh -c 'echo inner-ok'
        expect_eq "$RC:$OUT" "0:inner-ok" "bwrap with --user $NESTED_UID on root's workspace ($(last))"
    fi
}
run_variants scenario
