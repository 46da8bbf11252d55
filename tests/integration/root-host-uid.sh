#!/bin/bash
# root-host-uid: when root runs confine, the sandboxed processes run on the host as uid/gid 65534 with no
# capabilities, whatever uid they see inside.
. "$(dirname "$0")/lib.sh"

scenario() {
    local marker=4242.$$
    sb_bg -w "$WS" -- sleep "$marker"
    local i pid=
    for ((i = 0; i < 100; i++)); do
        pid=$(pgrep -x -f "sleep $marker" || true)
        [[ -z $pid ]] || break
        sleep 0.05
    done
    [[ -n $pid ]] || fail "the sandboxed sleep did not start"
    local st
    st=$(grep -E '^(Uid|Gid|CapEff|CapPrm|CapBnd):' "/proc/$pid/status")
    echo "$st"
    expect_match "$st" $'Uid:\t65534\t65534\t65534\t65534' "host uids of the sandboxed process"
    expect_match "$st" $'Gid:\t65534\t65534\t65534\t65534' "host gids of the sandboxed process"
    expect_match "$st" $'CapEff:\t0000000000000000' "CapEff of the sandboxed process"
    expect_match "$st" $'CapBnd:\t0000000000000000' "CapBnd of the sandboxed process"
    kill -KILL "$pid"
}
run_variants scenario root
