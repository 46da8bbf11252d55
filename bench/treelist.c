/* treelist: the floor under any secret scan: list every directory of a tree, and nothing more.
 *
 *   treelist DIR THREADS [SKIP...]
 *
 * Lists DIR and every directory below it (open, getdents64 until the end, close; never following a symlink),
 * except directories named SKIP, on THREADS threads sharing the work depth first.  No stat, no name matching,
 * no cache: what is left is the kernel's cost of reading the directories, which bench/startup prints beside
 * confine's first run (no scan cache) so that the part of that figure no program could avoid on this machine
 * is visible.  Prints the number of directories listed.  Exit code 0, or 1 if DIR cannot be opened.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_THREADS 16

static char **skip_names;
static int skip_count;

/* A growable stack of open directory fds. */
struct stack {
    int *fds;
    size_t n, cap;
};

static void push(struct stack *s, int fd) {
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 256;
        s->fds = realloc(s->fds, s->cap * sizeof *s->fds);
        if (!s->fds) abort();
    }
    s->fds[s->n++] = fd;
}

static struct stack shared;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static int busy;
static atomic_int idle;
static atomic_long listed;

static int skipped(const char *name) {
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) return 1;
    for (int i = 0; i < skip_count; i++)
        if (strcmp(name, skip_names[i]) == 0) return 1;
    return 0;
}

/* Lists one directory, pushing its subdirectories (opened) on `mine`, and closes it. */
static void list(int fd, struct stack *mine) {
    char buf[32768];
    long n;
    while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
        for (long off = 0; off < n;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            off += d->d_reclen;
            if (d->d_type != DT_DIR || skipped(d->d_name)) continue;
            int sub = openat(fd, d->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) push(mine, sub);
        }
    }
    close(fd);
    atomic_fetch_add(&listed, 1);
}

/* Waits for shared work; 0 when there is none left anywhere. */
static int take(struct stack *mine) {
    pthread_mutex_lock(&lock);
    busy--;
    atomic_fetch_add(&idle, 1);
    while (shared.n == 0 && busy > 0) pthread_cond_wait(&wake, &lock);
    atomic_fetch_sub(&idle, 1);
    int got = shared.n > 0;
    if (got) {
        push(mine, shared.fds[--shared.n]);
        busy++;
    } else {
        pthread_cond_broadcast(&wake);
    }
    pthread_mutex_unlock(&lock);
    return got;
}

static void *work(void *unused) {
    (void)unused;
    struct stack mine = {0};
    while (take(&mine)) {
        while (mine.n > 0) {
            if (mine.n > 1 && atomic_load(&idle) > 0) {  /* hand over the oldest: the nearest the root */
                pthread_mutex_lock(&lock);
                push(&shared, mine.fds[0]);
                pthread_cond_signal(&wake);
                pthread_mutex_unlock(&lock);
                memmove(mine.fds, mine.fds + 1, (mine.n - 1) * sizeof *mine.fds);
                mine.n--;
            }
            list(mine.fds[--mine.n], &mine);
        }
    }
    free(mine.fds);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s DIR THREADS [SKIP...]\n", argv[0]);
        return 2;
    }
    int threads = atoi(argv[2]);
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    skip_names = argv + 3;
    skip_count = argc - 3;
    int root = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) {
        perror(argv[1]);
        return 1;
    }
    push(&shared, root);
    busy = threads;
    pthread_t helpers[MAX_THREADS];
    for (int t = 1; t < threads; t++) pthread_create(&helpers[t], NULL, work, NULL);
    work(NULL);
    for (int t = 1; t < threads; t++) pthread_join(helpers[t], NULL);
    printf("%ld\n", atomic_load(&listed));
    return 0;
}
