/*
 * sim_lock.c -- the output directory's advisory lock (sim_lock.h).
 */
#define _DEFAULT_SOURCE /* flock */
#include "sim/out/sim_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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

/* 1 when path names the directory open at fd (same device and inode). */
static int same_dir(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

int sim_out_lock_held(int fd, const char *dir, char *err, size_t errlen)
{
    if (same_dir(fd, dir)) return 0;
    snprintf(err, errlen,
             "cannot write output '%s': the directory this run locked was removed or replaced "
             "while it ran (another run may be writing there now); nothing more is written "
             "there by this run",
             dir);
    return -1;
}

/* Tries to take the lock on the directory at dir: its descriptor; -2 with
 * errno when it does not open; -1 with errno when it is not locked
 * (EWOULDBLOCK: another run holds it; ESTALE: the path named another
 * directory by the time the lock was taken). */
static int lock_once(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -2;
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR) continue;
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (!same_dir(fd, dir)) { /* replaced between open and flock */
        close(fd);
        errno = ESTALE;
        return -1;
    }
    return fd;
}

int sim_out_lock(const char *dir, int *created, char *err, size_t errlen)
{
    struct stat st;
    *created = stat(dir, &st) != 0;
    for (int attempt = 0;; attempt++) {
        if (make_dirs(dir) != 0) {
            snprintf(err, errlen, "cannot write output '%s': %s", dir, strerror(errno));
            return -1;
        }
        int fd = lock_once(dir);
        if (fd >= 0) return fd;
        int e = errno;
        if ((e == ESTALE || e == ENOENT) && attempt < 3) continue; /* the path moved: again */
        if (fd == -2)
            snprintf(err, errlen, "cannot write output '%s': %s", dir, strerror(e));
        else if (e == EWOULDBLOCK)
            snprintf(err, errlen, "cannot write output '%s': another flashspec run is writing "
                     "it; wait for that run to end or choose another -o", dir);
        else if (e == ESTALE)
            snprintf(err, errlen, "cannot write output '%s': it keeps being replaced while "
                     "being locked", dir);
        else
            snprintf(err, errlen, "cannot write output '%s': cannot lock it: %s", dir,
                     strerror(e));
        return -1;
    }
}

int sim_out_lock_take(sim_out_lockh *h, const char *dir, int *created, char *err, size_t errlen)
{
    h->dir = dir;
    h->relocked = 0;
    h->fd = sim_out_lock(dir, created, err, errlen);
    if (h->fd < 0) return -1;
    if (pthread_mutex_init(&h->mu, NULL) != 0) {
        close(h->fd);
        h->fd = -1;
        snprintf(err, errlen, "cannot write output '%s': out of resources", dir);
        return -1;
    }
    return 0;
}

void sim_out_lock_release(sim_out_lockh *h)
{
    if (!h || h->fd < 0) return;
    close(h->fd);
    h->fd = -1;
    pthread_mutex_destroy(&h->mu);
}

/* 1 when dir holds a file a finished run leaves (its results or record). */
static int holds_results(const char *dir)
{
    static const char *const names[] = {"results.csv", "results.h5", "run.json", NULL};
    char p[4200];
    struct stat st;
    for (int i = 0; names[i]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        if (lstat(p, &st) == 0) return 1;
    }
    return 0;
}

/* The path's directory was replaced: lock it again when no other run owns
 * it.  Called with h->mu held. */
static int relock(sim_out_lockh *h, char *err, size_t errlen)
{
    char why[256];
    if (holds_results(h->dir)) {
        snprintf(err, errlen,
                 "cannot write output '%s': the directory this run locked was removed or "
                 "replaced while it ran, and another run has written its results there; this "
                 "run writes nothing there",
                 h->dir);
        return -1;
    }
    int created;
    int fd = sim_out_lock(h->dir, &created, why, sizeof why);
    if (fd < 0) {
        snprintf(err, errlen,
                 "cannot write output '%s': the directory this run locked was removed or "
                 "replaced while it ran, and it cannot be locked again (%s); this run writes "
                 "nothing there",
                 h->dir, strstr(why, "another flashspec run") ? "another run holds it now" : why);
        return -1;
    }
    close(h->fd);
    h->fd = fd;
    h->relocked++;
    return 0;
}

int sim_out_lock_keep(sim_out_lockh *h, char *err, size_t errlen)
{
    if (!h || h->fd < 0) return 0;
    pthread_mutex_lock(&h->mu);
    int rc = same_dir(h->fd, h->dir) ? 0 : relock(h, err, errlen);
    pthread_mutex_unlock(&h->mu);
    return rc;
}
