/*
 * sim_outdir.c -- a script run's output directory (sim_outdir.h).
 */
#include "sim/out/sim_outdir.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/out/sim_out.h"
#include "sim/out/sim_tmp.h"
#include "sim/sim_status.h"

/* Can a file be created next to path?  0, or errno. */
static int dir_writable(const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    struct stat st;
    if (stat(dir, &st) != 0) return errno;
    if (!S_ISDIR(st.st_mode)) return ENOTDIR;
    return access(dir, W_OK | X_OK) == 0 ? 0 : errno;
}

/* Can results be written into dir?  It exists as a writable directory, or
 * its nearest existing ancestor is one (it will be created).  0, or errno;
 * p[0..pn) holds the path it stopped at (the directory, or the ancestor that
 * refused). */
static int out_dir_writable(const char *dir, char *p, size_t pn)
{
    if (!*dir) return ENOENT;
    if (snprintf(p, pn, "%s", dir) >= (int)pn) return ENAMETOOLONG;
    for (;;) {
        struct stat st;
        if (stat(p, &st) == 0) {
            if (!S_ISDIR(st.st_mode)) return ENOTDIR;
            return access(p, W_OK | X_OK) == 0 ? 0 : errno;
        }
        /* a file on the way: go up to it */
        if (errno != ENOENT && errno != ENOTDIR) return errno;
        char *slash = strrchr(p, '/');
        while (slash && slash > p && slash[1] == 0) { /* trailing slashes */
            *slash = 0;
            slash = strrchr(p, '/');
        }
        if (!slash) {
            snprintf(p, pn, ".");
        } else if (slash == p) {
            p[1] = 0;
        } else {
            *slash = 0;
        }
    }
}

/* What to do about an output directory out_dir_writable refused (errno e at
 * path at): " (WHY; choose another directory with -o DIR)". */
static void out_dir_hint(int e, const char *at, char *out, size_t n)
{
    char why[PATH_MAX + 48] = "";
    if (e == ENOTDIR)
        snprintf(why, sizeof why, "'%s' is a file, not a directory; ", at);
    else if (e == EACCES || e == EPERM)
        snprintf(why, sizeof why, "no permission to write in '%s'; ", at);
    else if (e == EROFS)
        snprintf(why, sizeof why, "'%s' is on a read-only file system; ", at);
    else if (e == ENAMETOOLONG)
        snprintf(why, sizeof why, "a shorter path; ");
    snprintf(out, n, " (%schoose another directory with -o DIR)", why);
}

int sim_out_dir_check(const char *dir, char *err, size_t errlen)
{
    char at[PATH_MAX];
    int e = out_dir_writable(dir, at, sizeof at);
    if (!e) return SIM_OK;
    char hint[PATH_MAX + 96];
    out_dir_hint(e, at, hint, sizeof hint);
    snprintf(err, errlen, "cannot write output '%s': %s%s", dir,
             *dir ? strerror(e) : "empty directory name", hint);
    return SIM_CANTCREATE;
}

int sim_out_path_check(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode)) return SIM_OK;
    snprintf(err, errlen, "cannot write output '%s': %s", path,
             S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file");
    return SIM_CANTCREATE;
}

int sim_out_path_creatable(const char *path, char *err, size_t errlen)
{
    int e = dir_writable(path);
    if (!e) return SIM_OK;
    snprintf(err, errlen, "cannot write output '%s': %s", path, strerror(e));
    return SIM_CANTCREATE;
}

int sim_out_dir_lock(sim_out_lockh *lock, const char *dir, const char *store_dir, int quiet,
                     int *made_dir, char *err, size_t errlen)
{
    if (sim_out_lock_take(lock, dir, made_dir, err, errlen) != 0) return SIM_CANTCREATE;
    /* temporaries a killed run left in DIR and DIR/points (their writer
     * gone, or a day old): removed before this run adds its own */
    int gone = sim_tmp_clean(dir) + sim_tmp_clean(store_dir);
    if (gone && !quiet)
        fprintf(stderr,
                "flashspec: removed %d temporary file%s left in %s by an "
                "interrupted run\n",
                gone, gone == 1 ? "" : "s", dir);
    return SIM_OK;
}

int sim_out_dir_held(sim_out_lockh *lock, char *err, size_t errlen)
{
    return sim_out_lock_keep(lock, err, errlen) == 0 ? SIM_OK : SIM_CANTCREATE;
}

