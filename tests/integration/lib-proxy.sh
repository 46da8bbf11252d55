# lib-proxy.sh: helpers for the proxy-* tests (--net proxy, --allow, --net-log).  Source it after lib.sh:
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/lib-proxy.sh"
#
#   proxy_setup                  per variant: $WWW (files the host's HTTP servers serve: hello.txt), $PC (the
#                                client script, copied into the workspace), $NETLOG (a --net-log path the variant's
#                                user may write, outside the workspace)
#   start_proxy_servers ARGS...  host servers (proxy-servers.py): HTTP_<n>_PORT, ECHO_<n>_PORT, DNS_PORT
#   pc VERB ARGS...              sandbox /usr/bin/python3 proxy-client.py VERB ARGS... (sets RC, OUT, ERRS)
#   host_pc VERB ARGS...         the same client on the host, as the variant's user (controls)
#   have_ipv6_loopback           true if ::1 can be bound here
# The proxy is at 127.0.0.1:3128 inside; HELLO is the content of $WWW/hello.txt.

HELLO="hello through the proxy"

proxy_setup() {
    WWW=$V/www
    mkdir -m 0755 "$WWW"
    echo "$HELLO" >"$WWW/hello.txt"
    cp "$TESTS_DIR/proxy-client.py" "$WS/.probe/proxy-client.py"
    cp "$TESTS_DIR/proxy-client.py" "$BIN/proxy-client.py"
    chmod 0755 "$WS/.probe/proxy-client.py" "$BIN/proxy-client.py"
    PC=$WS/.probe/proxy-client.py
    NETLOG_DIR=$V/netlog
    mkdir -m 0755 "$NETLOG_DIR"
    if [[ $SUITE_UID == 0 ]]; then chown "$VUID:$VGID" "$NETLOG_DIR" "$WS/.probe/proxy-client.py"; fi
    # shellcheck disable=SC2034 # used by the tests
    NETLOG=$NETLOG_DIR/net.jsonl
}

start_proxy_servers() { start_server_script proxy-servers.py --lifetime 90 "$@"; }

pc() { sandbox /usr/bin/python3 "$PC" "$@"; }
host_pc() { try host /usr/bin/python3 "$BIN/proxy-client.py" "$@"; }

have_ipv6_loopback() {
    /usr/bin/python3 -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null
}

# The response's status line (first line, without the CR) of the last `pc raw`.
status_line() { local l=${OUT%%$'\n'*}; echo "${l%$'\r'}"; }

# expect_each REQUEST WANT-REGEX [REQUEST WANT-REGEX]...: send each raw REQUEST (\r\n escapes) through the proxy on
# its own connection, all in one sandbox run with the current OPTS; the line "STATUS => LAST-BODY-LINE" of each
# response must match its WANT-REGEX (anchored at both ends).
expect_each() {
    local reqs=() wants=() got=() i
    while (($#)); do
        reqs+=("$1")
        wants+=("$2")
        shift 2
    done
    pc each "${reqs[@]}"
    expect_eq "$RC" 0 "proxy-client.py each ($(last))"
    mapfile -t got <<<"$OUT"
    expect_eq "${#got[@]}" "${#reqs[@]}" "number of responses ($(last))"
    for i in "${!reqs[@]}"; do
        [[ ${got[i]} =~ ^${wants[i]}$ ]] || fail "request '${reqs[i]}': expected /^${wants[i]}\$/, got '${got[i]}'"
    done
}
