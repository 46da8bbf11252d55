// proxybench.c — the server and the client of bench/proxy (see bench/README.md).
//
//   proxybench serve
//       Listens on 127.0.0.1 (an ephemeral port), prints "PORT n", and serves every connection in its own thread.
//       The first line a client sends decides what it gets:
//         "Z <bytes>\n"  that many zero bytes, then the server closes
//         "E\n"          everything after it is echoed back until the client closes
//       The server exits when its stdin reaches EOF (or after 900 s, a safety net).
//
//   proxybench minproxy
//       A minimal CONNECT proxy, the reference for what any user-space relay costs: listens on 127.0.0.1, prints
//       "PORT n"; per connection a thread reads the request head, connects to the `CONNECT 127.0.0.1:PORT` target,
//       answers 200, then copies each direction with blocking read()/write() of 64 KiB (one thread per direction,
//       the same buffer size as confine's relay). Exits when its stdin reaches EOF.
//
//   proxybench download PROXY_PORT TARGET_PORT BYTES
//       Connects to 127.0.0.1:PROXY_PORT and asks `CONNECT 127.0.0.1:TARGET_PORT` (PROXY_PORT 0: straight to the
//       target, no proxy), reads the 200, prints "READY", waits for a line on stdin, then asks for BYTES zeros and
//       times the download (from the request to the last byte). Prints "RESULT download bytes=.. ns=.. cpu_ns=..",
//       and waits for one more line on stdin before it exits, so that the caller can read the proxy's CPU time
//       around exactly the download.
//
//   proxybench latency PROXY_PORT TARGET_PORT N WARMUP
//       N+WARMUP times: socket(), connect() to the proxy, send the CONNECT request, read the response head. The span
//       from just before connect() to the end of the head is one sample (CLOCK_MONOTONIC). The tunnel is then
//       closed. With PROXY_PORT 0 the span is the bare connect() to the target (a floor for reference).
//       Prints "RESULT latency ns=s1,s2,..." (the WARMUP samples are dropped).
//
//   proxybench latency-self N WARMUP
//       `latency 0` to a server of its own: listens on 127.0.0.1 (an ephemeral port: inside a sandbox, on the
//       sandbox's own loopback), accepts and closes each connection in a thread, and times N+WARMUP bare connect()s
//       to it. Prints "RESULT latency ns=..." as `latency` does.
//
//   proxybench mingate TARGET_PORT N WARMUP [continue]
//       A minimal connect gate, the reference for what the seccomp user-notification mechanism itself costs: a child
//       installs a filter that hands every connect() to its parent (SECCOMP_RET_USER_NOTIF, NEW_LISTENER), passes the
//       listener up, and runs `latency 0 TARGET_PORT N WARMUP`. The parent answers each connect on one thread with
//       what confine's gate does at the least: receive the notification, pidfd_open + pidfd_getfd the caller's
//       socket, read the address with process_vm_readv, check the notification is still valid, make and connect a
//       socket itself, put it at the caller's descriptor number (SECCOMP_IOCTL_NOTIF_ADDFD with SETFD) and answer 0.
//       No decision, no other thread, no options carried over. With `continue` the parent only receives each
//       notification and answers SECCOMP_USER_NOTIF_FLAG_CONTINUE (the kernel then makes the connect itself, as
//       confine never lets it): the notification's round trip alone. The child prints the RESULT line.
//
//   proxybench concurrent PROXY_PORT TARGET_PORT N BYTES
//       Prints "BASE" and waits for a line on stdin; then opens N connections to the proxy, sends the N CONNECT
//       requests, reads the N responses, then through every tunnel sends BYTES and reads them back from the echo
//       server. With all N tunnels still open it prints "OPEN n ...", waits for a line on stdin, closes them, prints
//       "CLOSED" and waits for a last line on stdin.
//
// Every wait on stdin gives up after 120 s. Exit status 0, or 1 with a message on stderr.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char* what) {
  fprintf(stderr, "proxybench: %s: %s\n", what, strerror(errno));
  exit(1);
}
static void fail(const char* what) {
  fprintf(stderr, "proxybench: %s\n", what);
  exit(1);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
         ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
}

