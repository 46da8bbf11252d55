#!/bin/bash
# escape-net-abstract-unix: a host abstract unix socket is unreachable inside: abstract names belong to
# the network namespace, and the sandbox has its own (ECONNREFUSED: no such name there).
. "$(dirname "$0")/lib.sh"

scenario() {
    local name=confine-test-$$-$VARIANT
    start_servers --abstract "$name"
    host_probe connect-abstract "$name"
    expect_eq "$OUT" OK "host control connect ($(last))"

    expect_errno ECONNREFUSED connect-abstract "$name"
}
run_variants scenario
