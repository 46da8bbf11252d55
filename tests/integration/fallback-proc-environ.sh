#!/bin/bash
# fallback-proc-environ: in fallback mode /proc shows the host's processes, but the environment of a host
# process of the same user cannot be read: /proc/PID/environ fails with EACCES (Landlock's ptrace rules).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

scenario() {
    local canary="CANARY-fb-environ-$RANDOM$RANDOM-$VARIANT" i
    host_bg env CONFINE_CANARY="$canary" sleep 30
    local pid=$BG_PID
    for ((i = 0; i < 50; i++)); do
        grep -q -a -- "$canary" "/proc/$pid/environ" 2>/dev/null && break
        sleep 0.05
    done
    host_probe read "/proc/$pid/environ"
    expect_match "$OUT" "^OK " "host control: read /proc/$pid/environ ($(last))"
    host_probe grep-environ "$canary"
    expect_eq "$OUT" "FOUND pid=$pid" "host control: the canary is in /proc/$pid/environ ($(last))"

    set_mode fallback
    expect_errno EACCES read "/proc/$pid/environ"
    probe grep-environ "$canary"
    expect_eq "$RC" 0 "grep-environ inside ($(last))"
    expect_match "$OUT" '^OK NOTFOUND readable=[1-9][0-9]* ' "grep-environ inside (it must read at least its own environ)"
    # The process itself is visible (no pid namespace): its status is readable, its environment is not.
    probe stat "/proc/$pid"
    expect_match "$OUT" '^OK ' "stat /proc/$pid inside"
}
run_variants scenario
