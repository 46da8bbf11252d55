#!/bin/bash
# fallback-net-abstract-unix: in fallback mode the host's abstract unix sockets are shared (no network
# namespace); Landlock's abstract-socket scope refuses connect() with EPERM.  Control: with --net host the
# scope is not applied and the connect works.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

scenario() {
    local name=confine-test-fb-$$-$VARIANT
    start_servers --abstract "$name"
    host_probe connect-abstract "$name"
    expect_eq "$OUT" OK "host control connect ($(last))"

    set_mode fallback
    expect_errno EPERM connect-abstract "$name"

    set_mode fallback --net host
    expect_ok connect-abstract "$name"
}
run_variants scenario
