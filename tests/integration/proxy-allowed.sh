#!/bin/bash
# proxy-allowed: with --net proxy, allowed destinations are reachable through confine's proxy at 127.0.0.1:3128
# inside: plain HTTP in absolute form (curl -x, and clients that honour HTTP_PROXY: curl, python's urllib) returns
# the file a host server serves, and a CONNECT tunnel to an allowed TCP echo server round-trips 64 KiB and 8 MiB (the splice relay) both ways.
# The host's non-loopback address is reachable only this way (a direct connect is ENETUNREACH: proxy-direct-egress),
# so a success there proves the request went through the proxy.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"

HOST_IP=$(host_ipv4)

scenario() {
    proxy_setup
    local servers=(--http 127.0.0.1 "$WWW" --echo 127.0.0.1)
    if [[ -n $HOST_IP ]]; then servers+=(--http "$HOST_IP" "$WWW" --echo "$HOST_IP"); fi
    start_proxy_servers "${servers[@]}"
    local url=http://127.0.0.1:$HTTP_0_PORT/hello.txt
    try host curl -sS --noproxy '*' "$url"
    expect_eq "$OUT" "$HELLO" "host control: $url ($(last))"

    OPTS=(--net proxy --allow "127.0.0.1:$HTTP_0_PORT" --allow "127.0.0.1:$ECHO_0_PORT")
    if [[ -n $HOST_IP ]]; then OPTS+=(--allow "$HOST_IP:$HTTP_1_PORT" --allow "$HOST_IP:$ECHO_1_PORT"); fi

    # Absolute-form GET, forced through the proxy (--noproxy '' overrides NO_PROXY=127.0.0.1).
    sandbox curl -sS --fail --noproxy '' -x http://127.0.0.1:3128 "$url"
    expect_eq "$RC:$OUT" "0:$HELLO" "curl -x proxy GET $url ($(last))"
    # The same file through a CONNECT tunnel (curl -p: proxytunnel).
    sandbox curl -sS --fail -p --noproxy '' -x http://127.0.0.1:3128 "$url"
    expect_eq "$RC:$OUT" "0:$HELLO" "curl -p (CONNECT) $url ($(last))"
    # python's urllib honours HTTP_PROXY (NO_PROXY dropped, or 127.0.0.1 would be reached by the loopback forward).
    sandbox env -u NO_PROXY -u no_proxy /usr/bin/python3 -c \
        'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "$url"
    expect_eq "$RC:$OUT" "0:$HELLO" "urllib with HTTP_PROXY, $url ($(last))"

    # A CONNECT tunnel to the allowed echo server: 64 KiB both ways, then a clean end of stream.
    pc tunnel 127.0.0.1 "$ECHO_0_PORT" 65536
    expect_eq "$RC:$OUT" "0:HTTP/1.1 200 Connection established"$'\n'"ROUNDTRIP-OK 65536" "CONNECT tunnel to 127.0.0.1:$ECHO_0_PORT"
    # 8 MiB each way: many splice() bursts through pipes of the pool; every byte must still arrive intact.
    pc tunnel 127.0.0.1 "$ECHO_0_PORT" 8388608
    expect_eq "$RC:$OUT" "0:HTTP/1.1 200 Connection established"$'\n'"ROUNDTRIP-OK 8388608" "8 MiB through a CONNECT tunnel (splice relay)"

    if [[ -z $HOST_IP ]]; then
        echo "note: the host has no global IPv4 address; the non-loopback checks are left out"
        return 0
    fi
    # The host's own non-loopback address: no route from inside, so only the proxy can get there.
    local hurl=http://$HOST_IP:$HTTP_1_PORT/hello.txt
    sandbox /usr/bin/python3 -c \
        'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "$hurl"
    expect_eq "$RC:$OUT" "0:$HELLO" "urllib with the environment as set by confine, $hurl ($(last))"
    sandbox curl -sS --fail "$hurl"
    expect_eq "$RC:$OUT" "0:$HELLO" "curl with the environment as set by confine, $hurl ($(last))"
    pc tunnel "$HOST_IP" "$ECHO_1_PORT" 65536
    expect_eq "$RC:$OUT" "0:HTTP/1.1 200 Connection established"$'\n'"ROUNDTRIP-OK 65536" "CONNECT tunnel to $HOST_IP:$ECHO_1_PORT"
}
run_variants scenario
