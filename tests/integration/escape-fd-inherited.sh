#!/bin/bash
# escape-fd-inherited: an fd opened by the caller on a secret is closed inside (EBADF) unless
# --preserve-fd N keeps it, in which case it reads the content.
. "$(dirname "$0")/lib.sh"

scenario() {
    exec 7<"$H/.ssh/id_rsa"
    exec 8>"$V/log-fd8"
    expect_errno EBADF read-fd 7
    probe list-fds
    expect_eq "$OUT" OK "open fds above 2 inside ($(last))"

    OPTS=(--preserve-fd 7)
    probe read-fd 7
    expect_eq "$OUT" "OK $((${#SSH_CANARY} + 1)) $SSH_CANARY" "read-fd 7 with --preserve-fd 7 ($(last))"
    probe list-fds
    expect_eq "$OUT" "OK 7" "open fds above 2 inside with --preserve-fd 7 ($(last))"
    expect_errno EBADF read-fd 8
    exec 7<&- 8>&-
}
run_variants scenario
