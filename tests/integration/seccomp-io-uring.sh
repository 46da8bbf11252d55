#!/bin/bash
# seccomp-io-uring: io_uring_setup/enter/register fail with ENOSYS (so programs fall back to plain syscalls,
# which the filter sees), in full and in fallback mode — also a valid io_uring_setup that the kernel accepts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

TABLE='
io_uring_setup             ENOSYS   # kernel: EFAULT (bad params pointer)
io_uring_setup:8,BUF       ENOSYS   # valid: the kernel creates a ring
io_uring_enter             ENOSYS   # kernel: EBADF
io_uring_register          ENOSYS   # kernel: EBADF/EINVAL
'
scenario() {
    check_syscall_table_both "$TABLE"
}
run_variants scenario
