/*
 * confine-vm-helper: operations the VM checks need that neither busybox nor confine-test-probe offer.
 * Same conventions as the probe: "OK ..." and exit 0, or the errno name and exit 1; usage errors exit 2.
 *
 *   listen-abstract NAME   listen on the abstract unix socket @NAME, print "READY", accept and close forever
 *   truncate PATH LENGTH   truncate(2) by path -- Landlock restricts it only from ABI 3 (Linux 6.2) on
 *   chmod PATH MODE        chmod(2), MODE in octal -- Landlock does not restrict it at any ABI
 *   forks N                fork up to N children that just wait; "FORKS k ERRNO" (k made before the first
 *                          failure, or "FORKS N OK"), then the children are killed and reaped
 *   alloc MB               allocate and touch MB MiB; "OK" if it survived
 *   spin SECONDS           busy-loop for SECONDS of wall time; "OK"
 *
 * Static, so that it runs inside the sandbox and in the busybox VM alike.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int fail_errno(int err)
{
    const char *name = strerrorname_np(err);
    if (name)
        printf("%s\n", name);
    else
        printf("E%d\n", err);
    return 1;
}

static int usage(void)
{
    fprintf(stderr, "usage: confine-vm-helper listen-abstract NAME | truncate PATH LENGTH | chmod PATH MODE | "
                    "forks N | alloc MB | spin SECONDS\n");
    return 2;
}

static int listen_abstract(const char *name)
{
    struct sockaddr_un sun;
    memset(&sun, 0, sizeof sun);
    sun.sun_family = AF_UNIX;
    size_t len = strlen(name);
    if (len + 1 >= sizeof sun.sun_path)
        return usage();
    memcpy(sun.sun_path + 1, name, len);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail_errno(errno);
    if (bind(fd, (struct sockaddr *)&sun, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)) < 0 ||
        listen(fd, 16) < 0)
        return fail_errno(errno);
    printf("READY\n");
    fflush(stdout);
    for (;;) {
        int c = accept(fd, NULL, NULL);
        if (c >= 0)
            close(c);
        else if (errno != EINTR)
            return fail_errno(errno);
    }
}

static int forks(long n)
{
    pid_t *kids = calloc((size_t)n, sizeof *kids);
    long made = 0;
    int err = 0;
    if (!kids)
        return fail_errno(ENOMEM);
    for (; made < n; made++) {
        pid_t p = fork();
        if (p < 0) {
            err = errno;
            break;
        }
        if (p == 0) {
            pause();
            _exit(0);
        }
        kids[made] = p;
    }
    for (long i = 0; i < made; i++)
        kill(kids[i], SIGKILL);
    for (long i = 0; i < made; i++)
        waitpid(kids[i], NULL, 0);
    if (err)
        printf("FORKS %ld %s\n", made, strerrorname_np(err));
    else
        printf("FORKS %ld OK\n", made);
    return 0;
}

static int alloc(long mb)
{
    for (long i = 0; i < mb; i++) {
        char *p = malloc(1 << 20);
        if (!p)
            return fail_errno(ENOMEM);
        memset(p, 0x5a, 1 << 20);
    }
    printf("OK\n");
    return 0;
}

static int spin(long seconds)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 100000; i++)
            x += (unsigned long)i;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec - start.tv_sec < seconds);
    printf("OK\n");
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && strcmp(argv[1], "listen-abstract") == 0)
        return listen_abstract(argv[2]);
    if (argc == 4 && strcmp(argv[1], "truncate") == 0) {
        if (truncate(argv[2], strtoll(argv[3], NULL, 10)) < 0)
            return fail_errno(errno);
        printf("OK\n");
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "chmod") == 0) {
        if (chmod(argv[2], (mode_t)strtol(argv[3], NULL, 8)) < 0)
            return fail_errno(errno);
        printf("OK\n");
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "forks") == 0)
        return forks(strtol(argv[2], NULL, 10));
    if (argc == 3 && strcmp(argv[1], "alloc") == 0)
        return alloc(strtol(argv[2], NULL, 10));
    if (argc == 3 && strcmp(argv[1], "spin") == 0)
        return spin(strtol(argv[2], NULL, 10));
    return usage();
}
