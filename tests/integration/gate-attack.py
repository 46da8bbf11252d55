#!/usr/bin/python3
"""Attacks on confine's connect gate, run inside the sandbox (`--net proxy`). Raw syscalls through ctypes where
Python's socket module would hide them (connect with AF_UNSPEC, sendmmsg, a sockaddr another process rewrites).

    gate-attack.py VERB ARGS...

Prints one line per attempt, "NAME RESULT", RESULT being OK[...] or the errno's name; the test judges on the host
what reached its servers. Verbs:

  connect HOST PORT [MODE]       one connect (MODE blocking, timeout or nonblock): "connect OK LOCALPORT" or
                                 "connect ERRNO"
  tunnel PORT                    a CONNECT tunnel through the proxy to 127.0.0.1:PORT: "tunnel OK LOCALPORT"
  loopback                       a server of the sandbox's own on 127.0.0.1: bind, listen, a blocking and a
                                 non-blocking client, bytes both ways
  reaim A B                      sockets connected to 127.0.0.1:A (host sockets put in place by confine), each
                                 turned by one trick towards 127.0.0.1:B
  listen A READY DONE            a dissolved host socket, bind + listen and listen alone; prints its port, creates
                                 READY, waits (at most 20 s) for DONE while anything that listened listens
  race-addr A B N                N connects of fresh sockets to one sockaddr that another process flips between
                                 ports A and B all the while
  race-dup2 A B N                N connects to B of a fresh socket at fd X, while a thread dup2()s a dissolved host
                                 socket over X in a loop
  udp NAME                       datagrams out (sendto, connect) and DNS to the stub for NAME
  semantics A                    non-blocking connect, poll, flags and options kept, getpeername
"""
import ctypes
import errno
import mmap
import os
import select
import socket
import struct
import sys
import threading
import time

libc = ctypes.CDLL(None, use_errno=True)
libc.connect.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32]
libc.syscall.restype = ctypes.c_long

MSG_FASTOPEN = 0x20000000
TCP_FASTOPEN_CONNECT = 30
TCP_REPAIR = 19
IPPROTO_MPTCP = 262
SYS_sendmmsg = 307  # x86_64
SYS_io_uring_setup = 425


def name(e: int) -> str:
    return errno.errorcode.get(e, str(e))


def result(fn) -> str:
    try:
        r = fn()
        return "OK" if r is None else f"OK {r}"
    except socket.gaierror:
        return "gaierror"
    except OSError as e:
        return name(e.errno) if e.errno else f"OSError {e}"


def sockaddr_in(ip: str, port: int) -> bytes:
    return struct.pack("=H", socket.AF_INET) + struct.pack("!H", port) + socket.inet_aton(ip) + b"\0" * 8


def raw_connect(fd: int, addr: bytes) -> None:
    buf = ctypes.create_string_buffer(addr, len(addr))
    if libc.connect(fd, buf, len(addr)) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def dissolve(s: socket.socket) -> None:
    """connect(AF_UNSPEC): the TCP connection is undone, the socket may be used again."""
    raw_connect(s.fileno(), struct.pack("=H", socket.AF_UNSPEC) + b"\0" * 14)


def host_socket(a: int) -> socket.socket:
    s = socket.socket()
    s.connect(("127.0.0.1", a))
    return s


def say(label: str, what: str) -> None:
    print(label, what, flush=True)


def cmd_connect(host: str, port: str, mode: str = "blocking") -> int:
    """blocking: a plain connect(); timeout: Python's connect with a timeout (non-blocking, then poll);
    nonblock: O_NONBLOCK, poll, SO_ERROR."""
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam)
    if mode == "nonblock":
        s.setblocking(False)
        try:
            s.connect((host, int(port)))
        except BlockingIOError:
            select.select([], [s], [], 10)
            err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                say("connect", name(err))
                return 0
        except OSError as e:
            say("connect", name(e.errno))
            return 0
        say("connect", f"OK {s.getsockname()[1]}")
        return 0
    if mode == "timeout":
        s.settimeout(10)
    say("connect", result(lambda: (s.connect((host, int(port))), s.getsockname()[1])[1]))
    return 0


def cmd_tunnel(port: str) -> int:
    """A CONNECT tunnel through the proxy to 127.0.0.1:PORT: "tunnel OK LOCALPORT" (the relay's control)."""
    s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
    s.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        c = s.recv(1)
        if not c:
            break
        head += c
    s.sendall(b"ping")
    say("tunnel", f"OK {s.getsockname()[1]}" if s.recv(4) == b"ping" else "FAILED")
    return 0


