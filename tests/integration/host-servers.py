#!/usr/bin/python3
"""Host-side servers that the network escape tests try to reach from inside the sandbox.

    host-servers.py OUT_ENV [--tcp IP]... [--udp IP]... [--abstract NAME]... [--unix PATH]... [--accept-log FILE]

Binds every requested listener (TCP and UDP on an ephemeral port of IP; UDP echoes each datagram back;
unix sockets accept and close; --accept-log gets one line per TCP connection accepted), then writes shell assignments (TCP_<n>_PORT=..., UDP_<n>_PORT=...,
n = 0, 1, ... in the order given) to OUT_ENV atomically, so the caller can poll for that file.
Exits by itself after --lifetime seconds (default 100) so that a lost test cannot leak it.
"""
import argparse
import os
import selectors
import signal
import socket
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out_env")
    ap.add_argument("--tcp", action="append", default=[])
    ap.add_argument("--udp", action="append", default=[])
    ap.add_argument("--abstract", action="append", default=[])
    ap.add_argument("--unix", action="append", default=[])
    ap.add_argument("--lifetime", type=int, default=100)
    ap.add_argument("--accept-log")
    args = ap.parse_args()

    signal.signal(signal.SIGALRM, lambda *_: sys.exit(0))
    signal.alarm(args.lifetime)

    sel = selectors.DefaultSelector()
    lines = []
    for i, ip in enumerate(args.tcp):
        fam = socket.AF_INET6 if ":" in ip else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((ip, 0))
        s.listen(16)
        sel.register(s, selectors.EVENT_READ, "accept")
        lines.append(f"TCP_{i}_PORT={s.getsockname()[1]}")
    for i, ip in enumerate(args.udp):
        fam = socket.AF_INET6 if ":" in ip else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.bind((ip, 0))
        sel.register(s, selectors.EVENT_READ, "echo")
        lines.append(f"UDP_{i}_PORT={s.getsockname()[1]}")
    for name in args.abstract:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind("\0" + name)
        s.listen(16)
        sel.register(s, selectors.EVENT_READ, "accept")
    for path in args.unix:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
        os.chmod(path, 0o777)  # the unprivileged variant's host-side control must be able to connect
        s.listen(16)
        sel.register(s, selectors.EVENT_READ, "accept")

    tmp = args.out_env + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.rename(tmp, args.out_env)

    while True:
        for key, _ in sel.select():
            sock = key.fileobj
            if key.data == "accept":
                conn, peer = sock.accept()
                if args.accept_log and sock.type == socket.SOCK_STREAM:
                    with open(args.accept_log, "a") as log:
                        log.write(f"accepted {peer}\n")
                conn.close()
            else:
                data, peer = sock.recvfrom(65536)
                sock.sendto(data, peer)


if __name__ == "__main__":
    sys.exit(main())
