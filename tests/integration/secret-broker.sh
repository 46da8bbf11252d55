#!/bin/bash
# secret-broker: --secret NAME=SOURCE --for HOST gives the sandbox only a placeholder. confine puts the real value
# into request headers to the listed host (plain HTTP through the proxy, and HTTPS through a --broker endpoint
# that confine forwards over verified TLS), never into the URL or the body, never to another host (there the
# placeholder goes out as is, logged and counted). Servers on the host's loopback record what arrived, and the
# test judges there; the real value must be nowhere inside (environment, /proc, files), nor in confine's log,
# report or exit summary. A broker whose upstream shows a certificate for another name, or one signed by no trusted
# CA, is refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"
. "$(dirname "$0")/lib-tls.sh"

# The headers a recorded request carried, one "name: value" a line; $1 selects the request by its path.
recorded() {
    /usr/bin/python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["path"].startswith(sys.argv[2]):
        print(r["server"], r["method"], r["path"])
        for k, v in r["headers"]:
            print(f"{k.lower()}: {v}")
        print("body:", r["body"])' "$LOG" "$1"
}

scenario() {
    proxy_setup
    local certs=$V/certs
    mkdir -m 0755 "$certs"
    make_certificates "$certs"
    LOG=$V/received.jsonl
    start_server_script secret-servers.py "$LOG" --http 127.0.0.1 \
        --tls 127.0.0.1 "$certs/good.pem" "$certs/good.key" \
        --tls 127.0.0.1 "$certs/othername.pem" "$certs/othername.key" \
        --tls 127.0.0.1 "$certs/untrusted.pem" "$certs/untrusted.key"

    local real="sk-REAL-$RANDOM$RANDOM$RANDOM" real_file="fk-REAL-$RANDOM$RANDOM$RANDOM"
    echo "$real_file" >"$V/key-file"
    chmod 0600 "$V/key-file"
    if [[ $SUITE_UID == 0 ]]; then chown "$VUID:$VGID" "$V/key-file"; fi
    # The caller holds the value under another name (MY_REAL_KEY): that variable must not come in either.
    XENV=(MY_REAL_KEY="$real" SSL_CERT_FILE="$certs/ca.pem")
    # shellcheck disable=SC2054 # --for takes a comma-separated list
    OPTS=(--net proxy --net-log "$NETLOG"
        --allow "127.0.0.1:$HTTP_0_PORT" --allow "localhost:$HTTP_0_PORT"
        --allow "127.0.0.1:$TLS_0_PORT" --allow "localhost:$TLS_0_PORT"
        --allow "127.0.0.1:$TLS_1_PORT" --allow "127.0.0.1:$TLS_2_PORT"
        --secret API_KEY=env:MY_REAL_KEY --for 127.0.0.1,localhost.invalid
        --secret FILE_KEY="file:$V/key-file" --for 127.0.0.1
        --broker "14000=https://127.0.0.1:$TLS_0_PORT" --broker "14001=https://localhost:$TLS_0_PORT"
        --broker "14002=https://127.0.0.1:$TLS_1_PORT" --broker "14003=https://127.0.0.1:$TLS_2_PORT")
    local http=127.0.0.1:$HTTP_0_PORT
    local curl=(curl -sS --max-time 20)
    local proxied=("${curl[@]}" --noproxy '' -x http://127.0.0.1:3128)
    # shellcheck disable=SC2016 # expanded inside the sandbox
    sandbox /bin/sh -c '
        set -u
        case "$API_KEY" in confine-placeholder-*) ;; *) echo "API_KEY is not a placeholder: $API_KEY"; exit 3;; esac
        echo "placeholder=$API_KEY"
        '"${proxied[*]}"' -H "Authorization: Bearer $API_KEY" -H "X-File-Key: $FILE_KEY" http://'"$http"'/listed
        '"${proxied[*]}"' -H "Authorization: Bearer $API_KEY" http://localhost:'"$HTTP_0_PORT"'/unlisted
        '"${proxied[*]}"' -H "X-Plain: no placeholder here" --data "body=$API_KEY" "http://'"$http"'/url-$API_KEY"
        '"${curl[*]}"' -H "x-api-key: $API_KEY" --data "body=$API_KEY" "http://127.0.0.1:14000/brokered-$API_KEY"
        '"${curl[*]}"' -H "x-api-key: $API_KEY" http://127.0.0.1:14001/brokered-by-name
        '"${curl[*]}"' -H "x-api-key: $API_KEY" http://127.0.0.1:14002/wrong-name
        '"${curl[*]}"' -H "x-api-key: $API_KEY" http://127.0.0.1:14003/untrusted
        echo "env-has-real=$(env | grep -c -e "'"$real"'" -e "'"$real_file"'")"
        echo "env-has-source=$(env | grep -c "^MY_REAL_KEY=")"
        echo "proc-has-real=$(cat /proc/self/environ /proc/1/cmdline /proc/1/environ 2>/dev/null | grep -c -a -e "'"$real"'" -e "'"$real_file"'")"
        echo "files-have-real=$(grep -rlsF -e "'"$real"'" -e "'"$real_file"'" "$HOME" /tmp /etc "'"$WS"'" 2>/dev/null | wc -l)"'
    expect_eq "$RC" 0 "the sandbox's requests ($(last))"
    local placeholder
    placeholder=$(sed -n 's/^placeholder=//p' <<<"$OUT")
    expect_match "$placeholder" '^confine-placeholder-[0-9a-f]{64}$' "the placeholder"
    expect_eq "$(grep -x 'env-has-real=0' <<<"$OUT")" 'env-has-real=0' "the real values are not in the environment inside"
    expect_eq "$(grep -x 'env-has-source=0' <<<"$OUT")" 'env-has-source=0' "the caller's source variable is not inside"
    expect_eq "$(grep -x 'proc-has-real=0' <<<"$OUT")" 'proc-has-real=0' "the real values are not in /proc inside"
    expect_eq "$(grep -x 'files-have-real=0' <<<"$OUT")" 'files-have-real=0' "no file inside holds a real value"

    # The listed host got the real values in the headers where the placeholders were.
    local got
    got=$(recorded /listed)
    expect_match "$got" $'\n''authorization: Bearer '"$real"$'\n' "the listed host's Authorization header"
    expect_match "$got" $'\n''x-file-key: '"$real_file"$'\n' "the listed host's header from the file: source"
    # Another host (localhost: allowed, but not listed for the secret) got the placeholder as is.
    got=$(recorded /unlisted)
    expect_match "$got" $'\n''authorization: Bearer '"$placeholder"$'\n' "a host not listed gets the placeholder"
    expect_no_match "$got" "$real" "a host not listed never gets the real value"
    # The URL and the body of a request to the listed host keep the placeholder.
    got=$(recorded /url-)
    expect_match "$got" "^http0 POST /url-$placeholder"$'\n' "the URL is not substituted"
    expect_match "$got" "body: body=$placeholder\$" "the body is not substituted"
    expect_no_match "$got" "$real" "neither URL nor body carry the real value"

    # Through the broker, over TLS verified against the test CA (by address and by name): the real key in the
    # header, not in the URL or the body.
    got=$(recorded "/brokered-$placeholder")
    expect_match "$got" "^tls0 POST /brokered-$placeholder"$'\n' "the brokered request arrived over TLS, URL as sent"
    expect_match "$got" $'\n''x-api-key: '"$real"$'\n' "the brokered request's header carries the real key"
    expect_match "$got" "body: body=$placeholder\$" "the brokered body is not substituted"
    expect_match "$got" $'\n''host: 127.0.0.1:'"$TLS_0_PORT"$'\n' "the brokered request names the real host"
    got=$(recorded /brokered-by-name)
    expect_match "$got" "^tls0 GET /brokered-by-name" "the broker to localhost (SNI and name checked) ($got)"
    # localhost is not listed for API_KEY (127.0.0.1 is): the placeholder goes as is.
    expect_match "$got" $'\n''x-api-key: '"$placeholder"$'\n' "a broker host not listed gets the placeholder"
    # A certificate for another name, or from no trusted CA: refused before anything is sent.
    got=$(recorded /wrong-name)
    expect_eq "$got" "" "nothing reached the server whose certificate names another host"
    got=$(recorded /untrusted)
    expect_eq "$got" "" "nothing reached the server with an untrusted certificate"
    expect_match "$OUT" "127.0.0.1:$TLS_1_PORT over TLS: certificate not trusted: [^"$'\n'"]*" "the wrong name is refused"
    expect_match "$OUT" "127.0.0.1:$TLS_2_PORT over TLS: certificate not trusted: [^"$'\n'"]*" "the untrusted CA is refused"

    # The attempts to send a placeholder elsewhere are logged and counted; no real value is in anything confine
    # wrote.
    expect_match "$(cat "$NETLOG")" '"host":"localhost","port":'"$HTTP_0_PORT"',[^'$'\n'']*"placeholder_not_substituted":"API_KEY"' \
        "--net-log names the placeholder sent to a host not listed"
    expect_match "$ERRS" "carried a secret's placeholder to a host not listed for it \\(sent as is, not the value\\): " \
        "the exit summary counts them"
    expect_no_match "$(cat "$NETLOG") $ERRS" "$real|$real_file" "no real value in the log or on stderr"
    try sb explain -w "$WS" "${OPTS[@]}" -- true
    expect_no_match "$OUT $ERRS" "$real|$real_file|confine-placeholder" "explain shows no value and no placeholder"
    local_endpoint
    placeholders_differ
    copies_of_the_value
    refusals
}