def cmd_loopback() -> int:
    for ip in ("127.0.0.1", "127.0.0.1", "::1"):
        fam = socket.AF_INET6 if ":" in ip else socket.AF_INET
        srv = socket.socket(fam)
        try:
            srv.bind((ip, 0))
        except OSError as e:
            say(f"bind-{ip}", name(e.errno))
            continue
        srv.listen(8)
        port = srv.getsockname()[1]
        say(f"server-{ip}", "OK")
        for mode in ("blocking", "nonblocking"):
            c = socket.socket(fam)
            try:
                if mode == "blocking":
                    c.settimeout(10)
                    c.connect((ip, port))
                else:
                    c.setblocking(False)
                    try:
                        c.connect((ip, port))
                    except BlockingIOError:
                        pass
                    select.select([], [c], [], 10)
                    err = c.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    if err:
                        raise OSError(err, os.strerror(err))
                    c.setblocking(True)
                    c.settimeout(10)
                peer, _ = srv.accept()
                c.sendall(b"ping")
                got = peer.recv(4)
                peer.sendall(b"pong")
                back = c.recv(4)
                say(f"client-{mode}-{ip}", "OK" if (got, back) == (b"ping", b"pong") else f"BAD {got!r} {back!r}")
            except OSError as e:
                say(f"client-{mode}-{ip}", name(e.errno))
            c.close()
        srv.close()
    return 0


def cmd_reaim(a: str, b: str) -> int:
    A, B = int(a), int(b)
    to_b = ("127.0.0.1", B)

    # Still connected to A: connect again to B.
    s = host_socket(A)
    say("connected-connect-B", result(lambda: s.connect(to_b)))

    # Dissolved, then connected to B.
    s = host_socket(A)
    say("unspec", result(lambda: dissolve(s)))
    say("unspec-connect-B", result(lambda: s.connect(to_b)))
    say("unspec-connect-B-raw", result(lambda: raw_connect(s.fileno(), sockaddr_in("127.0.0.1", B))))
    # ...as an IPv4-mapped IPv6 address and as 0.0.0.0 (the kernel's "this host")
    s = host_socket(A)
    dissolve(s)
    say("unspec-connect-B-any", result(lambda: s.connect(("0.0.0.0", B))))

    # Dissolved, then bound and listened on (a port of the host's), and listened on unbound (an ephemeral port).
    s = host_socket(A)
    dissolve(s)
    say("unspec-bind", result(lambda: s.bind(("127.0.0.1", 0))))
    say("unspec-listen", result(lambda: s.listen(8)))

    # Fast Open: a connection made by the first send, on a dissolved host socket and on a fresh one.
    s = host_socket(A)
    dissolve(s)
    say("unspec-sendto-fastopen-B", result(lambda: s.sendto(b"fastopen", MSG_FASTOPEN, to_b)))
    say("unspec-sendmsg-fastopen-B", result(lambda: s.sendmsg([b"fastopen"], [], MSG_FASTOPEN, to_b)))
    say("unspec-sendmmsg-fastopen-B", result(lambda: sendmmsg_fastopen(s.fileno(), B)))
    say("unspec-sendto-fastopen-noaddr", result(lambda: s.send(b"fastopen", MSG_FASTOPEN)))
    f = socket.socket()
    say("fresh-sendto-fastopen-B", result(lambda: f.sendto(b"fastopen", MSG_FASTOPEN, to_b)))
    say("fresh-sendmsg-fastopen-B", result(lambda: f.sendmsg([b"fastopen"], [], MSG_FASTOPEN, to_b)))

    # TCP_FASTOPEN_CONNECT: connect() defers the SYN to the first write.
    s = host_socket(A)
    dissolve(s)
    say("unspec-tfo-setsockopt", result(lambda: s.setsockopt(socket.IPPROTO_TCP, TCP_FASTOPEN_CONNECT, 1)))
    say("unspec-tfo-connect-B", result(lambda: s.connect(to_b)))
    say("unspec-tfo-write", result(lambda: s.send(b"tfo")))
    f = socket.socket()
    say("fresh-tfo-setsockopt", result(lambda: f.setsockopt(socket.IPPROTO_TCP, TCP_FASTOPEN_CONNECT, 1)))
    say("fresh-tfo-connect-B", result(lambda: f.connect(to_b)))
    say("fresh-tfo-write", result(lambda: f.send(b"tfo")))
    # Options confine has no business letting the sandbox set on a host socket.
    s = host_socket(A)
    say("tcp-repair", result(lambda: s.setsockopt(socket.IPPROTO_TCP, TCP_REPAIR, 1)))
    say("bindtodevice", result(lambda: s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b"lo")))

    # sendto with B's address on the socket connected to A: the data must go to A (the echo comes back).
    s = host_socket(A)
    s.settimeout(10)
    def sendto_connected():
        s.sendto(b"for-B", to_b)
        return s.recv(5).decode()
    say("connected-sendto-B", result(sendto_connected))

    # dup2 over another number, dissolved and connected there.
    s = host_socket(A)
    other = socket.socket()
    os.dup2(s.fileno(), other.fileno())
    say("dup2-unspec", result(lambda: dissolve(other)))
    say("dup2-connect-B", result(lambda: other.connect(to_b)))
    say("dup2-listen", result(lambda: other.listen(8)))

    # Passed to another process over SCM_RIGHTS, which tries the same.
    s = host_socket(A)
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:
        left.close()
        msg, fds, _, _ = socket.recv_fds(right, 16, 1)
        t = socket.socket(fileno=fds[0])
        lines = [
            ("scm-connect-B", result(lambda: t.connect(to_b))),
            ("scm-unspec", result(lambda: dissolve(t))),
            ("scm-unspec-connect-B", result(lambda: t.connect(to_b))),
            ("scm-unspec-listen", result(lambda: t.listen(8))),
            ("scm-unspec-sendto-fastopen-B", result(lambda: t.sendto(b"x", MSG_FASTOPEN, to_b))),
        ]
        right.sendall("".join(f"{k} {v}\n" for k, v in lines).encode())
        os._exit(0)
    right.close()
    socket.send_fds(left, [b"s"], [s.fileno()])
    data = b""
    while True:
        d = left.recv(4096)
        if not d:
            break
        data += d
    os.waitpid(pid, 0)
    sys.stdout.write(data.decode())

    # Other socket kinds the gate may take for something else.
    try:
        m = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
        m.settimeout(5)
        say("mptcp-connect-B", result(lambda: m.connect(to_b)))
    except OSError as e:
        say("mptcp-socket", name(e.errno))
    v6 = socket.socket(socket.AF_INET6)
    v6.settimeout(5)
    say("mapped-connect-B", result(lambda: v6.connect(("::ffff:127.0.0.1", B))))
    v4 = socket.socket()
    v4.settimeout(5)
    say("any-connect-B", result(lambda: v4.connect(("0.0.0.0", B))))
    say("io_uring_setup", name(ctypes.get_errno()) if libc.syscall(SYS_io_uring_setup, 8, ctypes.create_string_buffer(120)) < 0 else "OK")
    return 0


