/*
 * confine-test-probe: a multi-call helper that the integration tests run *inside* the sandbox.
 *
 * Each verb tries one operation.  On success it prints one line starting with "OK" (plus any data
 * the test needs) and exits 0.  On failure it prints the errno *name* alone (e.g. "EACCES") and
 * exits 1, so a test can assert the specific reason.  Usage errors print to stderr and exit 2.
 *
 * Plain C, no dependencies; linked statically when the toolchain allows so that it runs with any
 * (or no) /usr inside the sandbox.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/kd.h>
#include <linux/seccomp.h>
#include <linux/vt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

enum { kExitOk = 0, kExitFailed = 1, kExitUsage = 2 };

static int fail_errno(int err)
{
    const char *name = strerrorname_np(err);
    if (name)
        printf("%s\n", name);
    else
        printf("E%d\n", err);
    return kExitFailed;
}

static int usage(const char *msg)
{
    fprintf(stderr, "confine-test-probe: %s\n", msg);
    return kExitUsage;
}

static long parse_long(const char *s, int *ok)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    *ok = (errno == 0 && end != s && *end == '\0');
    return v;
}

/* Print "OK <bytes> <excerpt>" where excerpt is the first line of data, non-printables as '?'. */
static void print_ok_data(const char *buf, size_t len, size_t total)
{
    printf("OK %zu", total);
    if (len > 0)
        putchar(' ');
    for (size_t i = 0; i < len && i < 200; i++) {
        if (buf[i] == '\n')
            break;
        putchar(isprint((unsigned char)buf[i]) ? buf[i] : '?');
    }
    putchar('\n');
}

static int read_all_fd(int fd)
{
    char first[256];
    size_t first_len = 0, total = 0;
    char buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return fail_errno(errno);
        }
        if (n == 0)
            break;
        if (first_len < sizeof first) {
            size_t take = sizeof first - first_len;
            if ((size_t)n < take)
                take = (size_t)n;
            memcpy(first + first_len, buf, take);
            first_len += take;
        }
        total += (size_t)n;
    }
    print_ok_data(first, first_len, total);
    return kExitOk;
}

