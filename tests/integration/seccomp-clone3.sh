#!/bin/bash
# seccomp-clone3: clone3 fails with ENOSYS (its flags are behind a pointer seccomp cannot read), so glibc falls
# back to clone, whose flags are checked: pthread_create, fork and running a shell pipeline still work, in full
# and in fallback mode.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

TABLE='
clone3             ENOSYS   # bad pointer: kernel EFAULT
'
scenario() {
    local mode
    for mode in full fallback; do
        set_mode "$mode"
        check_syscall_table "$TABLE"
        expect_ok thread
        expect_ok fork
        sandbox /bin/sh -c 'echo a | tr a b; /bin/true & wait'
        expect_eq "$RC:$OUT" "0:b" "[$mode] a shell pipeline inside ($(last))"
    done
}
run_variants scenario
