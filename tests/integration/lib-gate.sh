# shellcheck shell=bash disable=SC2034 # A, B, LA, LB, GA, LOG are for the tests
# lib-gate.sh: helpers for the gate tests (proxy-gate, escape-net-gate). Source it after lib.sh and lib-proxy.sh.
#
#   gate_setup [SERVER-ARGS...]  proxy_setup, gate-attack.py in the workspace ($GA), two host echo servers on
#                                127.0.0.1 that log each connection's peer port: A ($A, log $LA, allowed by the
#                                tests) and B ($B, log $LB, never allowed); $LOG a --log path; more proxy-servers.py
#                                arguments may follow (their servers are numbered after A and B's)
#   ga VERB ARGS...              sandbox /usr/bin/python3 gate-attack.py VERB ARGS... (sets RC, OUT, ERRS)
#   field NAME                   the RESULT of the line "NAME RESULT" of the last output
#   expect_field NAME WANT       ...which must be WANT
#   expect_b_untouched WHAT      B's server on the host saw no connection
#   clear_logs                   empties $LOG and $NETLOG

gate_setup() {
    proxy_setup
    cp "$TESTS_DIR/gate-attack.py" "$WS/.probe/gate-attack.py"
    chmod 0755 "$WS/.probe/gate-attack.py"
    if [[ $SUITE_UID == 0 ]]; then chown "$VUID:$VGID" "$WS/.probe/gate-attack.py"; fi
    GA=$WS/.probe/gate-attack.py
    LOG=$NETLOG_DIR/refusals.jsonl
    LA=$V/a.log LB=$V/b.log
    : >"$LA"
    : >"$LB"
    start_proxy_servers --logged 127.0.0.1 "$LA" --logged 127.0.0.1 "$LB" "$@"
    A=$LOGGED_0_PORT B=$LOGGED_1_PORT
    # Control: B's server is up and logs a connection from the host.
    host_probe connect-tcp 127.0.0.1 "$B"
    expect_eq "$OUT" OK "host control: B's server is up ($(last))"
    wait_lines "$LB" 1
    [[ -s $LB ]] || fail "control: B's server did not log the host's connection"
    : >"$LB"
}

ga() { sandbox /usr/bin/python3 "$GA" "$@"; }

field() {
    local l
    l=$(grep -m1 "^$1 " <<<"$OUT") || fail "no line '$1' in the attack's output ($(last))"
    echo "${l#"$1 "}"
}

expect_field() { expect_eq "$(field "$1")" "$2" "$1 ($(last))"; }

# wait_lines FILE N: until FILE has N lines (servers log from their own threads), at most 3 s.
wait_lines() {
    local i
    for ((i = 0; i < 30; i++)); do
        (($(wc -l <"$1") >= $2)) && return 0
        sleep 0.1
    done
}

expect_b_untouched() {
    sleep 0.3  # a connection that did get through is logged by the server's thread
    [[ ! -s $LB ]] || fail "$1: B's server on the host got connections from peer ports $(tr '\n' ' ' <"$LB")"
}

clear_logs() {
    : >"$LOG"
    : >"$NETLOG"
    if [[ $SUITE_UID == 0 ]]; then chown "$VUID:$VGID" "$LOG" "$NETLOG"; fi
}
