#!/bin/bash
# seccomp-personality: personality() with ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, MMAP_PAGE_ZERO or
# ADDR_COMPAT_LAYOUT fails with EPERM, in full and in fallback mode, while the query (0xffffffff), PER_LINUX (0)
# and PER_LINUX32 work.  A value with bit 31 set is not the query: the kernel stores it as the persona, flags
# included, so 0x80000000|ADDR_NO_RANDOMIZE (or 0xfffffffe) must be refused too (else ASLR is off for the
# next exec).  Only 0xffffffff exactly is the query.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

TABLE='
personality:ADDR_NO_RANDOMIZE                 EPERM   # kernel: OK
personality:READ_IMPLIES_EXEC                 EPERM
personality:MMAP_PAGE_ZERO                    EPERM
personality:ADDR_COMPAT_LAYOUT                EPERM
personality:PER_LINUX32|ADDR_NO_RANDOMIZE     EPERM
personality:0x80000000|ADDR_NO_RANDOMIZE      EPERM   # not the query: the kernel sets the flag
personality:0x80000000|READ_IMPLIES_EXEC      EPERM
personality:0xfffffffe                        EPERM   # every flag at once
personality:0xffffffff                        OK      # the query
personality:0                                 OK
personality:PER_LINUX32                       OK
'
scenario() {
    local mode
    for mode in full fallback; do
        set_mode "$mode"
        check_syscall_table "$TABLE"
        # What the bit-31 value would do if allowed: the persona after the call, and in the next program.
        probe personality '0x80000000|ADDR_NO_RANDOMIZE' /bin/cat /proc/self/personality
        [[ $RC == 1 && $OUT == EPERM ]] ||
            fail "[$mode] personality(0x80040000) inside: expected EPERM, got $(last) (the exec'd cat runs with ADDR_NO_RANDOMIZE: no ASLR)"
    done
}
run_variants scenario
