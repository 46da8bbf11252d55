#!/bin/bash
# proxy-net-log: --net-log FILE gets one line per proxy decision, each a JSON object (valid UTF-8) with exactly the
# fields time (ms since the epoch), method, host, port, allowed, reason, bytes_up, bytes_down, duration_ms, of the
# right types; the records say what happened: an allowed plain GET (bytes_down = the whole response), an allowed
# CONNECT tunnel and a loopback forward (bytes each way), a denial, a malformed request. The file is appended to,
# never truncated, and stays valid JSON even when a request carries bytes that are not UTF-8 or need escaping.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"

# check_log FILE T0 T1 EXPECT...: every line valid; each EXPECT (a python dict literal, fields that must match) must
# be met by its own line, in order; prints every problem (empty output: all good).
check_log() {
    /usr/bin/python3 - "$@" <<'PY'
import ast, json, sys
path, t0, t1, *expects = sys.argv[1:]
t0, t1 = int(t0), int(t1)
types = {"time": int, "method": str, "host": str, "port": int, "allowed": bool, "reason": str,
         "bytes_up": int, "bytes_down": int, "duration_ms": int}
problems, records = [], []
raw = open(path, "rb").read()
if raw and not raw.endswith(b"\n"):
    problems.append("the file does not end with a newline")
for n, line in enumerate(raw.splitlines(), 1):
    try:
        r = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        problems.append(f"line {n} is not valid (UTF-8) JSON: {e}: {line!r}")
        continue
    if not isinstance(r, dict) or set(r) != set(types):
        problems.append(f"line {n}: fields {sorted(r) if isinstance(r, dict) else type(r)}, want {sorted(types)}")
        continue
    for k, t in types.items():
        if type(r[k]) is not t:
            problems.append(f"line {n}: {k} is {type(r[k]).__name__}, want {t.__name__}: {r}")
    if isinstance(r["time"], int) and not t0 - 1000 <= r["time"] <= t1 + 1000:
        problems.append(f"line {n}: time {r['time']} not within the run [{t0}, {t1}]")
    for k in ("port", "bytes_up", "bytes_down", "duration_ms"):
        if isinstance(r[k], int) and r[k] < 0:
            problems.append(f"line {n}: negative {k}")
    if isinstance(r["port"], int) and r["port"] > 65535:
        problems.append(f"line {n}: port {r['port']}")
    if not r["reason"]:
        problems.append(f"line {n}: empty reason")
    records.append(r)
pos = 0
for e in expects:
    want = ast.literal_eval(e)
    def ok(r):
        for k, v in want.items():
            if k.endswith("_min"):
                if not r.get(k[:-4], -1) >= v: return False
            elif k.endswith("_prefix"):
                if not str(r.get(k[:-7], "")).startswith(v): return False
            elif r.get(k) != v:
                return False
        return True
    for i in range(pos, len(records)):
        if ok(records[i]):
            pos = i + 1
            break
    else:
        problems.append(f"no record (after #{pos}) matches {want}; records: {records}")
for p in problems:
    print(p)
PY
}

now_ms() { date +%s%3N; }

