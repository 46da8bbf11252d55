#!/bin/bash
# escape-net-unix-runtime: unix sockets in the host's /run (e.g. $XDG_RUNTIME_DIR, where D-Bus, ssh-agent,
# gpg-agent and docker live) and /tmp are not reachable inside: /run and /tmp are private tmpfs (ENOENT).
. "$(dirname "$0")/lib.sh"

RUNDIR=/run/confine-test-$$
if [[ $SUITE_UID == 0 ]]; then
    at_exit "rm -rf '$RUNDIR'"
    mkdir -m 0755 "$RUNDIR"
elif [[ -n ${XDG_RUNTIME_DIR:-} && -w ${XDG_RUNTIME_DIR:-} ]]; then
    RUNDIR=$XDG_RUNTIME_DIR/confine-test-$$
    at_exit "rm -rf '$RUNDIR'"
    mkdir -m 0755 "$RUNDIR"
else
    RUNDIR=
fi

scenario() {
    local tmpsock=$V/agent.sock runsock=
    if [[ -n $RUNDIR ]]; then
        runsock=$RUNDIR/$VARIANT.sock
        start_servers --unix "$runsock" --unix "$tmpsock"
    else
        start_servers --unix "$tmpsock"
    fi
    host_probe connect-unix "$tmpsock"
    expect_eq "$OUT" OK "host control connect to $tmpsock ($(last))"
    expect_errno ENOENT connect-unix "$tmpsock"

    if [[ -n $runsock ]]; then
        host_probe connect-unix "$runsock"
        expect_eq "$OUT" OK "host control connect to $runsock ($(last))"
        XENV=(XDG_RUNTIME_DIR="$RUNDIR" SSH_AUTH_SOCK="$runsock")
        expect_errno ENOENT connect-unix "$runsock"
        sandbox ls -A /run
        expect_eq "$RC" 0 "listing /run inside ($(last))"
        expect_no_match "$OUT" "confine-test-$$" "/run listing inside"
    else
        echo "note: no writable /run dir for a non-root suite; only the /tmp socket was tried"
    fi
}
run_variants scenario
