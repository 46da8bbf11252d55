#!/bin/bash
# fallback-proc-ptrace: in fallback mode a host process of the same user cannot be ptraced: Landlock refuses
# tracing a process outside the sandbox's domain with EPERM.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

scenario() {
    host_bg sleep 30
    local pid=$BG_PID
    # Control: on the host the variant's user may attach (skipped where Yama restricts ptrace to descendants).
    host_probe ptrace "$pid"
    if [[ $OUT == EPERM && $(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0) != 0 ]]; then
        skip "Yama ptrace_scope forbids attaching to a non-child on the host too"
    fi
    expect_eq "$OUT" OK "host control: ptrace $pid ($(last))"

    set_mode fallback
    expect_errno EPERM ptrace "$pid"
    kill -0 "$pid" 2>/dev/null || fail "host process $pid died"
    expect_eq "$(awk '/^TracerPid:/ {print $2}' "/proc/$pid/status")" 0 "TracerPid of the host process"
}
run_variants scenario