def sendmmsg_fastopen(fd: int, port: int) -> None:
    class iovec(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

    class msghdr(ctypes.Structure):
        _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32), ("iov", ctypes.POINTER(iovec)),
                    ("iovlen", ctypes.c_size_t), ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                    ("flags", ctypes.c_int)]

    class mmsghdr(ctypes.Structure):
        _fields_ = [("hdr", msghdr), ("len", ctypes.c_uint)]

    data = ctypes.create_string_buffer(b"fastopen")
    iov = iovec(ctypes.cast(data, ctypes.c_void_p), 8)
    addr = ctypes.create_string_buffer(sockaddr_in("127.0.0.1", port), 16)
    m = mmsghdr(msghdr(ctypes.cast(addr, ctypes.c_void_p), 16, ctypes.pointer(iov), 1, None, 0, 0), 0)
    if libc.syscall(SYS_sendmmsg, fd, ctypes.byref(m), 1, MSG_FASTOPEN) < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def cmd_listen(a: str, ready: str, done: str) -> int:
    A = int(a)
    held = []
    s = host_socket(A)
    dissolve(s)
    say("unspec-bind-any", result(lambda: s.bind(("0.0.0.0", 0))))
    say("unspec-listen", result(lambda: s.listen(8)))
    say("port", str(s.getsockname()[1]))
    held.append(s)
    s = host_socket(A)
    dissolve(s)
    say("unspec-listen-unbound", result(lambda: s.listen(8)))
    say("port", str(s.getsockname()[1]))
    held.append(s)
    open(ready, "w").close()
    for _ in range(200):
        if os.path.exists(done):
            break
        time.sleep(0.1)
    for s in held:  # a connection the host made, if any listened
        s.setblocking(False)
        say("accepted", result(lambda: s.accept()[1]))
    return 0


