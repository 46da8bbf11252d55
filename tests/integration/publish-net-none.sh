#!/bin/bash
# publish-net-none: --publish HOSTPORT:PORT under --net none. A server inside on 127.0.0.1:PORT is reached from
# the host through 127.0.0.1:HOSTPORT (4 MiB each way, the client's half-close passed on), a published port
# with nothing listening inside resets the host's connection, the default address is 127.0.0.1 only (127.0.0.2
# and the host's own address are refused), the sandbox still reaches nothing of the host's (its loopback servers,
# the published host port), each connection is a PUBLISH line in --net-log, and after the run the host port is
# free again. `confine run -p` does the same.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-publish.sh"

# check_published HOSTPORT EMPTY_HOSTPORT LOG: the checks made on the host while the sandbox serves one connection
# (its answer: a 77-byte line, then as many bytes as it got).
check_published() {
    local hp=$1 empty=$2 log=$3 ip
    wait_ready "$WS/ready"
    # The command holds no socket of confine's (the host listeners), and from inside the host's loopback server and
    # the published host port are nothing but closed ports.
    expect_eq "$(cat "$WS/ready")" "sockets=0 ECONNREFUSED ECONNREFUSED" "inherited sockets; connects from inside to the host's loopback server and to the published host port"
    # Nothing listens on the second published port inside: the host's connection is reset, not ended cleanly.
    peer read 127.0.0.1 "$empty"
    expect_eq "$OUT" ECONNRESET "a published port with no server inside ($(last))"
    # Published on 127.0.0.1 only.
    peer connect 127.0.0.2 "$hp"
    expect_eq "$OUT" ECONNREFUSED "the published port on 127.0.0.2 ($(last))"
    ip=$(host_ipv4)
    if [[ -n $ip ]]; then
        peer connect "$ip" "$hp"
        expect_eq "$OUT" ECONNREFUSED "the published port on the host's address $ip ($(last))"
    fi
    peer send 127.0.0.1 "$hp" $((4 << 20))
    expect_eq "$OUT" OK "4 MiB each way through 127.0.0.1:$hp ($(last))"
    wait "$BG_PID" && RC=0 || RC=$?
    expect_eq "$RC" 0 "confine's exit code"
    peer bind 127.0.0.1 "$hp"
    expect_eq "$OUT" OK "127.0.0.1:$hp is free again after the run ($(last))"
    peer bind 127.0.0.1 "$empty"
    expect_eq "$OUT" OK "127.0.0.1:$empty is free again after the run ($(last))"
    expect_match "$(cat "$log")" '"method":"PUBLISH","host":"127.0.0.1","port":8000,"allowed":true,"reason":"published at 127.0.0.1:'"$hp"', from 127.0.0.1","bytes_up":4194304,"bytes_down":'$((4194304 + 77)) "--net-log: the relayed connection"
    expect_match "$(cat "$log")" '"method":"PUBLISH","host":"127.0.0.1","port":8001,"allowed":true,"reason":"refused"' "--net-log: the refused one"
}

scenario() {
    start_servers --tcp 127.0.0.1
    host_probe connect-tcp 127.0.0.1 "$TCP_0_PORT"
    expect_eq "$OUT" OK "host control: the host's loopback server is up ($(last))"
    cp "$TESTS_DIR/publish-peer.py" "$WS/peer.py"
    local hp empty log=$V/net.log
    touch "$log" && chown "$VUID:$VGID" "$log"

    hp=$(free_port) empty=$(free_port)
    sb_bg -w "$WS" --net none --publish "$hp:8000" --publish "127.0.0.1:$empty:8001/tcp" --net-log "$log" -- \
        /usr/bin/python3 "$WS/peer.py" serve 8000 "$WS/ready" "$TCP_0_PORT" "$hp"
    check_published "$hp" "$empty" "$log"

    # confine run -p: docker's spelling, the workspace a volume.
    rm -f "$WS/ready"
    : >"$log"
    hp=$(free_port) empty=$(free_port)
    sb_bg run -p "$hp:8000" -p "127.0.0.1:$empty:8001" -v "$WS:$WS" -w "$WS" host \
        /usr/bin/python3 "$WS/peer.py" serve 8000 "$WS/ready" "$TCP_0_PORT" "$hp"
    wait_ready "$WS/ready"
    peer send 127.0.0.1 "$hp" 65536
    expect_eq "$OUT" OK "confine run -p: 64 KiB each way through 127.0.0.1:$hp ($(last))"
    wait "$BG_PID" && RC=0 || RC=$?
    expect_eq "$RC" 0 "confine run's exit code"
}
run_variants scenario
