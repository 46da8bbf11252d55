#!/bin/bash
# escape-proc-environ: a secret in the environment of a host process (same user) is not readable through
# /proc/*/environ inside (fresh /proc of a new pid namespace; /proc/1 is the sandbox's own init).
. "$(dirname "$0")/lib.sh"

scenario() {
    local canary="CANARY-environ-$RANDOM$RANDOM-$VARIANT"
    host_bg env CONFINE_CANARY="$canary" sleep 30
    local pid=$BG_PID i
    for ((i = 0; i < 50; i++)); do
        grep -q -a -- "$canary" "/proc/$pid/environ" 2>/dev/null && break
        sleep 0.05
    done
    host_probe grep-environ "$canary"
    expect_eq "$OUT" "FOUND pid=$pid" "host control: the canary is visible in /proc/$pid/environ ($(last))"

    probe grep-environ "$canary"
    expect_eq "$RC" 0 "grep-environ inside ($(last))"
    expect_match "$OUT" '^OK NOTFOUND readable=[1-9][0-9]* ' "grep-environ inside (it must read at least its own environ)"
    # /proc/1 inside is not the host's init.
    probe read /proc/1/environ
    expect_no_match "$OUT" "$canary" "/proc/1/environ inside"
    sandbox /bin/sh -c 'cat /proc/[0-9]*/environ 2>/dev/null | tr "\0" "\n"; true'
    expect_no_match "$OUT" "$canary" "cat /proc/*/environ inside"
}
run_variants scenario
