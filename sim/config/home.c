/*
 * home.c -- the home and configs directories (home.h).
 */
#define _DEFAULT_SOURCE /* realpath */
#include "sim/config/home.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef FS_PROJECT_DIR
#define FS_PROJECT_DIR "."
#endif
#ifndef FS_SHARE_REL
#define FS_SHARE_REL "../share/flashspec"
#endif

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static char g_home[PATH_MAX];

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* <directory of the running executable>/FS_SHARE_REL, when it holds configs/. */
static int installed_home(char *out, size_t n)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) return -1;
    exe[len] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = 0;
    char cand[PATH_MAX], cfg[PATH_MAX + 16], real[PATH_MAX];
    if (snprintf(cand, sizeof cand, "%s/%s", exe, FS_SHARE_REL) >= (int)sizeof cand) return -1;
    if (snprintf(cfg, sizeof cfg, "%s/configs", cand) >= (int)sizeof cfg || !is_dir(cfg)) return -1;
    if (!realpath(cand, real)) return -1;
    snprintf(out, n, "%s", real);
    return 0;
}

static void resolve(void)
{
    const char *e = getenv("FLASHSPEC_HOME");
    if (e && *e)
        snprintf(g_home, sizeof g_home, "%s", e);
    else if (installed_home(g_home, sizeof g_home) != 0)
        snprintf(g_home, sizeof g_home, "%s", FS_PROJECT_DIR);
}

const char *fs_home_dir(void)
{
    pthread_once(&g_once, resolve);
    return g_home;
}

const char *fs_config_dir(void)
{
    static _Thread_local char buf[PATH_MAX + 16];
    const char *e = getenv("FLASHSPEC_CONFIG_DIR");
    if (e && *e) return e;
    snprintf(buf, sizeof buf, "%s/configs", fs_home_dir());
    return buf;
}
