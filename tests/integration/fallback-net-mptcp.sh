#!/bin/bash
# fallback-net-mptcp: in fallback mode the seccomp fallback-mptcp rule refuses MPTCP sockets (which Landlock's
# TCP rules would not see) with EACCES; plain TCP sockets are still created.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

TABLE='
socket:AF_INET,SOCK_STREAM,IPPROTO_MPTCP             EACCES   # kernel: OK (or EPROTONOSUPPORT without MPTCP)
socket:AF_INET6,SOCK_STREAM,IPPROTO_MPTCP            EACCES
socket:AF_INET,SOCK_STREAM|SOCK_CLOEXEC,IPPROTO_MPTCP EACCES
socket:AF_INET,SOCK_STREAM,0                         OK
socket:AF_INET,SOCK_STREAM,6                         OK       # IPPROTO_TCP
'
scenario() {
    set_mode fallback
    check_syscall_table "$TABLE"
}
run_variants scenario
