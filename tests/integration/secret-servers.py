#!/usr/bin/python3
"""Host-side servers for the secret-* tests: each records what it received, so the test judges on the host.

    secret-servers.py OUT_ENV LOG [--http IP[:PORT]]... [--tls IP CERT KEY]... [--banner IP] [--keep-alive]
                      [--lifetime SECONDS]

--http IP[:PORT]      a plain HTTP server on PORT of IP (an ephemeral port if none)
--tls IP CERT KEY     an HTTPS server on an ephemeral port of IP with that certificate chain and key
--banner IP           a server that speaks first (an SMTP-like "220 banner" line), then echoes what it gets
--keep-alive          the HTTP servers speak HTTP/1.1 and keep a connection open for the next request, unless the
                      request says "Connection: close"
Every request (any method) is appended to LOG as one JSON line {"server": "http0"|"tls1"…, "method", "path",
"headers": [[name, value], …], "body", "connection": n (the how-manieth connection of its server it came on)} and
answered 200 with "recorded\n".

Writes HTTP_<n>_PORT, TLS_<n>_PORT and BANNER_PORT (n in the order given) to OUT_ENV atomically once every server
listens; exits by itself after --lifetime seconds (default 90).
"""
import argparse
import http.server
import itertools
import json
import os
import signal
import socket
import ssl
import sys
import threading

LOCK = threading.Lock()


def handler(name: str, log: str, keep_alive: bool):
    connections = itertools.count(1)

    class Recorder(http.server.BaseHTTPRequestHandler):
        if keep_alive:
            protocol_version = "HTTP/1.1"

        def setup(self):
            super().setup()
            self.connection_number = next(connections)

        def _record(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
            entry = {"server": name, "method": self.command, "path": self.path,
                     "headers": [[k, v] for k, v in self.headers.items()], "body": body,
                     "connection": self.connection_number}
            with LOCK, open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")
            answer = b"recorded\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        do_GET = do_POST = do_PUT = _record

        def log_message(self, *args):  # keep the test output clean
            pass

    return Recorder


def banner(ip: str):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((ip, 0))
    s.listen(16)

    def talk(c):
        with c:
            c.sendall(b"220 banner\r\n")
            while True:
                data = c.recv(4096)
                if not data:
                    return
                c.sendall(data)

    def accept():
        while True:
            c, _ = s.accept()
            threading.Thread(target=talk, args=(c,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return s.getsockname()[1]


def serve(server):
    threading.Thread(target=server.serve_forever, daemon=True).start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_env")
    ap.add_argument("log")
    ap.add_argument("--http", action="append", default=[])
    ap.add_argument("--tls", action="append", nargs=3, default=[])
    ap.add_argument("--banner")
    ap.add_argument("--keep-alive", action="store_true")
    ap.add_argument("--lifetime", type=int, default=90)
    a = ap.parse_args()
    lines = []
    for i, where in enumerate(a.http):
        ip, _, port = where.partition(":")
        s = http.server.ThreadingHTTPServer((ip, int(port or 0)), handler(f"http{i}", a.log, a.keep_alive))
        serve(s)
        lines.append(f"HTTP_{i}_PORT={s.server_address[1]}")
    for i, (ip, cert, key) in enumerate(a.tls):
        s = http.server.ThreadingHTTPServer((ip, 0), handler(f"tls{i}", a.log, a.keep_alive))
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        s.socket = ctx.wrap_socket(s.socket, server_side=True)
        serve(s)
        lines.append(f"TLS_{i}_PORT={s.server_address[1]}")
    if a.banner:
        lines.append(f"BANNER_PORT={banner(a.banner)}")
    tmp = a.out_env + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.rename(tmp, a.out_env)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    threading.Event().wait(a.lifetime)


if __name__ == "__main__":
    main()
