#!/usr/bin/python3
"""Host-side servers for the proxy-* tests (what the sandbox reaches, or must not reach, through confine's proxy).

    proxy-servers.py OUT_ENV [--http IP DIR]... [--echo IP]... [--closed IP]... [--full IP]... [--dns IP]
                     [--dns-log LOG] [--bulk IP LOG]... [--lifetime SECONDS]

--http IP DIR  an HTTP/1.0 file server for DIR on an ephemeral port of IP (it closes each connection after the
               response, like many servers: the upstream side of a proxied request finishes first)
--echo IP      a TCP echo server on an ephemeral port of IP: echoes until EOF, then closes
--closed IP    a TCP port of IP that is bound but not listening: a connection there is refused (the port stays
               taken, so nothing else can start listening on it during the test)
--full IP      a TCP listener on IP whose accept queue is full and never served: the kernel drops every further
               SYN, so a connection there gets no answer at all (as behind a firewall that drops packets)
--bulk IP LOG  a TCP server on an ephemeral port of IP for large transfers with a half-close. The client sends one
               line, then:
                 "CLIENT-FIRST N": the client sends its bytes and shuts down its write side; the server reads to
                 the end, then answers "SHA256-OF-ITS-N-BYTES\n" and N random bytes, and closes;
                 "SERVER-FIRST N": the server sends "SHA256\n" and N random bytes and shuts down its write side at
                 once; the client, having read to the end, still sends its bytes, which the server reads to the end.
               Either way the server appends "MODE RECEIVED-COUNT RECEIVED-SHA256 SENT-SHA256" to LOG when done,
               so the test judges on the host what arrived.
--logged IP LOG  a TCP echo server on an ephemeral port of IP that appends "PEER-PORT\n" to LOG for each connection
               it accepts, so the test sees on the host who connected (and that nobody did)
--dns IP       a minimal DNS server on IP:53 (UDP): answers every A query with 192.0.2.99, others with no record
               (port 53 because resolv.conf has no port; DNS_PORT is left empty if it cannot be bound)
--dns-log LOG  the DNS server appends each query's name to LOG, one per line, so the test sees on the host which
               names were asked for

Writes shell assignments HTTP_<n>_PORT, ECHO_<n>_PORT, LOGGED_<n>_PORT, CLOSED_<n>_PORT, FULL_<n>_PORT, BULK_<n>_PORT (n = 0, 1,
... in the order given) and DNS_PORT to OUT_ENV
atomically, so the caller can poll for that file; exits by itself after --lifetime seconds (default 90) so that a
lost test cannot leak it.
"""
import argparse
import functools
import hashlib
import http.server
import os
import signal
import socket
import socketserver
import struct
import sys
import threading


def family(ip: str) -> int:
    return socket.AF_INET6 if ":" in ip else socket.AF_INET


class QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # noqa: D102 - keep the test output clean
        pass


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        try:
            while True:
                data = self.request.recv(65536)
                if not data:
                    break
                self.request.sendall(data)
        except OSError:  # a client that resets mid-stream
            pass


def receive_to_end(sock: socket.socket):
    """(count, sha256 hex) of everything until the peer's end of stream."""
    digest = hashlib.sha256()
    count = 0
    while True:
        data = sock.recv(1 << 20)
        if not data:
            return count, digest.hexdigest()
        digest.update(data)
        count += len(data)


def read_line(sock: socket.socket) -> str:
    """One line, byte by byte: nothing after it is consumed."""
    line = b""
    while not line.endswith(b"\n"):
        c = sock.recv(1)
        if not c:
            break
        line += c
    return line.decode()


class Logged(Echo):
    log = ""  # set per server

    def handle(self):
        with open(self.log, "a") as f:
            f.write(f"{self.client_address[1]}\n")
        super().handle()


class Bulk(socketserver.BaseRequestHandler):
    log = ""  # set per server
    log_lock = threading.Lock()

    def handle(self):
        sock = self.request
        sock.settimeout(120)
        mode, n = read_line(sock).split()
        payload = os.urandom(int(n))
        sent = hashlib.sha256(payload).hexdigest()
        if mode == "CLIENT-FIRST":
            count, received = receive_to_end(sock)  # the client's half-close ends this...
            sock.sendall(f"{sent}\n".encode() + payload)  # ...and the reply still reaches it
            sock.shutdown(socket.SHUT_WR)
        else:
            sock.sendall(f"{sent}\n".encode() + payload)
            sock.shutdown(socket.SHUT_WR)  # the client sees its end of stream, then still sends
            count, received = receive_to_end(sock)
        with self.log_lock, open(self.log, "a") as f:
            f.write(f"{mode} {count} {received} {sent}\n")


def tcp_server(ip: str, handler):
    class Server(socketserver.ThreadingTCPServer):
        address_family = family(ip)
        allow_reuse_address = True
        daemon_threads = True
        request_queue_size = 64

    return Server((ip, 0), handler)


