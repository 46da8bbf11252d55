#!/bin/bash
# seccomp-socket-families: socket() and socketpair() for any family but unix, inet, inet6 and netlink fail
# with EAFNOSUPPORT (packet, vsock, bluetooth, alg, ...), in full and in fallback mode; the four allowed
# families work.  Rows with type 11 (>= SOCK_MAX) are the controls: the kernel checks the family's range, then
# answers EINVAL for the type, whether or not that family is built into this kernel.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

TABLE='
socket:AF_PACKET,SOCK_RAW,0          EAFNOSUPPORT       # kernel: EPERM (no CAP_NET_RAW) / OK as root
socket:AF_VSOCK,SOCK_STREAM,0        EAFNOSUPPORT -     # kernel: OK, or EAFNOSUPPORT where vsock is not built
socket:AF_BLUETOOTH,SOCK_STREAM,3    EAFNOSUPPORT -     # ditto (BTPROTO_RFCOMM)
socket:AF_ALG,SOCK_SEQPACKET,0       EAFNOSUPPORT -     # ditto
socket:AF_KEY,SOCK_RAW,2             EAFNOSUPPORT -
socket:AF_UNSPEC,SOCK_STREAM,0       EAFNOSUPPORT -
socket:AF_PACKET,11,0                EAFNOSUPPORT       # controls: kernel EINVAL
socket:AF_VSOCK,11,0                 EAFNOSUPPORT
socket:AF_BLUETOOTH,11,0             EAFNOSUPPORT
socket:AF_ALG,11,0                   EAFNOSUPPORT
socket:AF_KEY,11,0                   EAFNOSUPPORT
socket:AF_UNSPEC,11,0                EAFNOSUPPORT
socket:45,11,0                       EAFNOSUPPORT       # AF_MCTP, a family the policy does not name
socketpair:AF_PACKET,SOCK_RAW,0,BUF  EAFNOSUPPORT -
socketpair:AF_VSOCK,11,0,BUF         EAFNOSUPPORT       # kernel: EINVAL
socket:AF_UNIX,SOCK_STREAM,0         OK
socket:AF_UNIX,SOCK_DGRAM,0          OK
socketpair:AF_UNIX,SOCK_STREAM,0,BUF OK
socket:AF_INET,SOCK_STREAM,0         OK
socket:AF_INET6,SOCK_STREAM,0        OK
socket:AF_NETLINK,SOCK_RAW,0         OK
socket:AF_NETLINK,SOCK_DGRAM,0       OK
'
scenario() {
    check_syscall_table_both "$TABLE"
    # The probe's own socket verb (libc's socket()), once per refused family.
    local fam
    for fam in AF_PACKET AF_VSOCK AF_BLUETOOTH AF_ALG; do
        expect_errno EAFNOSUPPORT socket "$fam" SOCK_STREAM
    done
}
run_variants scenario
