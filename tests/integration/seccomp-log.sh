#!/bin/bash
# seccomp-log: with --seccomp-log a denial still returns its errno (EPERM for bpf), and the kernel logs it: as
# root, where dmesg is readable, an audit line type=1326 for the probe's syscall appears in the kernel log.
# Without --seccomp-log, errno denials are not logged (control).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

# wait_for_log COMM SYSCALL-NR: up to 3 s for a seccomp audit line of COMM and that syscall.
wait_for_log() {
    local i
    for ((i = 0; i < 30; i++)); do
        dmesg 2>/dev/null | grep -E "type=1326 .*comm=\"$1\".* syscall=$2 " && return 0
        sleep 0.1
    done
    return 1
}

scenario() {
    local mode comm nr_bpf=321
    for mode in full fallback; do
        set_mode "$mode" --seccomp-log
        expect_errno EPERM syscall bpf
    done

    [[ $VARIANT == root ]] || return 0 # the kernel log is root's (dmesg_restrict)
    dmesg >/dev/null 2>&1 || skip "dmesg is not readable"
    [[ $(uname -m) == x86_64 ]] || skip "the syscall number of bpf is hard-coded for x86_64"
    local logged
    logged=$(sysctl -n kernel.seccomp.actions_logged 2>/dev/null || cat /proc/sys/kernel/seccomp/actions_logged)
    [[ " $logged " == *" errno "* ]] || skip "the kernel does not log errno actions (kernel.seccomp.actions_logged = $logged)"

    for mode in full fallback; do
        # A probe copy with a unique name, so that its comm identifies this run in the log.
        comm=sclog$RANDOM$RANDOM
        comm=${comm:0:15}
        cp "$PIN" "$WS/.probe/$comm"
        set_mode "$mode" --seccomp-log
        sandbox "$WS/.probe/$comm" syscall bpf
        expect_eq "$OUT" EPERM "[$mode] bpf with --seccomp-log ($(last))"
        wait_for_log "$comm" "$nr_bpf" || fail "[$mode] no seccomp audit line for comm=$comm syscall=$nr_bpf in dmesg"

        # Control: the same denial without --seccomp-log leaves no line.
        comm=scnolog$RANDOM$RANDOM
        comm=${comm:0:15}
        cp "$PIN" "$WS/.probe/$comm"
        set_mode "$mode"
        sandbox "$WS/.probe/$comm" syscall bpf
        expect_eq "$OUT" EPERM "[$mode] bpf without --seccomp-log ($(last))"
        sleep 0.3
        if dmesg | grep -E "type=1326 .*comm=\"$comm\""; then
            fail "[$mode] a seccomp audit line without --seccomp-log"
        fi
    done
}
run_variants scenario
