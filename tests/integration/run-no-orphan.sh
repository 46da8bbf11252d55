#!/bin/bash
# run-no-orphan: when confine is SIGKILLed, nothing it started survives it (within ~2 s).
. "$(dirname "$0")/lib.sh"

scenario() {
    local marker=1000.$$$RANDOM pid i
    sb_bg -w "$WS" -- /bin/sh -c "sleep $marker & sleep $marker; wait"
    pid=$BG_PID
    for ((i = 0; i < 100; i++)); do
        [[ $(pgrep -c -x -f "sleep $marker" || true) == 2 ]] && break
        sleep 0.05
    done
    expect_eq "$(pgrep -c -x -f "sleep $marker" || true)" 2 "sandboxed sleeps running"
    kill -KILL "$pid"
    for ((i = 0; i < 40; i++)); do
        pgrep -f "sleep $marker" >/dev/null || break
        sleep 0.05
    done
    local left
    left=$(pgrep -a -f "sleep $marker" || true)
    [[ -z $left ]] || { pkill -KILL -f "sleep $marker" || true; fail "processes survived SIGKILL of confine: $left"; }
}
run_variants scenario
