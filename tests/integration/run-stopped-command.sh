#!/bin/bash
# run-stopped-command: a stopped command is not an exited one, and a stopped command still ends on the signals
# that end a run.
#  1. PTRACE_TRACEME makes pid 1 the command's tracer; the command then stops itself. confine keeps running (it
#     used to exit 125), pid 1 lets go of it (TracerPid 0), says once on stderr that it is stopped, and SIGCONT to
#     confine resumes it: confine's status is then the command's own.
#  2. `kill -STOP $$`: SIGINT, SIGTERM or SIGHUP sent to confine from the host ends it within seconds with
#     128+N, and no process of the sandbox is left on the host.
#  3. The same on a terminal with Ctrl-C, which the terminal sends to the command itself.
# 1 and 2 in fallback mode too.
. "$(dirname "$0")/lib.sh"

# is_stopped PGREP-ARGS...: whether a process pgrep finds is stopped (state T); prints its pid.
is_stopped() {
    local pid
    for pid in $(pgrep "$@" || true); do
        if grep -q '^State:.*T (stopped)' "/proc/$pid/status" 2>/dev/null; then
            echo "$pid"
            return 0
        fi
    done
    return 1
}

# wait_stopped PGREP-ARGS...: the pid of the stopped process pgrep finds, within 5 s.
wait_stopped() {
    local i
    for ((i = 0; i < 100; i++)); do
        is_stopped "$@" && return 0
        sleep 0.05
    done
    fail "no stopped process (pgrep $*) within 5 s: $(pgrep -a "$@" || echo none)"
}

# wait_exit PID SECONDS: confine's exit status, or a failure if it is still running after SECONDS.
wait_exit() {
    local i
    for ((i = 0; i < $2 * 20; i++)); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.05
    done
    kill -0 "$1" 2>/dev/null && fail "confine still runs $2 s after the signal ($(ps -o pid,stat,args --ppid "$1" || true))"
    wait "$1" && RC=0 || RC=$?
}

traced_stop() {
    # Yama's ptrace_scope 3 refuses PTRACE_TRACEME to everyone: the command is told so and goes on.
    if [[ $(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null) == 3 ]]; then
        try sb "${MODE_FLAGS[@]}" -w "$WS" -- "$PIN" traceme-stop
        expect_eq "$RC:$OUT" "1:EPERM" "PTRACE_TRACEME under Yama ptrace_scope 3 ($(last))"
        return 0
    fi
    # A name of its own, so that pgrep finds this probe only (the comm is the first 15 characters).
    local name="tm$RANDOM$RANDOM" pid=
    cp "$WS/.probe/confine-test-probe" "$WS/.probe/$name"
    sb_bg "${MODE_FLAGS[@]}" -w "$WS" -- "$WS/.probe/$name" traceme-stop >"$V/traced.out" 2>"$V/traced.err"
    local confine=$BG_PID
    local i
    for ((i = 0; i < 100; i++)); do
        pid=$(is_stopped -x "$name") && break
        if ! kill -0 "$confine" 2>/dev/null; then
            wait "$confine" && RC=0 || RC=$?
            fail "confine exited with $RC when the traced command stopped: $(cat "$V/traced.err")"
        fi
        sleep 0.05
    done
    [[ -n $pid ]] || fail "the traced command did not stop within 5 s"
    sleep 0.3
    kill -0 "$confine" 2>/dev/null || fail "confine exited while the traced command was stopped: $(cat "$V/traced.err")"
    expect_eq "$(awk '/^TracerPid:/ {print $2}' "/proc/$pid/status")" 0 "TracerPid of the stopped command (pid 1 let go of it)"
    kill -CONT "$confine"
    wait_exit "$confine" 5
    expect_eq "$RC" 0 "confine's status once the resumed command exits"
    expect_eq "$(cat "$V/traced.out")" "OK tracer=0" "the command, resumed"
    expect_match "$(cat "$V/traced.err")" "the command is stopped \\(SIGSTOP\\)" "confine's report of the stop"
}

self_stop() {
    local sig=$1 want=$2 mark="selfstop-$RANDOM$RANDOM"
    # --default-signal: background jobs of a non-interactive shell start with SIGINT ignored (see run-sigint).
    bg "${RUN_AS[@]}" env -i --default-signal=INT "${BASE_ENV[@]}" "$CONF" "${MODE_FLAGS[@]}" -w "$WS" -- \
        /bin/sh -c "kill -STOP \$\$; : $mark" 2>"$V/self.err"
    local confine=$BG_PID
    wait_stopped -f "^/bin/sh -c kill -STOP .*$mark" >/dev/null
    sleep 0.3
    kill -0 "$confine" 2>/dev/null || fail "confine exited when the command stopped itself"
    kill "-$sig" "$confine"
    wait_exit "$confine" 5
    expect_eq "$RC" "$want" "confine's status after SIG$sig to a run whose command is stopped"
    sleep 0.2
    local left
    left=$(pgrep -a -f "$mark" || true)
    [[ -z $left ]] || fail "left on the host after SIG$sig: $left"
}

ctrl_c_on_terminal() {
    local cmd mark="ctrlc-$RANDOM$RANDOM"
    cmd=$(printf '%q ' "${RUN_AS[@]}" env -i "${BASE_ENV[@]}" "$CONF" -w "$WS" -- /bin/sh -c "kill -STOP \$\$; : $mark")
    # Ctrl-C typed once the command has stopped; script's exit status is the command's.
    export -f is_stopped
    try bash -c '{ timeout 5 bash -c "until is_stopped -f \"^/bin/sh -c kill -STOP .*$2\" >/dev/null; do sleep 0.05; done"
                   printf "\003"; sleep 3; } | timeout -k 2 10 script -qec "$1" /dev/null' _ "$cmd" "$mark"
    local left
    left=$(pgrep -a -f "$mark" || true)
    [[ -z $left ]] || { pkill -KILL -f "$mark" || true; fail "left on the host after Ctrl-C ($(last)): $left"; }
    expect_eq "$RC" 130 "Ctrl-C on the terminal of a run whose command is stopped ($(last))"
}

scenario() {
    MODE_FLAGS=()
    traced_stop
    self_stop INT 130
    self_stop TERM 143
    self_stop HUP 129
    ctrl_c_on_terminal
    # Fallback mode: the command's parent is confine's child, not the pid 1 of a namespace; the same rules hold.
    MODE_FLAGS=(--no-namespaces --best-effort)
    traced_stop
    self_stop TERM 143
}
run_variants scenario
