#!/usr/bin/python3
"""The kernel's audit records, as they are emitted, for the tests that check what seccomp logs.

    audit-listen.py OUT_ENV RECORDS [--lifetime SECONDS]

Joins the audit netlink multicast group (AUDIT_NLGRP_READLOG; needs CAP_AUDIT_READ in the initial user
namespace) and appends one line per record, "TYPE TEXT", to RECORDS. Once it listens it writes AUDIT_ERROR=''
to OUT_ENV (atomically, so the caller can poll for that file); if the kernel refuses, AUDIT_ERROR='why'.

Why not the kernel log: without an audit daemon the kernel prints audit records to it through a rate limiter
shared with every other printk_ratelimit() caller (10 lines per 5 s by default, then "kauditd_printk_skb: N
callbacks suppressed"), so a record can be dropped whenever the machine is busy. The multicast group gets
every record, in the order the kernel queued them, whether or not an audit daemon runs.
Exits by itself after --lifetime seconds (default 100) so that a lost test cannot leak it.
"""
import argparse
import os
import shlex
import signal
import socket
import struct
import sys

NETLINK_AUDIT = 9
AUDIT_NLGRP_READLOG = 1
NLMSG_HEADER = struct.Struct("=IHHII")  # length, type, flags, sequence, port id


def write_env(path: str, error: str) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"AUDIT_ERROR={shlex.quote(error)}\n")
    os.rename(tmp, path)


def records(datagram: bytes):
    """The (type, text) of each netlink message in one datagram."""
    offset = 0
    while offset + NLMSG_HEADER.size <= len(datagram):
        length, rtype, _, _, _ = NLMSG_HEADER.unpack_from(datagram, offset)
        if length < NLMSG_HEADER.size:
            break
        body = datagram[offset + NLMSG_HEADER.size:offset + length]
        yield rtype, body.split(b"\0", 1)[0].decode("utf-8", "replace")
        offset += (length + 3) & ~3  # NLMSG_ALIGN


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out_env")
    ap.add_argument("records")
    ap.add_argument("--lifetime", type=int, default=100)
    args = ap.parse_args()
    signal.signal(signal.SIGALRM, lambda *_: sys.exit(0))
    signal.alarm(args.lifetime)

    try:
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_AUDIT)
        sock.bind((0, 1 << (AUDIT_NLGRP_READLOG - 1)))
    except OSError as e:
        write_env(args.out_env, f"cannot join the audit multicast group (needs CAP_AUDIT_READ): {e.strerror}")
        return 0
    # A large buffer (SO_RCVBUFFORCE: root may exceed rmem_max), so a burst of records from other processes
    # cannot overflow it before this loop reads them.
    try:
        sock.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE
    except OSError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    write_env(args.out_env, "")

    with open(args.records, "a", buffering=1) as out:
        while True:
            try:
                datagram = sock.recv(1 << 16)
            except OSError as e:
                # ENOBUFS: records were lost; say so in the file, so a test that misses its record can tell why.
                out.write(f"0 audit-listen: {e.strerror}\n")
                continue
            for rtype, text in records(datagram):
                out.write(f"{rtype} {text}\n")


if __name__ == "__main__":
    sys.exit(main())
