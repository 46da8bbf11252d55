#!/usr/bin/python3
"""The client side of the proxy-* tests: run inside the sandbox (the proxy is at 127.0.0.1:3128 there), or on the
host as a control. Plain sockets, so every byte sent is the test's own. Prints one result line per check.

    proxy-client.py raw TEXT                  send TEXT (\\r\\n escapes) to the proxy, print the whole response
    proxy-client.py each TEXT...              one connection per TEXT; per response one line "STATUS => LAST-LINE"
    proxy-client.py tunnel HOST PORT [N]      CONNECT HOST:PORT, then N random bytes must come back (an echo server)
    proxy-client.py echo HOST PORT [N]        the same round trip on a direct connection (no proxy)
    proxy-client.py bulk tunnel|direct HOST PORT CLIENT-FIRST|SERVER-FIRST N
                                              N random bytes each way with a bulk server (proxy-servers.py --bulk),
                                              through a CONNECT tunnel or a direct connection, with a half-close:
                                              prints "BULK MODE SENT-SHA256 RECEIVED-COUNT RECEIVED-SHA256 CLAIMED-SHA256"
    proxy-client.py peek HOST PORT            a direct connection that sends nothing: what the first read gets
                                              ("DATA", "EOF", or the errno name of the error)
    proxy-client.py resolve NAME              getaddrinfo(NAME): "RESOLVED addr..." or "gaierror: ..." (exit 1)
    proxy-client.py dnsquery IP NAME          one raw DNS A query to IP:53: "ANSWER a.b.c.d" or the errno name
    proxy-client.py flood N                   N CONNECTs, one per connection, each to a different denied name;
                                              prints "FLOOD <403s> of N"
    proxy-client.py longflood N SIZE          N requests, one per connection, by turns a CONNECT whose SIZE-byte
                                              target has userinfo and two-byte characters (400) and a GET with a
                                              SIZE-byte method to a name not allowed (403); prints "LONGFLOOD <400s>
                                              <403s> of N", then, with $CONFINE_DENIALS, "DENIALS <lines> <longest
                                              line> <bytes>" of that file
    proxy-client.py hold N SECONDS            open N connections to the proxy (raising the soft descriptor limit
                                              first), hold them SECONDS, then print "HELD <opened>"
    proxy-client.py malformed HTTP_PORT ECHO_PORT
                                              the abuse battery of proxy-malformed (see there), one line per case

A connection error prints the errno name (like the probe) and exits 1. PC_TIMEOUT=SECONDS: how long a response may
take (default 10).
"""
import codecs
import hashlib
import errno
import os
import socket
import struct
import sys
import threading
import time

# PC_PROXY=IP:PORT names another proxy address (--net veth's is 10.77.0.1:3128).
_proxy = os.environ.get("PC_PROXY", "127.0.0.1:3128").rpartition(":")
PROXY = (_proxy[0], int(_proxy[2]))


def errname(e: OSError) -> str:
    return errno.errorcode.get(e.errno, str(e)) if e.errno else type(e).__name__


READ_TIMEOUT = float(os.environ.get("PC_TIMEOUT", "10"))


def read_all(s: socket.socket, timeout: float = READ_TIMEOUT) -> bytes:
    """Everything until EOF; a reset or timeout ends it with a marker."""
    s.settimeout(timeout)
    out = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                return out
            out += d
    except socket.timeout:
        return out + b"<TIMEOUT>"
    except OSError as e:
        return out + f"<{errname(e)}>".encode()


def read_head(s: socket.socket, timeout: float = 10.0) -> bytes:
    """The response head (through the blank line); whatever follows it stays in the returned tail."""
    s.settimeout(timeout)
    out = b""
    while b"\r\n\r\n" not in out:
        d = s.recv(4096)
        if not d:
            break
        out += d
    return out


def status_of(resp: bytes) -> str:
    if not resp:
        return "CLOSED"
    return resp.split(b"\r\n", 1)[0].decode("latin-1")


def connect(addr) -> socket.socket:
    return socket.create_connection(addr, timeout=10)


