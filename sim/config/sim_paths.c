/*
 * sim_paths.c -- finding the files a script names.  See sim_paths.h.
 */
#include "sim/config/sim_paths.h"

#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "eng_param.h"

int sim_paths_is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int sim_paths_find_any(const char *script_dir, const char *project_dir, const char *path,
                       char *out, size_t n)
{
    struct stat st;
    const char *dirs[2] = {script_dir, project_dir};
    for (int i = 0; i < 2; i++) {
        int k = snprintf(out, n, "%s/%s", dirs[i], path);
        if (k > 0 && (size_t)k < n && stat(out, &st) == 0) return 0;
    }
    out[0] = 0;
    return -1;
}

int sim_paths_find_file(const char *script_dir, const char *project_dir, const char *path,
                        char *out, size_t n, char *tried, size_t tn)
{
    out[0] = 0;
    if (tried && tn) tried[0] = 0;
    if (path[0] == '/') {
        snprintf(out, n, "%s", path);
    } else {
        char c1[PATH_MAX], c2[PATH_MAX];
        int n1 = snprintf(c1, sizeof c1, "%s/%s", script_dir, path);
        int n2 = snprintf(c2, sizeof c2, "%s/%s", project_dir, path);
        if (n1 > 0 && (size_t)n1 < sizeof c1 && (size_t)n1 < n && sim_paths_is_file(c1))
            memcpy(out, c1, (size_t)n1 + 1);
        else if (n2 > 0 && (size_t)n2 < sizeof c2 && (size_t)n2 < n && sim_paths_is_file(c2))
            memcpy(out, c2, (size_t)n2 + 1);
        if (tried && tn) snprintf(tried, tn, " (looked in %s and %s)", script_dir, project_dir);
    }
    return out[0] && sim_paths_is_file(out) ? 0 : -1;
}

void sim_paths_nearest(const char *script_dir, const char *project_dir, const char *path,
                       const char *ext, char *out, size_t n)
{
    out[0] = 0;
    if (path[0] == '/') return;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    int dn = slash ? (int)(slash - path) : 0;
    const char *roots[2] = {script_dir, project_dir};
    size_t el = strlen(ext);
    char best[256] = "";
    int32_t bd = 0;
    for (int r = 0; r < 2; r++) {
        char dir[PATH_MAX];
        if (snprintf(dir, sizeof dir, "%s/%.*s", roots[r], dn, path) >= (int)sizeof dir)
            continue;
        DIR *d = opendir(dir);
        if (!d) continue;
        for (struct dirent *ent; (ent = readdir(d)) != NULL;) {
            size_t l = strlen(ent->d_name);
            if (l <= el || strcmp(ent->d_name + l - el, ext) != 0 || l >= sizeof best) continue;
            int32_t dist = eng_params_distance(base, ent->d_name);
            if (!best[0] || dist < bd) {
                bd = dist;
                snprintf(best, sizeof best, "%s", ent->d_name);
            }
        }
        closedir(d);
    }
    int32_t near = (int32_t)strlen(base) / 3 > 3 ? (int32_t)strlen(base) / 3 : 3;
    if (best[0] && bd <= near)
        snprintf(out, n, " (did you mean '%.*s%s%s'?)", dn, path, dn ? "/" : "", best);
}
