#!/bin/bash
# seccomp-mounts: every syscall that changes the mount view (old and new mount API, chroot, pivot_root) fails
# with EPERM, in full and in fallback mode.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

TABLE='
mount              EPERM       # bad pointers: kernel EFAULT
umount2            EPERM       # bad pointer: kernel EFAULT
umount2:BAD,0x80000000 EPERM   # bad flags: kernel EINVAL
pivot_root         EPERM cap   # may_mount() first; root: EFAULT
chroot             EPERM       # bad pointer: kernel EFAULT
move_mount         EPERM cap   # may_mount() first; root: EINVAL (bad flags)
fsopen             EPERM cap   # capability first; root: EFAULT
fsconfig           EPERM       # fd -1: kernel EINVAL
fsmount            EPERM cap   # may_mount() first; root: EBADF
fspick             EPERM cap   # may_mount() first; root: EFAULT
mount_setattr      EPERM       # size 0: kernel EINVAL
open_tree          EPERM       # bad pointer: kernel EFAULT
'
scenario() {
    check_syscall_table_both "$TABLE"
}
run_variants scenario
