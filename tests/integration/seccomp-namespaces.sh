#!/bin/bash
# seccomp-namespaces: creating a namespace with unshare or clone (every CLONE_NEW* flag) and joining one with
# setns fail with EPERM, in full and in fallback mode; unshare/clone without namespace flags (fork) work.
# Most rows add a flag the kernel rejects with EINVAL before any permission check (bit 0 for unshare;
# CLONE_SIGHAND without CLONE_VM, or CLONE_NEWNS with CLONE_FS, for clone), so EPERM can only be seccomp's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

TABLE='
unshare:CLONE_NEWUSER                        EPERM       # kernel: OK (unprivileged user namespaces)
unshare:CLONE_NEWUSER|1                      EPERM
unshare:CLONE_NEWNS|1                        EPERM
unshare:CLONE_NEWPID|1                       EPERM
unshare:CLONE_NEWNET|1                       EPERM
unshare:CLONE_NEWUTS|1                       EPERM
unshare:CLONE_NEWIPC|1                       EPERM
unshare:CLONE_NEWCGROUP|1                    EPERM
unshare:CLONE_NEWTIME|1                      EPERM
unshare:CLONE_NEWNS                          EPERM cap   # kernel: EPERM without CAP_SYS_ADMIN
clone:CLONE_NEWNS|SIGCHLD                    EPERM cap
clone:CLONE_NEWUSER|SIGCHLD                  EPERM       # kernel: OK
clone:CLONE_NEWNS|CLONE_FS|SIGCHLD           EPERM
clone:CLONE_NEWUSER|CLONE_SIGHAND|SIGCHLD    EPERM
clone:CLONE_NEWPID|CLONE_SIGHAND|SIGCHLD     EPERM
clone:CLONE_NEWNET|CLONE_SIGHAND|SIGCHLD     EPERM
clone:CLONE_NEWUTS|CLONE_SIGHAND|SIGCHLD     EPERM
clone:CLONE_NEWIPC|CLONE_SIGHAND|SIGCHLD     EPERM
clone:CLONE_NEWCGROUP|CLONE_SIGHAND|SIGCHLD  EPERM
clone:CLONE_NEWTIME|CLONE_SIGHAND|SIGCHLD    EPERM
setns:-1,0                                   EPERM       # kernel: EBADF
setns:-1,CLONE_NEWNET                        EPERM
unshare:0                                    OK
unshare:CLONE_FILES                          OK
clone:SIGCHLD                                OK          # a plain fork
'
scenario() {
    check_syscall_table_both "$TABLE"
    # A real tool: util-linux unshare(1) cannot create a user namespace inside.
    sandbox unshare --user --map-root-user id -u
    [[ $RC != 0 && $OUT != 0 ]] || fail "unshare -Ur inside: expected a refusal, got $(last)"
    expect_match "$ERRS" "Operation not permitted" "unshare -Ur inside: stderr"
}
run_variants scenario
