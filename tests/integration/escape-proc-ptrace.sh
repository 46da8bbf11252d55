#!/bin/bash
# escape-proc-ptrace: a host process of the same user cannot be ptraced from inside (ESRCH: other pid namespace).
. "$(dirname "$0")/lib.sh"

scenario() {
    host_bg sleep 30
    local pid=$BG_PID
    host_probe kill "$pid" 0
    expect_eq "$OUT" OK "host control: the process exists ($(last))"

    expect_errno ESRCH ptrace "$pid"
    kill -0 "$pid" 2>/dev/null || fail "host process $pid died"
    expect_eq "$(awk '/^TracerPid:/ {print $2}' "/proc/$pid/status")" 0 "TracerPid of the host process"
}
run_variants scenario
