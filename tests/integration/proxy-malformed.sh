#!/bin/bash
# proxy-malformed: abusive or broken clients each get a clean 4xx (or a close), and the proxy keeps serving: after
# every one of them an ordinary allowed GET is served, all while a slowloris client (an unfinished head) is held
# open; the proxy closes that one about 10 s after it connected. The cases: CONNECT with userinfo (user@host:443)
# and with `host:443@evil` (400), a 20 KB header and a 2000-header flood (431), non-HTTP bytes (400), a Host header
# that disagrees with the absolute URI (400), a client that half-closes right after its CONNECT (the tunnel still
# echoes, then ends), one that resets mid-tunnel (SO_LINGER 0). Afterwards confine exits normally and its summary
# counts the malformed requests.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"

scenario() {
    proxy_setup
    start_proxy_servers --http 127.0.0.1 "$WWW" --echo 127.0.0.1
    OPTS=(--net proxy --allow "127.0.0.1:$HTTP_0_PORT" --allow "127.0.0.1:$ECHO_0_PORT" --net-log "$NETLOG")
    pc malformed "$HTTP_0_PORT" "$ECHO_0_PORT"
    expect_eq "$RC" 0 "confine's exit ($(last))"
    local lines=() want=(
        'slowloris-started: good served'
        'connect-userinfo: HTTP/1.1 400 Bad Request \| good served'
        'connect-port-at: HTTP/1.1 400 Bad Request \| good served'
        'header-20k: HTTP/1.1 431 Request Header Fields Too Large \| good served'
        'header-flood: HTTP/1.1 431 Request Header Fields Too Large \| good served'
        'not-http: HTTP/1.1 400 Bad Request \| good served'
        'host-mismatch: HTTP/1.1 400 Bad Request \| good served'
        "half-close: HTTP/1.1 200 Connection established then b'half-closed' \| good served"
        'reset: HTTP/1.1 200 Connection established \| good served'
        'slowloris: closed after (9\.[5-9]|1[0-2]\.[0-9]) s \| good served'
    ) i
    mapfile -t lines <<<"$OUT"
    expect_eq "${#lines[@]}" "${#want[@]}" "number of result lines ($(last))"
    for i in "${!want[@]}"; do
        [[ ${lines[i]} =~ ^${want[i]}$ ]] || fail "case $i: expected /^${want[i]}\$/, got '${lines[i]}' (all: $OUT)"
    done
    # 4xx bodies are the proxy's own; the reasons are in the log.
    local reasons
    reasons=$(/usr/bin/python3 -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    if not r["allowed"]:
        print(r["method"], r["reason"], sep="|")' "$NETLOG")
    local want_reasons="CONNECT|bad request target \`user@evil.example:443\`
CONNECT|bad request target \`evil.example:443@evil\`
?|request head too large
?|request head too large
?|malformed request: bad method
GET|the Host header does not match the request target"
    # The six above in order, plus the slowloris (whose head never came), logged when it was closed.
    local slow
    slow=$(grep -v -e '^CONNECT|bad request target' -e '^?|request head too large$' -e '^?|malformed request: bad method$' \
        -e '^GET|the Host header does not match' <<<"$reasons" || true)
    expect_match "$slow" '^\?\|[^'$'\n'']+$' "one more denial, the slowloris (all: $reasons)"
    expect_eq "$(grep -vFx "$slow" <<<"$reasons")" "$want_reasons" "denied reasons in the log"
    expect_match "$ERRS" 'confine: warning: network: 7 requests denied: \(malformed requests\) ×6, 127\.0\.0\.1:'"$HTTP_0_PORT"' ×1' "summary ($(last))"
}
run_variants scenario