static int verb_read(int argc, char **argv)
{
    if (argc != 1)
        return usage("read PATH");
    int fd = open(argv[0], O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail_errno(errno);
    int rc = read_all_fd(fd);
    close(fd);
    return rc;
}

static int verb_read_fd(int argc, char **argv)
{
    int ok;
    if (argc != 1)
        return usage("read-fd N");
    long fd = parse_long(argv[0], &ok);
    if (!ok || fd < 0)
        return usage("read-fd: bad fd");
    if (fcntl((int)fd, F_GETFD) < 0)
        return fail_errno(errno);
    return read_all_fd((int)fd);
}

/* write PATH [CONTENT]: create or truncate PATH and write CONTENT (default "confine-probe\n"). */
static int verb_write(int argc, char **argv)
{
    if (argc < 1 || argc > 2)
        return usage("write PATH [CONTENT]");
    const char *content = argc == 2 ? argv[1] : "confine-probe\n";
    int fd = open(argv[0], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return fail_errno(errno);
    size_t len = strlen(content), off = 0;
    while (off < len) {
        ssize_t n = write(fd, content + off, len - off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int err = errno;
            close(fd);
            return fail_errno(err);
        }
        off += (size_t)n;
    }
    if (close(fd) < 0)
        return fail_errno(errno);
    printf("OK\n");
    return kExitOk;
}

static int verb_mkdir(int argc, char **argv)
{
    if (argc != 1)
        return usage("mkdir PATH");
    if (mkdir(argv[0], 0755) < 0)
        return fail_errno(errno);
    printf("OK\n");
    return kExitOk;
}

static int verb_unlink(int argc, char **argv)
{
    if (argc != 1)
        return usage("unlink PATH");
    if (unlink(argv[0]) < 0)
        return fail_errno(errno);
    printf("OK\n");
    return kExitOk;
}

/* stat PATH: "OK uid=U gid=G mode=0MODE type=file|dir|link|other size=N" (lstat, no following). */
static int verb_stat(int argc, char **argv)
{
    struct stat st;
    if (argc != 1)
        return usage("stat PATH");
    if (lstat(argv[0], &st) < 0)
        return fail_errno(errno);
    const char *type = S_ISREG(st.st_mode) ? "file"
                       : S_ISDIR(st.st_mode) ? "dir"
                       : S_ISLNK(st.st_mode) ? "link"
                       : S_ISCHR(st.st_mode) ? "chr"
                                             : "other";
    printf("OK uid=%u gid=%u mode=%04o type=%s size=%lld\n", (unsigned)st.st_uid, (unsigned)st.st_gid,
           (unsigned)(st.st_mode & 07777), type, (long long)st.st_size);
    return kExitOk;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ls DIR: "OK N name1 name2 ..." sorted, without . and .. */
static int verb_ls(int argc, char **argv)
{
    if (argc != 1)
        return usage("ls DIR");
    DIR *d = opendir(argv[0]);
    if (!d)
        return fail_errno(errno);
    char *names[1024];
    size_t n = 0;
    struct dirent *e;
    errno = 0;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (n < sizeof names / sizeof names[0])
            names[n++] = strdup(e->d_name);
    }
    int err = errno;
    closedir(d);
    if (err)
        return fail_errno(err);
    qsort(names, n, sizeof names[0], cmp_str);
    printf("OK %zu", n);
    for (size_t i = 0; i < n; i++) {
        printf(" %s", names[i]);
        free(names[i]);
    }
    putchar('\n');
    return kExitOk;
}

/* Parse IPv4 or IPv6 literal + port into ss; returns address family or -1. */
static int parse_addr(const char *ip, const char *port_s, struct sockaddr_storage *ss, socklen_t *len)
{
    int ok;
    long port = parse_long(port_s, &ok);
    if (!ok || port < 0 || port > 65535)
        return -1;
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, ip, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons((uint16_t)port);
        *len = sizeof *in4;
        return AF_INET;
    }
    if (inet_pton(AF_INET6, ip, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        *len = sizeof *in6;
        return AF_INET6;
    }
    return -1;
}

/* Wait up to timeout_ms for fd to become ready for events; 0 on ready, else errno value. */
static int wait_fd(int fd, short events, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = events, .revents = 0};
    for (;;) {
        int r = poll(&p, 1, timeout_ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return errno;
        if (r == 0)
            return ETIMEDOUT;
        return 0;
    }
}

/* Waits (<= 2 s) for a connect in progress on `fd` to finish: 0 once connected, else the errno. A listener that
 * closes at once may already have reset the connection: with `reset_is_connected`, that too means it connected. */
static int wait_connected(int fd, int reset_is_connected)
{
    int err = wait_fd(fd, POLLOUT, 2000);
    if (err)
        return err;
    socklen_t elen = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
        return errno;
    if (reset_is_connected && (err == ECONNRESET || err == EPIPE))
        return 0;
    return err;
}

/* fastopen IP PORT sendto|sendmsg|sendmmsg|option: reach a TCP listener through TCP Fast Open, which connects
 * from inside a send call (or, with the TCP_FASTOPEN_CONNECT option, defers the connect to the first write);
 * OK once the connection is established. */
static int verb_fastopen(int argc, char **argv)
{
    struct sockaddr_storage ss;
    socklen_t len;
    if (argc != 3)
        return usage("fastopen IP PORT sendto|sendmsg|sendmmsg|option");
    int af = parse_addr(argv[0], argv[1], &ss, &len);
    if (af < 0)
        return usage("fastopen: bad address");
    int fd = socket(af, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail_errno(errno);
    char byte = 'x';
    struct iovec iov = {&byte, 1};
    struct msghdr msg = {.msg_name = &ss, .msg_namelen = len, .msg_iov = &iov, .msg_iovlen = 1};
    struct mmsghdr mmsg = {.msg_hdr = msg};
    long rc;
    if (strcmp(argv[2], "sendto") == 0) {
        rc = sendto(fd, &byte, 1, MSG_FASTOPEN, (struct sockaddr *)&ss, len);
    } else if (strcmp(argv[2], "sendmsg") == 0) {
        rc = sendmsg(fd, &msg, MSG_FASTOPEN);
    } else if (strcmp(argv[2], "sendmmsg") == 0) {
        rc = sendmmsg(fd, &mmsg, 1, MSG_FASTOPEN);
    } else if (strcmp(argv[2], "option") == 0) {
        int one = 1;
        rc = setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &one, sizeof one);
        if (rc == 0)
            rc = connect(fd, (struct sockaddr *)&ss, len);
        if (rc == 0)
            rc = write(fd, &byte, 1);
    } else {
        return usage("fastopen: sendto, sendmsg, sendmmsg or option");
    }
    if (rc < 0 && errno != EINPROGRESS)
        return fail_errno(errno);
    /* Without a cookie the data waits for the handshake: the connection completes shortly after the call. */
    int err = wait_connected(fd, 1);
    if (err)
        return fail_errno(err);
    close(fd);
    printf("OK\n");
    return kExitOk;
}

static int verb_connect_tcp(int argc, char **argv)
{
    struct sockaddr_storage ss;
    socklen_t len;
    if (argc != 2)
        return usage("connect-tcp IP PORT");
    int af = parse_addr(argv[0], argv[1], &ss, &len);
    if (af < 0)
        return usage("connect-tcp: bad address");
    int fd = socket(af, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return fail_errno(errno);
    if (connect(fd, (struct sockaddr *)&ss, len) < 0) {
        if (errno != EINPROGRESS)
            return fail_errno(errno);
        int err = wait_connected(fd, 0);
        if (err)
            return fail_errno(err);
    }
    close(fd);
    printf("OK\n");
    return kExitOk;
}

/* udp-roundtrip IP PORT: send one datagram on a connected socket, wait <= 1 s for the echo. */
static int verb_udp_roundtrip(int argc, char **argv)
{
    struct sockaddr_storage ss;
    socklen_t len;
    static const char msg[] = "confine-probe-ping";
    if (argc != 2)
        return usage("udp-roundtrip IP PORT");
    int af = parse_addr(argv[0], argv[1], &ss, &len);
    if (af < 0)
        return usage("udp-roundtrip: bad address");
    int fd = socket(af, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail_errno(errno);
    if (connect(fd, (struct sockaddr *)&ss, len) < 0)
        return fail_errno(errno);
    if (send(fd, msg, sizeof msg - 1, 0) < 0)
        return fail_errno(errno);
    int err = wait_fd(fd, POLLIN, 1000);
    if (err)
        return fail_errno(err);
    char buf[256];
    ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0)
        return fail_errno(errno);
    if ((size_t)n != sizeof msg - 1 || memcmp(buf, msg, (size_t)n) != 0)
        return fail_errno(EBADMSG);
    close(fd);
    printf("OK\n");
    return kExitOk;
}

static int connect_unix(const char *name, int abstract)
{
    struct sockaddr_un sun;
    memset(&sun, 0, sizeof sun);
    sun.sun_family = AF_UNIX;
    size_t nlen = strlen(name);
    size_t off = abstract ? 1 : 0;
    if (nlen + off >= sizeof sun.sun_path)
        return usage("unix socket name too long");
    memcpy(sun.sun_path + off, name, nlen);
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + off + nlen + (abstract ? 0 : 1));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail_errno(errno);
    if (connect(fd, (struct sockaddr *)&sun, len) < 0)
        return fail_errno(errno);
    close(fd);
    printf("OK\n");
    return kExitOk;
}

static int verb_connect_unix(int argc, char **argv)
{
    if (argc != 1)
        return usage("connect-unix PATH");
    return connect_unix(argv[0], 0);
}

static int verb_connect_abstract(int argc, char **argv)
{
    if (argc != 1)
        return usage("connect-abstract NAME");
    return connect_unix(argv[0], 1);
}

static int parse_signal(const char *s)
{
    int ok;
    long v = parse_long(s, &ok);
    if (ok)
        return (int)v;
    if (strncmp(s, "SIG", 3) == 0)
        s += 3;
    for (int sig = 1; sig < NSIG; sig++) {
        const char *abbrev = sigabbrev_np(sig);
        if (abbrev && strcmp(abbrev, s) == 0)
            return sig;
    }
    return -1;
}

static int verb_kill(int argc, char **argv)
{
    int ok;
    if (argc != 2)
        return usage("kill PID SIG");
    long pid = parse_long(argv[0], &ok);
    int sig = parse_signal(argv[1]);
    if (!ok || sig < 0)
        return usage("kill: bad pid or signal");
    if (kill((pid_t)pid, sig) < 0)
        return fail_errno(errno);
    printf("OK\n");
    return kExitOk;
}

/* ptrace PID: PTRACE_SEIZE (does not stop the tracee), then detach again on success. */
static int verb_ptrace(int argc, char **argv)
{
    int ok;
    if (argc != 1)
        return usage("ptrace PID");
    long pid = parse_long(argv[0], &ok);
    if (!ok)
        return usage("ptrace: bad pid");
    if (ptrace(PTRACE_SEIZE, (pid_t)pid, NULL, NULL) < 0)
        return fail_errno(errno);
    /* PTRACE_DETACH on a seized, running tracee needs it stopped; interrupt, wait, detach. */
    if (ptrace(PTRACE_INTERRUPT, (pid_t)pid, NULL, NULL) == 0) {
        int st;
        waitpid((pid_t)pid, &st, __WALL);
        ptrace(PTRACE_DETACH, (pid_t)pid, NULL, NULL);
    }
    printf("OK\n");
    return kExitOk;
}

static int verb_status(int argc, char **argv)
{
    (void)argv;
    static const char *const keys[] = {"Uid:", "Gid:", "CapInh:", "CapPrm:", "CapEff:", "CapBnd:",
                                       "CapAmb:", "NoNewPrivs:", "Seccomp:", "Seccomp_filters:"};
    if (argc != 0)
        return usage("status");
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return fail_errno(errno);
    char line[512];
    while (fgets(line, sizeof line, f)) {
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            if (strncmp(line, keys[i], strlen(keys[i])) == 0)
                fputs(line, stdout);
        }
    }
    fclose(f);
    return kExitOk;
}

/* list-fds: "OK fd fd ..." for open fds above 2, excluding the directory fd used to list them. */
static int verb_list_fds(int argc, char **argv)
{
    (void)argv;
    if (argc != 0)
        return usage("list-fds");
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return fail_errno(errno);
    int self = dirfd(d);
    int fds[1024];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int ok;
        long fd = parse_long(e->d_name, &ok);
        if (!ok || fd <= 2 || fd == self)
            continue;
        if (n < sizeof fds / sizeof fds[0])
            fds[n++] = (int)fd;
    }
    closedir(d);
    /* readdir order is ascending for /proc/self/fd, but sort anyway (insertion sort). */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
            int t = fds[j];
            fds[j] = fds[j - 1];
            fds[j - 1] = t;
        }
    printf("OK");
    for (size_t i = 0; i < n; i++)
        printf(" %d", fds[i]);
    putchar('\n');
    return kExitOk;
}