def dns_answer(query: bytes) -> bytes:
    """The reply to one query: A -> 192.0.2.99, anything else -> NOERROR without answers."""
    if len(query) < 12:
        return b""
    qid = query[:2]
    i = 12
    while i < len(query) and query[i] != 0:
        i += 1 + query[i]
    question = query[12:i + 5]
    qtype = struct.unpack("!H", query[i + 1:i + 3])[0] if i + 3 <= len(query) else 0
    answers = b""
    if qtype == 1:
        answers = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 60, 4) + socket.inet_aton("192.0.2.99")
    header = qid + struct.pack("!HHHHH", 0x8180, 1, 1 if answers else 0, 0, 0)
    return header + question + answers


def closed_port(ip: str) -> socket.socket:
    s = socket.socket(family(ip), socket.SOCK_STREAM)
    s.bind((ip, 0))
    return s


def full_listener(ip: str) -> list:
    """A listener with a backlog of 0 and one connection queued: the queue is full from then on."""
    s = socket.socket(family(ip), socket.SOCK_STREAM)
    s.bind((ip, 0))
    s.listen(0)
    filler = socket.create_connection(s.getsockname()[:2], timeout=5)
    probe = socket.socket(family(ip), socket.SOCK_STREAM)
    probe.settimeout(1.5)
    try:
        probe.connect(s.getsockname()[:2])
        sys.exit("proxy-servers.py: --full: a second connection was answered; the queue is not full")
    except socket.timeout:
        pass
    probe.close()
    return [s, filler]


def query_name(query: bytes) -> str:
    labels, i = [], 12
    while i < len(query) and query[i] != 0:
        labels.append(query[i + 1:i + 1 + query[i]].decode("ascii", "replace"))
        i += 1 + query[i]
    return ".".join(labels)


def dns_loop(sock: socket.socket, log):
    while True:
        try:
            data, peer = sock.recvfrom(4096)
            if log:
                with open(log, "a") as f:
                    f.write(query_name(data) + "\n")
            reply = dns_answer(data)
            if reply:
                sock.sendto(reply, peer)
        except OSError:
            pass


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out_env")
    ap.add_argument("--http", nargs=2, action="append", default=[], metavar=("IP", "DIR"))
    ap.add_argument("--echo", action="append", default=[])
    ap.add_argument("--closed", action="append", default=[])
    ap.add_argument("--full", action="append", default=[])
    ap.add_argument("--bulk", nargs=2, action="append", default=[], metavar=("IP", "LOG"))
    ap.add_argument("--logged", nargs=2, action="append", default=[], metavar=("IP", "LOG"))
    ap.add_argument("--dns")
    ap.add_argument("--dns-log")
    ap.add_argument("--lifetime", type=int, default=90)
    args = ap.parse_args()

    signal.signal(signal.SIGALRM, lambda *_: os._exit(0))
    signal.alarm(args.lifetime)

    lines = []
    servers = []
    for i, (ip, directory) in enumerate(args.http):
        s = tcp_server(ip, functools.partial(QuietFiles, directory=directory))
        servers.append(s)
        lines.append(f"HTTP_{i}_PORT={s.server_address[1]}")
    for i, ip in enumerate(args.echo):
        s = tcp_server(ip, Echo)
        servers.append(s)
        lines.append(f"ECHO_{i}_PORT={s.server_address[1]}")
    for i, (ip, log) in enumerate(args.bulk):
        s = tcp_server(ip, type("BulkTo", (Bulk,), {"log": log}))
        servers.append(s)
        lines.append(f"BULK_{i}_PORT={s.server_address[1]}")
    for i, (ip, log) in enumerate(args.logged):
        s = tcp_server(ip, type("LoggedTo", (Logged,), {"log": log}))
        servers.append(s)
        lines.append(f"LOGGED_{i}_PORT={s.server_address[1]}")
    held = []  # sockets that must stay open for the test's lifetime
    for i, ip in enumerate(args.closed):
        held.append(closed_port(ip))
        lines.append(f"CLOSED_{i}_PORT={held[-1].getsockname()[1]}")
    for i, ip in enumerate(args.full):
        held += full_listener(ip)
        lines.append(f"FULL_{i}_PORT={held[-2].getsockname()[1]}")
    dns_port = ""
    if args.dns:
        try:
            d = socket.socket(family(args.dns), socket.SOCK_DGRAM)
            d.bind((args.dns, 53))
            threading.Thread(target=dns_loop, args=(d, args.dns_log), daemon=True).start()
            dns_port = "53"
        except OSError as e:
            print(f"proxy-servers.py: no DNS server on {args.dns}:53: {e}", file=sys.stderr)
    lines.append(f"DNS_PORT={dns_port}")

    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()

    tmp = args.out_env + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.rename(tmp, args.out_env)
    signal.pause()
    return 0


if __name__ == "__main__":
    sys.exit(main())
