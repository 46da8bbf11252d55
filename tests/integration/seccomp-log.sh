#!/bin/bash
# seccomp-log: with --seccomp-log a denial still returns its errno (EPERM for bpf), and the kernel logs it: as
# root, an audit record type=1326 for the probe's syscall is emitted. Without --seccomp-log, errno denials are not
# logged (control).
# The records are read from the audit multicast group (audit-listen.py), not from dmesg: the kernel log drops
# audit lines under its rate limiter whenever other processes log too, which made this test fail one run in three.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

# seccomp_record COMM SYSCALL-NR: the audit record of a seccomp decision for COMM and that syscall, if received.
seccomp_record() { grep -E "^1326 .*comm=\"$1\".* syscall=$2 " "$AUDIT_RECORDS"; }

# wait_for_record COMM SYSCALL-NR: up to 10 s for that record (the kernel queues it during the syscall and its
# audit thread delivers it soon after).
wait_for_record() {
    local i
    for ((i = 0; i < 100; i++)); do
        seccomp_record "$1" "$2" && return 0
        sleep 0.1
    done
    return 1
}

# probe_copy PREFIX: a copy of the probe whose name (its comm in the audit record) identifies this run.
probe_copy() {
    local comm=$1$RANDOM$RANDOM
    comm=${comm:0:15}
    cp "$PIN" "$WS/.probe/$comm"
    echo "$comm"
}

scenario() {
    local mode logged_comm quiet_comm nr_bpf=321
    for mode in full fallback; do
        set_mode "$mode" --seccomp-log
        expect_errno EPERM syscall bpf
    done

    [[ $VARIANT == root ]] || return 0 # the audit records are root's (CAP_AUDIT_READ)
    [[ $(uname -m) == x86_64 ]] || skip "the syscall number of bpf is hard-coded for x86_64"
    local logged
    logged=$(sysctl -n kernel.seccomp.actions_logged 2>/dev/null || cat /proc/sys/kernel/seccomp/actions_logged)
    [[ " $logged " == *" errno "* ]] || skip "the kernel does not log errno actions (kernel.seccomp.actions_logged = $logged)"
    AUDIT_RECORDS=$V/audit-records
    start_server_script audit-listen.py "$AUDIT_RECORDS"
    [[ -z $AUDIT_ERROR ]] || skip "$AUDIT_ERROR"

    for mode in full fallback; do
        quiet_comm=$(probe_copy scnolog)
        logged_comm=$(probe_copy sclog)

        # Control first: the same denial without --seccomp-log.
        set_mode "$mode"
        sandbox "$WS/.probe/$quiet_comm" syscall bpf
        expect_eq "$OUT" EPERM "[$mode] bpf without --seccomp-log ($(last))"

        set_mode "$mode" --seccomp-log
        sandbox "$WS/.probe/$logged_comm" syscall bpf
        expect_eq "$OUT" EPERM "[$mode] bpf with --seccomp-log ($(last))"
        wait_for_record "$logged_comm" "$nr_bpf" ||
            fail "[$mode] no seccomp audit record for comm=$logged_comm syscall=$nr_bpf (records received: $(wc -l <"$AUDIT_RECORDS"), lost: $(grep -c '^0 ' "$AUDIT_RECORDS"))"
        # The kernel delivers records in the order it queued them, so the control's record, had there been one,
        # has arrived by now.
        if seccomp_record "$quiet_comm" "$nr_bpf"; then
            fail "[$mode] a seccomp audit record without --seccomp-log"
        fi
    done
}
run_variants scenario
