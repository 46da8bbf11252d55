#!/bin/bash
# run-net-host: --net host shares the host network: the host's loopback TCP and UDP servers and abstract
# sockets are reachable (the opt-in works, so the escape-net-* failures are due to --net none).
. "$(dirname "$0")/lib.sh"

scenario() {
    local name=confine-test-nethost-$$-$VARIANT
    start_servers --tcp 127.0.0.1 --udp 127.0.0.1 --abstract "$name"
    OPTS=(--net host)
    expect_ok connect-tcp 127.0.0.1 "$TCP_0_PORT"
    expect_ok udp-roundtrip 127.0.0.1 "$UDP_0_PORT"
    expect_ok connect-abstract "$name"
}
run_variants scenario
