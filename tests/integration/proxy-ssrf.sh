#!/bin/bash
# proxy-ssrf: allowing a *name* never opens internal addresses. `--allow NAME:PORT` for a name that resolves to
# loopback on the host (this host's own name, as a rebinding name would) is refused with 403 naming the internal
# address, for CONNECT and GET; IP literals need an address entry for that very address and port (loopback,
# RFC 1918, link-local metadata, IPv6, v4-mapped), and numeric spellings of 127.0.0.1 are names that are not
# allowed. `localhost` is different: it names the loopback by definition (RFC 6761) and cannot be rebound, so
# `--allow localhost:PORT` is the loopback's PORT. Control: the same server is reached once its address is allowed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"

scenario() {
    proxy_setup
    start_proxy_servers --http 127.0.0.1 "$WWW" --echo 127.0.0.1
    local hp=$HTTP_0_PORT ep=$ECHO_0_PORT
    local F='HTTP/1.1 403 Forbidden => confine: ' lit='IP-literal destinations need an address entry'
    local U='HTTP/1.1 502 Bad Gateway => confine: '  # a name no resolver knows: allowed, but no address at all
    local internal='resolves to an internal address \(([0-9.]+|[0-9a-f:]+)\); allow it by address to reach it'
    # The flag each 403 names: an address entry for an internal address, or the target itself.
    internal_hint() { :; }  # none: the reason itself names the address, and says to allow it by address
    allow_hint() { echo "; to allow it: --allow $1 \\(a profile: \\[network\\] allow\\)"; }
    # This host's own name, where it resolves to an internal address (it does on most machines: 127.0.1.1).
    local me
    me=$(hostname | tr 'A-Z' 'a-z')
    getent ahostsv4 "$me" | grep -qE '^(127\.|10\.|192\.168\.|172\.(1[6-9]|2[0-9]|3[01])\.)' ||
        skip "this host's name ($me) does not resolve to an internal address"
    OPTS=(--net proxy --allow "$me:$hp" --allow "$me:$ep" --allow '*.localhost:*' --allow '10.1.2.3:*')
    expect_each \
        "CONNECT $me:$ep HTTP/1.1\r\nHost: $me:$ep\r\n\r\n" "${F}$me:$ep $internal$(internal_hint "$ep" "$me")" \
        "GET http://$me:$hp/hello.txt HTTP/1.1\r\nHost: $me:$hp\r\n\r\n" "${F}$me:$hp $internal$(internal_hint "$hp" "$me")" \
        "CONNECT ${me^^}.:$ep HTTP/1.1\r\n\r\n" "(${U}$me:$ep allowed but unresolvable: .*|${F}$me:$ep $internal$(internal_hint "$ep" "$me"))" \
        "CONNECT 127.0.0.1:$ep HTTP/1.1\r\n\r\n" "${F}127\.0\.0\.1:$ep $lit$(allow_hint "127\.0\.0\.1:$ep")" \
        "GET http://127.0.0.1:$hp/hello.txt HTTP/1.1\r\nHost: 127.0.0.1:$hp\r\n\r\n" "${F}127\.0\.0\.1:$hp $lit$(allow_hint "127\.0\.0\.1:$hp")" \
        "CONNECT [::1]:$ep HTTP/1.1\r\n\r\n" "${F}::1:$ep $lit$(allow_hint "\\[::1\\]:$ep")" \
        "CONNECT [::ffff:127.0.0.1]:$ep HTTP/1.1\r\n\r\n" "${F}.*$lit$(allow_hint "\\[.*\\]:$ep")" \
        "CONNECT 10.9.9.9:443 HTTP/1.1\r\n\r\n" "${F}10\.9\.9\.9:443 $lit$(allow_hint "10\.9\.9\.9:443")" \
        "CONNECT 192.168.0.1:443 HTTP/1.1\r\n\r\n" "${F}192\.168\.0\.1:443 $lit$(allow_hint "192\.168\.0\.1:443")" \
        "GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n" "${F}169\.254\.169\.254:80 $lit$(allow_hint "169\.254\.169\.254:80")" \
        "CONNECT 2130706433:$ep HTTP/1.1\r\n\r\n" "${F}2130706433:$ep not in the allowlist$(allow_hint "2130706433:$ep")" \
        "CONNECT 127.1:$ep HTTP/1.1\r\n\r\n" "${F}127\.1:$ep not in the allowlist$(allow_hint "127\.1:$ep")" \
        "CONNECT 0x7f000001:$ep HTTP/1.1\r\n\r\n" "${F}0x7f000001:$ep not in the allowlist$(allow_hint "0x7f000001:$ep")" \
        "CONNECT foo.localhost:$ep HTTP/1.1\r\n\r\n" "(${U}foo\.localhost:$ep allowed but unresolvable: .*|${F}foo\.localhost:$ep $internal$(internal_hint "$ep" 'foo\.localhost'))"

    # curl sees the same 403 and never the file.
    sandbox curl -sS --noproxy '' -x http://127.0.0.1:3128 "http://$me:$hp/hello.txt"
    expect_match "$OUT" "internal address" "curl GET via the proxy to $me ($(last))"
    expect_no_match "$OUT" "$HELLO" "curl GET via the proxy to $me: the file must not come back"

    # Control: with the address allowed as well, the same name reaches the same server.
    local address
    address=$(getent ahostsv4 "$me" | awk 'NR == 1 { print $1 }')
    OPTS=(--net proxy --allow "$me:$ep" --allow "$address:$ep")
    pc tunnel "$me" "$ep" 4096
    expect_eq "$RC:$OUT" "0:HTTP/1.1 200 Connection established"$'\n'"ROUNDTRIP-OK 4096" "control: $me allowed by address too"

    # localhost is the loopback: allowed as a name, it is reached through the proxy and directly.
    OPTS=(--net proxy --allow "localhost:$hp")
    sandbox curl -sS --noproxy '' -x http://127.0.0.1:3128 "http://localhost:$hp/hello.txt"
    expect_eq "$RC:$OUT" "0:$HELLO" "curl GET via the proxy to localhost:$hp ($(last))"
    sandbox curl -sS --noproxy '*' "http://localhost:$hp/hello.txt"
    expect_eq "$RC:$OUT" "0:$HELLO" "curl GET straight to localhost:$hp ($(last))"
}
run_variants scenario
