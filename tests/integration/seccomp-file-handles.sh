#!/bin/bash
# seccomp-file-handles: open_by_handle_at (the "shocker" escape: open any inode of a mounted filesystem,
# bypassing the mount view) and name_to_handle_at fail with EPERM, in full and in fallback mode.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

TABLE='
open_by_handle_at          EPERM   # mount fd -1: kernel EBADF/EFAULT (before its CAP_DAC_READ_SEARCH check)
name_to_handle_at          EPERM   # bad path pointer: kernel EFAULT
name_to_handle_at:-100,BUF,BUF,BUF,0  EPERM   # AT_FDCWD, path "" (no AT_EMPTY_PATH): kernel ENOENT
'
scenario() {
    check_syscall_table_both "$TABLE"
}
run_variants scenario
