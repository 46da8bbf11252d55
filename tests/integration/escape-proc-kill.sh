#!/bin/bash
# escape-proc-kill: a host process of the same user cannot be signalled from inside (new pid namespace:
# ESRCH), and it survives the attempt.
. "$(dirname "$0")/lib.sh"

scenario() {
    host_bg sleep 30
    local pid=$BG_PID
    host_probe kill "$pid" 0
    expect_eq "$OUT" OK "host control: kill -0 $pid as the variant's user ($(last))"

    expect_errno ESRCH kill "$pid" TERM
    expect_errno ESRCH kill "$pid" KILL
    kill -0 "$pid" 2>/dev/null || fail "host process $pid died after the sandbox tried to kill it"
    # kill(-1, SIGKILL) ("every process I may signal") stays inside the sandbox too.
    sandbox /bin/sh -c 'kill -KILL -1; echo survived'
    sleep 0.2
    kill -0 "$pid" 2>/dev/null || fail "host process $pid died after kill -KILL -1 inside ($(last))"
}
run_variants scenario
