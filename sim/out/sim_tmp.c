/*
 * sim_tmp.c -- temporary-file names and stale-temporary removal (sim_tmp.h).
 */
#define _DEFAULT_SOURCE /* DT_REG, DT_UNKNOWN */
#include "sim/out/sim_tmp.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* FNV-1a 32 of the host name: a fixed-width tag whatever characters the name
 * holds. */
static uint32_t host_tag(void)
{
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0) host[0] = 0;
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)host; *p; p++) {
        h ^= *p;
        h *= 16777619u;
    }
    return h;
}

int sim_tmp_name(char *out, size_t n, const char *dir, const char *name, const char *suffix)
{
    int k = snprintf(out, n, "%s%s.%s" SIM_TMP_MARK "%ld-%08x-%s", dir, dir[0] ? "/" : "", name,
                     (long)getpid(), (unsigned)host_tag(), suffix);
    return k > 0 && (size_t)k < n ? 0 : -1;
}

/* 1 when the temporary named `name` (an entry of a directory, with mtime)
 * is stale; 0 for a live one or a name that is not a temporary of ours. */
static int is_stale(const char *name, time_t mtime, time_t now, uint32_t host)
{
    if (name[0] != '.') return 0;
    const char *m = strstr(name, SIM_TMP_MARK);
    if (!m) return 0;
    char *end;
    errno = 0;
    long pid = strtol(m + strlen(SIM_TMP_MARK), &end, 10);
    if (errno || pid <= 0 || *end != '-') return 0;
    unsigned long tag = strtoul(end + 1, &end, 16);
    if (*end != '-') return 0;
    if (now - mtime > SIM_TMP_STALE_S) return 1;
    return (uint32_t)tag == host && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 &&
           errno == ESRCH;
}

int sim_tmp_clean(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK);
    if (fd < 0) return 0;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return 0;
    }
    uint32_t host = host_tag();
    time_t now = time(NULL);
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_type != DT_REG && e->d_type != DT_UNKNOWN) continue;
        if (!strstr(e->d_name, SIM_TMP_MARK)) continue;
        struct stat st;
        if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (is_stale(e->d_name, st.st_mtime, now, host) && unlinkat(fd, e->d_name, 0) == 0)
            removed++;
    }
    closedir(d);
    return removed;
}
