#!/bin/bash
# docker-run-network-proxy: `confine run --network proxy --allow HOST[:PORT]` is `confine --net proxy --allow`: the
# allowed host server is reachable through the proxy (curl -x, and python's urllib through the HTTP_PROXY that
# confine sets), another host server that is up but not allowed gets `403 Forbidden` and is named on the exit
# summary's "denied" line, and a direct connection to it is refused (nothing forwards it). `--allow` without
# `--network proxy` (no --network, none, host) is refused before anything runs: exit 125, one line naming both.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"

# drun ARGS...: `confine run ARGS` as the variant's user, from a directory of its own (no volume: no workspace).
drun() {
    cd "$V"
    try sb run "$@" </dev/null
}

scenario() {
    proxy_setup
    start_proxy_servers --http 127.0.0.1 "$WWW" --http 127.0.0.1 "$WWW"
    local allowed=http://127.0.0.1:$HTTP_0_PORT/hello.txt other=http://127.0.0.1:$HTTP_1_PORT/hello.txt
    try host curl -sS --noproxy '*' "$other"
    expect_eq "$RC:$OUT" "0:$HELLO" "host control: the server that is not allowed is up ($(last))"

    local net=(--rm --network proxy --allow "127.0.0.1:$HTTP_0_PORT" host)
    drun "${net[@]}" curl -sS --fail --noproxy '' -x http://127.0.0.1:3128 "$allowed"
    expect_eq "$RC:$OUT" "0:$HELLO" "confine run --network proxy: curl -x proxy $allowed ($(last))"
    drun "${net[@]}" env -u NO_PROXY -u no_proxy /usr/bin/python3 -c \
        'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "$allowed"
    expect_eq "$RC:$OUT" "0:$HELLO" "confine run --network proxy: urllib with HTTP_PROXY, $allowed ($(last))"

    drun "${net[@]}" curl -sS -o /dev/null -w '%{http_code}' --noproxy '' -x http://127.0.0.1:3128 "$other"
    expect_eq "$RC:$OUT" "0:403" "confine run --network proxy: curl -x proxy $other, not allowed ($(last))"
    expect_match "$ERRS" "network: 1 request denied: 127\.0\.0\.1:$HTTP_1_PORT ×1" "the exit summary ($(last))"
    drun "${net[@]}" curl -sS --noproxy '*' "$other"
    expect_match "$RC:$ERRS" "^7:.*(Connection refused|Couldn't connect)" "direct connection to $other ($(last))"

    # --allow needs --network proxy; the command never runs.
    local marker=$V/ran bad
    chmod 0777 "$V"
    for bad in "" "--network none" "--network host" "--net=host"; do
        # shellcheck disable=SC2086 # the words of $bad are the flags
        drun $bad --allow example.com host touch "$marker"
        expect_eq "$RC" 125 "confine run $bad --allow: exit ($(last))"
        expect_match "$ERRS" '^confine: --allow example\.com: needs --network proxy[^'$'\n'']*$' "confine run $bad --allow: one line ($(last))"
        [[ ! -e $marker ]] || fail "confine run $bad --allow: the command ran"
    done
    chmod 0755 "$V"
}
run_variants scenario