# A variable that holds a secret's real value, set with --env under another name, never reaches the command (the
# control: a value that is no secret's comes in). (Secrets need --net proxy: fallback mode has none.)
copies_of_the_value() {
    local real="sk-COPY-$RANDOM$RANDOM$RANDOM"
    XENV=(SRC="$real")
    OPTS=(--net proxy --secret K=env:SRC --for example.com --env "COPY=$real" --env "AUTH=Bearer $real" --env PLAIN=kept)
    sandbox /bin/sh -c 'env; cat /proc/self/environ'
    expect_eq "$RC" 0 "the run ($(last))"
    expect_no_match "$OUT" "$real" "no variable holds the real value"
    expect_match "$OUT" "(^|"$'\n'")PLAIN=kept" "the control variable came in"
    OPTS=()
    XENV=()
}

# A profile's credential pointed (ANTHROPIC_BASE_URL) at a plain-HTTP endpoint on this machine: the sandbox reaches
# it at the same URL, and confine puts the real key into the requests there; the variable inside is the user's.
local_endpoint() {
    XENV=(ANTHROPIC_API_KEY="$real" ANTHROPIC_BASE_URL="http://127.0.0.1:$HTTP_0_PORT/gw")
    OPTS=(--profile claude)
    # shellcheck disable=SC2016 # expanded inside the sandbox
    sandbox /bin/sh -c 'echo "url=$ANTHROPIC_BASE_URL"; curl -sS --max-time 20 -H "x-api-key: $ANTHROPIC_API_KEY" "$ANTHROPIC_BASE_URL/local-endpoint"'
    expect_eq "$RC" 0 "a local plain-HTTP endpoint is reached ($(last))"
    expect_match "$OUT" "^url=http://127.0.0.1:$HTTP_0_PORT/gw"$'\n' "inside, the variable is the user's URL"
    expect_match "$ERRS" 'ANTHROPIC_BASE_URL is yours .*puts its key into the requests to it on this machine' "confine says so"
    local got
    got=$(recorded /gw/local-endpoint)
    expect_match "$got" $'\n''x-api-key: '"$real"$'\n' "the local endpoint got the real key"
    XENV=()
}