/* Does the file contain needle?  Returns 1/0, or -1 if unreadable. */
static int file_contains(const char *path, const char *needle)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    static char buf[1 << 20];
    size_t len = 0;
    int failed = 0;
    while (len < sizeof buf) {
        ssize_t n = read(fd, buf + len, sizeof buf - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            failed = 1;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    if (failed && len == 0)
        return -1;
    return memmem(buf, len, needle, strlen(needle)) != NULL;
}

/* grep-environ STRING: look for STRING in every readable /proc/<pid>/environ.
 * Prints "OK NOTFOUND readable=R total=N" (exit 0) or "FOUND pid=P" (exit 1). */
static int verb_grep_environ(int argc, char **argv)
{
    if (argc != 1)
        return usage("grep-environ STRING");
    DIR *d = opendir("/proc");
    if (!d)
        return fail_errno(errno);
    struct dirent *e;
    int total = 0, readable = 0;
    while ((e = readdir(d)) != NULL) {
        int ok;
        long pid = parse_long(e->d_name, &ok);
        if (!ok)
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/%ld/environ", pid);
        total++;
        int r = file_contains(path, argv[0]);
        if (r >= 0)
            readable++;
        if (r == 1) {
            closedir(d);
            printf("FOUND pid=%ld\n", pid);
            return kExitFailed;
        }
    }
    closedir(d);
    printf("OK NOTFOUND readable=%d total=%d\n", readable, total);
    return kExitOk;
}

static int verb_id(int argc, char **argv)
{
    (void)argv;
    if (argc != 0)
        return usage("id");
    printf("OK uid=%u gid=%u euid=%u egid=%u\n", (unsigned)getuid(), (unsigned)getgid(), (unsigned)geteuid(),
           (unsigned)getegid());
    return kExitOk;
}

/* tiocsti STRING: push STRING (a backslash-n becomes a newline) into the input queue of the terminal on
 * fd 0, the classic way out of a sandbox that shares the caller's terminal (CVE-2017-5226). */
static int verb_tiocsti(int argc, char **argv)
{
    if (argc != 1)
        return usage("tiocsti STRING");
    for (const char *p = argv[0]; *p; p++) {
        char c = *p;
        if (p[0] == '\\' && p[1] == 'n') {
            c = '\n';
            p++;
        }
        if (ioctl(0, TIOCSTI, &c) < 0)
            return fail_errno(errno);
    }
    printf("OK\n");
    return kExitOk;
}

/* traceme-stop: PTRACE_TRACEME (the parent, pid 1 inside, becomes the tracer), then stop with SIGSTOP; once
 * running again, "OK tracer=PID" with the TracerPid it then has. */
static int verb_traceme_stop(int argc, char **argv)
{
    (void)argv;
    if (argc != 0)
        return usage("traceme-stop");
    if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
        return fail_errno(errno);
    raise(SIGSTOP);
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return fail_errno(errno);
    char line[512];
    long tracer = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "TracerPid:", 10) == 0)
            tracer = strtol(line + 10, NULL, 10);
    fclose(f);
    printf("OK tracer=%ld\n", tracer);
    return kExitOk;
}

/* tty ACTION [ARGS]: terminal ioctls on fd 0.
 *   excl          TIOCEXCL (no one else may open the terminal)
 *   setd N        TIOCSETD: switch the line discipline to N (27: N_NULL, the terminal stops working)
 *   vhangup       TIOCVHANGUP
 *   state         "OK ldisc=N excl=0|1" (TIOCGETD, TIOCGEXCL)
 *   termios       turn ECHO off and back on (TCSETS), checking each change took
 *   winsz R C     TIOCSWINSZ to R rows, C columns, then "OK rows=R cols=C" as TIOCGWINSZ reads them back
 *   pgrp          a process group of its own made the foreground group (TIOCSPGRP), read back (TIOCGPGRP);
 *                 the terminal is left to that group: use it on a terminal of its own */
static int tty_termios(void)
{
    struct termios saved, t;
    if (tcgetattr(0, &saved) < 0)
        return fail_errno(errno);
    t = saved;
    t.c_lflag &= ~(tcflag_t)ECHO;
    if (tcsetattr(0, TCSANOW, &t) < 0 || tcgetattr(0, &t) < 0)
        return fail_errno(errno);
    int off = !(t.c_lflag & ECHO);
    if (tcsetattr(0, TCSANOW, &saved) < 0 || tcgetattr(0, &t) < 0)
        return fail_errno(errno);
    printf("OK echo-off=%d echo-restored=%d\n", off, !!(t.c_lflag & ECHO));
    return kExitOk;
}

static int verb_tty(int argc, char **argv)
{
    int ok = 1;
    const char *action = argc > 0 ? argv[0] : "";
    if (strcmp(action, "excl") == 0 && argc == 1) {
        if (ioctl(0, TIOCEXCL) < 0)
            return fail_errno(errno);
    } else if (strcmp(action, "setd") == 0 && argc == 2) {
        int disc = (int)parse_long(argv[1], &ok);
        if (!ok)
            return usage("tty setd: bad number");
        if (ioctl(0, TIOCSETD, &disc) < 0)
            return fail_errno(errno);
    } else if (strcmp(action, "vhangup") == 0 && argc == 1) {
        if (ioctl(0, TIOCVHANGUP) < 0)
            return fail_errno(errno);
    } else if (strcmp(action, "state") == 0 && argc == 1) {
        int disc = -1, excl = -1;
        if (ioctl(0, TIOCGETD, &disc) < 0 || ioctl(0, TIOCGEXCL, &excl) < 0)
            return fail_errno(errno);
        printf("OK ldisc=%d excl=%d\n", disc, excl);
        return kExitOk;
    } else if (strcmp(action, "termios") == 0 && argc == 1) {
        return tty_termios();
    } else if (strcmp(action, "winsz") == 0 && argc == 3) {
        int ok2 = 1;
        struct winsize w = {(unsigned short)parse_long(argv[1], &ok), (unsigned short)parse_long(argv[2], &ok2), 0, 0};
        if (!ok || !ok2)
            return usage("tty winsz: bad number");
        if (ioctl(0, TIOCSWINSZ, &w) < 0 || ioctl(0, TIOCGWINSZ, &w) < 0)
            return fail_errno(errno);
        printf("OK rows=%u cols=%u\n", w.ws_row, w.ws_col);
        return kExitOk;
    } else if (strcmp(action, "pgrp") == 0 && argc == 1) {
        /* As a shell starting a job: a process group of its own, made the terminal's foreground group. */
        pid_t self = getpid(), fg = -1;
        signal(SIGTTOU, SIG_IGN);
        if (setpgid(0, 0) < 0 || ioctl(0, TIOCSPGRP, &self) < 0 || ioctl(0, TIOCGPGRP, &fg) < 0)
            return fail_errno(errno);
        printf("OK foreground-is-self=%d\n", fg == self);
        return kExitOk;
    } else {
        return usage("tty excl | setd N | vhangup | state | termios | winsz ROWS COLS | pgrp");
    }
    printf("OK\n");
    return kExitOk;
}

/* exec PATH [ARGS...]: execv PATH; on failure print the errno name. */
static int verb_exec(int argc, char **argv)
{
    if (argc < 1)
        return usage("exec PATH [ARGS...]");
    execv(argv[0], argv);
    return fail_errno(errno);
}

/* ---------------------------------------------------------------------------------------------
 * Raw syscalls (bubblewrap's try-syscall idea).  Each syscall in the table has default arguments that are
 * harmless: a bad pointer, a bad fd or an invalid flag, so that the kernel, *if the call reaches it*, fails
 * with EFAULT/EBADF/EINVAL/... before doing anything.  A seccomp denial shows up as its own errno instead.
 *
 * Argument tokens: a number (0x.. hex, decimal, negative), a constant name (CLONE_NEWUSER, AF_PACKET, ...),
 * several joined with '|', BAD (the invalid pointer 1) or BUF (a writable 4 KiB buffer).
 */
#define WRONG_POINTER 1L
static char g_buf[4096];

struct named_const {
    const char *name;
    long value;
};

