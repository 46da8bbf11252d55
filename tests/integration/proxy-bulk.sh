#!/bin/bash
# proxy-bulk: 64 MiB each way through a CONNECT tunnel and through a loopback forward (the relay splices them
# through pipes), each with a half-close in either direction: the client inside shuts down its write side and
# must still receive the server's whole answer; the server shuts down its write side first and must still receive
# the client's whole payload. Judged on the host: the server's log of what it received (count and SHA-256) must be
# what the client sent, and what the client received must be what the server sent.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"

BYTES=$((64 << 20))
SB_TIMEOUT=120  # one run moves 128 MiB through the relay and hashes it twice: slow on a loaded machine

# expect_bulk VIA MODE: one transfer, then the client's line against the server's log line for it.
expect_bulk() {
    local via=$1 mode=$2 client server i
    pc bulk "$via" 127.0.0.1 "$BULK_0_PORT" "$mode" "$BYTES"
    expect_eq "$RC" 0 "bulk $via $mode ($(last))"
    # BULK MODE SENT-SHA RECEIVED-COUNT RECEIVED-SHA CLAIMED-SHA
    read -r -a client <<<"$OUT"
    expect_eq "${client[0]}:${client[1]}:${client[3]}" "BULK:$mode:$BYTES" "$via $mode: the client received every byte ($(last))"
    expect_eq "${client[4]}" "${client[5]}" "$via $mode: what the client received is what the server sent"
    # The server logs after reading to the client's end of stream: wait for its line (it hashes 64 MiB first).
    for ((i = 0; i < 100; i++)); do
        (($(wc -l <"$BULKLOG") >= BULK_DONE + 1)) && break
        sleep 0.1
    done
    BULK_DONE=$((BULK_DONE + 1))
    # MODE RECEIVED-COUNT RECEIVED-SHA SENT-SHA
    read -r -a server < <(sed -n "${BULK_DONE}p" "$BULKLOG")
    expect_eq "${server[*]}" "$mode $BYTES ${client[2]} ${client[5]}" "$via $mode: the server received every byte the client sent"
}

scenario() {
    proxy_setup
    BULKLOG=$V/bulk.log
    BULK_DONE=0
    : >"$BULKLOG"
    # A longer life than the other proxy tests: four 64 MiB transfers each way in one variant.
    start_server_script proxy-servers.py --lifetime 240 --bulk 127.0.0.1 "$BULKLOG"
    # An address entry on the host's loopback: reachable by CONNECT and as a loopback forward (a direct connection
    # inside to 127.0.0.1:PORT).
    OPTS=(--net proxy --allow "127.0.0.1:$BULK_0_PORT")
    local via mode
    for via in tunnel direct; do
        for mode in CLIENT-FIRST SERVER-FIRST; do
            expect_bulk "$via" "$mode"
        done
    done
}
run_variants scenario
