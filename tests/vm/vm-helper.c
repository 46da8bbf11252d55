/*
 * confine-vm-helper: operations the VM checks need that neither busybox nor confine-test-probe offer.
 * Same conventions as the probe: "OK ..." and exit 0, or the errno name and exit 1; usage errors exit 2.
 *
 *   listen-abstract NAME   listen on the abstract unix socket @NAME, print "READY", accept and close forever
 *   truncate PATH LENGTH   truncate(2) by path -- Landlock restricts it only from ABI 3 (Linux 6.2) on
 *   chmod PATH MODE        chmod(2), MODE in octal -- Landlock does not restrict it at any ABI
 *
 * Static, so that it runs inside the sandbox and in the busybox VM alike.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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
    fprintf(stderr, "usage: confine-vm-helper listen-abstract NAME | truncate PATH LENGTH | chmod PATH MODE\n");
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
    return usage();
}
