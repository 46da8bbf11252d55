#!/bin/bash
# secret-clear-text: a secret's real value never crosses the network in clear text. --secret TOK --for HOST puts the
# value into plain HTTP only when it stays on this machine (the connection goes to a loopback address), whichever
# way the sandbox sends it: through the proxy or by name without it. Plain HTTP carrying TOK's placeholder to a
# remote address (here a "remote" host on port 443 and 8080) is not sent at all: the client gets a 403 saying why,
# --net-log, --log and the exit summary record the refusal. --for http://HOST:PORT names a port that speaks only
# plain HTTP, and the value goes there. The test judges on the remote host, which records every request it gets.
#
# The remote host is a network namespace of its own (ip netns) behind a veth pair addressed in 10.213.0.0/30, both
# ends inside this test's own network namespace: nothing outside this machine, nor outside the test, is involved.
# Its name (api.remote.test) and a name for loopback (local.remote.test) are in a private /etc/hosts.
if [[ $(id -u) == 0 && -z ${SECRET_CLEAR_NS:-} ]]; then
    exec unshare --net --mount --propagation private env SECRET_CLEAR_NS=1 "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"

[[ -n ${SECRET_CLEAR_NS:-} ]] || skip "needs root: the remote host is a network namespace, its name in a private mount namespace"
REMOTE_NS=confine-remote-$$
REMOTE=10.213.0.2
ip link set lo up
ip netns add "$REMOTE_NS"
at_exit "ip netns delete $REMOTE_NS"
ip link add cr-host type veth peer name cr-remote netns "$REMOTE_NS"
ip addr add 10.213.0.1/30 dev cr-host
ip link set cr-host up
ip -n "$REMOTE_NS" addr add "$REMOTE/30" dev cr-remote
ip -n "$REMOTE_NS" link set cr-remote up
ip -n "$REMOTE_NS" link set lo up
printf '127.0.0.1 localhost\n%s api.remote.test\n127.0.0.1 local.remote.test\n' "$REMOTE" >"$T/hosts"
echo 'nameserver 127.0.0.1' >"$T/resolv.conf"  # nothing answers there: every name is the hosts file's
mount --bind "$T/hosts" /etc/hosts
mount --bind "$T/resolv.conf" /etc/resolv.conf

