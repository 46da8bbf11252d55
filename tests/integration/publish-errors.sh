#!/bin/bash
# publish-errors: --publish is refused before anything runs, exit 125 and one line naming the spec: a host port
# that is taken (by a host server the test holds open), bad specs (a port out of range, no port at all, UDP),
# --net host (nothing to publish), --no-namespaces and fallback mode (no network namespace of its own, even with
# --best-effort). `confine run -p` says the same.
. "$(dirname "$0")/lib.sh"

scenario() {
    start_servers --tcp 127.0.0.1
    local taken=$TCP_0_PORT ran=(sh -c "touch '$WS/ran'")
    host_probe connect-tcp 127.0.0.1 "$taken"
    expect_eq "$OUT" OK "host control: the server holding the port is up ($(last))"

    expect_refused "a taken host port" "^confine: --publish $taken:80: 127\\.0\\.0\\.1:$taken is in use\$" \
        -w "$WS" --publish "$taken:80" -- "${ran[@]}"
    expect_refused "confine run -p on a taken host port" "^confine: --publish $taken:80: 127\\.0\\.0\\.1:$taken is in use\$" \
        run -p "$taken:80" -v "$WS:$WS" -w "$WS" host "${ran[@]}"
    expect_refused "a host port out of range" '^confine: --publish 70000:1: host port `70000` is not a number from 1 to 65535$' \
        -w "$WS" --publish 70000:1 -- "${ran[@]}"
    expect_refused "no ports" '^confine: --publish x: expected \[HOSTADDR:\]HOSTPORT:PORT' \
        -w "$WS" --publish x -- "${ran[@]}"
    expect_refused "UDP" '^confine: --publish 1:2/udp: only TCP ports can be published$' \
        -w "$WS" --publish 1:2/udp -- "${ran[@]}"
    expect_refused "confine run -p UDP" '^confine: --publish 1:2/udp: only TCP ports can be published$' \
        run -p 1:2/udp -v "$WS:$WS" -w "$WS" host "${ran[@]}"
    expect_refused "--net host" "^confine: --publish 3000:3000: with --net host the sandbox shares the host's network" \
        -w "$WS" --net host --publish 3000:3000 -- "${ran[@]}"
    expect_refused "--no-namespaces" "^confine: --publish 3000:3000: needs the sandbox's own network namespace" \
        -w "$WS" --no-namespaces --best-effort --publish 3000:3000 -- "${ran[@]}"
    XENV=(CONFINE_TEST_FEATURES=userns=0)
    try sb -w "$WS" --best-effort --publish 3000:3000 -- "${ran[@]}"
    expect_eq "$RC" 125 "fallback mode with --best-effort: exit code ($(last))"
    expect_match "$ERRS" "  - --publish needs a network namespace, which fallback mode does not have" "fallback mode"
    [[ ! -e $WS/ran ]] || fail "a refused run ran its command"
    XENV=()
    # explain: a line per published port, saying who can connect.
    try sb explain -w "$WS" --publish 3000:3000 --publish 0.0.0.0:8080:80 -- true
    expect_eq "$RC" 0 "explain ($(last))"
    expect_match "$OUT" $'\npublished    127\\.0\\.0\\.1:3000 -> 127\\.0\\.0\\.1:3000 inside \\(this host only\\)\n             0\\.0\\.0\\.0:8080 -> 127\\.0\\.0\\.1:80 inside \\(every address of the host: reachable from the network\\)\n' "explain's published lines"
    # The port that was refused is still the host server's: confine took nothing.
    host_probe connect-tcp 127.0.0.1 "$taken"
    expect_eq "$OUT" OK "the taken port still reaches its own server ($(last))"
}
run_variants scenario
