#!/bin/bash
# proxy-loopback-forward: an address entry on the host's loopback (--allow 127.0.0.1:PORT, --allow [::1]:PORT) is
# also forwarded: inside, a client that does not use the proxy (NO_PROXY covers 127.0.0.1) connects to
# 127.0.0.1:PORT and reaches the host's server on that port. Only the allowed ports are forwarded: another host
# loopback port stays closed (ECONNREFUSED, as with --net none).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"

scenario() {
    proxy_setup
    local have6=0 servers=(--http 127.0.0.1 "$WWW" --echo 127.0.0.1 --echo 127.0.0.1)
    if have_ipv6_loopback; then
        have6=1
        servers+=(--echo ::1)
    fi
    start_proxy_servers "${servers[@]}"
    local url=http://127.0.0.1:$HTTP_0_PORT/hello.txt
    host_probe connect-tcp 127.0.0.1 "$ECHO_1_PORT"
    expect_eq "$OUT" OK "host control: the unallowed echo server is up ($(last))"

    OPTS=(--net proxy --allow "127.0.0.1:$HTTP_0_PORT" --allow "127.0.0.1:$ECHO_0_PORT")
    if ((have6)); then OPTS+=(--allow "[::1]:$ECHO_2_PORT"); fi

    # curl with the environment confine sets: NO_PROXY=...127.0.0.1, so a direct connection to the forward...
    sandbox curl -sS --fail "$url"
    expect_eq "$RC:$OUT" "0:$HELLO" "curl (NO_PROXY) $url ($(last))"
    # ...and with every proxy variable removed, so it cannot be the proxy answering.
    sandbox env -u HTTP_PROXY -u http_proxy -u HTTPS_PROXY -u https_proxy -u ALL_PROXY -u all_proxy \
        curl -sS --fail --noproxy '*' "$url"
    expect_eq "$RC:$OUT" "0:$HELLO" "curl without any proxy, $url ($(last))"
    sandbox /usr/bin/python3 -c \
        'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "$url"
    expect_eq "$RC:$OUT" "0:$HELLO" "urllib (NO_PROXY) $url ($(last))"

    # A raw TCP client: 64 KiB through the forward to the host's echo server and back.
    pc echo 127.0.0.1 "$ECHO_0_PORT" 65536
    expect_eq "$RC:$OUT" "0:ROUNDTRIP-OK 65536" "direct echo round trip to 127.0.0.1:$ECHO_0_PORT ($(last))"
    expect_ok connect-tcp 127.0.0.1 "$ECHO_0_PORT"
    if ((have6)); then
        pc echo ::1 "$ECHO_2_PORT" 65536
        expect_eq "$RC:$OUT" "0:ROUNDTRIP-OK 65536" "direct echo round trip to [::1]:$ECHO_2_PORT ($(last))"
    fi

    # Not allowed, so not forwarded: the sandbox's own loopback has nothing there.
    expect_errno ECONNREFUSED connect-tcp 127.0.0.1 "$ECHO_1_PORT"
    # ...nor reachable through the proxy (an IP literal needs an address entry for that very port).
    pc raw "CONNECT 127.0.0.1:$ECHO_1_PORT HTTP/1.1\r\nHost: 127.0.0.1:$ECHO_1_PORT\r\n\r\n"
    expect_eq "$(status_line)" "HTTP/1.1 403 Forbidden" "CONNECT to the unallowed port ($(last))"
}
run_variants scenario
