#!/bin/bash
# proxy-denied: a destination outside the allowlist gets `403 Forbidden` from the proxy, for a CONNECT and for a plain
# GET alike (and an allowed name on another port too); each denial is a --net-log line with "allowed":false and
# its reason, and at exit stderr gets exactly one summary line naming each denied host:port with its count.
# Control: a run with only allowed requests prints no summary.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"

scenario() {
    proxy_setup
    start_proxy_servers --http 127.0.0.1 "$WWW"
    OPTS=(--net proxy --allow allowed.example --allow '*.allowed.example' --allow "127.0.0.1:$HTTP_0_PORT"
        --net-log "$NETLOG")
    local q='/usr/bin/python3 '$PC' raw'
    sandbox sh -c "
        $q 'CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n'; echo '--'
        curl -sS -i --noproxy '' -x http://127.0.0.1:3128 http://evil.example/path; echo '--'
        curl -sS -o /dev/null -w '%{http_connect}' https://evil.example/; echo ' rc='\$?; echo '--'
        $q 'GET http://allowed.example/ HTTP/1.1\r\nHost: allowed.example\r\n\r\n'; echo '--'
        $q 'CONNECT allowed.example.evil.example:443 HTTP/1.1\r\n\r\n'"
    expect_eq "$RC" 0 "sandbox exit ($(last))"
    # One section per request, separated by "--" lines: the status line and the body's last line.
    local sections=() summary=() i
    mapfile -t -d $'\x1e' sections < <(printf '%s' "${OUT//$'\r'/}" | awk 'BEGIN { RS = "\n--\n"; ORS = "\x1e" } { print }')
    for i in "${!sections[@]}"; do
        local s=${sections[i]%$'\n'}
        summary+=("${s%%$'\n'*} => ${s##*$'\n'}")
    done
    # 1. CONNECT evil.example:443 (raw); 2. GET http://evil.example/path (curl, absolute form); 3. curl's own CONNECT
    # for https:// (HTTPS_PROXY from confine's environment: 403, curl exits 56); 4. an allowed name, but not on
    # port 80; 5. a name that only *contains* an allowed one.
    local IFS=$'\n'
    # Each answer says, in its one line, what was refused, why, and the flag that would allow it.
    expect_eq "${summary[*]}" "HTTP/1.1 403 Forbidden => confine: evil.example:443 not in the allowlist; to allow it: --allow evil.example:443 (a profile: [network] allow)
HTTP/1.1 403 Forbidden => confine: evil.example:80 not in the allowlist; to allow it: --allow evil.example:80 (a profile: [network] allow)
403 rc=56 => 403 rc=56
HTTP/1.1 403 Forbidden => confine: allowed.example:80 not in the allowlist; to allow it: --allow allowed.example:80 (a profile: [network] allow)
HTTP/1.1 403 Forbidden => confine: allowed.example.evil.example:443 not in the allowlist; to allow it: --allow allowed.example.evil.example:443 (a profile: [network] allow)" "responses ($(last))"
    unset IFS

    # The summary: one line, the denied host:port names with their counts (most refused first, then by name), 5 in all.
    local want='confine: warning: network: 5 requests denied: evil.example:443 ×2, allowed.example.evil.example:443 ×1, allowed.example:80 ×1, evil.example:80 ×1'
    local n
    n=$(grep -c 'requests denied' <<<"$ERRS" || true)
    expect_eq "$n" 1 "summary lines on stderr ($ERRS)"
    n=$(grep -Fxc "$want" <<<"$ERRS" || true)
    expect_eq "$n" 1 "summary line: want '$want' in stderr '$ERRS'"

    # The log: one line per decision, all denied, with the reason.
    local log
    log=$(/usr/bin/python3 -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    print(r["method"], r["host"], r["port"], r["allowed"], r["reason"], sep="|")' "$NETLOG")
    expect_eq "$log" "CONNECT|evil.example|443|False|not in the allowlist
GET|evil.example|80|False|not in the allowlist
CONNECT|evil.example|443|False|not in the allowlist
GET|allowed.example|80|False|not in the allowlist
CONNECT|allowed.example.evil.example|443|False|not in the allowlist" "--net-log decisions"

    # Control: nothing denied, no summary.
    OPTS=(--net proxy --allow "127.0.0.1:$HTTP_0_PORT")
    sandbox curl -sS --fail --noproxy '' -x http://127.0.0.1:3128 "http://127.0.0.1:$HTTP_0_PORT/hello.txt"
    expect_eq "$RC:$OUT" "0:$HELLO" "allowed request ($(last))"
    expect_no_match "$ERRS" 'denied' "stderr of a run without denials"
}
run_variants scenario