static const struct named_const kConsts[] = {
    {"BAD", WRONG_POINTER},
    {"SIGCHLD", SIGCHLD},
    {"TIOCSTI", TIOCSTI},
    {"TIOCLINUX", TIOCLINUX},
    {"TIOCGWINSZ", TIOCGWINSZ},
    {"TIOCEXCL", TIOCEXCL},
    {"TIOCSETD", TIOCSETD},
    {"TIOCVHANGUP", TIOCVHANGUP},
    {"TIOCCONS", TIOCCONS},
    {"TIOCSLCKTRMIOS", TIOCSLCKTRMIOS},
    {"TIOCSSERIAL", TIOCSSERIAL},
    {"TIOCSERCONFIG", TIOCSERCONFIG},
    {"KDSETMODE", KDSETMODE},
    {"KDSKBMODE", KDSKBMODE},
    {"KDSKBMETA", KDSKBMETA},
    {"KDSKBENT", KDSKBENT},
    {"KDSKBSENT", KDSKBSENT},
    {"KDSKBDIACR", KDSKBDIACR},
    {"KDSKBDIACRUC", KDSKBDIACRUC},
    {"KDSETKEYCODE", KDSETKEYCODE},
    {"KDSKBLED", KDSKBLED},
    {"KDSETLED", KDSETLED},
    {"KDSIGACCEPT", KDSIGACCEPT},
    {"KDFONTOP", KDFONTOP},
    {"PIO_FONT", PIO_FONT},
    {"PIO_FONTX", PIO_FONTX},
    {"PIO_FONTRESET", PIO_FONTRESET},
    {"PIO_CMAP", PIO_CMAP},
    {"PIO_SCRNMAP", PIO_SCRNMAP},
    {"PIO_UNISCRNMAP", PIO_UNISCRNMAP},
    {"PIO_UNIMAP", PIO_UNIMAP},
    {"PIO_UNIMAPCLR", PIO_UNIMAPCLR},
    {"VT_SETMODE", VT_SETMODE},
    {"VT_ACTIVATE", VT_ACTIVATE},
    {"VT_SETACTIVATE", VT_SETACTIVATE},
    {"VT_DISALLOCATE", VT_DISALLOCATE},
    {"VT_RESIZE", VT_RESIZE},
    {"VT_RESIZEX", VT_RESIZEX},
    {"VT_LOCKSWITCH", VT_LOCKSWITCH},
    {"VT_UNLOCKSWITCH", VT_UNLOCKSWITCH},
    {"TCSETS", TCSETS},
    {"TCSETSW", TCSETSW},
    {"TIOCSWINSZ", TIOCSWINSZ},
    {"TIOCGPGRP", TIOCGPGRP},
    {"TIOCSPGRP", TIOCSPGRP},
    {"TIOCNXCL", TIOCNXCL},
    {"TIOCSCTTY", TIOCSCTTY},
    {"TIOCNOTTY", TIOCNOTTY},
    {"CLONE_NEWNS", CLONE_NEWNS},
    {"CLONE_NEWUSER", CLONE_NEWUSER},
    {"CLONE_NEWPID", CLONE_NEWPID},
    {"CLONE_NEWNET", CLONE_NEWNET},
    {"CLONE_NEWUTS", CLONE_NEWUTS},
    {"CLONE_NEWIPC", CLONE_NEWIPC},
    {"CLONE_NEWCGROUP", CLONE_NEWCGROUP},
    {"CLONE_NEWTIME", 0x00000080},
    {"CLONE_FS", CLONE_FS},
    {"CLONE_VM", CLONE_VM},
    {"CLONE_SIGHAND", CLONE_SIGHAND},
    {"CLONE_THREAD", CLONE_THREAD},
    {"CLONE_FILES", CLONE_FILES},
    {"CLONE_SYSVSEM", CLONE_SYSVSEM},
    {"AF_UNSPEC", AF_UNSPEC},
    {"AF_UNIX", AF_UNIX},
    {"AF_INET", AF_INET},
    {"AF_INET6", AF_INET6},
    {"AF_NETLINK", AF_NETLINK},
    {"AF_PACKET", AF_PACKET},
    {"AF_VSOCK", AF_VSOCK},
    {"AF_BLUETOOTH", AF_BLUETOOTH},
    {"AF_ALG", AF_ALG},
    {"AF_KEY", AF_KEY},
    {"AF_CAN", AF_CAN},
    {"AF_TIPC", AF_TIPC},
    {"SOCK_STREAM", SOCK_STREAM},
    {"SOCK_DGRAM", SOCK_DGRAM},
    {"SOCK_RAW", SOCK_RAW},
    {"SOCK_SEQPACKET", SOCK_SEQPACKET},
    {"SOCK_CLOEXEC", SOCK_CLOEXEC},
    {"SOCK_NONBLOCK", SOCK_NONBLOCK},
    {"IPPROTO_ICMP", IPPROTO_ICMP},
    {"IPPROTO_UDP", IPPROTO_UDP},
    {"IPPROTO_MPTCP", 262},
    {"ADDR_NO_RANDOMIZE", ADDR_NO_RANDOMIZE},
    {"ADDR_COMPAT_LAYOUT", ADDR_COMPAT_LAYOUT},
    {"MMAP_PAGE_ZERO", MMAP_PAGE_ZERO},
    {"READ_IMPLIES_EXEC", READ_IMPLIES_EXEC},
    {"PER_LINUX32", PER_LINUX32},
    {"NETLINK_ROUTE", 0},
};

/* parse_arg: number, constant or A|B|...; returns 0 on success. */
static int parse_arg(const char *tok, long *out)
{
    char buf[256];
    if (strlen(tok) >= sizeof buf)
        return -1;
    strcpy(buf, tok);
    if (strcmp(buf, "BUF") == 0) {
        *out = (long)g_buf;
        return 0;
    }
    long v = 0;
    char *save = NULL;
    for (char *part = strtok_r(buf, "|", &save); part; part = strtok_r(NULL, "|", &save)) {
        char *end = NULL;
        errno = 0;
        long n = (long)strtoull(part, &end, 0);
        if (part[0] == '-')
            n = strtol(part, &end, 0);
        if (errno == 0 && end != part && *end == '\0') {
            v |= n;
            continue;
        }
        size_t i;
        for (i = 0; i < sizeof kConsts / sizeof kConsts[0]; i++)
            if (strcmp(part, kConsts[i].name) == 0)
                break;
        if (i == sizeof kConsts / sizeof kConsts[0])
            return -1;
        v |= kConsts[i].value;
    }
    *out = v;
    return 0;
}

struct syscall_def {
    const char *name;
    long nr;
    int nargs;
    const char *defaults[6];
};

/* Syscalls newer than the C library's headers may be (the same number on every architecture with the common
 * table), and a number no kernel has assigned yet. */
#ifndef SYS_statmount
#define SYS_statmount 457 /* Linux 6.8 */
#endif
#ifndef SYS_listmount
#define SYS_listmount 458 /* Linux 6.8 */
#endif
#ifndef SYS_removexattrat
#define SYS_removexattrat 466 /* Linux 6.13 */
#endif
#ifndef SYS_open_tree_attr
#define SYS_open_tree_attr 467 /* Linux 6.15 */
#endif
#ifndef SYS_file_setattr
#define SYS_file_setattr 469 /* Linux 6.17 */
#endif
#ifndef SYS_listns
#define SYS_listns 470 /* Linux 6.19 */
#endif
#define SYS_UNASSIGNED 600

