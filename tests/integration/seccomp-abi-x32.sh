#!/bin/bash
# seccomp-abi-x32: a syscall through the x32 ABI (number | 0x40000000) kills the process with SIGSYS (confine
# exits 128+31 = 159), in full and in fallback mode, whether or not the kernel has x32 support: the filter
# sees the number before the kernel's syscall table does.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

scenario() {
    local mode
    # Control: on the host the probe is not killed (OK where x32 is built in, ENOSYS where not).
    host_probe x32-getpid
    [[ ($RC == 0 && $OUT == OK*) || ($RC == 1 && $OUT == ENOSYS) ]] || fail "host control: x32 getpid ($(last))"
    for mode in full fallback; do
        set_mode "$mode"
        probe x32-getpid
        expect_eq "$RC" 159 "[$mode] x32 getpid inside: exit status ($(last))"
        expect_eq "$OUT" "" "[$mode] x32 getpid inside: the probe printed"
        # The batch verb reports how its child died.
        probe syscalls getpid
        expect_eq "$OUT" "getpid=OK" "[$mode] native getpid inside"
    done
}
run_variants scenario
