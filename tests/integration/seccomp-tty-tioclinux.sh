#!/bin/bash
# seccomp-tty-tioclinux: the terminal-injection rule refuses TIOCLINUX (and TIOCSTI, also with junk in the
# upper 32 bits of the request, CVE-2019-10063: the kernel reads the request as 32 bits) with EPERM, in full
# and in fallback mode; other ioctls still reach the kernel.  (escape-tty-tiocsti covers a real injection.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

TABLE='
ioctl:-1,TIOCLINUX,BAD          EPERM    # kernel: EBADF
ioctl:0,TIOCLINUX,BUF           EPERM    # on stdin (not a VT): kernel ENOTTY
ioctl:-1,TIOCSTI,BAD            EPERM
ioctl:-1,0x12300005412,BAD      EPERM    # TIOCSTI | junk << 32
ioctl:-1,0xffffffff0000541c,BAD EPERM    # TIOCLINUX | junk << 32
ioctl:-1,TIOCGWINSZ,BAD         EBADF -  # an allowed ioctl reaches the kernel
'
scenario() {
    check_syscall_table_both "$TABLE"
}
run_variants scenario
