#!/bin/bash
# proxy-names: with --net proxy, confine answers the sandbox's DNS itself and takes connections made without the
# proxy. An allowed name resolves inside to a local address of confine's; a connection there, on a port the
# allowlist grants the name, reaches the real host (Node's fetch with no proxy variables, raw TCP), decided as a
# CONNECT would be: another port is refused, a name that resolves to an internal address is refused unless that
# address is allowed too. A name not on the list does not exist inside, and is never looked up outside: a DNS
# server the test runs records every name it is asked, and never sees it.
#
# The test gives its host side a name for loopback (api.confine.test, in a private /etc/hosts) and a DNS server
# of its own (a private /etc/resolv.conf): it runs in a network and mount namespace of its own, as root.
if [[ $(id -u) == 0 && -z ${PROXY_NAMES_NS:-} ]]; then
    exec unshare --net --mount --propagation private env PROXY_NAMES_NS=1 "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"

[[ -n ${PROXY_NAMES_NS:-} ]] || skip "needs root: the host side's names live in a private mount namespace"
ip link set lo up
printf '127.0.0.1 localhost\n127.0.0.1 api.confine.test internal.confine.test other.confine.test\n' >"$T/hosts"
echo 'nameserver 127.0.0.1' >"$T/resolv.conf"
mount --bind "$T/hosts" /etc/hosts
mount --bind "$T/resolv.conf" /etc/resolv.conf

