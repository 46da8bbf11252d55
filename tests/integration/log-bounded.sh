#!/bin/bash
# log-bounded: what the sandbox makes confine write stays bounded. From inside `--net proxy --net-log F --log G`,
# 2000 requests of 15 KB go to the proxy (by turns a CONNECT whose target has userinfo and two-byte characters, a
# 400, and a GET whose method is 15 KB long to a name not allowed, a 403). On the host every line of F and G is at most 4096 bytes, one JSON object in
# valid UTF-8, whose long text is cut with a marker ("…[cut N bytes]") that counts what was cut; inside,
# $CONFINE_DENIALS holds the same lines. Then, with the caps lowered by the test build's CONFINE_TEST_LOG_CAPS (the
# real ones, 100000 lines or 32 MiB per file, take far more than a test's few seconds): at the byte cap and at the
# line cap each file stops with one line saying so, the run ends normally, the end of the run adds one line with
# how many lines and bytes were dropped, stderr says so, and the exit summary still counts every request.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"

SIZE=15000

# check_file FILE MAX-BYTES: every line whole, at most 4096 bytes, a JSON object in valid UTF-8; the file at most
# MAX-BYTES. Prints "<lines> <records> <cut> <cap-reached-lines> <dropped-lines> <dropped-bytes>": the lines, those
# that are records (not confine's lines about the cap), the records with a marker whose count is right, the
# lines saying the cap was reached (and which), and what the last line says was dropped.
CHECK_FILE='
import json, re, sys
path, max_bytes = sys.argv[1], int(sys.argv[2])
data = open(path, "rb").read()
assert data.endswith(b"\n"), f"{path}: the last line is not whole"
assert len(data) <= max_bytes, f"{path}: {len(data)} bytes, more than {max_bytes}"
lines = data.split(b"\n")[:-1]
records = cut = 0
caps, dropped = [], ("-", "-")
for n, raw in enumerate(lines, 1):
    assert len(raw) + 1 <= 4096, f"{path}: line {n} has {len(raw) + 1} bytes"
    r = json.loads(raw.decode("utf-8"))  # strict: invalid UTF-8 raises
    assert isinstance(r, dict), f"{path}: line {n} is not an object"
    if r.get("event") == "log_cap_reached" and "layer" not in r:
        caps.append(r["cap"])
        continue
    if r.get("event") == "log_dropped" and "layer" not in r:
        assert n == len(lines), f"{path}: the dropped line {n} is not the last"
        dropped = (str(r["lines"]), str(r["bytes"]))
        continue
    records += 1
    for key, value in r.items():
        if isinstance(value, str):
            m = re.search("…\\[cut ([0-9]+) bytes\\]$", value)
            if m:
                # What is kept and what was cut add up to the text sent: the target is in the reason, or the method.
                kept = len(value[: m.start()].encode())
                assert kept + int(m.group(1)) >= 15000 - 12, f"{path}: line {n}: {key} kept {kept}, cut {m.group(1)}"
                cut += 1
print(len(lines), records, cut, ",".join(caps) or "-", *dropped)
'
check_file() { /usr/bin/python3 -c "$CHECK_FILE" "$@"; }

flood() {
    pc longflood "$1" "$SIZE"
}

