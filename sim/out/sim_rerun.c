/*
 * sim_rerun.c -- a run's script as recorded, and what a rerun compares
 * (sim_rerun.h).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "sim/out/sim_rerun.h"
#include "sim/out/sim_strbuf.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *sim_out_script_read(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0;
    if (!f) {
        snprintf(err, errlen, "%s: cannot open script: %s", path, strerror(errno));
        return NULL;
    }
    for (;;) {
        if (n == cap) {
            if (cap >= SIM_OUT_SCRIPT_MAX_BYTES) {
                snprintf(err, errlen, "%s: script larger than 16 MiB", path);
                free(buf);
                fclose(f);
                return NULL;
            }
            cap = cap ? 2 * cap : 65536;
            char *nb = realloc(buf, cap + 1);
            if (!nb) {
                snprintf(err, errlen, "%s: out of memory reading the script", path);
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        snprintf(err, errlen, "%s: cannot read script", path);
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

void sim_out_script_hash(const char *b, size_t len, char *out, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (uint64_t)(unsigned char)b[i];
        h *= 1099511628211ull;
    }
    snprintf(out, n, "%016llx", (unsigned long long)h);
}

void sim_out_rerun_script_dir(const char *dir, const char *given, const char *home, char *out,
                              size_t n)
{
    char cand[PATH_MAX];
    if (given && given[0] == '/')
        snprintf(cand, sizeof cand, "%s", given);
    else if (given)
        snprintf(cand, sizeof cand, "%s/%s", home ? home : ".", given);
    char *slash = given ? strrchr(cand, '/') : NULL;
    if (slash) *slash = 0;
    struct stat st;
    if (slash && stat(cand, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(out, n, "%s", cand);
    else
        snprintf(out, n, "%s", dir);
}

void sim_out_rerun_profile_path(const char *rel, const char *home, char *out, size_t n)
{
    char path[PATH_MAX];
    if (rel[0] == '/')
        snprintf(path, sizeof path, "%s", rel);
    else if ((size_t)snprintf(path, sizeof path, "%s/%.*s", home, PATH_MAX / 2, rel) >=
             sizeof path)
        path[0] = 0; /* too long: no file of today to compare with */
    char real[PATH_MAX];
    if (path[0] && realpath(path, real)) snprintf(path, sizeof path, "%s", real);
    if ((size_t)snprintf(out, n, "%s", path) >= n) out[0] = 0;
}

/* The value of row d of params as a profile writes it: a string quoted, a
 * list in braces ("{1,2}"), cut short with "..." when long. */
static void value_text(const eng_param_desc *d, const void *params, char *out, size_t n)
{
    int list = d->type == ENG_PARAM_INT_LIST || d->type == ENG_PARAM_DOUBLE_LIST;
    const char *open = d->type == ENG_PARAM_STRING ? "'" : list ? "{" : "";
    const char *close = d->type == ENG_PARAM_STRING ? "'" : list ? "}" : "";
    size_t o = strlen(open);
    if (n < 8) return;
    snprintf(out, n, "%s", open);
    if (sim_out_param_value(d, params, 1, ',', out + o, n - 2 * o) != 0)
        snprintf(out + n - 2 * o - 4, 4, "...");
    snprintf(out + strlen(out), n - strlen(out), "%s", close);
}

/* Whether row d holds the same value in a and b. */
static int same_value(const eng_param_desc *d, const void *a, const void *b)
{
    const char *fa = (const char *)a + d->offset, *fb = (const char *)b + d->offset;
    if (d->type == ENG_PARAM_STRING) return strncmp(fa, fb, (size_t)d->cap) == 0;
    if (d->type != ENG_PARAM_DOUBLE_LIST && d->type != ENG_PARAM_INT_LIST)
        return memcmp(fa, fb, d->type == ENG_PARAM_DOUBLE ? sizeof(double) : sizeof(int32_t)) ==
               0;
    int32_t ca, cb;
    memcpy(&ca, (const char *)a + d->count_offset, sizeof ca);
    memcpy(&cb, (const char *)b + d->count_offset, sizeof cb);
    size_t el = d->type == ENG_PARAM_INT_LIST ? sizeof(int32_t) : sizeof(double);
    return ca == cb && ca >= 0 && ca <= d->cap && memcmp(fa, fb, (size_t)ca * el) == 0;
}

int sim_out_param_diff(const eng_param_desc *keys, const void *today, const void *rec, char *msg,
                       size_t n)
{
    size_t at = 0;
    int k = 0;
    for (const eng_param_desc *d = keys; d->name; d++) {
        if (same_value(d, today, rec)) continue;
        if (++k > 6) continue;
        char t[96], r[96];
        value_text(d, today, t, sizeof t);
        value_text(d, rec, r, sizeof r);
        if (at < n)
            at += (size_t)snprintf(msg + at, n - at, "%s%s %s today, %s in run.json",
                                   k > 1 ? "; " : "", d->name, t, r);
    }
    if (k > 6 && at < n) snprintf(msg + at, n - at, "; %d more", k - 6);
    return k;
}

int sim_out_same_file(const char *a, const char *b, long *line)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb ? 1 : -1;
    long ln = 1;
    while (same == 1) {
        int ca = getc(fa), cb = getc(fb);
        if (ca != cb) same = 0;
        if (ca == EOF || cb == EOF) break;
        if (ca == '\n') ln++;
    }
    if (line) *line = same == 0 ? ln : 0;
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}
