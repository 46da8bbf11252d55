#!/bin/bash
# fallback-net-fastopen: in fallback mode Landlock's TCP rules see connect(), but TCP Fast Open connects from inside
# sendto/sendmsg/sendmmsg (MSG_FASTOPEN), past that check; TCP_FASTOPEN_CONNECT defers a connect to the first
# write. Each is refused with EACCES, and the host's listener on 127.0.0.1 accepts nothing (its log stays empty).
# Also with a --seccomp policy that allows everything: the refusal is part of confine's floor. Control: the same
# call from the host reaches the listener and is logged.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

scenario() {
    local log=$V/accepted
    : >"$log"
    start_servers --tcp 127.0.0.1 --accept-log "$log"
    local how
    host_probe fastopen 127.0.0.1 "$TCP_0_PORT" sendto
    expect_eq "$OUT" OK "host control: Fast Open to 127.0.0.1:$TCP_0_PORT ($(last))"
    local i
    for ((i = 0; i < 100; i++)); do [[ -s $log ]] && break; sleep 0.05; done
    expect_eq "$(wc -l <"$log")" 1 "host control: the listener logged the connection"
    : >"$log"

    printf 'format = "confine-seccomp/1"\ndefault = "allow"\n' >"$V/allow-all.toml"
    for policy in "" "--seccomp $V/allow-all.toml"; do
        # shellcheck disable=SC2086 # the policy flag is one word or none
        set_mode fallback $policy
        for how in sendto sendmsg sendmmsg option; do
            expect_errno EACCES fastopen 127.0.0.1 "$TCP_0_PORT" "$how"
        done
    done
    # A connection would be logged within moments (the control above shows how fast): give it a second.
    sleep 1
    expect_eq "$(cat "$log")" "" "connections the host's listener accepted from the sandbox"
}
run_variants scenario
