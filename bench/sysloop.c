/* sysloop — the in-sandbox timer of bench/syscall (see bench/README.md).
 *
 * Every mode times itself with CLOCK_MONOTONIC and prints one line "RESULT key=value ...", so that the figure
 * covers only the workload, never the sandbox's start-up and tear-down.
 *
 *   sysloop info                     affinity, ids, seccomp mode/filter count, no_new_privs (a sanity line)
 *   sysloop getppid N                N x syscall(SYS_getppid)                    -> ns per call
 *   sysloop refused N                N x syscall(SYS_bpf, -1, NULL, 0), a call every confine policy refuses
 *                                    -> ns per call, and the errno the last one got
 *   sysloop notified N               the floor under a recorded refusal: this process puts a filter on itself that
 *                                    hands bpf to a listener, a forked minimal C supervisor answers each at once
 *                                    with EPERM (no record), and the refused loop runs -> ns per call
 *   sysloop openstat PATH N          N x { stat(PATH); fd = open(PATH); close(fd) } -> ns per iteration
 *   sysloop stat PATH N              N x stat(PATH)                              -> ns per call
 *   sysloop open PATH N              N x { fd = open(PATH); close(fd) }          -> ns per iteration
 *   sysloop run K -- CMD ARGS...     runs CMD K times (posix_spawn + wait4), stdout to /dev/null
 *                                    -> median wall ns and median user+sys ns of one run; exit 1 if any run failed
 *
 * Each loop first runs N/20 untimed iterations (warm caches, fault in pages, settle the CPU frequency), then N
 * iterations in 10 separately timed batches: it prints the overall ns per iteration, the best batch's, and the best
 * batch's in thread CPU time (CLOCK_THREAD_CPUTIME_ID: blind to the time other processes held the CPU).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int64_t clock_ns(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
static int64_t now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

static long parse_n(const char *s) {
    char *end;
    long n = strtol(s, &end, 10);
    if (*s == 0 || *end != 0 || n <= 0) { fprintf(stderr, "sysloop: bad count '%s'\n", s); exit(2); }
    return n;
}

static void die(const char *what) { fprintf(stderr, "sysloop: %s: %s\n", what, strerror(errno)); exit(1); }

/* The loops. volatile sinks keep the compiler from dropping anything. */
static volatile long sink;

static void do_getppid(const char *p, long n) { (void)p; for (long i = 0; i < n; i++) sink += syscall(SYS_getppid); }

/* bpf is refused by confine's seccomp filter (EPERM); bare, the kernel refuses the unknown command itself. */
static int refused_errno;
static void do_refused(const char *p, long n) {
    (void)p;
    for (long i = 0; i < n; i++) sink += syscall(SYS_bpf, -1, NULL, 0);
    refused_errno = errno;
}

static void do_stat(const char *p, long n) {
    struct stat st;
    for (long i = 0; i < n; i++) { if (stat(p, &st) != 0) die("stat"); sink += st.st_size; }
}

static void do_open(const char *p, long n) {
    for (long i = 0; i < n; i++) {
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd < 0) die("open");
        close(fd);
    }
}

static void do_openstat(const char *p, long n) {
    struct stat st;
    for (long i = 0; i < n; i++) {
        if (stat(p, &st) != 0) die("stat");
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd < 0) die("open");
        close(fd);
        sink += st.st_size;
    }
}

static int cmp_i64(const void *a, const void *b);

/* The loop runs in BATCHES equal batches, each timed. ns_per_iter is the whole loop's average; best_ns_per_iter is
 * the fastest batch's, which drops the batches where another process (or an interrupt storm) took the CPU. */
#define BATCHES 10
static void timed(const char *mode, const char *path, long n) {
    void (*loop)(const char *, long) = do_getppid;
    if (!strcmp(mode, "stat")) loop = do_stat;
    else if (!strcmp(mode, "open")) loop = do_open;
    else if (!strcmp(mode, "openstat")) loop = do_openstat;
    else if (!strcmp(mode, "refused")) loop = do_refused;
    long warm = n / 20 > 0 ? n / 20 : 1, per = n / BATCHES > 0 ? n / BATCHES : 1;
    loop(path, warm);
    int64_t batch[BATCHES], cbatch[BATCHES], t0 = now_ns(), t = t0, c = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (int b = 0; b < BATCHES; b++) {
        loop(path, per);
        int64_t t1 = now_ns(), c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        batch[b] = t1 - t;
        cbatch[b] = c1 - c;
        t = t1;
        c = c1;
    }
    qsort(batch, BATCHES, sizeof batch[0], cmp_i64);
    qsort(cbatch, BATCHES, sizeof cbatch[0], cmp_i64);
    long done = per * BATCHES;
    printf("RESULT mode=%s n=%ld total_ns=%lld ns_per_iter=%.3f best_ns_per_iter=%.3f best_cpu_ns_per_iter=%.3f "
           "cpu=%d errno=%s\n", mode, done, (long long)(t - t0), (double)(t - t0) / (double)done,
           (double)batch[0] / (double)per, (double)cbatch[0] / (double)per, sched_getcpu(),
           refused_errno ? strerrorname_np(refused_errno) : "-");
}