def roundtrip(s: socket.socket, n: int, tail: bytes = b"") -> str:
    payload = os.urandom(n)
    # Sent from a thread: a payload larger than the socket buffers would otherwise deadlock against its echo.
    sender = threading.Thread(target=s.sendall, args=(payload,))
    sender.start()
    chunks = [tail]
    have = len(tail)
    s.settimeout(10)
    while have < n:
        d = s.recv(1 << 20)
        if not d:
            break
        chunks.append(d)
        have += len(d)
    sender.join()
    got = b"".join(chunks)
    if got != payload:
        return f"MISMATCH sent {n} got {len(got)}"
    s.shutdown(socket.SHUT_WR)
    rest = read_all(s)
    return f"ROUNDTRIP-OK {n}" + ("" if not rest else f" then {rest!r}")


def cmd_raw(text: str) -> int:
    data = codecs.decode(text, "unicode_escape").encode("latin-1")
    s = connect(PROXY)
    s.sendall(data)
    sys.stdout.write(read_all(s).decode("latin-1"))
    return 0


def cmd_each(*texts: str) -> int:
    for text in texts:
        data = codecs.decode(text, "unicode_escape").encode("latin-1")
        try:
            s = connect(PROXY)
            s.sendall(data)
            resp = read_all(s).decode("latin-1")
        except OSError as e:
            print(f"client error {errname(e)}")
            continue
        lines = resp.rstrip("\n").split("\n")
        print(f"{status_of(resp.encode('latin-1'))} => {lines[-1].rstrip()}", flush=True)
    return 0


def cmd_tunnel(host: str, port: str, n: str = "65536") -> int:
    s = connect(PROXY)
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    s.sendall(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode())
    head = read_head(s)
    status = status_of(head)
    print(status)
    if not status.startswith("HTTP/1.1 200"):
        print(head.decode("latin-1"))
        return 1
    tail = head.split(b"\r\n\r\n", 1)[1]
    print(roundtrip(s, int(n), tail))
    return 0


def cmd_echo(host: str, port: str, n: str = "65536") -> int:
    s = connect((host, int(port)))
    print(roundtrip(s, int(n)))
    return 0


def open_tunnel(host: str, port: str) -> socket.socket:
    """A CONNECT tunnel with nothing of the payload read yet; exits 1 (printing the answer) if it is refused."""
    s = connect(PROXY)
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    s.sendall(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode())
    head = b""
    while not head.endswith(b"\r\n\r\n"):  # byte by byte: the server's bytes after the head stay in the socket
        c = s.recv(1)
        if not c:
            break
        head += c
    if not status_of(head).startswith("HTTP/1.1 200"):
        print(head.decode("latin-1"))
        sys.exit(1)
    return s


def cmd_bulk(via: str, host: str, port: str, mode: str, n: str) -> int:
    s = open_tunnel(host, port) if via == "tunnel" else connect((host, int(port)))
    s.settimeout(120)
    payload = os.urandom(int(n))
    s.sendall(f"{mode} {n}\n".encode())
    if mode == "CLIENT-FIRST":
        s.sendall(payload)
        s.shutdown(socket.SHUT_WR)  # our end of stream; the server's whole answer must still arrive
        reply = receive_reply(s)
    else:
        reply = receive_reply(s)  # to the server's end of stream; our bytes must still get through after it
        s.sendall(payload)
        s.shutdown(socket.SHUT_WR)
        s.recv(1)  # the server's close: it has read everything
    print("BULK", mode, hashlib.sha256(payload).hexdigest(), *reply, flush=True)
    return 0


def receive_reply(s: socket.socket):
    """The bulk server's "SHA256\n" and bytes, to its end of stream: (count, sha256 of them, the claimed sha256)."""
    data = b""
    while b"\n" not in data:
        c = s.recv(65536)
        if not c:
            break
        data += c
    claimed, _, rest = data.partition(b"\n")
    digest = hashlib.sha256(rest)
    count = len(rest)
    while True:
        c = s.recv(1 << 20)
        if not c:
            return count, digest.hexdigest(), claimed.decode()
        digest.update(c)
        count += len(c)


