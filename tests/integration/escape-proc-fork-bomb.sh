#!/bin/bash
# escape-proc-fork-bomb: without --pids a sandbox still runs at most 4096 processes and threads (RLIMIT_NPROC in
# its own user namespace), so a fork bomb fails inside (EAGAIN) instead of filling the host's pid table. The probe
# forks up to 5000 sleeping children and holds them; the host counts the processes in the sandbox's pid namespace
# while they are held, checks that it can still fork, and that none is left after the run. Then the same with
# --pids 64 --best-effort (a cgroup's pids.max where one is available, else the RLIMIT_NPROC stand-in).
. "$(dirname "$0")/lib.sh"

# in_pid_ns PID: how many host processes share PID's pid namespace.
in_pid_ns() {
    python3 -c '
import os, sys
want = os.readlink("/proc/%s/ns/pid" % sys.argv[1])
n = 0
for p in os.listdir("/proc"):
    try:
        n += p.isdigit() and os.readlink("/proc/%s/ns/pid" % p) == want
    except OSError:
        pass
print(n)' "$1"
}

# bomb LIMIT WHAT CONFINE-ARGS...: run the probe's fork-many 5000 in the sandbox and judge it from the host.
bomb() {
    local limit=$1 what=$2 ready=$WS/ready init="" held forked i
    shift 2
    sb_bg -w "$WS" "$@" -- "$PIN" fork-many 5000 "$ready"
    local confine_pid=$BG_PID
    for ((i = 0; i < 1200; i++)); do
        [[ -e $ready ]] && break
        sleep 0.1
    done
    [[ -e $ready ]] || fail "$what: the probe did not report (it never started, or hangs forking)"
    read -r forked <"$ready"
    init=$(cat "/proc/$confine_pid/task/$confine_pid/children")
    [[ $init =~ ^[0-9]+\ ?$ ]] || fail "$what: confine's children: '$init'"
    held=$(in_pid_ns "${init% }")
    echo "$what: $forked; $held processes in the sandbox's pid namespace"
    [[ $forked =~ ^forked=([0-9]+)\ err=EAGAIN$ ]] || fail "$what: the probe's fork loop did not stop with EAGAIN: $forked"
    ((BASH_REMATCH[1] <= limit - 2)) || fail "$what: the probe forked ${BASH_REMATCH[1]} children (limit $limit)"
    ((BASH_REMATCH[1] >= limit - 10)) || fail "$what: the probe forked only ${BASH_REMATCH[1]} children: another limit than $limit held"
    ((held <= limit)) || fail "$what: $held processes in the sandbox (limit $limit)"
    # The host still forks while the sandbox holds its processes, as the same user too.
    host_probe fork
    expect_eq "$RC:$OUT" "0:OK" "$what: a fork on the host while the sandbox holds its processes ($(last))"
    rm -f "$ready"
    wait "$confine_pid" || fail "$what: confine exited $?"
    [[ ! -e /proc/${init% } ]] || expect_eq "$(in_pid_ns "${init% }")" 0 "$what: processes left after the run"
}

scenario() {
    bomb 4096 "the default bound"
    bomb 64 "--pids 64 --best-effort" --pids 64 --best-effort
}
run_variants scenario
