#!/bin/bash
# proxy-request-paths: under a method/path rule, a path that a server would read as another one is refused, not
# matched: `/v1/../admin`, `/v1/%2e%2e/admin`, `/v1/..;/admin` (Tomcat, Spring and Jetty read `..;` as `..`),
# `/v1/%252e%252e/admin` (decoded twice) and `/v1/%c0%ae%c0%ae/admin` (overlong UTF-8 for `..`), each with a 403
# naming its problem, while the allowed paths (an escaped space, a query holding `..;`) still pass. Judged on the
# host: the server on the host's loopback records what arrived, and none of the refused requests did.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"

scenario() {
    LOG=$V/received.jsonl
    start_server_script secret-servers.py "$LOG" --http 127.0.0.1
    # Rules name hosts: localhost, which resolves to a loopback address, so that address needs its entry too.
    OPTS=(--net proxy --allow "127.0.0.1:$HTTP_0_PORT" --allow "GET localhost:$HTTP_0_PORT/v1/*")
    local url=http://localhost:$HTTP_0_PORT
    local proxied="curl -sS --max-time 20 --path-as-is --noproxy '' -x http://127.0.0.1:3128"
    # shellcheck disable=SC2016 # expanded inside the sandbox
    sandbox /bin/sh -c "
        for p in /v1/models /v1/a%20b '/v1/x?y=..;' /v1/../admin /v1/%2e%2e/admin '/v1/..;/admin' \
                 /v1/%252e%252e/admin /v1/%c0%ae%c0%ae/admin; do
            echo \"\$p \$($proxied -o /dev/null -w %{http_code} \"$url\$p\")\"
        done
        $proxied '$url/v1/..;/admin'
        $proxied '$url/v1/%252e%252e/admin'
        $proxied '$url/v1/%c0%ae%c0%ae/admin'"
    expect_eq "$RC" 0 "the sandbox's requests ($(last))"
    # On the host: the server's own record. Only the allowed paths arrived; none of the refused ones did.
    # (Judged first: it is what a server behind the proxy saw, whatever the sandbox was told.)
    local paths
    paths=$(/usr/bin/python3 -c 'import json, sys; [print(json.loads(l)["method"], json.loads(l)["path"])
for l in open(sys.argv[1])]' "$LOG")
    expect_eq "$paths" $'GET /v1/models\nGET /v1/a%20b\nGET /v1/x?y=..;' "what reached the server"
    local want
    want=$(printf '%s\n' '/v1/models 200' '/v1/a%20b 200' '/v1/x?y=..; 200' '/v1/../admin 403' '/v1/%2e%2e/admin 403' \
        '/v1/..;/admin 403' '/v1/%252e%252e/admin 403' '/v1/%c0%ae%c0%ae/admin 403')
    expect_eq "$(head -n 8 <<<"$OUT")" "$want" "what passed and what was refused ($(last))"
    local where="GET localhost:$HTTP_0_PORT" holds="is refused on a host with method/path rules: its path holds"
    expect_match "$OUT" "$where/v1/\.\.;/admin $holds a ; parameter in a segment" \
        "the refusal of ..; names its problem"
    expect_match "$OUT" "$where/v1/%252e%252e/admin $holds an encoded % \(\`%25\`\): double encoding" \
        "the refusal of %252e names its problem"
    expect_match "$OUT" "$where/v1/%c0%ae%c0%ae/admin $holds an encoded byte above 0x7f" \
        "the refusal of %c0%ae names its problem"
}
run_variants scenario