static void write_all(int fd, const void* p, size_t n) {
  const char* c = p;
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) die("write");
    c += w;
    n -= (size_t)w;
  }
}

static void read_exact(int fd, void* p, size_t n) {
  char* c = p;
  while (n > 0) {
    ssize_t r = read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) die("read");
    if (r == 0) fail("read: unexpected EOF");
    c += r;
    n -= (size_t)r;
  }
}

// Waits for one line on stdin (the harness's go-ahead).
static void wait_stdin(void) {
  struct pollfd p = {.fd = 0, .events = POLLIN};
  if (poll(&p, 1, 120000) <= 0) fail("no go-ahead on stdin within 120 s");
  char c;
  while (read(0, &c, 1) == 1 && c != '\n') {
  }
}

static int connect_lo(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket");
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr*)&a, sizeof a) < 0) die("connect");
  return fd;
}

static void send_connect(int fd, int target) {
  char req[128];
  int n = snprintf(req, sizeof req, "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", target, target);
  write_all(fd, req, (size_t)n);
}

// Reads the proxy's response head byte by byte (nothing follows it before the client speaks); checks for a 200.
static void read_head(int fd) {
  char head[2048];
  size_t n = 0;
  for (;;) {
    if (n == sizeof head - 1) fail("response head too long");
    ssize_t r = read(fd, head + n, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) die("read response head");
    if (r == 0) fail("the proxy closed the connection before answering");
    n++;
    if (n >= 4 && memcmp(head + n - 4, "\r\n\r\n", 4) == 0) break;
  }
  head[n] = 0;
  if (strncmp(head, "HTTP/1.", 7) != 0 || strncmp(head + 8, " 200", 4) != 0) {
    char* eol = strchr(head, '\r');
    if (eol) *eol = 0;
    fprintf(stderr, "proxybench: the proxy answered `%s`\n", head);
    exit(1);
  }
}

// A connection to NAME:port, resolved by the system's resolver (inside a sandbox: confine's DNS stub).
static int connect_name(const char* name, int port) {
  struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
  char service[16];
  snprintf(service, sizeof service, "%d", port);
  int rc = getaddrinfo(name, service, &hints, &res);
  if (rc != 0) {
    fprintf(stderr, "proxybench: cannot resolve %s: %s\n", name, gai_strerror(rc));
    exit(1);
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket");
  if (connect(fd, res->ai_addr, res->ai_addrlen) < 0) die("connect by name");
  freeaddrinfo(res);
  return fd;
}

static const char* by_name;  // "@NAME" as the proxy argument: no proxy, the target reached by this name

static int open_tunnel(int proxy, int target) {
  if (by_name != NULL) return connect_name(by_name, target);
  if (proxy == 0) return connect_lo(target);
  int fd = connect_lo(proxy);
  send_connect(fd, target);
  read_head(fd);
  return fd;
}

static void* minproxy_one(void* arg);

// ---- server ----

static char zeros[256 * 1024];

static void* serve_one(void* arg) {
  int fd = (int)(intptr_t)arg;
  char line[64];
  size_t n = 0;
  for (;;) {  // the request line
    if (n == sizeof line - 1) goto out;
    ssize_t r = read(fd, line + n, 1);
    if (r <= 0) goto out;
    if (line[n++] == '\n') break;
  }
  line[n] = 0;
  if (line[0] == 'Z') {
    unsigned long long left = strtoull(line + 1, NULL, 10);
    while (left > 0) {
      size_t k = left < sizeof zeros ? (size_t)left : sizeof zeros;
      ssize_t w = write(fd, zeros, k);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) goto out;
      left -= (unsigned long long)w;
    }
  } else if (line[0] == 'E') {
    char buf[64 * 1024];
    for (;;) {
      ssize_t r = read(fd, buf, sizeof buf);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      size_t off = 0;
      while (off < (size_t)r) {
        ssize_t w = write(fd, buf + off, (size_t)r - off);
        if (w <= 0) goto out;
        off += (size_t)w;
      }
    }
  }
out:
  close(fd);
  return NULL;
}

static void* (*conn_handler)(void*);  // serve_one or minproxy_one