/* Default arguments: what the kernel answers to them without seccomp is noted after each line. */
static const struct syscall_def kSyscalls[] = {
    {"getpid", SYS_getpid, 0, {0}},                                              /* OK */
    {"getcwd", SYS_getcwd, 2, {"BUF", "4096"}},                                  /* OK */
    {"clock_gettime", SYS_clock_gettime, 2, {"0", "BUF"}},                       /* OK */
    {"gettimeofday", SYS_gettimeofday, 2, {"BUF", "0"}},                         /* OK */
    {"ioctl", SYS_ioctl, 3, {"-1", "TIOCLINUX", "BAD"}},                         /* EBADF */
    {"io_uring_setup", SYS_io_uring_setup, 2, {"1", "BAD"}},                     /* EFAULT */
    {"io_uring_enter", SYS_io_uring_enter, 6, {"-1", "0", "0", "0", "0", "0"}},  /* EBADF */
    {"io_uring_register", SYS_io_uring_register, 4, {"-1", "0", "0", "0"}},      /* EBADF */
    {"bpf", SYS_bpf, 3, {"5", "BAD", "8"}},                                      /* EFAULT (5: BPF_PROG_LOAD) */
    {"perf_event_open", SYS_perf_event_open, 5, {"BAD", "0", "-1", "-1", "0"}},  /* EFAULT */
    {"userfaultfd", SYS_userfaultfd, 1, {"0x101"}},                              /* EINVAL (USER_MODE_ONLY|bogus) */
    {"add_key", SYS_add_key, 5, {"BAD", "BAD", "0", "0", "0"}},                  /* EFAULT */
    {"keyctl", SYS_keyctl, 5, {"0x7fff", "0", "0", "0", "0"}},                   /* EOPNOTSUPP */
    {"request_key", SYS_request_key, 4, {"BAD", "BAD", "0", "0"}},               /* EFAULT */
    {"kexec_load", SYS_kexec_load, 4, {"0", "0", "0", "0x100"}},                 /* EPERM unpriv, EINVAL root (bad flags) */
    {"kexec_file_load", SYS_kexec_file_load, 5, {"-1", "-1", "0", "0", "0x40000000"}}, /* same */
    {"init_module", SYS_init_module, 3, {"BAD", "0", "BAD"}},                    /* EPERM unpriv, ENOEXEC root */
    {"finit_module", SYS_finit_module, 3, {"-1", "BAD", "0"}},                   /* EPERM unpriv, EBADF root */
    {"delete_module", SYS_delete_module, 2, {"BAD", "0"}},                       /* EPERM unpriv, EFAULT root */
    {"open_by_handle_at", SYS_open_by_handle_at, 3, {"-1", "BAD", "0"}},         /* EBADF */
    {"name_to_handle_at", SYS_name_to_handle_at, 5, {"-1", "BAD", "BAD", "BAD", "0"}}, /* EFAULT */
    {"acct", SYS_acct, 1, {"BAD"}},                                              /* EPERM unpriv, EFAULT root */
    {"swapon", SYS_swapon, 2, {"BAD", "0"}},                                     /* EPERM unpriv, EFAULT root */
    {"swapoff", SYS_swapoff, 1, {"BAD"}},                                        /* EPERM unpriv, EFAULT root */
    {"reboot", SYS_reboot, 4, {"0", "0", "0", "BAD"}},                           /* EPERM unpriv, EINVAL root (bad magic) */
    {"syslog", SYS_syslog, 3, {"10", "0", "0"}},                                 /* SIZE_BUFFER: OK, EPERM if dmesg_restrict */
    {"quotactl", SYS_quotactl, 4, {"0xff", "BAD", "0", "BAD"}},                  /* EINVAL (quota type 255) */
    {"quotactl_fd", SYS_quotactl_fd, 4, {"-1", "0", "0", "0"}},                  /* EBADF */
    {"iopl", SYS_iopl, 1, {"4"}},                                                /* EINVAL (level > 3) */
    {"ioperm", SYS_ioperm, 3, {"65536", "1", "0"}},                              /* EINVAL (beyond the bitmap) */
    {"uselib", SYS_uselib, 1, {"BAD"}},                                          /* ENOSYS (or EFAULT) */
    {"create_module", SYS_create_module, 2, {"BAD", "0"}},                       /* ENOSYS */
    {"get_kernel_syms", SYS_get_kernel_syms, 1, {"BAD"}},                        /* ENOSYS */
    {"query_module", SYS_query_module, 5, {"BAD", "0", "BAD", "0", "BAD"}},      /* ENOSYS */
    {"nfsservctl", SYS_nfsservctl, 3, {"0", "BAD", "BAD"}},                      /* ENOSYS */
    {"lookup_dcookie", SYS_lookup_dcookie, 3, {"0", "BAD", "0"}},                /* ENOSYS */
    {"settimeofday", SYS_settimeofday, 2, {"BAD", "0"}},                         /* EFAULT */
    {"clock_settime", SYS_clock_settime, 2, {"0", "BAD"}},                       /* EFAULT */
    {"clock_adjtime", SYS_clock_adjtime, 2, {"0", "BAD"}},                       /* EFAULT */
    {"adjtimex", SYS_adjtimex, 1, {"BAD"}},                                      /* EFAULT */
    {"mount", SYS_mount, 5, {"BAD", "BAD", "BAD", "0", "0"}},                    /* EFAULT */
    {"umount2", SYS_umount2, 2, {"BAD", "0"}},                                   /* EFAULT */
    {"pivot_root", SYS_pivot_root, 2, {"BAD", "BAD"}},                           /* EPERM unpriv, EFAULT root */
    {"chroot", SYS_chroot, 1, {"BAD"}},                                          /* EFAULT */
    {"move_mount", SYS_move_mount, 5, {"-1", "BAD", "-1", "BAD", "0xffffffff"}}, /* EPERM unpriv, EINVAL root */
    {"fsopen", SYS_fsopen, 2, {"BAD", "0"}},                                     /* EPERM unpriv, EFAULT root */
    {"fsconfig", SYS_fsconfig, 5, {"-1", "0", "0", "0", "0"}},                   /* EINVAL */
    {"fsmount", SYS_fsmount, 3, {"-1", "0", "0"}},                               /* EPERM unpriv, EBADF root */
    {"fspick", SYS_fspick, 3, {"-1", "BAD", "0"}},                               /* EPERM unpriv, EFAULT root */
    {"mount_setattr", SYS_mount_setattr, 5, {"-1", "BAD", "0", "BAD", "0"}},     /* EINVAL (size 0) */
    {"open_tree", SYS_open_tree, 3, {"-1", "BAD", "0"}},                         /* EFAULT */
    {"open_tree_attr", SYS_open_tree_attr, 5, {"-1", "BAD", "0", "BAD", "0"}},   /* EFAULT */
    {"statmount", SYS_statmount, 4, {"BAD", "BAD", "0", "0"}},                   /* EFAULT */
    {"listmount", SYS_listmount, 4, {"BAD", "BAD", "0", "0"}},                   /* EFAULT */
    {"removexattrat", SYS_removexattrat, 4, {"-1", "BAD", "0", "BAD"}},          /* EFAULT */
    {"file_setattr", SYS_file_setattr, 5, {"-1", "BAD", "BAD", "0", "0"}},       /* EINVAL (size 0) */
    {"listns", SYS_listns, 4, {"BAD", "BAD", "0", "0"}},                         /* EFAULT (ENOSYS before 6.19) */
    {"unassigned", SYS_UNASSIGNED, 0, {0}},                                      /* ENOSYS */
    {"unshare", SYS_unshare, 1, {"CLONE_NEWUSER"}},                              /* OK */
    {"clone", SYS_clone, 5, {"CLONE_NEWUSER|SIGCHLD", "0", "0", "0", "0"}},     /* OK (a child) */
    {"setns", SYS_setns, 2, {"-1", "0"}},                                        /* EBADF */
    {"clone3", SYS_clone3, 2, {"BAD", "88"}},                                    /* EFAULT */
    {"personality", SYS_personality, 1, {"0xffffffff"}},                         /* OK */
    {"socket", SYS_socket, 3, {"AF_UNIX", "SOCK_STREAM", "0"}},                  /* OK */
    {"socketpair", SYS_socketpair, 4, {"AF_UNIX", "SOCK_STREAM", "0", "BUF"}},   /* OK */
};

