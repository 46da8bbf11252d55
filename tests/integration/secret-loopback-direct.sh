#!/bin/bash
# secret-loopback-direct: --secret NAME --for 127.0.0.1 reaches a local endpoint that the sandbox's client connects
# to directly, without the proxy (the loopback forward of --allow 127.0.0.1:PORT), as agents do with a local base
# URL. confine reads the request head there, puts the real value into the header where the placeholder was and sends
# the request on with Connection: close, so each request of a keep-alive client is read on a connection of its own.
# A server on the host's loopback records what arrived, and the test judges there. Controls: the same request
# through the proxy gets the same value; a secret listed for another host keeps its placeholder and --net-log names
# it; a server that speaks first, and TLS (the client speaks first, but no HTTP), are relayed as before; with the
# secret listed for another host only, the forward passes the placeholder untouched; --for localhost names the same
# loopback.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"
. "$(dirname "$0")/lib-tls.sh"

# The requests received whose path starts with $1, one line each: "PATH" and then the headers named by the rest of
# the arguments, "name=value" (the value "-" when the header was not there); "on=N" stands for the server's N-th
# connection.
received() {
    /usr/bin/python3 -c '
import json, sys
log, prefix, names = sys.argv[1], sys.argv[2], sys.argv[3:]
for line in open(log):
    r = json.loads(line)
    if r["path"].startswith(prefix):
        h = {k.lower(): v for k, v in r["headers"]}
        h["on"] = str(r["connection"])
        print(" ".join([r["path"]] + ["%s=%s" % (n, h.get(n, "-")) for n in names]))' \
        "$LOG" "$@"
}

# The sandbox's client: no proxy variables at all, so each request below goes where it names (the proxy only when
# -x names it).
CLIENT='unset HTTP_PROXY http_proxy HTTPS_PROXY https_proxy ALL_PROXY all_proxy NO_PROXY no_proxy
curl() { command curl -sS --max-time 20 "$@"; }'
BANNER_CLIENT='
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
print(s.recv(100).decode().strip())
s.sendall(b"ping\n")
print(s.recv(100).decode().strip())'

