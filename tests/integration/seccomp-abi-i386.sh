#!/bin/bash
# seccomp-abi-i386: a syscall through the i386 entry (int $0x80) kills the process with SIGSYS (confine exits
# 128+31 = 159), in full and in fallback mode.  Skipped where the kernel has IA-32 emulation off
# (ia32_emulation=0, or CONFIG_IA32_EMULATION=n): there int $0x80 faults (SIGSEGV) before seccomp runs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

scenario() {
    local mode
    host_probe int80-getpid
    if [[ $RC == $((128 + 11)) ]]; then
        skip_impossible "IA-32 emulation is off in this kernel: int \$0x80 raises SIGSEGV on the host, seccomp never sees it"
    fi
    [[ $RC == 0 && $OUT == OK* ]] || fail "host control: int \$0x80 getpid ($(last))"
    for mode in full fallback; do
        set_mode "$mode"
        probe int80-getpid
        expect_eq "$RC" 159 "[$mode] int \$0x80 getpid inside: exit status ($(last))"
        expect_eq "$OUT" "" "[$mode] int \$0x80 getpid inside: the probe printed"
    done
}
run_variants scenario