static const struct syscall_def *find_syscall(const char *name)
{
    for (size_t i = 0; i < sizeof kSyscalls / sizeof kSyscalls[0]; i++)
        if (strcmp(kSyscalls[i].name, name) == 0)
            return &kSyscalls[i];
    return NULL;
}

/* Runs NAME with argv's arguments (or the defaults); returns the raw result, errno set on -1.
 * *bad is set on a usage error.  A clone that succeeds exits at once in the child. */
static long do_syscall(const char *name, int argc, char **argv, int *bad)
{
    const struct syscall_def *d = find_syscall(name);
    long a[6] = {0, 0, 0, 0, 0, 0};
    *bad = 1;
    if (!d) {
        fprintf(stderr, "confine-test-probe: unknown syscall %s\n", name);
        return -1;
    }
    if (argc > 6)
        return -1;
    for (int i = 0; i < 6; i++) {
        const char *tok = i < argc ? argv[i] : (i < d->nargs ? d->defaults[i] : NULL);
        if (tok && parse_arg(tok, &a[i]) != 0) {
            fprintf(stderr, "confine-test-probe: bad argument %s\n", tok);
            return -1;
        }
    }
    *bad = 0;
    errno = 0;
    long r = syscall(d->nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (r == 0 && (d->nr == SYS_clone || d->nr == SYS_clone3))
        _exit(0); /* the child of a clone that went through */
    if (r > 0 && (d->nr == SYS_clone || d->nr == SYS_clone3))
        waitpid((pid_t)r, NULL, __WALL);
    return r;
}

/* syscall NAME [ARGS...]: one raw syscall in this process: "OK <return value>" or the errno name. */
static int verb_syscall(int argc, char **argv)
{
    int bad;
    if (argc < 1)
        return usage("syscall NAME [ARGS...]");
    long r = do_syscall(argv[0], argc - 1, argv + 1, &bad);
    if (bad)
        return usage("syscall: bad name or argument");
    if (r == -1)
        return fail_errno(errno);
    printf("OK %ld\n", r);
    return kExitOk;
}

/* syscalls SPEC...: each SPEC is NAME or NAME:ARG,ARG,...; each runs in a forked child, so that one that
 * succeeds (unshare, personality) or kills (SIGSYS) does not affect the next.  Prints one line per SPEC:
 * "SPEC=OK", "SPEC=<errno name>" or "SPEC=SIG<name>" (the child died of that signal); exits 0. */
static int verb_syscalls(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        char spec[512], *args[7];
        int n = 0;
        if (strlen(argv[i]) >= sizeof spec)
            return usage("syscalls: SPEC too long");
        strcpy(spec, argv[i]);
        char *colon = strchr(spec, ':');
        if (colon) {
            *colon = '\0';
            char *save = NULL;
            for (char *t = strtok_r(colon + 1, ",", &save); t && n < 7; t = strtok_r(NULL, ",", &save))
                args[n++] = t;
        }
        if (!find_syscall(spec) || n > 6)
            return usage("syscalls: unknown syscall or too many arguments");
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0)
            return fail_errno(errno);
        if (pid == 0) {
            int bad;
            long r = do_syscall(spec, n, args, &bad);
            if (bad)
                _exit(255);
            _exit(r == -1 ? (errno > 0 && errno < 255 ? errno : 254) : 0);
        }
        int st;
        while (waitpid(pid, &st, 0) < 0) {
            if (errno != EINTR)
                return fail_errno(errno);
        }
        if (WIFSIGNALED(st)) {
            const char *sig = sigabbrev_np(WTERMSIG(st));
            printf("%s=SIG%s\n", argv[i], sig ? sig : "?");
        } else if (WEXITSTATUS(st) == 0) {
            printf("%s=OK\n", argv[i]);
        } else if (WEXITSTATUS(st) == 255) {
            return usage("syscalls: bad argument");
        } else {
            const char *e = strerrorname_np(WEXITSTATUS(st));
            if (e)
                printf("%s=%s\n", argv[i], e);
            else
                printf("%s=E%d\n", argv[i], WEXITSTATUS(st));
        }
    }
    return kExitOk;
}

/* repeat N NAME [ARGS...]: the raw syscall NAME, N times in this process (a refused call in a loop): "OK N <errno
 * name>" when every call failed with the same errno, "OK N OK" when every one succeeded; a mix prints the errno name
 * of the first call that differs and exits 1. */
static int verb_repeat(int argc, char **argv)
{
    int ok, bad, first = -1;
    if (argc < 2)
        return usage("repeat N NAME [ARGS...]");
    long n = parse_long(argv[0], &ok);
    if (!ok || n <= 0)
        return usage("repeat: bad N");
    for (long i = 0; i < n; i++) {
        long r = do_syscall(argv[1], argc - 2, argv + 2, &bad);
        if (bad)
            return usage("repeat: bad name or argument");
        int err = r == -1 ? errno : 0;
        if (first < 0)
            first = err;
        else if (err != first)
            return fail_errno(err ? err : EPROTO);
    }
    if (first == 0) {
        printf("OK %ld OK\n", n);
    } else {
        const char *name = strerrorname_np(first);
        printf("OK %ld %s\n", n, name ? name : "?");
    }
    return kExitOk;
}

/* The number of lines in PATH, -1 if it cannot be read. */
static long count_lines(const char *path)
{
    char buf[65536];
    long lines = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            lines += buf[i] == '\n';
    }
    close(fd);
    return lines;
}

/* repeat-logged N FILE NAME [ARGS...]: the raw syscall NAME, N times, reading FILE (a log that gets one line per
 * call) as soon as each call returns: "OK N <errno name> unseen=K", K being the calls whose line was not in FILE
 * yet when the call had returned. */
static int verb_repeat_logged(int argc, char **argv)
{
    int ok, bad, first = -1;
    if (argc < 3)
        return usage("repeat-logged N FILE NAME [ARGS...]");
    long n = parse_long(argv[0], &ok);
    long before = count_lines(argv[1]), unseen = 0;
    if (!ok || n <= 0)
        return usage("repeat-logged: bad N");
    if (before < 0)
        return fail_errno(errno);
    for (long i = 1; i <= n; i++) {
        long r = do_syscall(argv[2], argc - 3, argv + 3, &bad);
        if (bad)
            return usage("repeat-logged: bad name or argument");
        int err = r == -1 ? errno : 0;
        if (first < 0)
            first = err;
        else if (err != first)
            return fail_errno(err ? err : EPROTO);
        unseen += count_lines(argv[1]) < before + i;
    }
    const char *name = first ? strerrorname_np(first) : "OK";
    printf("OK %ld %s unseen=%ld\n", n, name ? name : "?", unseen);
    return kExitOk;
}

/* seccomp-listener: install a seccomp filter that allows every call, asking the kernel for a user-notification
 * listener (SECCOMP_FILTER_FLAG_NEW_LISTENER), as a nested sandbox's supervisor does: "OK fd=N" or the errno name
 * (EBUSY: a filter above already has a listener; the kernel allows one per chain). */
static int verb_seccomp_listener(int argc, char **argv)
{
    (void)argv;
    if (argc != 0)
        return usage("seccomp-listener");
    struct sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
    struct sock_fprog prog = {sizeof allow / sizeof allow[0], allow};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return fail_errno(errno);
    long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    if (fd < 0)
        return fail_errno(errno);
    printf("OK fd=%ld\n", fd);
    return kExitOk;
}

