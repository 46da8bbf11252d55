#!/bin/bash
# proxy-request-rules: --allow 'METHOD HOST[:PORT]/PATH' lets only the named requests reach that host, for plain
# HTTP through the proxy and through a --broker; everything else gets 403 with one line naming the --allow that
# would allow it, dot segments and encoded separators are refused (the server would decode them into another
# path), and a CONNECT tunnel to such a host is refused (its requests would be out of sight). A server on the
# host's loopback records what arrived: only the allowed requests did.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"
. "$(dirname "$0")/lib-tls.sh"

scenario() {
    proxy_setup
    local certs=$V/certs
    mkdir -m 0755 "$certs"
    make_certificates "$certs"
    LOG=$V/received.jsonl
    start_server_script secret-servers.py "$LOG" --http 127.0.0.1 --tls 127.0.0.1 "$certs/good.pem" "$certs/good.key"
    XENV=(SSL_CERT_FILE="$certs/ca.pem")
    # localhost resolves to a loopback address, which needs the address entries too.
    OPTS=(--net proxy --allow "127.0.0.1:$HTTP_0_PORT" --allow "127.0.0.1:$TLS_0_PORT"
        --allow "GET localhost:$HTTP_0_PORT/v1/models/*" --allow "POST localhost:$HTTP_0_PORT/v1/upload"
        --allow "POST localhost:$TLS_0_PORT/v1/responses"
        --broker "14000=https://localhost:$TLS_0_PORT")
    local http=http://localhost:$HTTP_0_PORT
    local proxied="curl -sS --max-time 20 --path-as-is --noproxy '' -x http://127.0.0.1:3128 -o /dev/null -w %{http_code}"
    local direct="curl -sS --max-time 20 --path-as-is -w %{http_code}"
    # shellcheck disable=SC2016 # expanded inside the sandbox
    sandbox /bin/sh -c "
        echo get-model \$($proxied $http/v1/models/m1)
        echo post-model \$($proxied -X POST $http/v1/models/m2)
        echo post-upload \$($proxied -d x $http/v1/upload)
        echo get-upload \$($proxied $http/v1/upload-not)
        echo dots \$($proxied $http/v1/models/../../admin-dots)
        echo encoded \$($proxied $http/v1/models/%2e%2e/admin-encoded)
        echo connect \$($proxied -p $http/v1/models/m3)
        echo broker-post \$($direct -o /dev/null -d '{}' http://127.0.0.1:14000/v1/responses)
        echo broker-get \$($direct http://127.0.0.1:14000/v1/files-not)"
    expect_eq "$RC" 0 "the sandbox's requests ($(last))"
    local want
    want=$(printf '%s\n' 'get-model 200' 'post-model 403' 'post-upload 200' 'get-upload 403' 'dots 403' 'encoded 403' \
        'connect 000' 'broker-post 200')
    expect_eq "$(head -n 8 <<<"$OUT")" "$want" "what passed and what was refused ($(last))"
    expect_match "$OUT" "broker-get confine: GET localhost:$TLS_0_PORT/v1/files-not is not allowed: .*--allow 'GET localhost:$TLS_0_PORT/v1/files-not' would allow it" \
        "the refusal names the --allow that would allow it"
    # On the host: only the three allowed requests arrived.
    local paths
    paths=$(/usr/bin/python3 -c 'import json, sys; [print(json.loads(l)["server"], json.loads(l)["method"], json.loads(l)["path"]) for l in open(sys.argv[1])]' "$LOG" | sort)
    expect_eq "$paths" $'http0 GET /v1/models/m1\nhttp0 POST /v1/upload\ntls0 POST /v1/responses' "what reached the servers"
}
run_variants scenario
