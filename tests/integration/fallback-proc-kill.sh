#!/bin/bash
# fallback-proc-kill: in fallback mode host processes are visible (no pid namespace), but a host process of
# the same user cannot be signalled: Landlock's signal scope answers EPERM, and the process survives.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

scenario() {
    host_bg sleep 30
    local pid=$BG_PID
    host_probe kill "$pid" 0
    expect_eq "$OUT" OK "host control: kill -0 $pid as the variant's user ($(last))"

    set_mode fallback
    expect_errno EPERM kill "$pid" 0
    expect_errno EPERM kill "$pid" TERM
    expect_errno EPERM kill "$pid" KILL
    sleep 0.1
    kill -0 "$pid" 2>/dev/null || fail "host process $pid died after the sandbox tried to kill it"
    # The sandbox may still signal its own processes.
    sandbox /bin/sh -c 'sleep 30 & kill -TERM $! && wait $!; echo "status=$?"'
    expect_eq "$OUT" "status=143" "killing a child of the sandboxed shell ($(last))"
}
run_variants scenario
