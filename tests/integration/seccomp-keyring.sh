#!/bin/bash
# seccomp-keyring: add_key, keyctl and request_key fail with EPERM (the keyring is not namespaced), in full
# and in fallback mode.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

TABLE='
add_key                       EPERM   # bad type pointer: kernel EFAULT
keyctl                        EPERM   # unknown operation: kernel EOPNOTSUPP
keyctl:0,-3,0,0,0             EPERM   # KEYCTL_GET_KEYRING_ID of the session keyring: kernel OK
request_key                   EPERM   # bad type pointer: kernel EFAULT
'
scenario() {
    check_syscall_table_both "$TABLE"
}
run_variants scenario
