#!/bin/bash
# proxy-fd-leak: finished proxy connections release their sockets. 40 plain GETs and 40 CONNECT tunnels whose server
# closes first (an HTTP/1.0 server: the usual order for a response read to its end) must leave confine's open file
# count where it was; a leak of two descriptors per request would exhaust RLIMIT_NOFILE in a long session, after
# which every request fails (502) and the sandbox loses its network. Control: 40 echo tunnels that the client
# closes first, counted the same way.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"

# wait_for FILE: until the sandboxed client ($BG_PID: confine) creates FILE.
wait_for() {
    local i
    for ((i = 0; i < 300; i++)); do
        [[ -e $1 ]] && return 0
        kill -0 "$BG_PID" 2>/dev/null || fail "confine exited before $1 appeared"
        sleep 0.05
    done
    fail "$1 did not appear within 15 s"
}

fds() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 | wc -l; }

scenario() {
    proxy_setup
    start_proxy_servers --http 127.0.0.1 "$WWW" --echo 127.0.0.1
    local hp=$HTTP_0_PORT ep=$ECHO_0_PORT before mid after
    sb_bg -w "$WS" --net proxy --allow "127.0.0.1:$hp" --allow "127.0.0.1:$ep" -- /usr/bin/python3 -c '
import socket, sys, time
hp, ep, ws = sys.argv[1:]
def request(data, want, client_first=False):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
    s.sendall(data.encode())
    if client_first:                       # the echo comes back, then the client ends
        s.shutdown(socket.SHUT_WR)
    out = b""
    while True:                            # to the end
        d = s.recv(65536)
        if not d:
            break
        out += d
    s.close()
    return out.endswith(want)
hello = b"\r\n\r\nhello through the proxy\n"
get = f"GET http://127.0.0.1:{hp}/hello.txt HTTP/1.1\r\nHost: 127.0.0.1:{hp}\r\n\r\n"
tunnel_get = f"CONNECT 127.0.0.1:{hp} HTTP/1.1\r\n\r\nGET /hello.txt HTTP/1.0\r\n\r\n"
tunnel_echo = f"CONNECT 127.0.0.1:{ep} HTTP/1.1\r\n\r\nping"
def step(name, ok):
    with open(f"{ws}/.{name}", "w") as f:
        f.write(str(ok))
    time.sleep(1)                          # the test counts the descriptors of confine now
request(tunnel_echo, b"ping", True)        # warm up: the proxy has served once
step("baseline", 1)
step("control", sum(request(tunnel_echo, b"\r\n\r\nping", True) for _ in range(40)))
step("done", sum(request(get, hello) + request(tunnel_get, hello) for _ in range(40)))
' "$hp" "$ep" "$WS"
    local confine_pid=$BG_PID
    wait_for "$WS/.baseline"
    sleep 0.3
    before=$(fds "$confine_pid")
    wait_for "$WS/.control"
    sleep 0.3
    mid=$(fds "$confine_pid")
    wait_for "$WS/.done"
    sleep 0.3
    after=$(fds "$confine_pid")
    expect_eq "$(cat "$WS/.control"):$(cat "$WS/.done")" 40:80 "requests served (control:checked)"
    echo "confine's open descriptors: $before at first, $mid after 40 client-closed tunnels, $after after 80 server-closed requests"
    ((mid - before < 8)) || fail "control: $((mid - before)) more descriptors after 40 client-closed tunnels ($before -> $mid)"
    ((after - mid < 8)) ||
        fail "confine holds $((after - mid)) more descriptors after 80 finished server-closed requests ($mid -> $after): those connections are never released"
    wait "$confine_pid" || fail "confine exited with $?"
}
run_variants scenario
