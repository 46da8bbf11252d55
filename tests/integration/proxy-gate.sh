#!/bin/bash
# proxy-gate: under --net proxy (full mode, Landlock ABI >= 4) the sandbox's own connects go through confine's
# gate (docs/design.md, "One door"). Judged on the host, by servers that log each connection's peer port:
#   * a refusal is seen: a direct connect to a host loopback port not allowed fails at once with ECONNREFUSED, is a
#     --log line (with the --allow that would admit it), a --net-log line and a line of the exit summary, and the
#     host's server there saw nothing; a server the sandbox runs on its own loopback still works;
#   * the fast path is real: the host's server sees the sandbox's own socket as its peer (same port), not a relay
#     of confine's (the CONNECT tunnel, the control, is one); 64 MiB with a half-close get through;
#   * `--allow localhost:PORT` is the host's loopback for a client that resolves localhost itself;
#   * UDP out is refused and recorded (method UDP), DNS to the stub still answers an allowed name;
#   * the replacement keeps the caller's socket semantics: non-blocking connect then poll, O_NONBLOCK, FD_CLOEXEC,
#     TCP_NODELAY, getpeername.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"
. "$(dirname "$0")/lib-gate.sh"

BYTES=$((64 << 20))
# shellcheck disable=SC2034 # read by lib.sh (sb)
SB_TIMEOUT=120

