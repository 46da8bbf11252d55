#!/bin/bash
# proxy-load: the proxy stays cheap under abuse. (1) 50 000 CONNECTs to different denied names: every one is
# refused, confine's memory grows by a bounded amount, and the exit summary stays one short line. (2) With confine's
# descriptors nearly used up, the sandbox opens hundreds of connections to the proxy and holds them: confine does
# not spin on the failing accept (its CPU time, read from the host, stays low) and serves again once they close.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"

# Runs confine in the background with CONFINE-ARGS, polling its /proc entry until it exits; sets PEAK_KB (VmHWM),
# TICKS (user+system CPU time in clock ticks), RC, OUT and ERRS.
watch_confine() {
    PEAK_KB=0 TICKS=0
    sb_bg "$@" >"$V/out" 2>"$V/err"
    local pid=$BG_PID kb stat
    while kill -0 "$pid" 2>/dev/null; do
        kb=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
        [[ -n $kb ]] && ((kb > PEAK_KB)) && PEAK_KB=$kb
        stat=$(cat "/proc/$pid/stat" 2>/dev/null || true)
        # Fields 14 and 15 (utime, stime) counted after the ")" that ends the command name.
        [[ -n $stat ]] && TICKS=$(awk '{ print $12 + $13 }' <<<"${stat##*)}")
        sleep 0.05
    done
    RC=0
    wait "$pid" || RC=$?
    BG_PIDS=()
    OUT=$(cat "$V/out") ERRS=$(cat "$V/err")
}

scenario() {
    proxy_setup

    # Held a second after the flood: a run shorter than the polling interval would leave its peak unsampled (or
    # sampled before confine even ran), and the baseline too low.
    watch_confine -w "$WS" --net proxy -- /bin/sh -c '/usr/bin/python3 "$0" flood 20 && sleep 1' "$PC"
    expect_eq "$OUT" "FLOOD 20 of 20" "a few denied names ($(last))"
    local small=$PEAK_KB
    watch_confine -w "$WS" --net proxy -- /usr/bin/python3 "$PC" flood 50000
    expect_eq "$OUT" "FLOOD 50000 of 50000" "50 000 denied names, each refused ($(last))"
    echo "confine's peak memory: $small kB after 20 denied names, $PEAK_KB kB after 50 000"
    ((PEAK_KB - small < 6144)) || fail "confine grew by $((PEAK_KB - small)) kB for 50 000 denied names"
    local summary
    summary=$(grep 'requests denied' <<<"$ERRS")
    expect_match "$summary" '^confine: warning: network: 50000 requests denied: n[0-9]+\.denied\.example:443 ×1, .* and 49995 more$' \
        "the summary names a few and counts the rest"
    ((${#summary} < 400)) || fail "summary line of ${#summary} characters"

    # The descriptor limit: confine may open 64, the sandbox holds 400 connections to the proxy for 3 s.
    local hz
    hz=$(getconf CLK_TCK)
    XENV=()
    RUN_AS=(prlimit --nofile=64: -- "${RUN_AS[@]}")
    watch_confine -w "$WS" --net proxy -- /bin/sh -c \
        "/usr/bin/python3 $PC hold 400 3 && /usr/bin/python3 $PC raw 'CONNECT evil.example:443 HTTP/1.1\\r\\n\\r\\n'"
    expect_match "$OUT" "HELD 400" "the sandbox held its connections ($(last))"
    expect_match "$OUT" "HTTP/1.1 403 Forbidden" "the proxy answers once they are closed ($(last))"
    echo "confine's CPU time over a 3 s hold at its descriptor limit: $TICKS ticks ($hz per second)"
    ((TICKS < hz * 3 / 10)) || fail "confine used $TICKS ticks of CPU while out of descriptors (spinning)"
}
run_variants scenario