/* int80-getpid: getpid through the i386 syscall entry (int $0x80, eax = 20). */
static int verb_int80_getpid(int argc, char **argv)
{
    (void)argv;
    if (argc != 0)
        return usage("int80-getpid");
#if defined(__x86_64__)
    long ret;
    __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "rcx", "r8", "r9", "r10", "r11", "memory", "cc");
    if (ret < 0 && ret > -4096)
        return fail_errno((int)-ret);
    printf("OK %ld\n", ret);
    return kExitOk;
#else
    return fail_errno(ENOSYS);
#endif
}

/* x32-getpid: getpid through the x32 ABI (syscall number with bit 30 set). */
static int verb_x32_getpid(int argc, char **argv)
{
    (void)argv;
    if (argc != 0)
        return usage("x32-getpid");
#if defined(__x86_64__)
    long r = syscall(0x40000000L | SYS_getpid);
    if (r < 0)
        return fail_errno(errno);
    printf("OK %ld\n", r);
    return kExitOk;
#else
    return fail_errno(ENOSYS);
#endif
}

/* personality VALUE [PATH ARGS...]: set the persona; "OK old=0x.. now=0x.." (now: a query afterwards),
 * then, if PATH is given, exec it under that persona. */
static int verb_personality(int argc, char **argv)
{
    long v;
    if (argc < 1 || parse_arg(argv[0], &v) != 0)
        return usage("personality VALUE [PATH ARGS...]");
    errno = 0;
    long old = syscall(SYS_personality, (unsigned long)(unsigned int)v);
    if (old == -1)
        return fail_errno(errno);
    long now = syscall(SYS_personality, 0xffffffffUL);
    printf("OK old=0x%lx now=0x%lx\n", old, now);
    if (argc > 1) {
        fflush(stdout);
        execv(argv[1], argv + 1);
        return fail_errno(errno);
    }
    return kExitOk;
}

static void *thread_main(void *arg)
{
    return arg;
}

/* thread: pthread_create + join (glibc tries clone3 first and falls back to clone on ENOSYS). */
static int verb_thread(int argc, char **argv)
{
    (void)argv;
    if (argc != 0)
        return usage("thread");
    pthread_t t;
    void *res = NULL;
    int err = pthread_create(&t, NULL, thread_main, (void *)0x5a);
    if (err)
        return fail_errno(err);
    err = pthread_join(t, &res);
    if (err)
        return fail_errno(err);
    if (res != (void *)0x5a)
        return fail_errno(EBADMSG);
    printf("OK\n");
    return kExitOk;
}

/* fork: fork a child that exits 7, wait for it. */
static int verb_fork(int argc, char **argv)
{
    (void)argv;
    if (argc != 0)
        return usage("fork");
    pid_t pid = fork();
    if (pid < 0)
        return fail_errno(errno);
    if (pid == 0)
        _exit(7);
    int st;
    if (waitpid(pid, &st, 0) < 0)
        return fail_errno(errno);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 7)
        return fail_errno(ECHILD);
    printf("OK\n");
    return kExitOk;
}

/* fork-many N FILE: fork up to N children that sleep, stopping at the first failed fork; write
 * "forked=K err=NAME" to FILE (made whole by a rename, so the host never reads half of it) and hold the children
 * until the host removes FILE (2 minutes at most); then end them and print "OK forked=K err=NAME". */
static int verb_fork_many(int argc, char **argv)
{
    int ok;
    if (argc != 2)
        return usage("fork-many N FILE");
    long n = parse_long(argv[0], &ok);
    if (!ok || n <= 0 || n > 100000)
        return usage("fork-many: bad N");
    pid_t *children = calloc((size_t)n, sizeof *children);
    if (children == NULL)
        return fail_errno(ENOMEM);
    long forked = 0;
    int err = 0;
    while (forked < n) {
        pid_t pid = fork();
        if (pid < 0) {
            err = errno;
            break;
        }
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            for (;;)
                pause();
        }
        children[forked++] = pid;
    }
    char line[128], tmp[4096];
    snprintf(line, sizeof line, "forked=%ld err=%s", forked, err ? strerrorname_np(err) : "none");
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
    FILE *f = fopen(tmp, "w");
    if (f == NULL || fprintf(f, "%s\n", line) < 0 || fclose(f) != 0 || rename(tmp, argv[1]) != 0)
        return fail_errno(errno);
    for (int i = 0; i < 1200 && access(argv[1], F_OK) == 0; i++)
        usleep(100 * 1000);
    for (long i = 0; i < forked; i++)
        kill(children[i], SIGKILL);
    for (long i = 0; i < forked; i++)
        waitpid(children[i], NULL, 0);
    free(children);
    printf("OK %s\n", line);
    return kExitOk;
}

/* socket FAMILY TYPE [PROTO]: create a socket (names or numbers) and close it. */
static int verb_socket(int argc, char **argv)
{
    long fam, type, proto = 0;
    if (argc < 2 || argc > 3 || parse_arg(argv[0], &fam) || parse_arg(argv[1], &type) ||
        (argc == 3 && parse_arg(argv[2], &proto)))
        return usage("socket FAMILY TYPE [PROTO]");
    int fd = socket((int)fam, (int)type, (int)proto);
    if (fd < 0)
        return fail_errno(errno);
    close(fd);
    printf("OK\n");
    return kExitOk;
}