# A secret that cannot be read, or whose value could break a header, ends the run before it starts: one line.
refusals() {
    local ran=(-w "$WS" -- /bin/sh -c "touch $V/ran")
    local net=(--net proxy --allow a.example)
    XENV=()
    expect_refused "an unset variable" '^confine: --secret K=env:NOT_SET_HERE: the variable is not set$' \
        "${net[@]}" --secret K=env:NOT_SET_HERE --for a.example "${ran[@]}"
    expect_refused "a failing command" '^confine: --secret K=cmd:exit 3: the command exited with 3$' \
        "${net[@]}" --secret 'K=cmd:exit 3' --for a.example "${ran[@]}"
    expect_refused "a missing file" "^confine: --secret K=file:$V/missing: open \`$V/missing\`: No such file" \
        "${net[@]}" --secret "K=file:$V/missing" --for a.example "${ran[@]}"
    printf 'line1\nline2\n' >"$V/two-lines"
    chmod 0644 "$V/two-lines"
    expect_refused "a value with a line break" 'holds a control character' \
        "${net[@]}" --secret "K=file:$V/two-lines" --for a.example "${ran[@]}"
    expect_refused "a secret without the proxy" '^confine: --secret, --for and --broker need --net proxy or --net veth$' \
        --secret K --for a.example "${ran[@]}"
    expect_refused "a broker to a host not allowed" "add --allow b.example:443" \
        "${net[@]}" --broker 14000=https://b.example "${ran[@]}"
    expect_refused "a bad source" 'expected env:VAR, file:PATH or cmd:COMMAND' \
        "${net[@]}" --secret K=sk-literal --for a.example "${ran[@]}"
}

# The placeholder is made per run: two runs never share it.
placeholders_differ() {
    OPTS=(--net proxy --secret K=env:SRC --for example.com)
    XENV=(SRC=some-real-value)
    sandbox /bin/sh -c 'echo "$K"'
    local first=$OUT
    sandbox /bin/sh -c 'echo "$K"'
    [[ $first != "$OUT" && $first == confine-placeholder-* ]] || fail "placeholders of two runs: '$first' '$OUT'"
}

run_variants scenario
