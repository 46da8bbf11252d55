#!/bin/bash
# escape-fs-shadow: /etc/shadow is unreadable inside even when root starts confine (the sandbox runs as
# host uid 65534 with no capabilities): EACCES.
. "$(dirname "$0")/lib.sh"

scenario() {
    if [[ $VARIANT == root ]]; then
        host_probe read /etc/shadow
        expect_eq "$RC" 0 "host control: root reads /etc/shadow ($(last))"
    fi
    expect_errno EACCES read /etc/shadow
    [[ ! -e /etc/gshadow ]] || expect_errno EACCES read /etc/gshadow
}
run_variants scenario