NAMES_CLIENT='
import socket, sys
verb, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    if verb == "resolve":
        print(socket.gethostbyname(host))
    elif verb == "echo":
        s = socket.create_connection((host, port), timeout=10)
        s.sendall(b"ssh-like bytes\n")
        s.shutdown(socket.SHUT_WR)
        got = b""
        while True:
            b = s.recv(4096)
            if not b:
                break
            got += b
        print(got.decode().strip())
    elif verb == "tls-hello":  # a ClientHello naming argv[4], then whatever the server says first
        import ssl
        s = socket.create_connection((host, port), timeout=10)
        ctx = ssl.create_default_context()
        try:
            ctx.wrap_socket(s, server_hostname=sys.argv[4])
            print("HANDSHAKE")
        except ssl.SSLError:
            print("TLS-ERROR")
    elif verb == "get":
        s = socket.create_connection((host, port), timeout=10)
        s.sendall(f"GET /hello.txt HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
        got = b""
        while True:
            b = s.recv(4096)
            if not b:
                break
            got += b
        print(got.decode().splitlines()[-1] if got else "EMPTY")
except OSError as e:
    print(f"{type(e).__name__} {e.errno}")
'
NODE_FETCH='fetch(process.argv[1]).then(r => r.text()).then(t => console.log(t.trim()), e => console.log("FAILED " + (e.cause ? e.cause.code : e.message)))'
NO_PROXY_VARS=(env -u HTTP_PROXY -u HTTPS_PROXY -u http_proxy -u https_proxy -u ALL_PROXY -u all_proxy -u NO_PROXY -u no_proxy)

scenario() {
    proxy_setup
    local dns_log=$V/dns.log leak=leak-$RANDOM$RANDOM.confine.test
    touch "$dns_log" && chmod 0666 "$dns_log"
    start_proxy_servers --http 127.0.0.1 "$WWW" --http 127.0.0.1 "$WWW" --echo 127.0.0.1 --dns 127.0.0.1 --dns-log "$dns_log"
    [[ $DNS_PORT == 53 ]] || fail "the test's DNS server could not start"
    echo "$NAMES_CLIENT" >"$WS/names.py"
    local api=api.confine.test
    OPTS=(--net proxy --net-log "$NETLOG"
          --allow "$api:$HTTP_0_PORT" --allow "127.0.0.1:$HTTP_0_PORT"
          --allow "$api:$ECHO_0_PORT" --allow "127.0.0.1:$ECHO_0_PORT"
          --allow "internal.confine.test:$HTTP_1_PORT")

    # Node's fetch ignores proxy variables; with none set at all it still reaches the allowed name.
    sandbox "${NO_PROXY_VARS[@]}" node -e "$NODE_FETCH" "http://$api:$HTTP_0_PORT/hello.txt"
    expect_eq "$RC:$OUT" "0:$HELLO" "Node fetch, no proxy variables, allowed name ($(last))"
    sandbox "${NO_PROXY_VARS[@]}" node -e "$NODE_FETCH" "http://other.confine.test:$HTTP_0_PORT/hello.txt"
    expect_eq "$RC:$OUT" "0:FAILED ENOTFOUND" "Node fetch of a name not on the list ($(last))"

    # Raw TCP to an allowed name:port round-trips; another port of the same name has nothing listening.
    sandbox python3 "$WS/names.py" echo "$api" "$ECHO_0_PORT"
    expect_eq "$RC:$OUT" "0:ssh-like bytes" "raw TCP to $api:$ECHO_0_PORT ($(last))"
    sandbox python3 "$WS/names.py" echo "$api" "$HTTP_1_PORT"
    expect_eq "$RC:$OUT" "0:ConnectionRefusedError 111" "raw TCP to $api on a port not allowed for it ($(last))"
    # The name's address is confine's, local to the sandbox, and the same for the whole run.
    sandbox sh -c "python3 $WS/names.py resolve $api 0; python3 $WS/names.py resolve $api 0"
    expect_match "${OUT%%$'\n'*}" '^127\.77\.[0-9]+\.[0-9]+$' "the name's address inside ($(last))"
    [[ ${OUT%%$'\n'*} == "${OUT##*$'\n'}" ]] || fail "the name got two addresses in one run: $OUT"

    # An allowed name that resolves to an internal address (loopback here) is refused: confine's gate resolves the
    # name on the host before the connect returns, and refuses it there...
    sandbox python3 "$WS/names.py" get internal.confine.test "$HTTP_1_PORT"
    expect_eq "$OUT" 'ConnectionRefusedError 111' "allowed name resolving to an internal address ($(last))"
    grep -q '"method":"TCP","host":"internal.confine.test","port":'"$HTTP_1_PORT"',"allowed":false,"reason":"resolves to an internal address' "$NETLOG" ||
        fail "the net log does not say the internal address was refused: $(cat "$NETLOG")"
    # ...unless that address is allowed too.
    OPTS+=(--allow "127.0.0.1:$HTTP_1_PORT")
    sandbox python3 "$WS/names.py" get internal.confine.test "$HTTP_1_PORT"
    expect_eq "$RC:$OUT" "0:$HELLO" "the same name once its address is allowed ($(last))"

    # A name not on the list: no such name inside, at once (no timeout), and nobody outside was asked.
    host getent hosts control-$RANDOM.confine.test || true
    grep -q '^control-' "$dns_log" || fail "control: the test's DNS server saw no query from the host ($(cat "$dns_log"))"
    local started=$SECONDS
    sandbox sh -c "getent hosts $leak; echo rc=\$?; python3 $WS/names.py resolve $leak 0"
    expect_eq "$OUT" "rc=2"$'\n'"gaierror -2" "a name not on the list ($(last))"
    ((SECONDS - started < 10)) || fail "the refused lookup took $((SECONDS - started)) s"
    if grep -q "$leak" "$dns_log"; then fail "the name $leak reached a DNS server outside: $(cat "$dns_log")"; fi
    grep -q '"method":"DNS","host":"'"$leak"'","port":0,"allowed":false' "$NETLOG" || fail "the net log does not record the refused name"
    expect_match "$ERRS" "network: .*$leak \(DNS\)" "the exit summary names the refused name"
    # An allowed name is not looked up by DNS either when the sandbox asks for it: only confine resolves it, at
    # connect time, and here the host's /etc/hosts has it.
    if grep -q "$api" "$dns_log"; then fail "the allowed name was sent to a DNS server: $(cat "$dns_log")"; fi
    # An AAAA question gets an empty answer at once (no 5 s stall before the A answer is used).
    started=$SECONDS
    sandbox getent ahosts "$api"
    expect_match "$OUT" "^127\.77\." "getent ahosts $api ($(last))"
    ((SECONDS - started < 4)) || fail "getent ahosts took $((SECONDS - started)) s"

    # --check-sni holds for connections by name on the TLS port too: the ClientHello must name the host. Port 443
    # is free in this test's own network namespace; the server there speaks no TLS, it only shows who got through.
    local tls_log=$V/tls.log
    : >"$tls_log"
    bg /usr/bin/python3 -c 'import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 443)); s.listen(8)
while True:
    c, _ = s.accept(); open(sys.argv[1], "a").write("connection\n"); c.close()' "$tls_log"
    OPTS=(--net proxy --net-log "$NETLOG" --check-sni --allow "$api" --allow 127.0.0.1:443)
    sandbox python3 "$WS/names.py" tls-hello "$api" 443 evil.example
    expect_match "$OUT" '^(TLS-ERROR|ConnectionResetError 104)$' "a ClientHello naming another host ($(last))"
    [[ ! -s $tls_log ]] || fail "a ClientHello naming another host reached the server"
    grep -q '"method":"TCP","host":"'"$api"'","port":443,"allowed":false,"reason":"--check-sni: the TLS server name `evil.example` is not `'"$api"'`"' "$NETLOG" ||
        fail "the net log does not record the SNI refusal: $(tail -3 "$NETLOG")"
    sandbox python3 "$WS/names.py" tls-hello "$api" 443 "$api"
    expect_eq "$OUT" "TLS-ERROR" "a ClientHello naming the host gets through to the server ($(last))"
    [[ $(cat "$tls_log") == connection ]] || fail "the matching ClientHello did not reach the server ($(cat "$tls_log"))"
}
run_variants scenario