static void* accept_loop(void* arg) {
  int lfd = (int)(intptr_t)arg;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  for (;;) {
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) {
        usleep(1000);
        continue;
      }
      die("accept");
    }
    pthread_t t;
    if (pthread_create(&t, &attr, conn_handler, (void*)(intptr_t)fd) != 0) close(fd);
  }
  return NULL;
}

static void* close_one(void* arg) {
  close((int)(intptr_t)arg);
  return NULL;
}

// Listens on 127.0.0.1 (an ephemeral port) and serves every connection with `handler` in its own thread, from a
// thread of its own. Returns the port.
static int start_server(void* (*handler)(void*)) {
  conn_handler = handler;
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (lfd < 0) die("socket");
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(lfd, (struct sockaddr*)&a, sizeof a) < 0) die("bind");
  if (listen(lfd, 1024) < 0) die("listen");
  socklen_t len = sizeof a;
  if (getsockname(lfd, (struct sockaddr*)&a, &len) < 0) die("getsockname");
  pthread_t t;
  if (pthread_create(&t, NULL, accept_loop, (void*)(intptr_t)lfd) != 0) fail("pthread_create");
  return ntohs(a.sin_port);
}

// start_server, prints "PORT n", and returns when stdin reaches EOF.
static int listen_and_serve(void* (*handler)(void*)) {
  printf("PORT %d\n", start_server(handler));
  fflush(stdout);
  alarm(900);
  char buf[256];
  while (read(0, buf, sizeof buf) > 0) {
  }
  return 0;
}

// ---- minproxy ----

struct half {
  int from, to;
};

static void* relay_half(void* arg) {
  struct half* h = arg;
  char* buf = malloc(64 * 1024);
  if (buf) {
    for (;;) {
      ssize_t r = read(h->from, buf, 64 * 1024);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      size_t off = 0;
      while (off < (size_t)r) {
        ssize_t w = write(h->to, buf + off, (size_t)r - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) goto out;
        off += (size_t)w;
      }
    }
  }
out:
  free(buf);
  shutdown(h->to, SHUT_WR);
  shutdown(h->from, SHUT_RD);
  return NULL;
}

static int say(int fd, const char* s) {
  size_t n = strlen(s);
  return write(fd, s, n) == (ssize_t)n;
}

static void* minproxy_one(void* arg) {
  int c = (int)(intptr_t)arg, u = -1;
  char head[2048];
  size_t n = 0;
  for (;;) {
    if (n == sizeof head - 1) goto out;
    ssize_t r = read(c, head + n, 1);
    if (r <= 0) goto out;
    n++;
    if (n >= 4 && memcmp(head + n - 4, "\r\n\r\n", 4) == 0) break;
  }
  head[n] = 0;
  int port = 0;
  if (sscanf(head, "CONNECT 127.0.0.1:%d ", &port) != 1 || port <= 0 || port > 65535) {
    say(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    goto out;
  }
  u = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (u < 0 || connect(u, (struct sockaddr*)&a, sizeof a) < 0) {
    say(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
    goto out;
  }
  if (!say(c, "HTTP/1.1 200 Connection established\r\n\r\n")) goto out;
  struct half up = {c, u}, down = {u, c};
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  if (pthread_create(&t, &attr, relay_half, &up) != 0) goto out;
  relay_half(&down);
  pthread_join(t, NULL);
out:
  if (u >= 0) close(u);
  close(c);
  return NULL;
}

// ---- clients ----

static int cmd_download(int proxy, int target, unsigned long long bytes) {
  int fd = open_tunnel(proxy, target);
  printf("READY\n");
  fflush(stdout);
  wait_stdin();
  static char buf[256 * 1024];
  char req[64];
  int n = snprintf(req, sizeof req, "Z %llu\n", bytes);
  uint64_t c0 = cpu_ns(), t0 = now_ns();
  write_all(fd, req, (size_t)n);
  unsigned long long got = 0;
  while (got < bytes) {
    ssize_t r = read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) die("read");
    if (r == 0) break;
    got += (unsigned long long)r;
  }
  uint64_t t1 = now_ns(), c1 = cpu_ns();
  if (got != bytes) {
    fprintf(stderr, "proxybench: download ended after %llu of %llu bytes\n", got, bytes);
    return 1;
  }
  printf("RESULT download bytes=%llu ns=%llu cpu_ns=%llu\n", got, (unsigned long long)(t1 - t0),
         (unsigned long long)(c1 - c0));
  fflush(stdout);
  wait_stdin();
  close(fd);
  return 0;
}

static int cmd_latency(int proxy, int target, int iters, int warmup) {
  uint64_t* s = calloc((size_t)iters, sizeof *s);
  if (!s) fail("out of memory");
  for (int i = 0; i < iters + warmup; i++) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket");
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)(proxy ? proxy : target))};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    uint64_t t0 = now_ns();
    if (connect(fd, (struct sockaddr*)&a, sizeof a) < 0) die("connect");
    if (proxy) {
      send_connect(fd, target);
      read_head(fd);
    }
    uint64_t t1 = now_ns();
    close(fd);
    if (i >= warmup) s[i - warmup] = t1 - t0;
  }
  printf("RESULT latency ns=");
  for (int i = 0; i < iters; i++) printf("%s%llu", i ? "," : "", (unsigned long long)s[i]);
  printf("\n");
  return 0;
}

