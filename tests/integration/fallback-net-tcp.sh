#!/bin/bash
# fallback-net-tcp: in fallback mode there is no network namespace; Landlock's TCP rules refuse connect() to a
# server on the host's 127.0.0.1 (and ::1) with EACCES.  Control: with --net host the same connect works.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

scenario() {
    local have6=0
    if python3 -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
        have6=1
        start_servers --tcp 127.0.0.1 --tcp ::1
    else
        start_servers --tcp 127.0.0.1
    fi
    host_probe connect-tcp 127.0.0.1 "$TCP_0_PORT"
    expect_eq "$OUT" OK "host control: connect 127.0.0.1:$TCP_0_PORT ($(last))"

    set_mode fallback
    expect_errno EACCES connect-tcp 127.0.0.1 "$TCP_0_PORT"
    if ((have6)); then
        expect_errno EACCES connect-tcp ::1 "$TCP_1_PORT"
    fi
    # Creating a TCP socket is fine; it is the connect that is refused.
    expect_ok socket AF_INET SOCK_STREAM

    set_mode fallback --net host
    expect_ok connect-tcp 127.0.0.1 "$TCP_0_PORT"
}
run_variants scenario
