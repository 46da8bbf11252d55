#!/usr/bin/python3
"""Both ends of a published-port test: a TCP server run inside the sandbox, and a client run on the host.

    publish-peer.py serve PORT READY HOST_PORT...  (inside) count the sockets it was started with, connect to
        127.0.0.1:HOST_PORT for each HOST_PORT (the host's own ports: from inside they must fail), and write
        "sockets=N ERRNO..." to READY once listening on 127.0.0.1:PORT. Then serve ONE connection: read until the client's half-close, answer
        "GOT <bytes> <sha256>\n" and as many bytes back (a pattern), and exit.
    publish-peer.py send ADDR PORT BYTES  (host) send BYTES bytes, half-close, check the answer: prints OK
    publish-peer.py read ADDR PORT  (host) connect and read: prints what came before the end of stream, or the errno
        name (ECONNRESET for a reset)
    publish-peer.py connect ADDR PORT  (host) prints OK, or the errno name of the failed connect
    publish-peer.py bind ADDR PORT  (host) prints OK when the port can be listened on (nothing holds it)
"""
import errno
import hashlib
import os
import socket
import sys


def pattern(n: int, seed: int) -> bytes:
    block = bytes((i * seed + 7) % 251 for i in range(65536))
    return (block * (n // len(block) + 1))[:n]


def errno_name(e: OSError) -> str:
    return errno.errorcode.get(e.errno or 0) or type(e).__name__  # a timeout has no errno


def inherited_sockets() -> int:
    """Sockets the command was started with: a listener of confine's on the host would be one."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:
            pass  # the directory's own fd, closed once listed
    return count


def serve(port: int, ready: str, host_ports: list[str]) -> None:
    tries = [f"sockets={inherited_sockets()}"]
    for hp in host_ports:
        try:
            socket.create_connection(("127.0.0.1", int(hp)), timeout=5).close()
            tries.append("CONNECTED")
        except OSError as e:
            tries.append(errno_name(e))
    s = socket.socket()
    s.bind(("127.0.0.1", port))
    s.listen(4)
    with open(ready + ".tmp", "w") as f:
        f.write(" ".join(tries) + "\n")
    os.rename(ready + ".tmp", ready)
    c, _ = s.accept()
    digest, n = hashlib.sha256(), 0
    while True:
        chunk = c.recv(1 << 16)
        if not chunk:  # the client's half-close, passed on
            break
        digest.update(chunk)
        n += len(chunk)
    c.sendall(f"GOT {n} {digest.hexdigest()}\n".encode() + pattern(n, 13))
    c.close()


def send(addr: str, port: int, n: int) -> str:
    body = pattern(n, 5)
    c = socket.create_connection((addr, port), timeout=30)
    c.sendall(body)
    c.shutdown(socket.SHUT_WR)
    got = bytearray()
    while True:
        chunk = c.recv(1 << 16)
        if not chunk:
            break
        got += chunk
    head, _, rest = bytes(got).partition(b"\n")
    want = f"GOT {n} {hashlib.sha256(body).hexdigest()}".encode()
    if head != want:
        return f"BAD-HEAD {head[:100]!r}"
    if rest != pattern(n, 13):
        return f"BAD-BODY {len(rest)} bytes"
    return "OK"


def read_some(addr: str, port: int) -> str:
    c = socket.create_connection((addr, port), timeout=30)
    return f"EOF {c.recv(100)!r}"


def main() -> int:
    verb, args = sys.argv[1], sys.argv[2:]
    if verb == "serve":
        serve(int(args[0]), args[1], args[2:])
        return 0
    try:
        if verb == "send":
            print(send(args[0], int(args[1]), int(args[2])))
        elif verb == "read":
            print(read_some(args[0], int(args[1])))
        elif verb == "connect":
            socket.create_connection((args[0], int(args[1])), timeout=5).close()
            print("OK")
        elif verb == "bind":
            fam = socket.AF_INET6 if ":" in args[0] else socket.AF_INET
            s = socket.socket(fam)
            s.bind((args[0], int(args[1])))
            s.listen(1)
            print("OK")
    except OSError as e:
        print(errno_name(e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
