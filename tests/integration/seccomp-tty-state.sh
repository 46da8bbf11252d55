#!/bin/bash
# seccomp-tty-state: the terminal-state rule refuses, with EPERM, the ioctls that change the user's terminal or
# console past the run (exclusive mode, line discipline, hangup, console redirection, locked and serial settings,
# the Linux console's keymaps, function-key strings, modes, fonts and VT switching), in full and in fallback mode,
# also with junk in the upper 32 bits of the request; the ioctls editors and TUIs use (termios, window size, job
# control) still reach the kernel.  The probe takes the values from the kernel's headers, confine from its own
# table: a wrong value in either shows here.  (escape-tty-state attacks a real terminal.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

TABLE='
ioctl:-1,TIOCEXCL,BAD              EPERM    # kernel: EBADF
ioctl:-1,TIOCSETD,BAD              EPERM    # kernel: EBADF
ioctl:-1,TIOCVHANGUP,BAD           EPERM    # kernel: EBADF
ioctl:-1,TIOCCONS,BAD              EPERM    # kernel: EBADF
ioctl:-1,TIOCSLCKTRMIOS,BAD        EPERM    # kernel: EBADF
ioctl:-1,TIOCSSERIAL,BAD           EPERM    # kernel: EBADF
ioctl:-1,TIOCSERCONFIG,BAD         EPERM    # kernel: EBADF
ioctl:-1,KDSETMODE,BAD             EPERM    # kernel: EBADF
ioctl:-1,KDSKBMODE,BAD             EPERM    # kernel: EBADF
ioctl:-1,KDSKBMETA,BAD             EPERM    # kernel: EBADF
ioctl:-1,KDSKBENT,BAD              EPERM    # kernel: EBADF
ioctl:-1,KDSKBSENT,BAD             EPERM    # kernel: EBADF
ioctl:-1,KDSKBDIACR,BAD            EPERM    # kernel: EBADF
ioctl:-1,KDSKBDIACRUC,BAD          EPERM    # kernel: EBADF
ioctl:-1,KDSETKEYCODE,BAD          EPERM    # kernel: EBADF
ioctl:-1,KDSKBLED,BAD              EPERM    # kernel: EBADF
ioctl:-1,KDSETLED,BAD              EPERM    # kernel: EBADF
ioctl:-1,KDSIGACCEPT,BAD           EPERM    # kernel: EBADF
ioctl:-1,KDFONTOP,BAD              EPERM    # kernel: EBADF
ioctl:-1,PIO_FONT,BAD              EPERM    # kernel: EBADF
ioctl:-1,PIO_FONTX,BAD             EPERM    # kernel: EBADF
ioctl:-1,PIO_FONTRESET,BAD         EPERM    # kernel: EBADF
ioctl:-1,PIO_CMAP,BAD              EPERM    # kernel: EBADF
ioctl:-1,PIO_SCRNMAP,BAD           EPERM    # kernel: EBADF
ioctl:-1,PIO_UNISCRNMAP,BAD        EPERM    # kernel: EBADF
ioctl:-1,PIO_UNIMAP,BAD            EPERM    # kernel: EBADF
ioctl:-1,PIO_UNIMAPCLR,BAD         EPERM    # kernel: EBADF
ioctl:-1,VT_SETMODE,BAD            EPERM    # kernel: EBADF
ioctl:-1,VT_ACTIVATE,BAD           EPERM    # kernel: EBADF
ioctl:-1,VT_SETACTIVATE,BAD        EPERM    # kernel: EBADF
ioctl:-1,VT_DISALLOCATE,BAD        EPERM    # kernel: EBADF
ioctl:-1,VT_RESIZE,BAD             EPERM    # kernel: EBADF
ioctl:-1,VT_RESIZEX,BAD            EPERM    # kernel: EBADF
ioctl:-1,VT_LOCKSWITCH,BAD         EPERM    # kernel: EBADF
ioctl:-1,VT_UNLOCKSWITCH,BAD       EPERM    # kernel: EBADF
ioctl:-1,0xabc00005423,BAD         EPERM    # TIOCSETD | junk << 32 (the kernel reads 32 bits)
ioctl:-1,TCSETS,BAD                EBADF -  # allowed: reaches the kernel
ioctl:-1,TCSETSW,BAD               EBADF -  # allowed: reaches the kernel
ioctl:-1,TIOCSWINSZ,BAD            EBADF -  # allowed: reaches the kernel
ioctl:-1,TIOCGWINSZ,BAD            EBADF -  # allowed: reaches the kernel
ioctl:-1,TIOCSPGRP,BAD             EBADF -  # allowed: reaches the kernel
ioctl:-1,TIOCGPGRP,BAD             EBADF -  # allowed: reaches the kernel
ioctl:-1,TIOCNXCL,BAD              EBADF -  # allowed: reaches the kernel
ioctl:-1,TIOCSCTTY,BAD             EBADF -  # allowed: reaches the kernel
ioctl:-1,TIOCNOTTY,BAD             EBADF -  # allowed: reaches the kernel
'
scenario() {
    check_syscall_table_both "$TABLE"
}
run_variants scenario
