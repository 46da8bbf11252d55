#!/bin/bash
# escape-net-tcp-hostip: a TCP server on the host's global IPv4 address is unreachable inside: the
# sandbox's network namespace has only lo, so there is no route (ENETUNREACH).
. "$(dirname "$0")/lib.sh"

HOST_IP=$(host_ipv4)

scenario() {
    [[ -n $HOST_IP ]] || skip "the host has no global IPv4 address"
    start_servers --tcp "$HOST_IP"
    host_probe connect-tcp "$HOST_IP" "$TCP_0_PORT"
    expect_eq "$OUT" OK "host control connect to $HOST_IP ($(last))"

    expect_errno ENETUNREACH connect-tcp "$HOST_IP" "$TCP_0_PORT"
}
run_variants scenario