def cmd_peek(host: str, port: str) -> int:
    s = connect((host, int(port)))
    try:
        print("DATA" if s.recv(1) else "EOF")
    except socket.timeout:
        print("TIMEOUT")
    return 0


def cmd_resolve(name: str) -> int:
    try:
        infos = socket.getaddrinfo(name, 443, proto=socket.IPPROTO_TCP)
    except socket.gaierror as e:
        print(f"gaierror: {e}")
        return 1
    print("RESOLVED " + " ".join(sorted({i[4][0] for i in infos})))
    return 0


def cmd_dnsquery(ip: str, name: str) -> int:
    q = struct.pack("!HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0" + struct.pack("!HH", 1, 1)
    s = socket.socket(socket.AF_INET6 if ":" in ip else socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    s.sendto(q, (ip, 53))
    r = s.recv(4096)
    if len(r) >= 4 and r[-6:-4] == b"\x00\x04":
        print("ANSWER " + socket.inet_ntoa(r[-4:]))
    else:
        print(f"NO-ANSWER {r!r}")
    return 0


def cmd_malformed(http_port: str, echo_port: str) -> int:
    hp, ep = int(http_port), int(echo_port)

    def good() -> str:
        """An ordinary allowed request, between every abusive one: the proxy must keep serving."""
        try:
            s = connect(PROXY)
            s.sendall(f"GET http://127.0.0.1:{hp}/hello.txt HTTP/1.1\r\nHost: 127.0.0.1:{hp}\r\n\r\n".encode())
            resp = read_all(s)
        except OSError as e:
            return f"good request failed: {errname(e)}"
        return "served" if resp.endswith(b"\r\n\r\nhello through the proxy\n") else f"NOT SERVED {resp[:200]!r}"

    # Slowloris: an unfinished head, kept open for the whole battery; the proxy must close it about 10 s after it
    # connected. A thread waits for that, so the time is right however long the battery takes.
    slow = connect(PROXY)
    slow.sendall(b"GET http://127.0.0.1:" + str(hp).encode() + b"/hello.txt HTTP/1.1\r\nHost: 127.0.0.1")
    slow_start = time.monotonic()
    slow_end = {}

    def wait_slow():
        slow.settimeout(30)
        try:
            d = slow.recv(4096)
            slow_end["what"] = "closed" if not d else f"answered {status_of(d)}"
        except OSError as e:
            slow_end["what"] = f"ended with {errname(e)}"
        slow_end["after"] = time.monotonic() - slow_start

    waiter = threading.Thread(target=wait_slow)
    waiter.start()
    time.sleep(0.3)
    print(f"slowloris-started: good {good()}", flush=True)

    cases = [
        ("connect-userinfo", b"CONNECT user@evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n"),
        ("connect-port-at", b"CONNECT evil.example:443@evil HTTP/1.1\r\nHost: evil.example:443\r\n\r\n"),
        ("header-20k", b"GET http://127.0.0.1:%d/hello.txt HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Big: " % (hp, hp)
         + b"a" * 20000 + b"\r\n\r\n"),
        ("header-flood", b"GET http://127.0.0.1:%d/hello.txt HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % (hp, hp)
         + b"".join(b"X-Flood-%04d: y\r\n" % i for i in range(2000)) + b"\r\n"),
        ("not-http", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + os.urandom(64) + b"\r\n\r\n"),
        ("host-mismatch", b"GET http://127.0.0.1:%d/hello.txt HTTP/1.1\r\nHost: evil.example\r\n\r\n" % hp),
    ]
    for name, data in cases:
        try:
            s = connect(PROXY)
            s.sendall(data)
            status = status_of(read_all(s))
        except OSError as e:
            status = f"client error {errname(e)}"
        print(f"{name}: {status} | good {good()}", flush=True)

    # A client that half-closes right after its CONNECT (and a few bytes): the tunnel still answers, the echo comes
    # back, then the end of stream is passed on both ways.
    try:
        s = connect(PROXY)
        s.sendall(f"CONNECT 127.0.0.1:{ep} HTTP/1.1\r\nHost: 127.0.0.1:{ep}\r\n\r\nhalf-closed".encode())
        s.shutdown(socket.SHUT_WR)
        resp = read_all(s)
        head, _, rest = resp.partition(b"\r\n\r\n")
        result = f"{status_of(resp)} then {rest!r}"
    except OSError as e:
        result = f"client error {errname(e)}"
    print(f"half-close: {result} | good {good()}", flush=True)

    # A client that resets mid-tunnel (SO_LINGER 0) with data in flight.
    try:
        s = connect(PROXY)
        s.sendall(f"CONNECT 127.0.0.1:{ep} HTTP/1.1\r\nHost: 127.0.0.1:{ep}\r\n\r\n".encode())
        result = status_of(read_head(s))
        s.sendall(os.urandom(200000))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    except OSError as e:
        result = f"client error {errname(e)}"
    time.sleep(0.2)
    print(f"reset: {result} | good {good()}", flush=True)

    # Back to the slowloris: closed by the proxy about 10 s after it connected.
    waiter.join()
    print(f"slowloris: {slow_end['what']} after {slow_end['after']:.1f} s | good {good()}", flush=True)
    return 0


def cmd_flood(n: str) -> int:
    refused = 0
    for i in range(int(n)):
        with connect(PROXY) as s:
            s.sendall(f"CONNECT n{i}.denied.example:443 HTTP/1.1\r\n\r\n".encode())
            refused += status_of(read_head(s)).startswith("HTTP/1.1 403")
    print(f"FLOOD {refused} of {n}", flush=True)
    return 0


def cmd_longflood(n: str, size: str) -> int:
    size = int(size)
    statuses = {"400": 0, "403": 0}
    for i in range(int(n)):
        if i % 2 == 0:
            k = size // 4  # two-byte characters: half of the target
            target = "é".encode() * k + b"u" * (size - 2 * k - 6) + b"@x:443"
            request = b"CONNECT " + target + b" HTTP/1.1\r\n\r\n"
        else:
            request = b"M" * size + b" http://evil.example/ HTTP/1.1\r\nHost: evil.example\r\n\r\n"
        with connect(PROXY) as s:
            s.sendall(request)
            code = status_of(read_head(s)).split(" ")[1:2]
            if code and code[0] in statuses:
                statuses[code[0]] += 1
    print(f"LONGFLOOD {statuses['400']} {statuses['403']} of {n}", flush=True)
    path = os.environ.get("CONFINE_DENIALS")
    if path:
        with open(path, "rb") as f:
            lines = f.read().split(b"\n")[:-1]
        print(f"DENIALS {len(lines)} {max((len(l) + 1 for l in lines), default=0)} {sum(len(l) + 1 for l in lines)}",
              flush=True)
    return 0


def cmd_hold(n: str, seconds: str) -> int:
    import resource
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    held = []
    for _ in range(int(n)):
        try:
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(PROXY)  # completes in the kernel's accept queue whether or not the proxy accepts it
            held.append(s)
        except OSError:
            break
    time.sleep(float(seconds))
    print(f"HELD {len(held)}", flush=True)
    return 0


def main() -> int:
    verbs = {"raw": cmd_raw, "each": cmd_each, "tunnel": cmd_tunnel, "bulk": cmd_bulk, "echo": cmd_echo, "peek": cmd_peek, "resolve": cmd_resolve,
             "dnsquery": cmd_dnsquery, "malformed": cmd_malformed, "flood": cmd_flood, "longflood": cmd_longflood,
             "hold": cmd_hold}
    if len(sys.argv) < 2 or sys.argv[1] not in verbs:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        return verbs[sys.argv[1]](*sys.argv[2:])
    except OSError as e:
        print(errname(e))
        return 1


if __name__ == "__main__":
    sys.exit(main())
