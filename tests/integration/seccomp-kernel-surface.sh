#!/bin/bash
# seccomp-kernel-surface: bpf, perf_event_open and userfaultfd fail with EPERM, in full and in fallback mode.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

TABLE='
bpf                 EPERM   # BPF_PROG_LOAD, bad attr pointer: kernel EFAULT
bpf:0,BAD,8         EPERM   # BPF_MAP_CREATE: kernel EFAULT
perf_event_open     EPERM   # bad attr pointer: kernel EFAULT
userfaultfd         EPERM   # UFFD_USER_MODE_ONLY | a bogus flag: kernel EINVAL
userfaultfd:1       EPERM   # UFFD_USER_MODE_ONLY: the kernel lets anyone create one
'
scenario() {
    check_syscall_table_both "$TABLE"
}
run_variants scenario
