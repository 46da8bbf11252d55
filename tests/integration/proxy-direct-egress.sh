#!/bin/bash
# proxy-direct-egress: --net proxy leaves the sandbox its own loopback and what the allowlist names. A direct TCP
# connect to the host's non-loopback address reaches an --allow'ed address:port (confine's gate connects it from
# the host) and is refused at once (ECONNREFUSED, recorded) on any other port; a UDP send is ENETUNREACH, and DNS
# fails: with resolv.conf pointing at a DNS server on the host's address (which answers on the host: control),
# getent and getaddrinfo inside find nothing. Control: the allowed echo server is reachable through the proxy too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"

HOST_IP=$(host_ipv4)

scenario() {
    [[ -n $HOST_IP ]] || skip "the host has no global IPv4 address"
    proxy_setup
    start_proxy_servers --echo "$HOST_IP" --dns "$HOST_IP"
    start_servers --udp "$HOST_IP"
    echo "nameserver $HOST_IP" >"$V/resolv.conf"
    chmod 0644 "$V/resolv.conf"

    host_probe connect-tcp "$HOST_IP" "$ECHO_0_PORT"
    expect_eq "$OUT" OK "host control: TCP connect to $HOST_IP:$ECHO_0_PORT ($(last))"
    host_probe udp-roundtrip "$HOST_IP" "$UDP_0_PORT"
    expect_eq "$OUT" OK "host control: UDP round trip to $HOST_IP:$UDP_0_PORT ($(last))"
    if [[ -n $DNS_PORT ]]; then
        host_pc dnsquery "$HOST_IP" example.com
        expect_eq "$OUT" "ANSWER 192.0.2.99" "host control: the DNS server on $HOST_IP:53 answers ($(last))"
    else
        echo "note: $HOST_IP:53 is taken; the DNS checks run without their host control"
    fi

    OPTS=(--net proxy --allow "$HOST_IP:$ECHO_0_PORT" --allow "$HOST_IP:$UDP_0_PORT" --ro "$V/resolv.conf:/etc/resolv.conf")
    expect_ok connect-tcp "$HOST_IP" "$ECHO_0_PORT"
    pc echo "$HOST_IP" "$ECHO_0_PORT" 65536
    expect_eq "$RC:$OUT" "0:ROUNDTRIP-OK 65536" "direct echo round trip to the allowed $HOST_IP:$ECHO_0_PORT ($(last))"
    expect_errno ECONNREFUSED connect-tcp "$HOST_IP" 9
    expect_errno ENETUNREACH udp-send "$HOST_IP" "$UDP_0_PORT"
    expect_errno ENETUNREACH udp-roundtrip "$HOST_IP" "$UDP_0_PORT"
    expect_errno ENETUNREACH udp-send "$HOST_IP" 53
    pc dnsquery "$HOST_IP" example.com
    expect_eq "$RC:$OUT" "1:ENETUNREACH" "raw DNS query to $HOST_IP:53 inside ($(last))"

    sandbox cat /etc/resolv.conf
    expect_eq "$OUT" "nameserver $HOST_IP" "resolv.conf inside ($(last))"
    sandbox getent hosts example.com
    expect_eq "$RC:$OUT" "2:" "getent hosts example.com inside ($(last))"
    pc resolve example.com
    expect_match "$RC:$OUT" '^1:gaierror: ' "getaddrinfo(example.com) inside ($(last))"

    # Control: the allowed destination is reachable, through the proxy only.
    pc tunnel "$HOST_IP" "$ECHO_0_PORT" 4096
    expect_eq "$RC:$OUT" "0:HTTP/1.1 200 Connection established"$'\n'"ROUNDTRIP-OK 4096" "control: CONNECT $HOST_IP:$ECHO_0_PORT"
}
run_variants scenario
