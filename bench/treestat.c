/* treestat: the floor under a warm secret scan and the check after the run: stat every directory, twice.
 *
 *   treestat DIR LISTFILE
 *
 * LISTFILE holds DIR's directories, one relative path per line (what confine's walk visits: every directory but
 * .git).  With its cache warm, confine learns whether a directory changed since the last run from one stat of it;
 * it does that before the run (to mask what is there) and after it (to find what the run left for git), so two
 * fstatat calls per directory, from the directory's fd and never through a symlink, are what no warm run can
 * avoid.  No listing, no cache to read, no threads.  Prints the number of stats.  Exit 0, 1 if DIR or LISTFILE
 * cannot be read.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s DIR LISTFILE\n", argv[0]);
        return 2;
    }
    int root = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    FILE *list = fopen(argv[2], "r");
    if (root < 0 || !list) {
        perror(root < 0 ? argv[1] : argv[2]);
        return 1;
    }
    char **paths = NULL;
    size_t n = 0, cap = 0;
    char *line = NULL;
    size_t len = 0;
    ssize_t got;
    while ((got = getline(&line, &len, list)) > 0) {
        if (line[got - 1] == '\n') line[got - 1] = '\0';
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            paths = realloc(paths, cap * sizeof *paths);
            if (!paths) abort();
        }
        paths[n++] = strdup(line);
    }
    long stats = 0;
    struct stat st;
    for (int pass = 0; pass < 2; pass++)  /* before the run, and after it */
        for (size_t i = 0; i < n; i++)
            if (fstatat(root, paths[i], &st, AT_SYMLINK_NOFOLLOW) == 0) stats++;
    printf("%ld\n", stats);
    return 0;
}
