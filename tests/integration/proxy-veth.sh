#!/bin/bash
# proxy-veth: --net veth (root only) puts the allowlist proxy at 10.77.0.1:3128 on the far end of a veth pair, in a
# network namespace of confine's own. Inside, eth0 is 10.77.0.2/30; an allowed host works through the proxy and a
# denied one gets 403; host services bound to 0.0.0.0 are unreachable (not at the proxy's address, not at the host's
# address, not over UDP); the host's network namespace never gains an interface; and after SIGKILL of confine,
# nothing holds either namespace any more, so the kernel has deleted the pair. Unprivileged: refused with exit 125.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-proxy.sh"

HOST_IP=$(host_ipv4)

# The network namespace of every process (fast), and every namespace file held open anywhere (a full /proc scan).
netns_of_processes() { for p in /proc/[0-9]*; do readlink "$p/ns/net" 2>/dev/null || true; done | sort -u; }
netns_held_open() { find /proc/[0-9]*/fd -maxdepth 1 -lname 'net:*' -printf '%l\n' 2>/dev/null | sort -u || true; }

# The network namespace of the command confine CONFINE_PID runs (its grandchild: confine -> pid 1 -> command).
command_netns() {
    local init cmd
    # The oldest child: confine may have started another process since (its socket maker).
    init=$(pgrep -o -P "$1") || return 0
    cmd=$(pgrep -n -P "$init") || return 0
    readlink "/proc/$cmd/ns/net" 2>/dev/null || true
}

as_root() {
    [[ -n $HOST_IP ]] || skip "the host has no global IPv4 address"
    proxy_setup
    start_proxy_servers --http 127.0.0.1 "$WWW" --echo 0.0.0.0
    local http=$HTTP_0_PORT any=$ECHO_0_PORT
    host_probe connect-tcp "$HOST_IP" "$any"
    expect_eq "$OUT" OK "host control: the 0.0.0.0 service answers on $HOST_IP:$any ($(last))"

    OPTS=(--net veth --allow "127.0.0.1:$http" --env PC_PROXY=10.77.0.1:3128)
    sandbox /bin/sh -c 'ip -4 -o addr show dev eth0 | awk "{print \$4}"; echo "$HTTPS_PROXY"'
    expect_eq "$RC:$OUT" "0:10.77.0.2/30"$'\n'"http://10.77.0.1:3128" "eth0 and the proxy variables inside ($(last))"
    pc raw "GET http://127.0.0.1:$http/hello.txt HTTP/1.1\r\nHost: 127.0.0.1:$http\r\nConnection: close\r\n\r\n"
    expect_match "$(status_line)" "^HTTP/1.[01] 200 OK$" "allowed request through the proxy over the veth ($(last))"
    expect_match "$OUT" "$HELLO" "allowed request's body"
    pc raw "GET http://127.0.0.1:$any/ HTTP/1.1\r\nHost: 127.0.0.1:$any\r\nConnection: close\r\n\r\n"
    expect_match "$(status_line)" '^HTTP/1.1 403 ' "a port that is not allowed is refused by the proxy ($(last))"

    expect_errno ECONNREFUSED connect-tcp 10.77.0.1 "$any"
    expect_errno ECONNREFUSED connect-tcp 10.77.0.1 22
    expect_errno ENETUNREACH connect-tcp "$HOST_IP" "$any"
    expect_errno ECONNREFUSED connect-tcp 127.0.0.1 "$any"
    expect_errno ENETUNREACH udp-send "$HOST_IP" 53
    # Over the pair too, names are confine's to answer: an allowed one gets its local address, another none.
    OPTS+=(--allow names.example)
    sandbox sh -c 'getent hosts names.example; getent hosts other.example; echo rc=$?'
    expect_match "$OUT" "^127\.77\.0\.1 +names\.example"$'\n'"rc=2$" "names over the veth pair ($(last))"

    local links_before pid sandbox_ns="" proxy_ns="" i left
    links_before=$(ip -o link show | awk -F': ' '{print $2}' | sort)
    sb_bg -w "$WS" "${OPTS[@]}" -- /bin/sleep 60
    pid=$BG_PID
    for ((i = 0; i < 100; i++)); do
        sandbox_ns=$(command_netns "$pid")
        proxy_ns=$(find "/proc/$pid/fd" -lname 'net:*' -printf '%l\n' 2>/dev/null | grep -vxF "${sandbox_ns:-none}" | head -n1 || true)
        [[ -n $sandbox_ns && -n $proxy_ns ]] && break
        sleep 0.05
    done
    [[ -n $sandbox_ns && $sandbox_ns != "$(readlink /proc/self/ns/net)" ]] || fail "no sandbox network namespace found"
    [[ -n $proxy_ns && $proxy_ns != "$(readlink /proc/self/ns/net)" ]] || fail "confine holds no namespace of its own for the proxy's end"
    expect_eq "$(ip -o link show | awk -F': ' '{print $2}' | sort)" "$links_before" "host interfaces while the sandbox runs"

    kill -KILL "$pid"
    for ((i = 0; i < 40; i++)); do
        left=$(netns_of_processes | grep -Fx -e "$sandbox_ns" -e "$proxy_ns" || true)
        [[ -z $left ]] && break
        sleep 0.05
    done
    expect_eq "$left" "" "a process still in the sandbox's namespace 2 s after SIGKILL of confine"
    left=$(netns_held_open | grep -Fx -e "$sandbox_ns" -e "$proxy_ns" || true)
    expect_eq "$left" "" "a namespace of the pair still held open after SIGKILL (the pair lives as long as they do)"
    expect_eq "$(ip -o link show | awk -F': ' '{print $2}' | sort)" "$links_before" "host interfaces after SIGKILL"
}

as_user() {
    OPTS=(--net veth --allow example.com)
    sandbox /bin/true
    expect_eq "$RC" 125 "--net veth without root ($(last))"
    expect_match "$ERRS" 'needs root' "the refusal says why ($(last))"
}

scenario() { if [[ $VARIANT == root ]]; then as_root; else as_user; fi; }
run_variants scenario
