/* layers — what each of confine's in-process layers costs per system call (see bench/README.md, `bench/layers`).
 *
 *   layers [--filter-pid PID] RWDIR FILE N SAMPLES
 *
 * One process, no namespaces. For each sample it forks one child per variant (the order rotates every sample, so
 * drift hits every variant alike); the child applies the variant's layers to itself, then times four loops of N
 * iterations in thread CPU time (the best of 3 batches, after a warm-up): syscall(SYS_getppid), stat(FILE),
 * open(FILE)+close, ioctl(FIONREAD) on a pipe. The report gives each variant's median and its difference to none.
 *
 * Variants (all with no_new_privs):
 *   none                   nothing
 *   seccomp 1-insn allow   a one-instruction "allow" filter: the bare price of having any filter at all
 *   seccomp confine        confine's own BPF program, copied from the running sandboxed process PID with
 *                          PTRACE_SECCOMP_GET_FILTER (root only); skipped without --filter-pid
 *   landlock all rights    every filesystem right of the kernel's ABI handled; rules: "/" read+execute, RWDIR all
 *                          (the shape of confine's own rule set, whose workspace rule is RWDIR)
 *   landlock writes-only   the same without READ_FILE, READ_DIR and TRUNCATE handled: a read-only open() then asks
 *                          Landlock for nothing and skips its path walk
 *   landlock all + confine both layers, as confine applies them
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER 0x420c
#endif
#define LL_READ_FILE (1ULL << 2)
#define LL_READ_DIR (1ULL << 3)
#define LL_EXECUTE (1ULL << 0)
#define LL_TRUNCATE (1ULL << 14)
#define LL_IOCTL_DEV (1ULL << 15)

enum { V_NONE, V_SC1, V_SCC, V_LL, V_LLW, V_BOTH, NV };
static const char *vname[NV] = {"none", "seccomp 1-insn allow", "seccomp confine", "landlock all rights",
                                "landlock writes-only", "landlock all + seccomp confine"};
enum { W_GETPPID, W_STAT, W_OPEN, W_IOCTL, NW };
static const char *wname[NW] = {"getppid", "stat", "open+close", "ioctl FIONREAD"};

static struct sock_filter *cfilter;
static long cfilter_len;
static int pipefd[2];
static volatile long sink;

static void die(const char *what) { fprintf(stderr, "layers: %s: %s\n", what, strerror(errno)); exit(1); }

static int64_t cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void fetch_filter(pid_t pid) {  /* confine's BPF program, from a process it sandboxed */
    if (ptrace(PTRACE_SEIZE, pid, 0, 0) != 0) die("PTRACE_SEIZE");
    if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) != 0) die("PTRACE_INTERRUPT");
    waitpid(pid, NULL, __WALL);
    cfilter_len = ptrace(PTRACE_SECCOMP_GET_FILTER, pid, 0, NULL);
    if (cfilter_len <= 0) die("PTRACE_SECCOMP_GET_FILTER");
    cfilter = calloc((size_t)cfilter_len, sizeof *cfilter);
    if (ptrace(PTRACE_SECCOMP_GET_FILTER, pid, 0, cfilter) != cfilter_len) die("PTRACE_SECCOMP_GET_FILTER");
    if (ptrace(PTRACE_SECCOMP_GET_FILTER, pid, 1, NULL) >= 0)
        fprintf(stderr, "layers: note: the process has more than one filter; only the newest is used\n");
    ptrace(PTRACE_DETACH, pid, 0, 0);
}

static void apply_seccomp(int confine) {
    struct sock_filter one[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
    struct sock_fprog p = {confine ? (unsigned short)cfilter_len : 1, confine ? cfilter : one};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p) != 0) die("seccomp");
}

static void apply_landlock(const char *rw, int writes_only) {
    int abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1) die("Landlock is not available");
    uint64_t handled = (1ULL << 13) - 1;  /* ABI 1: execute .. make_sym */
    if (abi >= 2) handled |= 1ULL << 13;  /* refer */
    if (abi >= 3) handled |= LL_TRUNCATE;
    if (abi >= 5) handled |= LL_IOCTL_DEV;
    if (writes_only) handled &= ~(LL_READ_FILE | LL_READ_DIR | LL_TRUNCATE);
    struct landlock_ruleset_attr attr = {.handled_access_fs = handled};
    int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (rs < 0) die("landlock_create_ruleset");
    struct landlock_path_beneath_attr pb = {.allowed_access = (LL_EXECUTE | LL_READ_FILE | LL_READ_DIR) & handled,
                                            .parent_fd = open("/", O_PATH | O_CLOEXEC)};
    if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) != 0) die("landlock_add_rule /");
    pb.allowed_access = handled & ~LL_IOCTL_DEV;
    pb.parent_fd = open(rw, O_PATH | O_CLOEXEC);
    if (pb.parent_fd < 0) die(rw);
    if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) != 0) die("landlock_add_rule RWDIR");
    if (syscall(SYS_landlock_restrict_self, rs, 0) != 0) die("landlock_restrict_self");
}

