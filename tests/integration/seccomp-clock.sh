#!/bin/bash
# seccomp-clock: settimeofday, clock_settime, clock_adjtime and adjtimex fail with EPERM (the clock is
# host-wide), in full and in fallback mode; reading the clock still works.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

TABLE='
settimeofday       EPERM     # bad pointer: kernel EFAULT
clock_settime      EPERM     # CLOCK_REALTIME, bad pointer: kernel EFAULT
clock_adjtime      EPERM     # bad pointer: kernel EFAULT
adjtimex           EPERM     # bad pointer: kernel EFAULT
clock_gettime      OK        # reading the clock is allowed
gettimeofday       OK
'
scenario() {
    check_syscall_table_both "$TABLE"
}
run_variants scenario