scenario() {
    proxy_setup
    LOG=$V/received.jsonl
    local certs=$V/certs
    mkdir -m 0755 "$certs"
    make_certificates "$certs"
    start_server_script secret-servers.py "$LOG" --keep-alive --http 127.0.0.1 --banner 127.0.0.1 \
        --tls 127.0.0.1 "$certs/good.pem" "$certs/good.key"
    cp "$certs/ca.pem" "$WS/test-ca.txt"  # the client's trust inside (not *.pem: that would be masked)
    echo "$BANNER_CLIENT" >"$WS/banner.py"
    local real="sk-REAL-$RANDOM$RANDOM$RANDOM" other_real="ot-REAL-$RANDOM$RANDOM$RANDOM"
    local url=http://127.0.0.1:$HTTP_0_PORT
    XENV=(MY_KEY="$real" MY_OTHER="$other_real")
    local allow=(--net proxy --net-log "$NETLOG" --allow "127.0.0.1:$HTTP_0_PORT" --allow "127.0.0.1:$BANNER_PORT"
                 --allow "127.0.0.1:$TLS_0_PORT")
    OPTS=("${allow[@]}" --secret KEY=env:MY_KEY --for 127.0.0.1 --secret OTHER=env:MY_OTHER --for elsewhere.example)
    # shellcheck disable=SC2016 # expanded inside the sandbox
    sandbox /bin/sh -c "$CLIENT"'
        echo "placeholder=$KEY other=$OTHER"
        curl -H "Authorization: Bearer $KEY" '"$url/direct-1 $url/direct-2"'
        curl -H "Authorization: Bearer $KEY" -H "X-Other: $OTHER" '"$url/other"'
        curl -x http://127.0.0.1:3128 -H "Authorization: Bearer $KEY" '"$url/proxied"'
        curl --cacert '"$WS/test-ca.txt"' -H "Authorization: Bearer $KEY" https://127.0.0.1:'"$TLS_0_PORT"'/tls
        python3 '"$WS/banner.py $BANNER_PORT"
    expect_eq "$RC" 0 "the sandbox's requests ($(last))"
    local placeholder other
    placeholder=$(sed -n 's/^placeholder=\([^ ]*\) .*/\1/p' <<<"$OUT")
    other=$(sed -n 's/.* other=//p' <<<"$OUT")
    expect_match "$placeholder" '^confine-placeholder-[0-9a-f]{64}$' "the placeholder"
    expect_match "$OUT" $'\n''recorded'$'\n''recorded'$'\n' "both direct requests answered"
    expect_eq "$(grep -c '^recorded$' <<<"$OUT")" 5 "every HTTP request answered ($(last))"

    # Both requests of the keep-alive client got the real value, each on a connection of its own (confine sent the
    # first with Connection: close; a second request on that connection would have gone by unread).
    local got
    got=$(received /direct- authorization connection on)
    expect_eq "$got" "/direct-1 authorization=Bearer $real connection=close on=1
/direct-2 authorization=Bearer $real connection=close on=2" "the direct requests, as the server got them"
    # A secret listed for another host keeps its placeholder, and the log says so; the listed one is put in.
    got=$(received /other authorization x-other)
    expect_eq "$got" "/other authorization=Bearer $real x-other=$other" "the request with both placeholders"
    expect_match "$(cat "$NETLOG")" '"method":"FORWARD","host":"127.0.0.1","port":'"$HTTP_0_PORT"',[^'$'\n'']*"placeholder_not_substituted":"OTHER"' \
        "--net-log names the placeholder the forward sent as is"
    expect_match "$ERRS" "carried a secret's placeholder to a host not listed for it \\(sent as is, not the value\\): 127\\.0\\.0\\.1:$HTTP_0_PORT \\(OTHER\\)" \
        "the exit summary counts it"
    # Through the proxy: the same value.
    got=$(received /proxied authorization)
    expect_eq "$got" "/proxied authorization=Bearer $real" "the proxied request"
    # TLS to the listed loopback port is end to end: it arrives, with the placeholder (a --broker is the way to put
    # a value into HTTPS).
    got=$(received /tls authorization)
    expect_eq "$got" "/tls authorization=Bearer $placeholder" "the TLS request, untouched"
    # A server that speaks first is reached as before: confine waits for whoever talks first.
    expect_match "$OUT" $'\n''220 banner'$'\n''ping$' "the server that speaks first ($(last))"
    expect_no_match "$(cat "$NETLOG") $ERRS" "$real|$other_real" "no real value in the log or on stderr"

    # Control: KEY listed for another host only. The forward passes the bytes untouched: the placeholder arrives.
    OPTS=("${allow[@]}" --secret KEY=env:MY_KEY --for elsewhere.example)
    # shellcheck disable=SC2016 # expanded inside the sandbox
    sandbox /bin/sh -c "$CLIENT"'
        echo "$KEY"
        curl -H "Authorization: Bearer $KEY" '"$url/unlisted"
    expect_eq "$RC" 0 "the request to a host the secret is not listed for ($(last))"
    got=$(received /unlisted authorization)
    expect_match "${OUT%%$'\n'*}" '^confine-placeholder-[0-9a-f]{64}$' "the placeholder of the control run"
    expect_eq "$got" "/unlisted authorization=Bearer ${OUT%%$'\n'*}" "the unlisted host got the placeholder"

    # --for localhost: the forward's loopback is localhost too.
    OPTS=("${allow[@]}" --secret KEY=env:MY_KEY --for localhost)
    # shellcheck disable=SC2016 # expanded inside the sandbox
    sandbox /bin/sh -c "$CLIENT"'
        curl -H "Authorization: Bearer $KEY" '"$url/localhost"
    expect_eq "$RC" 0 "the request with --for localhost ($(last))"
    got=$(received /localhost authorization)
    expect_eq "$got" "/localhost authorization=Bearer $real" "--for localhost"
}
run_variants scenario
