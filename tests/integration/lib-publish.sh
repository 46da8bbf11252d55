# lib-publish.sh: helpers of the published-port tests (sourced after lib.sh).

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

peer() { try host /usr/bin/python3 "$TESTS_DIR/publish-peer.py" "$@"; }

# wait_ready FILE: the server inside is listening once FILE exists (confine still running: $BG_PID).
wait_ready() {
    local i
    for ((i = 0; i < 300; i++)); do
        [[ -e $1 ]] && return 0
        kill -0 "$BG_PID" 2>/dev/null || fail "confine ended before the server inside was ready"
        sleep 0.05
    done
    fail "the server inside was not ready within 15 s"
}