# The sandbox's client: no proxy variables, so each request goes by name unless -x names the proxy.
CLIENT='unset HTTP_PROXY http_proxy HTTPS_PROXY https_proxy ALL_PROXY all_proxy NO_PROXY no_proxy
curl() { command curl -sS --max-time 20 "$@"; }
proxied() { curl -x http://127.0.0.1:3128 "$@"; }'

# The requests the remote host received whose path starts with $1: "PATH authorization=VALUE" a line.
received() {
    /usr/bin/python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["path"].startswith(sys.argv[2]):
        print(r["path"], "authorization=" + dict((k.lower(), v) for k, v in r["headers"]).get("authorization", "-"))' \
        "$REMOTE_LOG" "$1"
}

scenario() {
    proxy_setup
    REMOTE_LOG=$V/remote.jsonl
    touch "$REMOTE_LOG"
    SERVER_WRAPPER=(ip netns exec "$REMOTE_NS")
    start_server_script secret-servers.py "$REMOTE_LOG" --http "$REMOTE:443" --http "$REMOTE:8080"
    SERVER_WRAPPER=()
    local real="sk-REAL-$RANDOM$RANDOM$RANDOM" api=api.remote.test denials=$NETLOG_DIR/denials.jsonl
    XENV=(MY_TOK="$real")
    local allow=(--net proxy --net-log "$NETLOG" --log "$denials" --allow "$api:443" --allow "$api:8080"
                 --allow "$REMOTE:443" --allow "$REMOTE:8080")

    # The remote host is reachable from here, as the variant's user (control).
    try host curl -sS --max-time 10 "http://$REMOTE:443/control"
    expect_eq "$RC:$OUT" "0:recorded" "the remote host answers ($(last))"

    # TOK listed for the remote host by name only: plain HTTP carrying it goes nowhere, on any door, any port.
    OPTS=("${allow[@]}" --secret TOK=env:MY_TOK --for "$api")
    # shellcheck disable=SC2016 # expanded inside the sandbox
    sandbox /bin/sh -c "$CLIENT"'
        proxied -H "Authorization: Bearer $TOK" http://'"$api"':443/proxy-443
        curl -H "Authorization: Bearer $TOK" http://'"$api"':443/direct-443
        proxied -H "Authorization: Bearer $TOK" http://'"$api"':8080/proxy-8080
        curl -H "Authorization: Bearer $TOK" http://'"$api"':8080/direct-8080
        proxied http://'"$api"':443/no-secret-proxied
        curl http://'"$api"':443/no-secret-direct'
    expect_eq "$RC" 0 "the sandbox's requests ($(last))"
    # Judged on the remote host: the requests with the placeholder never arrived, those without it did.
    if grep -q -e "$real" -e confine-placeholder "$REMOTE_LOG"; then fail "the remote host got a secret: $(cat "$REMOTE_LOG")"; fi
    expect_eq "$(received /)" "/control authorization=-
/no-secret-proxied authorization=-
/no-secret-direct authorization=-" "what the remote host received"
    # The sandbox was told why, with what would let it through.
    local refused="confine: $api:PORT not sent: plain HTTP carrying the placeholder of TOK, whose value would cross the network in clear text (to $REMOTE); to allow it: a --broker for HTTPS to $api, or --for http://$api:PORT if that port speaks only plain HTTP"
    expect_eq "$OUT" "${refused//PORT/443}
${refused//PORT/443}
${refused//PORT/8080}
${refused//PORT/8080}
recorded
recorded" "what the sandbox was answered"
    # Recorded as refused: --net-log, the denial log and the exit summary.
    local line
    for line in "GET\",\"host\":\"$api\",\"port\":443" "TCP\",\"host\":\"$api\",\"port\":443" \
        "GET\",\"host\":\"$api\",\"port\":8080" "TCP\",\"host\":\"$api\",\"port\":8080"; do
        grep -qF "\"method\":\"$line,\"allowed\":false,\"reason\":\"not sent: plain HTTP carrying the placeholder of TOK" "$NETLOG" ||
            fail "--net-log has no refusal for $line: $(cat "$NETLOG")"
    done
    expect_eq "$(grep -c '"layer":"network","action":"refused".*"refusal":"placeholder"' "$denials")" 4 \
        "the denial log's refusals ($(cat "$denials"))"
    expect_match "$ERRS" "network: 4 requests denied: $api:443 ×2, $api:8080 ×2" "the exit summary ($(last))"
    expect_no_match "$(cat "$NETLOG" "$denials") $ERRS" "$real" "no real value in the logs or on stderr"

    # --for http://HOST:8080: that port speaks plain HTTP, and the value goes there (through the proxy and by name);
    # port 443 of the same host still gets nothing.
    : >"$REMOTE_LOG"
    OPTS=("${allow[@]}" --secret TOK=env:MY_TOK --for "$api,http://$api:8080")
    # shellcheck disable=SC2016 # expanded inside the sandbox
    sandbox /bin/sh -c "$CLIENT"'
        proxied -H "Authorization: Bearer $TOK" http://'"$api"':8080/named-proxy
        curl -H "Authorization: Bearer $TOK" http://'"$api"':8080/named-direct
        curl -H "Authorization: Bearer $TOK" http://'"$api"':443/named-443'
    expect_eq "$RC" 0 "the sandbox's requests with --for http://$api:8080 ($(last))"
    expect_eq "$OUT" "recorded
recorded
${refused//PORT/443}" "what the sandbox was answered with --for http://$api:8080"
    expect_eq "$(received /named)" "/named-proxy authorization=Bearer $real
/named-direct authorization=Bearer $real" "the remote host's port named plain HTTP got the value"

    # By name to a host on this machine's loopback: the value goes in (it stays here).
    REMOTE_LOG=$V/local.jsonl
    start_server_script secret-servers.py "$REMOTE_LOG" --http 127.0.0.1
    OPTS=(--net proxy --allow "local.remote.test:$HTTP_0_PORT" --allow "127.0.0.1:$HTTP_0_PORT"
          --secret TOK=env:MY_TOK --for local.remote.test)
    # shellcheck disable=SC2016 # expanded inside the sandbox
    sandbox /bin/sh -c "$CLIENT"'
        curl -H "Authorization: Bearer $TOK" http://local.remote.test:'"$HTTP_0_PORT"'/by-name-local'
    expect_eq "$RC:$OUT" "0:recorded" "by name to a loopback host ($(last))"
    expect_eq "$(received /by-name)" "/by-name-local authorization=Bearer $real" "the loopback host got the value"
}
run_variants scenario
