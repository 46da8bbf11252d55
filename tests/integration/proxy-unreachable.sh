#!/bin/bash
# proxy-unreachable: an allowed destination that cannot be reached is not a denial. Through the proxy, a name
# that does not resolve (under .invalid, RFC 6761) gets `502 Bad Gateway` "allowed but unresolvable", a port where
# nothing listens `502` "allowed but refused", a port whose SYNs go unanswered (a host listener with a full accept
# queue) `504 Gateway Timeout` "allowed but timeout"; a loopback forward to a closed port resets the client's
# connection instead of ending it cleanly. Each is its own --net-log line (allowed: true, reason: the one word),
# and at exit stderr gets one "could not connect" line with each host:port, reason and count (the five most
# frequent and a count of the rest), while the "denied" line counts only the one request that was denied. A
# request still connecting when the sandbox ends is logged as allowed and still open, and is in neither line.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"

scenario() {
    proxy_setup
    start_proxy_servers --closed 127.0.0.1 --full 127.0.0.1
    local closed=$CLOSED_0_PORT full=$FULL_0_PORT
    host_probe connect-tcp 127.0.0.1 "$closed"
    expect_eq "$OUT" ECONNREFUSED "host control: nothing listens on 127.0.0.1:$closed ($(last))"

    OPTS=(--net proxy --allow nosuch.invalid --allow nosuch.invalid:80 --allow '*.nosuch.invalid'
        --allow "127.0.0.1:$closed" --allow "127.0.0.1:$full" --net-log "$NETLOG")
    local reqs=() n target
    for target in nosuch.invalid:443 nosuch.invalid:443 "127.0.0.1:$closed" a.nosuch.invalid:443 b.nosuch.invalid:443 \
        c.nosuch.invalid:443 evil.example:443; do
        reqs+=("CONNECT $target HTTP/1.1\r\nHost: $target\r\n\r\n")
    done
    # The timeout takes the proxy's 15 s: it runs meanwhile, in the background, and is waited for at the end.
    sandbox sh -c "
        PC_TIMEOUT=30 /usr/bin/python3 $PC each 'CONNECT 127.0.0.1:$full HTTP/1.1\r\nHost: 127.0.0.1:$full\r\n\r\n' >/tmp/timeout.out &
        /usr/bin/python3 $PC each \"\$@\"
        /usr/bin/python3 $PC each 'GET http://nosuch.invalid/x HTTP/1.1\r\nHost: nosuch.invalid\r\n\r\n'
        /usr/bin/python3 $PC peek 127.0.0.1 $closed
        wait
        cat /tmp/timeout.out" sh "${reqs[@]}"
    expect_eq "$RC" 0 "sandbox exit ($(last))"
    local got=() i
    mapfile -t got <<<"${OUT//$'\r'/}"
    local want=(
        'HTTP/1.1 502 Bad Gateway => confine: nosuch.invalid:443 allowed but unresolvable: cannot resolve nosuch.invalid: .+'
        'HTTP/1.1 502 Bad Gateway => confine: nosuch.invalid:443 allowed but unresolvable: cannot resolve nosuch.invalid: .+'
        "HTTP/1.1 502 Bad Gateway => confine: 127.0.0.1:$closed allowed but refused: Connection refused"
        'HTTP/1.1 502 Bad Gateway => confine: a.nosuch.invalid:443 allowed but unresolvable: .+'
        'HTTP/1.1 502 Bad Gateway => confine: b.nosuch.invalid:443 allowed but unresolvable: .+'
        'HTTP/1.1 502 Bad Gateway => confine: c.nosuch.invalid:443 allowed but unresolvable: .+'
        'HTTP/1.1 403 Forbidden => confine: evil.example:443 not in the allowlist; to allow it: --allow evil\.example:443 \(a profile: \[network\] allow\)'
        'HTTP/1.1 502 Bad Gateway => confine: nosuch.invalid:80 allowed but unresolvable: cannot resolve nosuch.invalid: .+'
        # A direct connection to the allowed host port: its connect() fails as the host's did, not later.
        'ECONNREFUSED'
        "HTTP/1.1 504 Gateway Timeout => confine: 127.0.0.1:$full allowed but timeout: no answer within 15 s")
    expect_eq "${#got[@]}" "${#want[@]}" "number of answers ($(last))"
    for i in "${!want[@]}"; do
        [[ ${got[i]} =~ ^${want[i]}$ ]] || fail "answer $i: expected /^${want[i]}\$/, got '${got[i]}' ($(last))"
    done

    # The log: the failures are allowed, each with its own reason; the one denial is the only "allowed": false.
    local log want_log
    log=$(/usr/bin/python3 -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    print(r["method"], r["host"], r["port"], r["allowed"], r["reason"], sep="|")' "$NETLOG" | sort)
    want_log=$(sort <<EOF
CONNECT|nosuch.invalid|443|True|unresolvable
CONNECT|nosuch.invalid|443|True|unresolvable
CONNECT|127.0.0.1|$closed|True|refused
CONNECT|a.nosuch.invalid|443|True|unresolvable
CONNECT|b.nosuch.invalid|443|True|unresolvable
CONNECT|c.nosuch.invalid|443|True|unresolvable
CONNECT|evil.example|443|False|not in the allowlist
GET|nosuch.invalid|80|True|unresolvable
TCP|127.0.0.1|$closed|True|refused
CONNECT|127.0.0.1|$full|True|timeout
EOF
    )
    expect_eq "$log" "$want_log" "--net-log decisions"

    # The summary: one line for the denial, one for the failures (most frequent first, then by name; five named).
    local denied='confine: warning: network: 1 request denied: evil.example:443 ×1'
    local failed="confine: warning: network: 9 requests could not connect: 127.0.0.1:$closed allowed but refused ×2, nosuch.invalid:443 allowed but unresolvable ×2, 127.0.0.1:$full allowed but timeout ×1, a.nosuch.invalid:443 allowed but unresolvable ×1, b.nosuch.invalid:443 allowed but unresolvable ×1 and 2 more"
    n=$(grep -Fxc "$denied" <<<"$ERRS" || true)
    expect_eq "$n" 1 "denied line: want '$denied' in stderr '$ERRS'"
    n=$(grep -Fxc "$failed" <<<"$ERRS" || true)
    expect_eq "$n" 1 "could-not-connect line: want '$failed' in stderr '$ERRS'"
    n=$(grep -c 'network:' <<<"$ERRS" || true)
    expect_eq "$n" 2 "summary lines on stderr ($ERRS)"

    # A request the sandbox leaves while the proxy is still connecting (its SYN seen on the host) is logged as
    # allowed and still open, and counted in neither summary line.
    local open_log=$NETLOG_DIR/open.jsonl i
    sb_bg -w "$WS" --net proxy --allow "127.0.0.1:$full" --net-log "$open_log" -- sh -c "
        /usr/bin/python3 $PC raw 'CONNECT 127.0.0.1:$full HTTP/1.1\r\n\r\n' &
        while [ ! -e $WS/.go ]; do sleep 0.05; done" 2>"$V/open.err"
    local pid=$BG_PID
    for ((i = 0; i < 200; i++)); do
        [[ -n $(ss -Htn state syn-sent "dst 127.0.0.1:$full") ]] && break
        kill -0 "$pid" 2>/dev/null || fail "confine exited before the proxy connected ($(cat "$V/open.err"))"
        sleep 0.05
    done
    ((i < 200)) || fail "the proxy never tried 127.0.0.1:$full"
    touch "$WS/.go"
    wait "$pid" || fail "confine (a sandbox left mid-connect) exited with $? ($(cat "$V/open.err"))"
    log=$(/usr/bin/python3 -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    print(r["method"], r["host"], r["port"], r["allowed"], r["reason"].endswith("(still open when the sandbox ended)"), sep="|")' "$open_log")
    expect_eq "$log" "CONNECT|127.0.0.1|$full|True|True" "--net-log of the request left open ($(cat "$open_log"))"
    expect_no_match "$(cat "$V/open.err")" 'network:' "stderr of the run left mid-connect"
}
run_variants scenario
