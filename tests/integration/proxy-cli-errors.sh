#!/bin/bash
# proxy-cli-errors: proxy flags that cannot work are refused before anything runs, with exit 125 and one line
# "confine: ..." on stderr: --allow / --net-log without --net proxy (default none, and host), an --allow entry
# that is a URL or has userinfo or a path (the message gives the host[:port] to use instead, and never repeats a
# password), a bad port, the proxy's own port as a loopback forward, and --net proxy in
# fallback mode (--no-namespaces: no network namespace to put the proxy in). No --net-log file is created.
# shellcheck disable=SC2016 # backquotes in the expected messages are literal
. "$(dirname "$0")/lib.sh"

scenario() {
    local marker=$V/ran log=$V/logs/net.jsonl
    mkdir -m 0777 "$V/logs"
    chmod 0777 "$V"   # so that a command that wrongly runs can leave the marker
    local run=(-- touch "$marker")

    expect_refused "--allow without --net" '--allow.*--net proxy' -w "$WS" --allow example.com "${run[@]}"
    expect_refused "--allow with --net none" '--allow.*--net proxy' -w "$WS" --net none --allow example.com "${run[@]}"
    expect_refused "--allow with --net host" '--allow.*--net proxy' -w "$WS" --net host --allow example.com "${run[@]}"
    expect_refused "--net-log without --net" '--net-log.*--net proxy' -w "$WS" --net-log "$log" "${run[@]}"
    expect_refused "--net-log with --net host" '--net-log.*--net proxy' -w "$WS" --net host --net-log "$log" "${run[@]}"

    # A URL or a part of one: the message gives the entry to use instead and says what has no place in it.
    local url='give a host\[:port\], not a URL: --allow'
    expect_refused "--allow user@host" "\`user@example\\.com\`: $url example\\.com \\(no user name or password" \
        -w "$WS" --net proxy --allow 'user@example.com' "${run[@]}"
    expect_refused "--allow user@host:port" "\`user@example\\.com:443\`: $url example\\.com:443 " \
        -w "$WS" --net proxy --allow 'user@example.com:443' "${run[@]}"
    expect_refused "--allow host:port@evil" "\`example\\.com:\\*\\*\\*@evil\\.example\`: $url evil\\.example " \
        -w "$WS" --net proxy --allow 'example.com:443@evil.example' "${run[@]}"
    expect_refused "--allow a URL" "\`https://example\\.com/\`: $url example\\.com \\(no \`https://\`; no path" \
        -w "$WS" --net proxy --allow 'https://example.com/' "${run[@]}"
    expect_refused "--allow an http URL" "$url example\\.com:80 \\(no \`http://\`, its port instead; no path: a host is allowed whole\\)" \
        -w "$WS" --net proxy --allow 'http://example.com/v1/models' "${run[@]}"
    expect_refused "--allow an http URL with a port" "$url example\\.com:8080 \\(no \`http://\`\\)" \
        -w "$WS" --net proxy --allow 'http://example.com:8080' "${run[@]}"
    expect_refused "--allow a host with a path" "\`example\\.com/v1\`: $url example\\.com \\(no path" \
        -w "$WS" --net proxy --allow 'example.com/v1' "${run[@]}"
    expect_refused "--allow a URL with a password" "\`https://me:\\*\\*\\*@example\\.com/x\`: $url example\\.com " \
        -w "$WS" --net proxy --allow 'https://me:hunter2@example.com/x' "${run[@]}"
    expect_no_match "$ERRS" hunter2 "--allow with a password: the message repeats it"
    expect_refused "--allow bad port" '`example\.com:99999`' -w "$WS" --net proxy --allow 'example.com:99999' "${run[@]}"
    expect_refused "--allow empty host" '`:443`' -w "$WS" --net proxy --allow ':443' "${run[@]}"
    expect_refused "--allow the proxy's port" '127\.0\.0\.1:3128' -w "$WS" --net proxy --allow '127.0.0.1:3128' "${run[@]}"

    expect_refused "--net proxy --no-namespaces" '.' -w "$WS" --net proxy --no-namespaces "${run[@]}"
    expect_refused "--net proxy --no-namespaces --best-effort" '--net proxy.*--no-namespaces|--no-namespaces.*--net proxy' \
        -w "$WS" --net proxy --no-namespaces --best-effort --allow example.com "${run[@]}"

    [[ ! -e $log ]] || fail "a refused run created the --net-log file"
    chmod 0755 "$V"

    # Control: the same valid flags run.
    try sb -w "$WS" --net proxy --allow example.com --allow '*.example.org:*' --allow '[::1]:8080' --net-log "$log" -- true
    expect_eq "$RC" 0 "control: valid proxy flags ($(last))"
}
run_variants scenario
