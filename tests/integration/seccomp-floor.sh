#!/bin/bash
# seccomp-floor: a --seccomp policy replaces confine's rules but not its floor. With a policy that allows
# everything (confine's TOML and Docker's JSON alike), in full and fallback mode, the floor still refuses what
# bypasses the other walls or outlives the run: terminal injection and terminal state, io_uring, bpf, the keyring,
# mounts, new namespaces, clone3, setuid modes (judged on the host: no setuid file is left), and in fallback mode
# UDP; each row is checked against the same sandbox with seccomp off, as in the other seccomp tests. `explain`
# says who keeps the promises: confine's floor.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

TABLE='
ioctl:-1,TIOCSTI,BAD       EPERM    # kernel: EBADF
ioctl:-1,TIOCSETD,BAD      EPERM    # kernel: EBADF
io_uring_setup             ENOSYS   # kernel: EFAULT (bad params pointer)
bpf                        EPERM    # bad attr pointer: kernel EFAULT
add_key                    EPERM    # bad type pointer: kernel EFAULT
keyctl                     EPERM    # unknown operation: kernel EOPNOTSUPP
mount                      EPERM    # bad pointers: kernel EFAULT
unshare:CLONE_NEWUSER      EPERM    # kernel: OK (unprivileged user namespaces)
clone3                     ENOSYS   # bad pointer: kernel EFAULT
'
FALLBACK_TABLE='
socket:AF_INET,SOCK_DGRAM,0   EACCES   # kernel: OK
'

scenario() {
    printf 'format = "confine-seccomp/1"\ndefault = "allow"\n' >"$V/allow-all.toml"
    printf '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": []}\n' >"$V/allow-all.json"
    local policy
    for policy in "$V/allow-all.toml" "$V/allow-all.json"; do
        set_mode full --seccomp "$policy"
        check_syscall_table "$TABLE"
        set_mode fallback --seccomp "$policy"
        check_syscall_table "$TABLE$FALLBACK_TABLE"

        set_mode full --seccomp "$policy"
        sandbox /bin/sh -c 'touch "$1/s" && chmod 4755 "$1/s"; chmod 2755 "$1/s"; echo done' sh "$WS"
        expect_match "$ERRS" "Operation not permitted" "chmod u+s, g+s under ${policy##*/} ($(last))"
        [[ -z $(find "$WS" -perm /6000) ]] || fail "a setuid or setgid file is left in the workspace under ${policy##*/}"

        try "$CONFINE" explain --seccomp "$policy" -- true
        expect_match "$OUT" $'kept  no setuid/setgid files or file capabilities leave the sandbox\n +by seccomp \\(confine.s floor' \
            "explain: setuid files kept by the floor ($(last))"
        expect_match "$OUT" $'kept  dangerous kernel interfaces are refused[^\n]*\n +by seccomp \\(confine.s floor' \
            "explain: the kernel surface kept by the floor ($(last))"
    done
}
run_variants scenario