scenario() {
    proxy_setup
    start_proxy_servers --http 127.0.0.1 "$WWW" --echo 127.0.0.1
    local hp=$HTTP_0_PORT ep=$ECHO_0_PORT t0 t1 problems lines1
    OPTS=(--net proxy --allow "127.0.0.1:$hp" --allow "127.0.0.1:$ep" --net-log "$NETLOG")

    t0=$(now_ms)
    # One request at a time, each finished before the next starts, so the log's order is the requests' order. The
    # client reads each response to the end before closing, so the server's side ends first (as with most servers).
    local get="GET http://127.0.0.1:$hp/hello.txt HTTP/1.1\r\nHost: 127.0.0.1:$hp\r\n\r\n"
    local tunnel_get="CONNECT 127.0.0.1:$hp HTTP/1.1\r\n\r\nGET /hello.txt HTTP/1.0\r\n\r\n"
    sandbox sh -c "
        /usr/bin/python3 $PC raw '$get' | wc -c
        /usr/bin/python3 $PC raw '$tunnel_get' | wc -c
        /usr/bin/python3 $PC tunnel 127.0.0.1 $ep 1000 >/dev/null
        /usr/bin/python3 $PC echo 127.0.0.1 $ep 500 >/dev/null
        /usr/bin/python3 $PC raw 'CONNECT evil.example:443 HTTP/1.1\r\n\r\n' >/dev/null
        /usr/bin/python3 $PC raw 'NOT HTTP AT ALL\r\n\r\n' >/dev/null
        sleep 0.5"
    t1=$(now_ms)
    expect_eq "$RC" 0 "sandbox exit ($(last))"
    local sizes=() established='HTTP/1.1 200 Connection established\r\n\r\n' inner='GET /hello.txt HTTP/1.0\r\n\r\n'
    mapfile -t sizes <<<"$OUT"
    expect_match "${sizes[0]:-}:${sizes[1]:-}" '^[1-9][0-9]*:[1-9][0-9]*$' "response sizes ($(last))"
    [[ -s $NETLOG ]] || fail "no --net-log file written ($(last))"
    echo "--net-log after the first run:"
    cat "$NETLOG"
    problems=$(check_log "$NETLOG" "$t0" "$t1" \
        "{'method': 'GET', 'host': '127.0.0.1', 'port': $hp, 'allowed': True, 'bytes_down': ${sizes[0]}}" \
        "{'method': 'CONNECT', 'host': '127.0.0.1', 'port': $hp, 'allowed': True, 'bytes_up': $(printf %b "$inner" | wc -c), 'bytes_down': $((sizes[1] - $(printf %b "$established" | wc -c)))}" \
        "{'method': 'CONNECT', 'host': '127.0.0.1', 'port': $ep, 'allowed': True, 'bytes_up': 1000, 'bytes_down': 1000}" \
        "{'method': 'TCP', 'host': '127.0.0.1', 'port': $ep, 'allowed': True, 'reason': 'allowed by address; connected directly (the kernel carries the bytes)'}" \
        "{'method': 'CONNECT', 'host': 'evil.example', 'port': 443, 'allowed': False, 'reason': 'not in the allowlist', 'bytes_up': 0, 'bytes_down': 0}" \
        "{'allowed': False, 'host': '', 'port': 0, 'bytes_up': 0, 'bytes_down': 0}")
    local problems1=$problems
    lines1=$(wc -l <"$NETLOG")

    # A second run appends; requests whose text lands in the log (the reason quotes a bad target) carry a quote, a
    # backslash, and bytes that are not UTF-8: the lines must stay valid JSON, which is UTF-8 (RFC 8259 §8.1).
    sandbox sh -c "
        /usr/bin/python3 $PC raw 'CONNECT evil\\\\\"quote:443 HTTP/1.1\r\n\r\n' >/dev/null
        /usr/bin/python3 $PC raw 'CONNECT \xff\xfe@evil.example:443 HTTP/1.1\r\n\r\n' >/dev/null
        /usr/bin/python3 $PC raw 'GET http://\xc3\x28.example/ HTTP/1.1\r\n\r\n' >/dev/null
        /usr/bin/python3 $PC raw 'CONNECT evil.example:443 HTTP/1.1\r\n\r\n' >/dev/null"
    expect_eq "$RC" 0 "second sandbox exit ($(last))"
    echo "--net-log after the second run:"
    cat -v "$NETLOG"
    local lines2
    lines2=$(wc -l <"$NETLOG")
    ((lines2 >= lines1 + 4)) || fail "the second run did not append its 4 decisions ($lines1 lines, then $lines2)"
    problems=$(check_log "$NETLOG" "$t0" "$(now_ms)" \
        "{'method': 'CONNECT', 'host': 'evil.example', 'port': 443, 'allowed': False}" \
        "{'method': 'CONNECT', 'host': 'evil.example', 'port': 443, 'allowed': False}")
    [[ -z $problems1 && -z $problems ]] ||
        fail "--net-log after the first run: ${problems1:-fine}"$'\n'"--net-log after the second run: ${problems:-fine}"
}
run_variants scenario