static int cmd_concurrent(int proxy, int target, int n, size_t bytes) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)n + 64) {
    rl.rlim_cur = rl.rlim_max < (rlim_t)n + 64 ? rl.rlim_max : (rlim_t)n + 64;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  printf("BASE\n");
  fflush(stdout);
  wait_stdin();
  int* fds = calloc((size_t)n, sizeof *fds);
  char* out = malloc(bytes);
  char* in = malloc(bytes);
  if (!fds || !out || !in) fail("out of memory");
  for (size_t i = 0; i < bytes; i++) out[i] = (char)('a' + i % 26);
  uint64_t t0 = now_ns();
  for (int i = 0; i < n; i++) {  // all connections first, then all requests, then all answers: n tunnels at once
    fds[i] = connect_lo(proxy ? proxy : target);
  }
  if (proxy)
    for (int i = 0; i < n; i++) send_connect(fds[i], target);
  if (proxy)
    for (int i = 0; i < n; i++) read_head(fds[i]);
  uint64_t t1 = now_ns();
  for (int i = 0; i < n; i++) write_all(fds[i], "E\n", 2);
  for (int i = 0; i < n; i++) write_all(fds[i], out, bytes);
  for (int i = 0; i < n; i++) {
    read_exact(fds[i], in, bytes);
    if (memcmp(in, out, bytes) != 0) fail("the echo came back different");
  }
  uint64_t t2 = now_ns();
  printf("OPEN %d setup_ns=%llu exchange_ns=%llu\n", n, (unsigned long long)(t1 - t0), (unsigned long long)(t2 - t1));
  fflush(stdout);
  wait_stdin();
  for (int i = 0; i < n; i++) close(fds[i]);
  printf("CLOSED\n");
  fflush(stdout);
  wait_stdin();
  return 0;
}

// ---- mingate ----

#if defined(__x86_64__)
#define GATE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define GATE_ARCH AUDIT_ARCH_AARCH64
#endif

static void send_fd(int sock, int fd) {
  char c = 0;
  struct iovec iov = {&c, 1};
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int))];
  } u;
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
  struct cmsghdr* h = CMSG_FIRSTHDR(&m);
  h->cmsg_level = SOL_SOCKET;
  h->cmsg_type = SCM_RIGHTS;
  h->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(h), &fd, sizeof fd);
  if (sendmsg(sock, &m, 0) != 1) die("sendmsg");
}

static int recv_fd(int sock) {
  char c;
  struct iovec iov = {&c, 1};
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int))];
  } u;
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
  if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1) die("recvmsg");
  struct cmsghdr* h = CMSG_FIRSTHDR(&m);
  if (!h || h->cmsg_type != SCM_RIGHTS) fail("no descriptor came");
  int fd;
  memcpy(&fd, CMSG_DATA(h), sizeof fd);
  return fd;
}