scenario() {
    proxy_setup
    local logdir=$V/logs log n=2000 got
    mkdir -m 0755 "$logdir"
    if [[ $SUITE_UID == 0 ]]; then chown "$VUID:$VGID" "$logdir"; fi

    # The real caps: nothing is dropped, every line is cut to fit.
    log=$logdir/log.jsonl
    OPTS=(--net proxy --net-log "$NETLOG" --log "$log")
    flood "$n"
    expect_eq "$RC:${OUT%%$'\n'*}" "0:LONGFLOOD $((n / 2)) $((n / 2)) of $n" "the flood: every request answered ($(last))"
    local denials=${OUT#*$'\n'} lines longest bytes
    read -r _ lines longest bytes <<<"$denials"
    expect_eq "$lines" "$n" "inside: \$CONFINE_DENIALS has a line per request ($denials)"
    ((longest <= 4096)) || fail "inside: a line of \$CONFINE_DENIALS has $longest bytes"
    # A 400 line's reason, a 403 line's method: one cut each.
    got=$(check_file "$NETLOG" $((n * 4096)))
    expect_eq "$got" "$n $n $n - - -" "--net-log: lines, records, cut, caps, dropped"
    got=$(check_file "$log" $((n * 4096)))
    expect_eq "$got" "$n $n $n - - -" "--log: lines, records, cut, caps, dropped"
    expect_eq "$(wc -c <"$log")" "$bytes" "inside: \$CONFINE_DENIALS has what --log has"
    expect_match "$ERRS" "confine: warning: network: $n requests denied: \\(malformed requests\\) ×$((n / 2)), evil\\.example:80 ×$((n / 2))" \
        "the exit summary counts every request ($(last))"
    expect_no_match "$ERRS" 'not written' "nothing dropped, nothing said ($(last))"

    # The byte cap, 256 KiB: 64 lines of 4 KiB and a few more.
    local cap_bytes=262144 small=300
    rm -f "$NETLOG"
    log=$logdir/bytes.jsonl
    XENV=(CONFINE_TEST_LOG_CAPS=bytes=$cap_bytes)
    OPTS=(--net proxy --net-log "$NETLOG" --log "$log")
    flood "$small"
    expect_eq "$RC:${OUT%%$'\n'*}" "0:LONGFLOOD $((small / 2)) $((small / 2)) of $small" "byte cap: the flood ($(last))"
    read -r _ lines longest bytes <<<"${OUT#*$'\n'}"
    ((bytes <= cap_bytes + 512)) || fail "byte cap: \$CONFINE_DENIALS inside has $bytes bytes"
    local file records cut capped dropped_lines dropped_bytes
    for file in "$NETLOG" "$log"; do
        read -r lines records cut capped dropped_lines dropped_bytes <<<"$(check_file "$file" $((cap_bytes + 512)))"
        expect_eq "$capped:$((lines - records))" "bytes:2" "byte cap: $file says the cap was reached, then what it dropped"
        expect_eq "$((records + dropped_lines))" "$small" "byte cap: $file: written and dropped, every request"
        ((dropped_bytes > (small - records) * 3000)) || fail "byte cap: $file: $dropped_bytes bytes dropped"
    done
    expect_match "$ERRS" "confine: warning: --net-log: [0-9]+ lines \\([0-9.]+ [KM]iB\\) not written, past the cap of 100000 lines or 256\\.0 KiB per run" \
        "byte cap: stderr ($(last))"
    expect_match "$ERRS" "confine: warning: --log: [0-9]+ lines" "byte cap: stderr, --log ($(last))"
    expect_match "$ERRS" "confine: warning: network: $small requests denied" "byte cap: the summary counts every request"

    # The line cap, 100 lines.
    rm -f "$NETLOG"
    log=$logdir/lines.jsonl
    XENV=(CONFINE_TEST_LOG_CAPS=lines=100)
    OPTS=(--net proxy --net-log "$NETLOG" --log "$log")
    flood "$small"
    expect_eq "$RC:${OUT%%$'\n'*}" "0:LONGFLOOD $((small / 2)) $((small / 2)) of $small" "line cap: the flood ($(last))"
    read -r _ lines longest bytes <<<"${OUT#*$'\n'}"
    expect_eq "$lines" 101 "line cap: \$CONFINE_DENIALS inside: 100 lines and the cap's"
    for file in "$NETLOG" "$log"; do
        got=$(check_file "$file" $((102 * 4096)))
        read -r lines records cut capped dropped_lines dropped_bytes <<<"$got"
        expect_eq "$lines $records $capped $dropped_lines" "102 100 lines $((small - 100))" "line cap: $file ($got)"
    done
    expect_match "$ERRS" "confine: warning: --net-log: $((small - 100)) lines \\([0-9.]+ [KM]iB\\) not written, past the cap of 100 lines or 32\\.0 MiB per run" \
        "line cap: stderr ($(last))"
}
run_variants scenario