/* udp-send IP PORT: one datagram with sendto on an unconnected UDP socket. */
static int verb_udp_send(int argc, char **argv)
{
    struct sockaddr_storage ss;
    socklen_t len;
    static const char msg[] = "confine-probe-udp";
    if (argc != 2)
        return usage("udp-send IP PORT");
    int af = parse_addr(argv[0], argv[1], &ss, &len);
    if (af < 0)
        return usage("udp-send: bad address");
    int fd = socket(af, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail_errno(errno);
    if (sendto(fd, msg, sizeof msg - 1, 0, (struct sockaddr *)&ss, len) < 0)
        return fail_errno(errno);
    close(fd);
    printf("OK\n");
    return kExitOk;
}

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452 /* Linux 6.6; the same number on every architecture with the common table */
#endif

struct open_how_v0 { /* struct open_how of <linux/openat2.h>, first version (24 bytes) */
    unsigned long long flags, mode, resolve;
};

/* Creates PATH (mode 0644) when a verb needs an existing file; returns an open O_RDWR fd or -1. */
static int create_plain(const char *path)
{
    return open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
}

/* The directory part of PATH ("." if none), in buf. */
static const char *dir_of(const char *path, char *buf, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return ".";
    size_t n = (size_t)(slash - path);
    if (n == 0)
        n = 1;
    if (n >= size)
        n = size - 1;
    memcpy(buf, path, n);
    buf[n] = '\0';
    return buf;
}

/* Gives PATH the mode MODE through one syscall path, all raw syscalls: the chmod family on a file it creates
 * first (0644), or a creating call with MODE. Returns the syscall's result (-1 and errno on failure). */
static long apply_mode(const char *via, const char *path, long mode)
{
    char dir[4096];
    if (strcmp(via, "chmod") == 0 || strcmp(via, "fchmodat") == 0 || strcmp(via, "fchmodat2") == 0 ||
        strcmp(via, "fchmod") == 0) {
        int fd = create_plain(path);
        if (fd < 0)
            return -1;
        if (strcmp(via, "fchmod") == 0)
            return syscall(SYS_fchmod, fd, mode);
        close(fd);
        if (strcmp(via, "chmod") == 0)
            return syscall(SYS_chmod, path, mode);
        return syscall(strcmp(via, "fchmodat") == 0 ? SYS_fchmodat : SYS_fchmodat2, AT_FDCWD, path, mode, 0);
    }
    if (strcmp(via, "open") == 0)
        return syscall(SYS_open, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (strcmp(via, "openat") == 0)
        return syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (strcmp(via, "creat") == 0)
        return syscall(SYS_creat, path, mode);
    if (strcmp(via, "mknod") == 0)
        return syscall(SYS_mknod, path, S_IFREG | mode, 0);
    if (strcmp(via, "mknodat") == 0)
        return syscall(SYS_mknodat, AT_FDCWD, path, S_IFREG | mode, 0);
    if (strcmp(via, "openat2") == 0) {
        struct open_how_v0 how = {O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, (unsigned long long)mode, 0};
        return syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    }
    if (strcmp(via, "tmpfile") == 0) { /* an unnamed file with MODE, then given its name */
        long fd = syscall(SYS_openat, AT_FDCWD, dir_of(path, dir, sizeof dir), O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
        if (fd < 0)
            return -1;
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%ld", fd);
        return linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
    }
    errno = EINVAL;
    return -2;
}

/* set-mode VIA PATH MODE: give PATH the mode MODE (octal) through VIA: chmod, fchmod, fchmodat, fchmodat2 (on a
 * file created 0644 first), or open, openat, openat2, creat, mknod, mknodat, tmpfile (O_TMPFILE + link)
 * creating it. "OK mode=NNNN" (the mode PATH has afterwards) or the errno name. */
static int verb_set_mode(int argc, char **argv)
{
    char *end = NULL;
    long mode = argc == 3 ? strtol(argv[2], &end, 8) : 0;
    if (argc != 3 || !end || *end != '\0')
        return usage("set-mode VIA PATH MODE");
    long r = apply_mode(argv[0], argv[1], mode);
    if (r == -2)
        return usage("set-mode: VIA is chmod, fchmod, fchmodat, fchmodat2, open, openat, openat2, creat, mknod, "
                     "mknodat or tmpfile");
    if (r < 0)
        return fail_errno(errno);
    struct stat st;
    if (stat(argv[1], &st) < 0)
        return fail_errno(errno);
    printf("OK mode=%04o\n", (unsigned)(st.st_mode & 07777));
    return kExitOk;
}

/* set-filecap VIA PATH: write a file capability (cap_net_raw, permitted and effective; a version 2
 * security.capability value) on PATH through VIA: setxattr, lsetxattr or fsetxattr. */
static int verb_set_filecap(int argc, char **argv)
{
    /* struct vfs_cap_data: magic_etc (VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE), then {permitted,
     * inheritable} for the low and the high 32 capabilities. CAP_NET_RAW is 13. */
    const unsigned int value[5] = {0x02000000u | 1u, 1u << 13, 0, 0, 0};
    if (argc != 2)
        return usage("set-filecap VIA PATH");
    long r;
    if (strcmp(argv[0], "setxattr") == 0) {
        r = syscall(SYS_setxattr, argv[1], "security.capability", value, sizeof value, 0);
    } else if (strcmp(argv[0], "lsetxattr") == 0) {
        r = syscall(SYS_lsetxattr, argv[1], "security.capability", value, sizeof value, 0);
    } else if (strcmp(argv[0], "fsetxattr") == 0) {
        int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return fail_errno(errno);
        r = syscall(SYS_fsetxattr, fd, "security.capability", value, sizeof value, 0);
    } else {
        return usage("set-filecap: VIA is setxattr, lsetxattr or fsetxattr");
    }
    if (r < 0)
        return fail_errno(errno);
    printf("OK\n");
    return kExitOk;
}

/* getxattr PATH NAME: "OK <size>" if PATH (not followed if a link) has the attribute, else the errno name
 * (ENODATA: it has none). */
static int verb_getxattr(int argc, char **argv)
{
    char buf[4096];
    if (argc != 2)
        return usage("getxattr PATH NAME");
    long r = syscall(SYS_lgetxattr, argv[0], argv[1], buf, sizeof buf);
    if (r < 0)
        return fail_errno(errno);
    printf("OK %ld\n", r);
    return kExitOk;
}

static int run_verb(int argc, char **argv);

/* named NAME VERB [ARGS...]: set this process's name (PR_SET_NAME, 15 bytes kept: any bytes, a newline too), then
 * run VERB. */
static int verb_named(int argc, char **argv)
{
    if (argc < 2)
        return usage("named NAME VERB [ARGS...]");
    if (prctl(PR_SET_NAME, argv[0], 0, 0, 0) != 0)
        return fail_errno(errno);
    return run_verb(argc - 1, argv + 1);
}

struct verb {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
};

static const struct verb kVerbs[] = {
    {"read", verb_read, "read PATH"},
    {"read-fd", verb_read_fd, "read-fd N"},
    {"write", verb_write, "write PATH [CONTENT]"},
    {"mkdir", verb_mkdir, "mkdir PATH"},
    {"unlink", verb_unlink, "unlink PATH"},
    {"stat", verb_stat, "stat PATH"},
    {"ls", verb_ls, "ls DIR"},
    {"connect-tcp", verb_connect_tcp, "connect-tcp IP PORT"},
    {"fastopen", verb_fastopen, "fastopen IP PORT sendto|sendmsg|sendmmsg|option"},
    {"udp-roundtrip", verb_udp_roundtrip, "udp-roundtrip IP PORT"},
    {"connect-unix", verb_connect_unix, "connect-unix PATH"},
    {"connect-abstract", verb_connect_abstract, "connect-abstract NAME"},
    {"kill", verb_kill, "kill PID SIG"},
    {"ptrace", verb_ptrace, "ptrace PID"},
    {"status", verb_status, "status"},
    {"list-fds", verb_list_fds, "list-fds"},
    {"grep-environ", verb_grep_environ, "grep-environ STRING"},
    {"id", verb_id, "id"},
    {"tiocsti", verb_tiocsti, "tiocsti STRING"},
    {"tty", verb_tty, "tty excl | setd N | vhangup | state | termios | winsz ROWS COLS | pgrp"},
    {"traceme-stop", verb_traceme_stop, "traceme-stop"},
    {"exec", verb_exec, "exec PATH [ARGS...]"},
    {"syscall", verb_syscall, "syscall NAME [ARGS...]"},
    {"syscalls", verb_syscalls, "syscalls NAME[:ARG,ARG...]..."},
    {"int80-getpid", verb_int80_getpid, "int80-getpid"},
    {"x32-getpid", verb_x32_getpid, "x32-getpid"},
    {"personality", verb_personality, "personality VALUE [PATH ARGS...]"},
    {"thread", verb_thread, "thread"},
    {"fork", verb_fork, "fork"},
    {"fork-many", verb_fork_many, "fork-many N FILE"},
    {"socket", verb_socket, "socket FAMILY TYPE [PROTO]"},
    {"udp-send", verb_udp_send, "udp-send IP PORT"},
    {"set-mode", verb_set_mode, "set-mode VIA PATH MODE"},
    {"set-filecap", verb_set_filecap, "set-filecap VIA PATH"},
    {"getxattr", verb_getxattr, "getxattr PATH NAME"},
    {"repeat", verb_repeat, "repeat N NAME [ARGS...]"},
    {"repeat-logged", verb_repeat_logged, "repeat-logged N FILE NAME [ARGS...]"},
    {"seccomp-listener", verb_seccomp_listener, "seccomp-listener"},
    {"named", verb_named, "named NAME VERB [ARGS...]"},
};

/* Runs argv[0] as a verb with the rest as its arguments. */
static int run_verb(int argc, char **argv)
{
    for (size_t i = 0; i < sizeof kVerbs / sizeof kVerbs[0]; i++) {
        if (strcmp(argv[0], kVerbs[i].name) == 0)
            return kVerbs[i].fn(argc - 1, argv + 1);
    }
    return usage("unknown verb");
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fprintf(stderr, "usage: confine-test-probe VERB [ARGS...]\nverbs:\n");
        for (size_t i = 0; i < sizeof kVerbs / sizeof kVerbs[0]; i++)
            fprintf(stderr, "  %s\n", kVerbs[i].help);
        return kExitUsage;
    }
    return run_verb(argc - 1, argv + 1);
}
