/* spawnbench: time whole-process runs of several commands, interleaved round-robin.
 *
 *   spawnbench ITERS WARMUP OUT.tsv -- LABEL [VAR=VALUE...] CMD [ARGS...] :: LABEL ... :: ...
 *
 * VAR=VALUE words before a candidate's command (an absolute path) are added to that candidate's environment,
 * as env(1) would, without the cost of running env.
 * Each round runs every candidate once; the starting candidate rotates from round to round so that no candidate
 * always follows the same one.  A run is posix_spawn() (clone(CLONE_VM|CLONE_VFORK) in glibc, so the harness adds
 * almost nothing) up to wait4() returning, timed with CLOCK_MONOTONIC.  The child's stdin/stdout/stderr are
 * /dev/null.  WARMUP rounds are run first and discarded.
 *
 * OUT.tsv gets one line per timed run:  round <TAB> label <TAB> wall_ns <TAB> cpu_ns <TAB> status
 * where cpu_ns is the user+system time of the child and everything it waited for (wait4 rusage) and status is
 * the raw wait status.  Exit code: 0, or 1 if any run did not exit 0 (the lines are still written), 2 on usage.
 *
 *   spawnbench --corespeed
 *
 * prints, for each CPU this process may run on, the best-of-5 time of a fixed integer loop pinned to it, e.g.
 * "cpu0=21.3ms cpu1=27.9ms", so that a bimodal timing distribution can be traced to unequal cores.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct cand {
    const char *label;
    char **argv;
    char **envp;
};

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long tv_ns(struct timeval tv) { return (long long)tv.tv_sec * 1000000000LL + tv.tv_usec * 1000LL; }

static int run_one(const struct cand *c, const posix_spawn_file_actions_t *fa, long long *wall, long long *cpu) {
    pid_t pid;
    long long t0 = now_ns();
    int rc = posix_spawn(&pid, c->argv[0], fa, NULL, c->argv, c->envp);
    if (rc != 0) {
        fprintf(stderr, "spawnbench: %s: %s: %s\n", c->label, c->argv[0], strerror(rc));
        return -1;
    }
    int st = 0;
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("spawnbench: wait4");
            return -1;
        }
    }
    *wall = now_ns() - t0;
    *cpu = tv_ns(ru.ru_utime) + tv_ns(ru.ru_stime);
    return st;
}

static int corespeed(void) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 1;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &allowed)) continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0) continue;
        long long best = -1;
        for (int rep = 0; rep < 5; rep++) {
            volatile unsigned long long x = 88172645463325252ULL;
            long long t0 = now_ns();
            for (int i = 0; i < 4000000; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; }
            long long dt = now_ns() - t0;
            if (best < 0 || dt < best) best = dt;
        }
        printf("%scpu%d=%.1fms", cpu ? " " : "", cpu, best / 1e6);
    }
    printf("\n");
    sched_setaffinity(0, sizeof allowed, &allowed);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--corespeed") == 0) return corespeed();
    if (argc < 6 || strcmp(argv[4], "--") != 0) {
        fprintf(stderr, "usage: %s ITERS WARMUP OUT.tsv -- LABEL CMD [ARGS...] [:: LABEL CMD [ARGS...]]...\n", argv[0]);
        return 2;
    }
    int iters = atoi(argv[1]), warmup = atoi(argv[2]);
    FILE *out = fopen(argv[3], "w");
    if (!out) {
        perror(argv[3]);
        return 2;
    }
    struct cand cands[64];
    int n = 0;
    for (int i = 5; i < argc;) {
        if (n == 64 || i + 1 >= argc) {
            fprintf(stderr, "spawnbench: bad candidate list\n");
            return 2;
        }
        cands[n].label = argv[i];
        cands[n].argv = &argv[i + 1];
        int j = i + 1;
        while (j < argc && strcmp(argv[j], "::") != 0) j++;
        if (j == i + 1) {
            fprintf(stderr, "spawnbench: candidate %s has no command\n", argv[i]);
            return 2;
        }
        if (j < argc) argv[j] = NULL; /* terminate this candidate's argv */
        /* leading VAR=VALUE words: this candidate's extra environment */
        int nenv = 0;
        while (cands[n].argv[nenv] && cands[n].argv[nenv][0] != '/' && strchr(cands[n].argv[nenv], '=')) nenv++;
        cands[n].envp = environ;
        if (nenv > 0) {
            int nold = 0;
            while (environ[nold]) nold++;
            char **envp = calloc((size_t)(nold + nenv + 1), sizeof *envp);
            if (!envp) return 2;
            int m = 0;
            for (int e = 0; e < nenv; e++) envp[m++] = cands[n].argv[e];
            for (int e = 0; e < nold; e++) {
                size_t klen = strcspn(environ[e], "=");
                int overridden = 0;
                for (int f = 0; f < nenv; f++)
                    if (strncmp(cands[n].argv[f], environ[e], klen + 1) == 0) overridden = 1;
                if (!overridden) envp[m++] = environ[e];
            }
            cands[n].envp = envp;
            cands[n].argv += nenv;
            if (!cands[n].argv[0]) {
                fprintf(stderr, "spawnbench: candidate %s has no command\n", cands[n].label);
                return 2;
            }
        }
        n++;
        i = j + 1;
    }

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);

    int failed = 0;
    for (int r = -warmup; r < iters; r++) {
        for (int k = 0; k < n; k++) {
            int idx = ((r < 0 ? -r : r) + k) % n;
            long long wall = 0, cpu = 0;
            int st = run_one(&cands[idx], &fa, &wall, &cpu);
            if (st != 0) failed = 1;
            if (r >= 0) fprintf(out, "%d\t%s\t%lld\t%lld\t%d\n", r, cands[idx].label, wall, cpu, st);
        }
    }
    fclose(out);
    return failed;
}
