#!/bin/bash
# fallback-net-udp: in fallback mode the seccomp fallback-udp rule refuses UDP and raw IPv4/IPv6 sockets with
# EACCES (Landlock does not cover UDP), so a datagram to a host UDP server cannot be sent; in full mode the
# rule is absent (the network namespace is the wall) and the same sockets can be created.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

TABLE='
socket:AF_INET,SOCK_DGRAM,0                          EACCES   # kernel: OK
socket:AF_INET6,SOCK_DGRAM,0                         EACCES
socket:AF_INET,SOCK_DGRAM|SOCK_CLOEXEC|SOCK_NONBLOCK,0  EACCES   # flags above the type do not hide it
socket:AF_INET,SOCK_DGRAM,IPPROTO_ICMP               EACCES - # ping sockets (kernel: EACCES too outside net.ipv4.ping_group_range)
socket:AF_INET,SOCK_DGRAM,IPPROTO_UDP                EACCES
socket:AF_INET,SOCK_RAW,1                            EACCES   # kernel: EPERM (no CAP_NET_RAW)
socket:AF_INET6,SOCK_RAW,58                          EACCES
socket:AF_INET,SOCK_STREAM,0                         OK       # TCP: Landlock handles connect/bind
socket:AF_UNIX,SOCK_DGRAM,0                          OK
'
FULL_TABLE='
socket:AF_INET,SOCK_DGRAM,0                          OK
socket:AF_INET6,SOCK_DGRAM,0                         OK
'

scenario() {
    start_servers --udp 127.0.0.1
    host_probe udp-roundtrip 127.0.0.1 "$UDP_0_PORT"
    expect_eq "$OUT" OK "host control: UDP round trip to 127.0.0.1:$UDP_0_PORT ($(last))"

    set_mode fallback
    expect_errno EACCES udp-send 127.0.0.1 "$UDP_0_PORT"
    expect_errno EACCES udp-roundtrip 127.0.0.1 "$UDP_0_PORT"
    check_syscall_table "$TABLE"

    set_mode full
    check_syscall_table "$FULL_TABLE"
}
run_variants scenario