def cmd_race_addr(a: str, b: str, n: str) -> int:
    A, B, N = int(a), int(b), int(n)
    page = mmap.mmap(-1, 4096)  # shared with the child, which flips the port
    page[0:16] = sockaddr_in("127.0.0.1", A)
    pa, pb = struct.pack("!H", A), struct.pack("!H", B)
    pid = os.fork()
    if pid == 0:
        while page[100] == 0:
            page[2:4] = pb
            page[2:4] = pa
        os._exit(0)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(page))
    counts = {}
    for _ in range(N):
        s = socket.socket()
        e = 0 if libc.connect(s.fileno(), addr, 16) == 0 else ctypes.get_errno()
        counts[name(e) if e else "OK"] = counts.get(name(e) if e else "OK", 0) + 1
        if not e:
            counts["peer-" + str(s.getpeername()[1])] = counts.get("peer-" + str(s.getpeername()[1]), 0) + 1
        s.close()
    page[100] = 1
    os.waitpid(pid, 0)
    say("race-addr", " ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    return 0


def cmd_race_dup2(a: str, b: str, n: str) -> int:
    A, B, N = int(a), int(b), int(n)
    h = host_socket(A)
    dissolve(h)
    x = socket.socket()
    X = x.fileno()
    stop = threading.Event()

    def flipper():
        hf = h.fileno()
        while not stop.is_set():
            libc.dup2(hf, X)

    t = threading.Thread(target=flipper)
    t.start()
    addr = ctypes.create_string_buffer(sockaddr_in("127.0.0.1", B), 16)
    counts = {}
    for _ in range(N):
        f = socket.socket()
        libc.dup2(f.fileno(), X)
        f.close()
        e = 0 if libc.connect(X, addr, 16) == 0 else ctypes.get_errno()
        k = name(e) if e else "OK"
        counts[k] = counts.get(k, 0) + 1
    stop.set()
    t.join()
    say("race-dup2", " ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    return 0


def cmd_udp(allowed_name: str) -> int:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    say("udp-sendto", result(lambda: u.sendto(b"\0" * 12, ("10.1.2.3", 53)) and None))
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    say("udp-connect", result(lambda: u.connect(("10.1.2.3", 53))))
    say("getaddrinfo", result(lambda: socket.getaddrinfo(allowed_name, 80, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]))
    return 0


def cmd_semantics(a: str) -> int:
    A = int(a)
    # Non-blocking, close-on-exec, TCP_NODELAY, set before connect.
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    fd = s.fileno()
    rc = libc.connect(fd, ctypes.create_string_buffer(sockaddr_in("127.0.0.1", A), 16), 16)
    say("nonblock-connect", "0" if rc == 0 else name(ctypes.get_errno()))
    _, w, _ = select.select([], [s], [], 10)
    say("poll-writable", "OK" if w else "TIMEOUT")
    say("so-error", str(s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)))
    import fcntl
    say("o-nonblock", str(bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK)))
    say("fd-cloexec", str(bool(fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC)))
    say("tcp-nodelay", str(bool(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))))
    say("getpeername", "%s:%d" % s.getpeername())
    s.setblocking(True)
    s.settimeout(10)
    s.sendall(b"semantics")
    say("echo", s.recv(64).decode())
    # And the opposite: blocking, inheritable, Nagle on.
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    os.set_inheritable(s.fileno(), True)
    s.connect(("127.0.0.1", A))
    say("blocking-o-nonblock", str(bool(fcntl.fcntl(s.fileno(), fcntl.F_GETFL) & os.O_NONBLOCK)))
    say("blocking-fd-cloexec", str(bool(fcntl.fcntl(s.fileno(), fcntl.F_GETFD) & fcntl.FD_CLOEXEC)))
    say("blocking-tcp-nodelay", str(bool(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))))
    return 0


def main() -> int:
    verbs = {"connect": cmd_connect, "tunnel": cmd_tunnel, "loopback": cmd_loopback, "reaim": cmd_reaim, "listen": cmd_listen,
             "race-addr": cmd_race_addr, "race-dup2": cmd_race_dup2, "udp": cmd_udp, "semantics": cmd_semantics}
    if len(sys.argv) < 2 or sys.argv[1] not in verbs:
        print(__doc__, file=sys.stderr)
        return 2
    return verbs[sys.argv[1]](*sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