// One notification answered as confine's gate answers an allowed connect to the host, at the least (or, with
// `cont`, let through).
static void mingate_answer(int listener, int cont) {
  struct seccomp_notif req;
  memset(&req, 0, sizeof req);
  if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) return;  // ENOENT: the caller was interrupted
  struct seccomp_notif_resp resp = {.id = req.id};
  if (cont) {
    resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
    return;
  }
  int pidfd = (int)syscall(SYS_pidfd_open, req.pid, 0), theirs = -1, mine = -1;
  struct sockaddr_storage to;
  socklen_t len = (socklen_t)req.data.args[2];
  if (pidfd < 0 || len > sizeof to) {
    resp.error = -EPERM;
    goto answer;
  }
  theirs = (int)syscall(SYS_pidfd_getfd, pidfd, (int)req.data.args[0], 0);
  struct iovec local = {&to, len}, remote = {(void*)(uintptr_t)req.data.args[1], len};
  if (theirs < 0 || process_vm_readv((pid_t)req.pid, &local, 1, &remote, 1, 0) != (ssize_t)len) {
    resp.error = -EFAULT;
    goto answer;
  }
  if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req.id) < 0) goto out;  // gone: nobody to answer
  mine = socket(to.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (mine < 0 || connect(mine, (struct sockaddr*)&to, len) < 0) {
    resp.error = -errno;
    goto answer;
  }
  struct seccomp_notif_addfd add = {.id = req.id, .flags = SECCOMP_ADDFD_FLAG_SETFD, .srcfd = (uint32_t)mine,
                                    .newfd = (uint32_t)req.data.args[0], .newfd_flags = O_CLOEXEC};
  if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0) resp.error = -ECONNABORTED;
answer:
  ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
out:
  if (mine >= 0) close(mine);
  if (theirs >= 0) close(theirs);
  if (pidfd >= 0) close(pidfd);
}

static int cmd_mingate(int target, int iters, int warmup, int cont) {
#ifndef GATE_ARCH
  (void)target, (void)iters, (void)warmup, (void)cont;
  fail("mingate: no seccomp architecture known for this build");
  return 1;
#else
  int sp[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) die("socketpair");
  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    close(sp[0]);
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, GATE_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_connect, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof code / sizeof code[0], .filter = code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) die("PR_SET_NO_NEW_PRIVS");
    int listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    if (listener < 0) die("seccomp");
    send_fd(sp[1], listener);
    close(listener);
    close(sp[1]);
    exit(cmd_latency(0, target, iters, warmup));
  }
  close(sp[1]);
  int listener = recv_fd(sp[0]);
  close(sp[0]);
  for (;;) {  // until no process holds the filter any more (POLLHUP)
    struct pollfd p = {.fd = listener, .events = POLLIN};
    if (poll(&p, 1, 120000) <= 0) fail("mingate: no notification within 120 s");
    if (p.revents & POLLIN) mingate_answer(listener, cont);
    else if (p.revents & (POLLHUP | POLLERR | POLLNVAL)) break;
  }
  int status;
  if (waitpid(child, &status, 0) < 0) die("waitpid");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
#endif
}

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc == 2 && strcmp(argv[1], "serve") == 0) return listen_and_serve(serve_one);
  if (argc == 2 && strcmp(argv[1], "minproxy") == 0) return listen_and_serve(minproxy_one);
  if (argc >= 3 && argv[2][0] == '@') by_name = argv[2] + 1;
  if (argc == 5 && strcmp(argv[1], "download") == 0)
    return cmd_download(atoi(argv[2]), atoi(argv[3]), strtoull(argv[4], NULL, 10));
  if (argc == 4 && strcmp(argv[1], "latency-self") == 0)
    return cmd_latency(0, start_server(close_one), atoi(argv[2]), atoi(argv[3]));
  if ((argc == 5 || (argc == 6 && strcmp(argv[5], "continue") == 0)) && strcmp(argv[1], "mingate") == 0)
    return cmd_mingate(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), argc == 6);
  if (argc == 6 && strcmp(argv[1], "latency") == 0)
    return cmd_latency(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
  if (argc == 6 && strcmp(argv[1], "concurrent") == 0)
    return cmd_concurrent(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), (size_t)strtoull(argv[5], NULL, 10));
  fprintf(stderr,
          "usage: proxybench serve | minproxy | download PROXY|@NAME TARGET BYTES | latency PROXY TARGET N WARMUP |"
          " latency-self N WARMUP | mingate TARGET N WARMUP [continue] | concurrent PROXY TARGET N BYTES\n");
  return 2;
}