scenario() {
    BULKLOG=$T/bulk-$VARIANT.log
    : >"$BULKLOG"
    gate_setup --bulk 127.0.0.1 "$BULKLOG"
    local name=gate.confine.test started port
    OPTS=(--net proxy --allow "127.0.0.1:$A" --allow "$name:80" --log "$LOG" --net-log "$NETLOG")

    # --- A refusal is seen: a plain (blocking) connect to B.
    clear_logs
    started=$SECONDS
    ga connect 127.0.0.1 "$B" blocking
    expect_eq "$RC:$OUT" "0:connect ECONNREFUSED" "direct connect to the unallowed 127.0.0.1:$B ($(last))"
    ((SECONDS - started < 10)) || fail "the refusal took $((SECONDS - started)) s"
    grep -q '"layer":"network","action":"refused","what":"127.0.0.1:'"$B"'","method":"TCP","host":"127.0.0.1","port":'"$B"',.*"allow_with":"--allow 127.0.0.1:'"$B"' ' "$LOG" ||
        fail "--log has no refusal of 127.0.0.1:$B naming --allow 127.0.0.1:$B: $(cat "$LOG")"
    grep -q '"method":"TCP","host":"127.0.0.1","port":'"$B"',"allowed":false' "$NETLOG" ||
        fail "--net-log has no refusal of 127.0.0.1:$B: $(cat "$NETLOG")"
    expect_match "$ERRS" "network: 1 request denied: 127\.0\.0\.1:$B " "the exit summary counts the refusal"
    expect_b_untouched "a direct connect to B"
    # Control: the same client reaches A (allowed), and A's server logs it.
    ga connect 127.0.0.1 "$A" blocking
    expect_match "$RC:$OUT" "^0:connect OK [0-9]+$" "direct connect to the allowed 127.0.0.1:$A ($(last))"
    wait_lines "$LA" 1
    [[ -s $LA ]] || fail "control: A's server logged no connection"

    # --- The sandbox's own loopback servers still work (blocking and non-blocking clients).
    ga loopback
    expect_eq "$RC" 0 "the sandbox's own servers ($(last))"
    expect_field client-blocking-127.0.0.1 OK
    expect_field client-nonblocking-127.0.0.1 OK
    if [[ $(field server-::1 2>/dev/null || true) == OK ]]; then
        expect_field client-blocking-::1 OK
        expect_field client-nonblocking-::1 OK
    fi

    # --- The fast path: the host's server sees the sandbox's socket itself as its peer.
    : >"$LA"
    ga connect 127.0.0.1 "$A" blocking
    port=$(field connect)
    expect_match "$port" '^OK [0-9]+$' "connect to A ($(last))"
    wait_lines "$LA" 1
    expect_eq "$(cat "$LA")" "${port#OK }" "the host server's peer port is the sandbox's own local port (no relay)"
    # Control: through the proxy's tunnel, a relay, the host sees confine's socket, not the sandbox's.
    : >"$LA"
    ga tunnel "$A"
    port=$(field tunnel)
    expect_match "$port" '^OK [0-9]+$' "tunnel to A ($(last))"
    wait_lines "$LA" 1
    [[ -s $LA && $(cat "$LA") != "${port#OK }" ]] || fail "control: a relayed connection showed the sandbox's port ($(cat "$LA") vs $port)"

    # 64 MiB with a half-close each way, directly (the fast path) to the host's bulk server.
    OPTS+=(--allow "127.0.0.1:$BULK_0_PORT")
    local mode client server finished=0
    for mode in CLIENT-FIRST SERVER-FIRST; do
        pc bulk direct 127.0.0.1 "$BULK_0_PORT" "$mode" "$BYTES"
        expect_eq "$RC" 0 "bulk $mode ($(last))"
        read -r -a client <<<"$OUT"
        expect_eq "${client[0]}:${client[1]}:${client[3]}" "BULK:$mode:$BYTES" "$mode: the client received every byte ($(last))"
        expect_eq "${client[4]}" "${client[5]}" "$mode: what the client received is what the server sent"
        finished=$((finished + 1))
        wait_lines "$BULKLOG" "$finished"
        read -r -a server < <(sed -n "${finished}p" "$BULKLOG")
        expect_eq "${server[*]}" "$mode $BYTES ${client[2]} ${client[5]}" "$mode: the server received every byte the client sent"
    done

    # --- localhost in --allow is the host's loopback, for a client that resolves localhost itself.
    OPTS=(--net proxy --allow "localhost:$A")
    : >"$LA"
    ga connect localhost "$A" blocking
    port=$(field connect)
    expect_match "$port" '^OK [0-9]+$' "connect to localhost:$A with --allow localhost:$A ($(last))"
    wait_lines "$LA" 1
    expect_eq "$(cat "$LA")" "${port#OK }" "the host's server on A got the connection to localhost:$A"
    ga connect localhost "$B" blocking
    expect_eq "$OUT" "connect ECONNREFUSED" "control: localhost:$B is not allowed ($(last))"
    expect_b_untouched "localhost:$B"

    # --- UDP out is refused and recorded; DNS to the stub still answers an allowed name.
    OPTS=(--net proxy --allow "127.0.0.1:$A" --allow "$name:80" --log "$LOG" --net-log "$NETLOG")
    clear_logs
    ga udp "$name"
    expect_eq "$RC" 0 "udp ($(last))"
    expect_field udp-sendto ENETUNREACH
    expect_field udp-connect ENETUNREACH
    expect_match "$(field getaddrinfo)" '^OK 127\.77\.[0-9]+\.[0-9]+$' "getaddrinfo of the allowed $name ($(last))"
    (($(grep -c '"method":"UDP","host":"10.1.2.3","port":53,"allowed":false' "$NETLOG") == 2)) ||
        fail "--net-log does not have both datagrams refused: $(cat "$NETLOG")"
    (($(grep -c '"layer":"network","action":"refused","what":"10.1.2.3:53","method":"UDP"' "$LOG") == 2)) ||
        fail "--log does not have both datagrams refused: $(cat "$LOG")"
    # Control: a name not on the list does not resolve (the stub answers from the allowlist).
    ga udp "not-$name"
    expect_eq "$(field getaddrinfo)" "gaierror" "control: a name not on the list ($(last))"

    # --- Semantics of the socket put in place.
    ga semantics "$A"
    expect_eq "$RC" 0 "semantics ($(last))"
    expect_match "$(field nonblock-connect)" '^(0|EINPROGRESS)$' "non-blocking connect ($(last))"
    expect_field poll-writable OK
    expect_field so-error 0
    expect_field o-nonblock True
    expect_field fd-cloexec True
    expect_field tcp-nodelay True
    expect_field getpeername "127.0.0.1:$A"
    expect_field echo semantics
    expect_field blocking-o-nonblock False
    expect_field blocking-fd-cloexec False
    expect_field blocking-tcp-nodelay False
    expect_b_untouched "the whole run"
}
run_variants scenario
