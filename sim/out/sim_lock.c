/*
 * sim_lock.c -- the output directory's advisory lock (sim_lock.h).
 */
#define _DEFAULT_SOURCE /* flock */
#include "sim/out/sim_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkdir -p: 0, or -1 with errno. */
static int make_dirs(const char *dir)
{
    char p[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof p) {
        errno = n ? ENAMETOOLONG : ENOENT;
        return -1;
    }
    memcpy(p, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        if (p[i - 1] == '/') continue;
        char saved = p[i];
        p[i] = '\0';
        struct stat st;
        if (mkdir(p, 0777) != 0 && (errno != EEXIST || stat(p, &st) != 0 || !S_ISDIR(st.st_mode))) {
            if (errno == EEXIST) errno = ENOTDIR;
            return -1;
        }
        p[i] = saved;
    }
    return 0;
}

int sim_out_lock(const char *dir, int *created, char *err, size_t errlen)
{
    struct stat st;
    *created = stat(dir, &st) != 0;
    if (make_dirs(dir) != 0) {
        snprintf(err, errlen, "cannot write output '%s': %s", dir, strerror(errno));
        return -1;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write output '%s': %s", dir, strerror(errno));
        return -1;
    }
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR) continue;
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK)
            snprintf(err, errlen, "cannot write output '%s': another flashspec run is writing "
                     "it; wait for that run to end or choose another -o", dir);
        else
            snprintf(err, errlen, "cannot write output '%s': cannot lock it: %s", dir,
                     strerror(e));
        return -1;
    }
    return fd;
}
