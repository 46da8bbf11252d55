#!/bin/bash
# escape-fs-write-tmp: /tmp, /var/tmp and /dev/shm are private tmpfs: files written inside do not appear on
# the host, and the host's files there are not visible inside.
. "$(dirname "$0")/lib.sh"

CANARY="CANARY-tmp-$RANDOM$RANDOM"
HOST_TMP_CANARY=/tmp/confine-it-canary-$$
HOST_SHM_CANARY=/dev/shm/confine-it-canary-$$
at_exit "rm -f '$HOST_TMP_CANARY' '$HOST_SHM_CANARY' /tmp/confine-escape-$$-* /var/tmp/confine-escape-$$-* /dev/shm/confine-escape-$$-*"
echo "$CANARY" >"$HOST_TMP_CANARY"
chmod 0644 "$HOST_TMP_CANARY"
if [[ -d /dev/shm && -w /dev/shm ]]; then
    echo "$CANARY" >"$HOST_SHM_CANARY"
    chmod 0644 "$HOST_SHM_CANARY"
fi

scenario() {
    local d f
    for d in /tmp /var/tmp /dev/shm; do
        f=$d/confine-escape-$$-$VARIANT
        expect_ok write "$f" "$CANARY"
        [[ ! -e $f ]] || fail "$f written inside appeared on the host"
    done

    host_probe read "$HOST_TMP_CANARY"
    expect_eq "$RC" 0 "host control read ($(last))"
    expect_errno ENOENT read "$HOST_TMP_CANARY"
    if [[ -e $HOST_SHM_CANARY ]]; then
        expect_errno ENOENT read "$HOST_SHM_CANARY"
    fi
}
run_variants scenario