static double loop(int w, const char *path, long n) {  /* CPU ns per iteration */
    struct stat st;
    int v;
    int64_t t = cpu_ns();
    for (long i = 0; i < n; i++) {
        switch (w) {
            case W_GETPPID: sink += syscall(SYS_getppid); break;
            case W_STAT: if (stat(path, &st) != 0) die("stat"); break;
            case W_OPEN: { int fd = open(path, O_RDONLY | O_CLOEXEC); if (fd < 0) die("open"); close(fd); } break;
            case W_IOCTL: if (ioctl(pipefd[0], FIONREAD, &v) != 0) die("ioctl"); break;
        }
    }
    return (double)(cpu_ns() - t) / (double)n;
}

static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int a = 1;
    if (argc > 2 && !strcmp(argv[1], "--filter-pid")) { fetch_filter(atoi(argv[2])); a = 3; }
    if (argc - a != 4) {
        fprintf(stderr, "usage: layers [--filter-pid PID] RWDIR FILE N SAMPLES\n");
        return 2;
    }
    const char *rw = argv[a], *path = argv[a + 1];
    long n = atol(argv[a + 2]);
    int samples = atoi(argv[a + 3]);
    if (n <= 0 || samples <= 0) return 2;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
    if (pipe(pipefd) != 0) die("pipe");
    double *res = calloc((size_t)NV * NW * (size_t)samples, sizeof *res);
    int have[NV] = {1, 1, cfilter != NULL, 1, 1, cfilter != NULL};
    for (int s = 0; s < samples; s++)
        for (int j = 0; j < NV; j++) {
            int v = (j + s) % NV, fd[2];
            if (!have[v]) continue;
            if (pipe(fd) != 0) die("pipe");
            pid_t pid = fork();
            if (pid < 0) die("fork");
            if (pid == 0) {
                close(fd[0]);
                if (v == V_SC1) apply_seccomp(0);
                if (v == V_SCC) apply_seccomp(1);
                if (v == V_LL || v == V_BOTH) apply_landlock(rw, 0);
                if (v == V_LLW) apply_landlock(rw, 1);
                if (v == V_BOTH) apply_seccomp(1);
                double r[NW];
                for (int w = 0; w < NW; w++) {
                    loop(w, path, n / 4 + 1);
                    r[w] = 1e18;
                    for (int b = 0; b < 3; b++) { double x = loop(w, path, n); if (x < r[w]) r[w] = x; }
                }
                if (write(fd[1], r, sizeof r) != (ssize_t)sizeof r) _exit(1);
                _exit(0);
            }
            close(fd[1]);
            double r[NW];
            if (read(fd[0], r, sizeof r) != (ssize_t)sizeof r) { fprintf(stderr, "layers: variant '%s' failed\n", vname[v]); return 1; }
            close(fd[0]);
            waitpid(pid, NULL, 0);
            for (int w = 0; w < NW; w++) res[((size_t)v * NW + w) * samples + s] = r[w];
        }
    printf("%-32s", "median CPU ns per call");
    for (int w = 0; w < NW; w++) printf("%24s", wname[w]);
    printf("\n");
    double base[NW] = {0};
    for (int v = 0; v < NV; v++) {
        if (!have[v]) continue;
        printf("%-32s", vname[v]);
        for (int w = 0; w < NW; w++) {
            double *x = res + ((size_t)v * NW + w) * samples;
            qsort(x, (size_t)samples, sizeof *x, cmpd);
            double m = samples % 2 ? x[samples / 2] : (x[samples / 2 - 1] + x[samples / 2]) / 2;
            char cell[64];
            if (v == V_NONE) { base[w] = m; snprintf(cell, sizeof cell, "%.0f", m); }
            else snprintf(cell, sizeof cell, "%.0f (%+.0f, %+.1f%%)", m, m - base[w], (m / base[w] - 1) * 100);
            printf("%24s", cell);
        }
        printf("\n");
    }
    if (cfilter) printf("confine's filter: %ld BPF instructions\n", cfilter_len);
    return 0;
}
