#!/bin/bash
# escape-net-tcp-loopback: a TCP server on the host's 127.0.0.1 is unreachable inside (--net none is a
# new network namespace whose own lo is up, so the port is simply closed there: ECONNREFUSED).
. "$(dirname "$0")/lib.sh"

scenario() {
    start_servers --tcp 127.0.0.1
    host_probe connect-tcp 127.0.0.1 "$TCP_0_PORT"
    expect_eq "$OUT" OK "host control connect ($(last))"

    expect_errno ECONNREFUSED connect-tcp 127.0.0.1 "$TCP_0_PORT"
    OPTS=(--net none)
    expect_errno ECONNREFUSED connect-tcp 127.0.0.1 "$TCP_0_PORT"
}
run_variants scenario
