#!/bin/bash
# seccomp-sysadmin: the system-administration rule (modules, kexec, swap, reboot, the kernel log, accounting,
# quotas, raw I/O ports, and the obsolete syscalls it lists) fails with EPERM, in full and in fallback mode.
# Syscalls this kernel lacks (ENOSYS without the filter) must still answer EPERM: the filter sees them first.
# kexec and module loading check CAP_SYS_BOOT/CAP_SYS_MODULE before their arguments where the kernel has them
# (`cap?`: then only the host-root control can tell seccomp's EPERM from the kernel's).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

TABLE='
kexec_load          EPERM cap?  # bad flags: root EINVAL; ENOSYS without CONFIG_KEXEC
kexec_file_load     EPERM cap?  # bad flags
init_module         EPERM cap?  # len 0: root ENOEXEC
finit_module        EPERM cap?  # fd -1: root EBADF
delete_module       EPERM cap?  # bad name pointer: root EFAULT
acct                EPERM cap   # bad path pointer: root EFAULT
swapon              EPERM cap   # bad path pointer: root EFAULT
swapoff             EPERM cap   # bad path pointer: root EFAULT
reboot              EPERM cap   # bad magic: root EINVAL
syslog              EPERM cap   # SYSLOG_ACTION_SIZE_BUFFER: root OK (EPERM for others if dmesg_restrict)
quotactl            EPERM       # quota type 255: kernel EINVAL
quotactl_fd         EPERM       # fd -1: kernel EBADF
iopl                EPERM       # level 4: kernel EINVAL (ENOSYS without CONFIG_X86_IOPL_IOPERM)
ioperm              EPERM       # beyond the bitmap: kernel EINVAL (or ENOSYS)
uselib              EPERM       # kernel: ENOSYS (or EFAULT)
create_module       EPERM       # kernel: ENOSYS
get_kernel_syms     EPERM       # kernel: ENOSYS
query_module        EPERM       # kernel: ENOSYS
nfsservctl          EPERM       # kernel: ENOSYS
lookup_dcookie      EPERM       # kernel: ENOSYS
'
scenario() {
    check_syscall_table_both "$TABLE"
}
run_variants scenario
