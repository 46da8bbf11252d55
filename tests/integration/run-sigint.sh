#!/bin/bash
# run-sigint: SIGINT sent to confine is forwarded to the command, whose trap decides the exit code.
. "$(dirname "$0")/lib.sh"

scenario() {
    local marker=9.$$$RANDOM pid i rc
    # Background jobs of a non-interactive shell start with SIGINT ignored; reset it so that the test
    # measures confine, not bash (env --default-signal).
    bg "${RUN_AS[@]}" env -i --default-signal=INT "${BASE_ENV[@]}" "$CONF" -w "$WS" -- \
        /bin/sh -c "trap 'exit 7' INT; sleep $marker & wait"
    pid=$BG_PID
    for ((i = 0; i < 100; i++)); do
        pgrep -x -f "sleep $marker" >/dev/null && break
        sleep 0.05
    done
    pgrep -x -f "sleep $marker" >/dev/null || fail "the sandboxed sleep did not start"
    sleep 0.2
    kill -INT "$pid"
    wait "$pid" && rc=0 || rc=$?
    expect_eq "$rc" 7 "confine's exit code after SIGINT"
    pkill -x -f "sleep $marker" || true
}
run_variants scenario