/* The supervisor: answers every notification on `listener` with EPERM until the filter's process is gone. */
static void answer_all(int listener) {
    for (;;) {
        struct pollfd pfd = {listener, POLLIN, 0};
        if (poll(&pfd, 1, -1) < 0 || (pfd.revents & POLLHUP)) _exit(0);
        struct seccomp_notif req;
        memset(&req, 0, sizeof req);
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) continue;
        struct seccomp_notif_resp resp;
        memset(&resp, 0, sizeof resp);
        resp.id = req.id;
        resp.error = -EPERM;
        ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
    }
}

static void notified(long n) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) die("socketpair");
    pid_t supervisor = fork();
    if (supervisor < 0) die("fork");
    if (supervisor == 0) {
        char byte;
        char control[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {&byte, 1};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
        if (recvmsg(sv[1], &msg, 0) != 1 || !CMSG_FIRSTHDR(&msg)) _exit(1);
        int listener;
        memcpy(&listener, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof listener);
        answer_all(listener);
    }
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_bpf, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof code / sizeof code[0], code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
    int listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    if (listener < 0) die("seccomp (a listener: not under another sandbox's filter?)");
    char byte = 0;
    char control[CMSG_SPACE(sizeof(int))];
    memset(control, 0, sizeof control);
    struct iovec iov = {&byte, 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &listener, sizeof listener);
    if (sendmsg(sv[0], &msg, 0) != 1) die("sendmsg");
    close(listener);
    timed("refused", NULL, n);
    kill(supervisor, SIGKILL);
    waitpid(supervisor, NULL, 0);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int run_cmd(long k, char **argv) {
    int64_t *wall = calloc((size_t)k, sizeof *wall), *cpu = calloc((size_t)k, sizeof *cpu);
    if (!wall || !cpu) die("calloc");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    int failed = 0;
    for (long i = 0; i < k; i++) {
        pid_t pid;
        int64_t t0 = now_ns();
        int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
        if (rc != 0) { errno = rc; die(argv[0]); }
        int st;
        struct rusage ru;
        if (wait4(pid, &st, 0, &ru) < 0) die("wait4");
        wall[i] = now_ns() - t0;
        cpu[i] = ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
                 ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "sysloop: run %ld of %s: status 0x%x\n", i, argv[0], st);
            failed = 1;
        }
    }
    qsort(wall, (size_t)k, sizeof *wall, cmp_i64);
    qsort(cpu, (size_t)k, sizeof *cpu, cmp_i64);
    printf("RESULT mode=run k=%ld wall_med_ns=%lld wall_min_ns=%lld cpu_med_ns=%lld cpu=%d\n", k,
           (long long)wall[k / 2], (long long)wall[0], (long long)cpu[k / 2], sched_getcpu());
    return failed;
}

static void info(void) {
    cpu_set_t set;
    char cpus[256] = "";
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set)) {
                size_t l = strlen(cpus);
                snprintf(cpus + l, sizeof cpus - l, "%s%d", l ? "," : "", c);
            }
    char seccomp[32] = "?", filters[32] = "?", nnp[32] = "?", line[256];
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *v = strchr(line, ':');
        if (!v) continue;
        for (v++; *v == ' ' || *v == '\t'; v++) {}
        if (!strncmp(line, "Seccomp:", 8)) snprintf(seccomp, sizeof seccomp, "%s", v);
        else if (!strncmp(line, "Seccomp_filters:", 16)) snprintf(filters, sizeof filters, "%s", v);
        else if (!strncmp(line, "NoNewPrivs:", 11)) snprintf(nnp, sizeof nnp, "%s", v);
    }
    if (f) fclose(f);
    printf("RESULT mode=info affinity=%s uid=%d seccomp_mode=%s seccomp_filters=%s no_new_privs=%s cpu=%d\n", cpus,
           (int)getuid(), seccomp, filters, nnp, sched_getcpu());
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 2 && !strcmp(argv[1], "info")) { info(); return 0; }
    if (argc == 3 && (!strcmp(argv[1], "getppid") || !strcmp(argv[1], "refused"))) {
        timed(argv[1], NULL, parse_n(argv[2]));
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "notified")) {
        notified(parse_n(argv[2]));
        return 0;
    }
    if (argc == 4 && (!strcmp(argv[1], "openstat") || !strcmp(argv[1], "stat") || !strcmp(argv[1], "open"))) {
        timed(argv[1], argv[2], parse_n(argv[3]));
        return 0;
    }
    if (argc >= 5 && !strcmp(argv[1], "run") && !strcmp(argv[3], "--")) return run_cmd(parse_n(argv[2]), argv + 4);
    fprintf(stderr, "usage: sysloop info | getppid N | refused N | notified N | openstat|stat|open PATH N | run K -- CMD [ARGS...]\n");
    return 2;
}
