#!/bin/bash
# escape-net-udp-loopback: a UDP echo server on the host's 127.0.0.1 gets nothing from inside; the
# datagram goes to the sandbox's own lo, where the port is closed (ECONNREFUSED on the connected socket).
. "$(dirname "$0")/lib.sh"

scenario() {
    start_servers --udp 127.0.0.1
    host_probe udp-roundtrip 127.0.0.1 "$UDP_0_PORT"
    expect_eq "$OUT" OK "host control round trip ($(last))"

    expect_errno ECONNREFUSED udp-roundtrip 127.0.0.1 "$UDP_0_PORT"
}
run_variants scenario
