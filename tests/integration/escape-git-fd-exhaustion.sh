#!/bin/bash
# escape-git-fd-exhaustion: a sandbox cannot blind the git check after the run by running confine out of file
# descriptors. With --net proxy and a wildcard entry, every name the sandbox asks for makes confine listen for it
# (one descriptor each); the sandbox asks for more names than confine may hold descriptors (its limit is lowered
# here to what many desktops give by default), then plants a repository whose config runs a program when the user
# runs git. The check after the run must still set it aside: confine closes every socket of the run before it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-git-attack.sh"

scenario() {
    # Inside only (confine sets CONFINE=1 there): on the host, the control, the names would go to the host's resolver.
    local flood='if [ "$CONFINE" = 1 ]; then python3 -c "
import socket
answered = 0
for i in range(1500):
    try:
        socket.gethostbyname(f\"n{i}.flood.test\"); answered += 1
    except OSError:
        pass
print(answered)" >answered.txt; fi'
    local netlog_dir=$V/netlog
    mkdir -m 0755 "$netlog_dir"
    [[ $SUITE_UID != 0 ]] || chown "$VUID:$VGID" "$netlog_dir"
    OPTS=(--net proxy --allow '*.flood.test' --net-log "$netlog_dir/net.jsonl")
    ulimit -n 512
    attack fd-exhaustion "deep" "$flood
        git init -q deep && printf '%s\n' '$(fsmonitor fd-exhaustion)' >>deep/.git/config"
    # The flood did reach confine's limit: names got addresses until confine could hold no more listeners (then the
    # sandbox's own connects, which confine makes, fail too: it is out of descriptors).
    local answered
    answered=$(cat "$WS/answered.txt")
    ((answered > 100)) || fail "only $answered names were answered: the flood did not get going"
    grep -qE '"reason":"confine could (not listen for it inside|not take the call): .*Too many open files' "$netlog_dir/net.jsonl" ||
        fail "confine did not run out of descriptors during the run: $(tail -2 "$netlog_dir/net.jsonl")"
}
run_variants scenario
