#!/bin/bash
# escape-net-gate: the host sockets confine puts in the sandbox (a connect to an allowed host port, --net proxy)
# reach their one peer and nothing else. From inside, with 127.0.0.1:A allowed and 127.0.0.1:B not, each trick
# turns such a socket (or a fresh one) towards B: connect again, connect(AF_UNSPEC) then connect/bind/listen,
# Fast Open (sendto/sendmsg/sendmmsg with MSG_FASTOPEN, TCP_FASTOPEN_CONNECT), sendto B's address on the
# connection, the socket dup2()ed to another number or passed over SCM_RIGHTS to another process; then two races:
# a sockaddr flipped between A and B by another process while 2000 connects use it, and a dissolved host socket
# dup2()ed over the number another thread connects to B. Judged on the host: B's server (which logs every
# connection) sees none, no new port listens on the host, each refusal is recorded, the run ends normally.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"
. "$(dirname "$0")/lib-gate.sh"

# shellcheck disable=SC2034 # read by lib.sh (sb)

SB_TIMEOUT=100

# The pids of PID and its descendants, one a line.
tree_pids() {
    local p
    echo "$1"
    for p in $(ps -o pid= --ppid "$1" || true); do tree_pids "$p"; done
}
# Listening TCP sockets on the host held by a process of the tree under PID (other engineers' listeners come and
# go on a shared machine: only the sandbox's count).
listeners_of() {
    local pids
    pids=$(tree_pids "$1" | tr -d ' ' | paste -sd'|')
    ss -ltnpH | grep -E "pid=($pids)," || true
}

scenario() {
    gate_setup
    OPTS=(--net proxy --allow "127.0.0.1:$A" --log "$LOG" --net-log "$NETLOG")
    local refused

    # --- Each trick, one at a time.
    clear_logs
    ga reaim "$A" "$B"
    expect_eq "$RC" 0 "reaim ($(last))"
    local want=(
        connected-connect-B EACCES unspec OK unspec-connect-B EACCES unspec-connect-B-raw EACCES
        unspec-connect-B-any EACCES unspec-bind EACCES unspec-listen EACCES
        unspec-sendto-fastopen-B EACCES unspec-sendmsg-fastopen-B EACCES unspec-sendmmsg-fastopen-B EACCES
        unspec-sendto-fastopen-noaddr EACCES fresh-sendto-fastopen-B EACCES fresh-sendmsg-fastopen-B EACCES
        unspec-tfo-connect-B EACCES fresh-tfo-connect-B ECONNREFUSED tcp-repair EPERM
        "connected-sendto-B" "OK for-B" dup2-unspec OK dup2-connect-B EACCES dup2-listen EACCES
        scm-connect-B EACCES scm-unspec OK scm-unspec-connect-B EACCES scm-unspec-listen EACCES
        scm-unspec-sendto-fastopen-B EACCES mapped-connect-B ECONNREFUSED any-connect-B ECONNREFUSED
        io_uring_setup ENOSYS
    )
    local i
    for ((i = 0; i < ${#want[@]}; i += 2)); do expect_field "${want[i]}" "${want[i + 1]}"; done
    expect_b_untouched "the tricks on host sockets"
    # Control: the tricks did run on host sockets connected to A (ten of them), so A's server saw them.
    wait_lines "$LA" 10
    (($(wc -l <"$LA") == 10)) || fail "A's server saw $(wc -l <"$LA") connections, not the 10 host sockets the tricks used"
    # Each refusal of the gate's is recorded: 12 connects/binds/listens on host sockets, 7 Fast Open sends.
    refused=$(grep -c '"allowed":false,"reason":"[a-z]* on a connection confine made from the host"' "$NETLOG" || true)
    expect_eq "$refused" 12 "--net-log lines for calls on host sockets ($(cat "$NETLOG"))"
    refused=$(grep -c '"allowed":false,"reason":"TCP Fast Open' "$NETLOG" || true)
    expect_eq "$refused" 7 "--net-log lines for Fast Open"
    refused=$(grep -c '"layer":"network","action":"refused"' "$LOG" || true)
    ((refused >= 21)) || fail "--log has $refused network refusals, want at least 21: $(cat "$LOG")"

    # --- A dissolved host socket never listens on the host. Judged while the sandbox holds it.
    local ready=$WS/listen.ready fin=$WS/listen.done port
    sb_bg -w "$WS" "${OPTS[@]}" -- /usr/bin/python3 "$GA" listen "$A" "$ready" "$fin" >"$V/listen.out" 2>&1
    local confine_pid=$BG_PID
    for ((i = 0; i < 200; i++)); do
        [[ -e $ready ]] && break
        sleep 0.1
    done
    [[ -e $ready ]] || fail "the listener attack did not get ready: $(cat "$V/listen.out")"
    local new
    new=$(listeners_of "$confine_pid")
    # Control: the same look finds a listener of a process of that tree: confine's own (its proxy listens in the
    # sandbox's namespace, not the host's, so the control is a host listener started under a known pid).
    host_bg /usr/bin/python3 -c 'import socket, time; s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1); time.sleep(30)'
    sleep 0.5
    [[ -n $(listeners_of "$BG_PID") ]] || fail "control: ss -ltnp does not show a listener by its process"
    for port in $(grep '^port ' "$V/listen.out" | awk '$2 != 0 {print $2}'); do
        host_probe connect-tcp 127.0.0.1 "$port"
        [[ $OUT != OK ]] || fail "a host client reached port $port, listened on from inside"
    done
    touch "$fin"
    wait "$confine_pid" || fail "the listener attack failed: $(cat "$V/listen.out")"
    [[ -z $new ]] || fail "new ports listen on the host while the sandbox holds dissolved host sockets: $new ($(cat "$V/listen.out"))"
    OUT=$(cat "$V/listen.out")
    expect_field unspec-bind-any EACCES
    expect_field unspec-listen EACCES
    expect_field unspec-listen-unbound EACCES
    expect_b_untouched "the listen attack"

    # --- Races: B's server never gets a connection, the run ends normally.
    ga race-addr "$A" "$B" 2000
    expect_eq "$RC" 0 "race-addr ($(last))"
    expect_match "$OUT" '^race-addr ' "race-addr output ($(last))"
    # Control: the flip happened, both addresses were used (connections to A, refusals of B).
    expect_match "$OUT" "ECONNREFUSED=[0-9]+.*OK=[0-9]+ peer-$A=[0-9]+$" "race-addr went both ways ($(last))"
    expect_no_match "$OUT" "peer-$B" "race-addr: a connection's peer is B"
    expect_b_untouched "the sockaddr race"
    ga race-dup2 "$A" "$B" 2000
    expect_eq "$RC" 0 "race-dup2 ($(last))"
    expect_match "$OUT" '^race-dup2 ' "race-dup2 output ($(last))"
    expect_no_match "$OUT" "OK=" "race-dup2: a connect to B succeeded"
    expect_b_untouched "the dup2 race"
}
run_variants scenario
