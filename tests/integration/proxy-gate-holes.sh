#!/bin/bash
# proxy-gate-holes: what the gate (c93a097) gets wrong, found by attacking it. NOT registered in meson.build: it
# fails on c93a097 (each check names the hole); register it once they are fixed. None is an escape: B's server
# on the host never sees a connection. They break "every refusal seen" and the records' usefulness:
#   1. a NON-BLOCKING connect to a host loopback port not allowed (Python with a timeout, curl, Node, Go: most
#      clients) is refused but recorded nowhere: connect_inside answers EINPROGRESS and the ECONNREFUSED that
#      follows is never seen by confine (serve_gated_connect records only an ECONNREFUSED returned at once);
#   2. a connect to 0.0.0.0:PORT (the kernel's "this host") where the sandbox's own server listens on 0.0.0.0 is
#      refused and recorded as a network denial (route_connect: is_loopback does not cover 0.0.0.0 / ::);
#   3. the gate's own refusals (a call on a host socket, Fast Open) are recorded with host "" and port 0: the
#      exit summary calls them "(malformed requests)" and --log's allow_with is "--allow  " (nothing to allow),
#      although confine read the address the call named;
#   4. a refused datagram's allow_with says "--allow 10.1.2.3:53", which does not admit it (given, the datagram is
#      still refused with the same advice).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"
. "$(dirname "$0")/lib-gate.sh"

# hole WHY: a check that fails because of the gate; the scenario goes on, and fails at its end.
hole() {
    echo "HOLE [$TEST_NAME/$VARIANT]: $*" >&2
    HOLES=$((HOLES + 1))
}

scenario() {
    HOLES=0
    gate_setup
    OPTS=(--net proxy --allow "127.0.0.1:$A" --log "$LOG" --net-log "$NETLOG")
    local mode
    # 1. Control: a blocking connect is recorded (proxy-gate checks it in full).
    for mode in blocking timeout nonblock; do
        clear_logs
        ga connect 127.0.0.1 "$B" "$mode"
        expect_eq "$OUT" "connect ECONNREFUSED" "$mode connect to the unallowed 127.0.0.1:$B ($(last))"
        grep -q '"host":"127.0.0.1","port":'"$B"',"allowed":false' "$NETLOG" ||
            hole "hole 1: a $mode connect to the unallowed 127.0.0.1:$B is not in --net-log"
        grep -q '"what":"127.0.0.1:'"$B"'"' "$LOG" || hole "hole 1: a $mode connect to 127.0.0.1:$B is not in --log"
        [[ $ERRS =~ network:\ 1\ request\ denied:\ 127\.0\.0\.1:$B\  ]] || hole "hole 1: the exit summary of a $mode connect does not count it"
    done
    expect_b_untouched "the connects to B"

    # 2. The sandbox's own server on 0.0.0.0, reached as 0.0.0.0 (control: as 127.0.0.1).
    clear_logs
    sandbox /usr/bin/python3 -c '
import socket
s = socket.socket(); s.bind(("0.0.0.0", 0)); s.listen(4); p = s.getsockname()[1]
for ip in ("127.0.0.1", "0.0.0.0"):
    c = socket.socket()
    try:
        c.connect((ip, p)); print(ip, "OK")
    except OSError as e:
        print(ip, e.errno)'
    expect_eq "$(grep '^127' <<<"$OUT")" "127.0.0.1 OK" "control: the sandbox's own server as 127.0.0.1 ($(last))"
    [[ $(grep '^0' <<<"$OUT") == "0.0.0.0 OK" ]] || hole "hole 2: the sandbox's own server as 0.0.0.0 ($(last))"
    [[ ! -s $NETLOG ]] || hole "hole 2: a connect to the sandbox's own server is recorded as refused: $(cat "$NETLOG")"

    # 3. A connect on a host socket (after AF_UNSPEC) to B: the record names B.
    clear_logs
    ga reaim "$A" "$B"
    expect_field unspec-connect-B EACCES
    [[ $ERRS != *"malformed requests"* ]] || hole "hole 3: the exit summary calls the gate's refusals malformed requests"
    ! grep -q '"allow_with":"--allow  ' "$LOG" || hole "hole 3: --log advises '--allow ' with nothing"
    ! grep -q '"host":"","port":0' "$NETLOG" || hole "hole 3: --net-log records refusals with no destination"
    expect_b_untouched "the tricks"

    # 4. The advice for a refused datagram, followed.
    clear_logs
    # shellcheck disable=SC2034 # read by sandbox
    OPTS=(--net proxy --allow 10.1.2.3:53 --log "$LOG")
    ga udp x.invalid
    if [[ $(field udp-sendto) != OK ]]; then
        ! grep -q '"what":"10.1.2.3:53".*"allow_with":"--allow 10.1.2.3:53 ' "$LOG" ||
            hole "hole 4: the datagram is refused although --allow 10.1.2.3:53 (its own advice) is given"
    fi
    ((HOLES == 0)) || fail "$HOLES holes"
}
run_variants scenario