int sim_out_record_write(const char *dir, const fs_runrec *rec, const fs_runrec_run *run,
                         const struct fs_row *rows, int32_t n_rows, char *err, size_t errlen)
{
    char *json = NULL;
    size_t n = 0;
    if (!rec || fs_runrec_json(rec, run, rows, n_rows, &json, &n) != 0) {
        snprintf(err, errlen, "out of memory for %s/run.json", dir);
        return SIM_INTERNAL;
    }
    int rc = sim_out_write_file(dir, "script.lua", run->script_bytes, run->script_len, err,
                                errlen);
    if (rc == SIM_OK) rc = sim_out_write_file(dir, "run.json", json, n, err, errlen);
    free(json);
    return rc;
}

void sim_out_record_drop(const sim_out_lockh *lock, const char *dir)
{
    char held[8];
    if (sim_out_lock_held(lock->fd, dir, held, sizeof held) != 0) return;
    char p[PATH_MAX + 16];
    snprintf(p, sizeof p, "%s/run.json", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/script.lua", dir);
    unlink(p);
}

void sim_out_dir_release(sim_out_lockh *lock, const char *dir, int made_dir, int failed,
                         int quiet)
{
    char held[8];
    if (made_dir && failed && lock->fd >= 0 &&
        sim_out_lock_held(lock->fd, dir, held, sizeof held) == 0)
        rmdir(dir); /* ours still, and empty: never another run's */
    if (lock->fd >= 0 && lock->relocked && !quiet)
        fprintf(stderr,
                "flashspec: warning: %s was removed while this run wrote it; the run made it "
                "again and locked it (resume records saved before the removal are gone)\n",
                dir);
    sim_out_lock_release(lock);
}

/* DIR/run.json and DIR/script.lua: w's record with the traces and profiles
 * listed. */
static int results_record(const sim_out_results *w, char *err, size_t errlen)
{
    int32_t cap = w->traces->n, pcap = w->profiles->n;
    fs_runrec_trace *traces = calloc((size_t)(cap ? cap : 1), sizeof *traces);
    char(*paths)[PATH_MAX] = calloc((size_t)(cap ? cap : 1), sizeof *paths);
    fs_runrec_profile *profs = calloc((size_t)(pcap ? pcap : 1), sizeof *profs);
    char(*ppaths)[PATH_MAX] = calloc((size_t)(pcap ? pcap : 1), sizeof *ppaths);
    int rc = SIM_INTERNAL;
    if (!traces || !paths || !profs || !ppaths) {
        snprintf(err, errlen, "out of memory for %s/run.json", w->dir);
    } else {
        fs_runrec_run run = w->run;
        run.traces = traces;
        run.n_traces = fs_runrec_list_traces(w->traces, w->rows, w->n_rows, w->home, traces,
                                             paths, cap);
        run.profiles = profs;
        run.n_profiles = fs_runrec_list_profiles(w->profiles, w->home, profs, ppaths, pcap);
        rc = sim_out_record_write(w->dir, w->rec, &run, w->rows, w->n_rows, err, errlen);
    }
    free(traces);
    free(paths);
    free(profs);
    free(ppaths);
    return rc;
}

int sim_out_results_write(const sim_out_results *w, char *err, size_t errlen)
{
    int code = SIM_OK;
    if (w->n_rows > 0) {
        /* what produced the results, written before them (and removed again
         * if they cannot be written) */
        code = sim_out_dir_held(w->lock, err, errlen);
        int wrote = code == SIM_OK;
        if (code == SIM_OK) code = results_record(w, err, errlen);
        if (code == SIM_OK) code = sim_out_dir_held(w->lock, err, errlen);
        if (code == SIM_OK) code = fs_rows_write(w->meta, w->rows, w->n_rows, w->dir, err, errlen);
        if (code != SIM_OK && wrote) sim_out_record_drop(w->lock, w->dir);
        if (code == SIM_OK && !w->quiet)
            fprintf(stderr,
                    "flashspec: wrote %d point%s to %s/results.{csv,h5} (%lld computed, "
                    "%lld resumed)\n",
                    w->n_rows, w->n_rows == 1 ? "" : "s", w->dir, (long long)w->computed,
                    (long long)w->resumed);
    }
    for (int32_t i = 0; code == SIM_OK && i < w->n_files; i++) {
        code = sim_out_dir_held(w->lock, err, errlen);
        if (code != SIM_OK) break;
        int rc = sim_out_write_file(w->dir, w->files[i].name, w->files[i].data, w->files[i].len,
                                    err, errlen);
        if (rc != SIM_OK)
            code = rc;
        else if (!w->quiet)
            fprintf(stderr, "flashspec: wrote %s/%s\n", w->dir, w->files[i].name);
    }
    return code;
}
