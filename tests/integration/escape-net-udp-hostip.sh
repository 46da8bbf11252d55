#!/bin/bash
# escape-net-udp-hostip: a UDP echo server on the host's global IPv4 address is unreachable (ENETUNREACH).
. "$(dirname "$0")/lib.sh"

HOST_IP=$(host_ipv4)

scenario() {
    [[ -n $HOST_IP ]] || skip "the host has no global IPv4 address"
    start_servers --udp "$HOST_IP"
    host_probe udp-roundtrip "$HOST_IP" "$UDP_0_PORT"
    expect_eq "$OUT" OK "host control round trip to $HOST_IP ($(last))"

    expect_errno ENETUNREACH udp-roundtrip "$HOST_IP" "$UDP_0_PORT"
}
run_variants scenario
