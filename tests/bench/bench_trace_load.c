/*
 * bench_trace_load.c -- benchmark of trc_load (meson benchmark, not a test).
 *
 * Generates a synthetic trace of about 100 MB (trc_synth: 32 prompts x 1,000
 * reference tokens, trees of up to 32 nodes, K = 8, one exit layer) into a
 * temporary directory, writes it with trc_save -- the same bytes `flashspec
 * trace synth` writes -- then loads it REPEAT times and prints the median
 * [min, max] time and the median rate in MB/s of file bytes and of in-memory
 * bytes (the load includes the full
 * validation and the content checksum, as every load does), then opens it
 * prompt by prompt (trc_open) and reads every prompt once on one thread (each
 * read and validated on its own).  The first
 * load warms the page cache, so the rate is the reader's (HDF5 decode,
 * deflate, validation), not the disk's.  argv[1]: directory for the
 * temporary file (default $TMPDIR or /tmp); removed afterwards.
 */
#include "traces/trc.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define REPEAT 5

/* Sorts v[0..n) and returns its median (n >= 1). */
static double median(double *v, int n)
{
    gsl_sort(v, 1, (size_t)n);
    return gsl_stats_median_from_sorted_data(v, 1, (size_t)n);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    const char *tmp = argc > 1 ? argv[1] : getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/bench-trace-XXXXXX", tmp);
    if (!mkdtemp(dir)) {
        perror("bench_trace_load: mkdtemp");
        return 1;
    }
    snprintf(path, sizeof path, "%s/big.h5", dir);

    trc_synth_params sp;
    trc_synth_default_params(&sp);
    sp.seed = 5;
    sp.prompts = 32;
    sp.output_len = 1000;
    trc_trace *t = NULL;
    trc_err err;
    double t0 = now_s();
    int rc = trc_synth(&sp, &t, &err);
    double t_synth = now_s() - t0;
    if (!rc) {
        t0 = now_s();
        rc = trc_save(t, path, &err);
        printf("generated in %.2f s, written in %.2f s\n", t_synth, now_s() - t0);
    }
    uint64_t sum_ref = t ? trc_checksum(t) : 0;
    trc_free(t);
    if (rc) {
        fprintf(stderr, "bench_trace_load: %s\n", err.msg);
        rmdir(dir);
        return 1;
    }
    struct stat st;
    stat(path, &st);
    double file_mb = (double)st.st_size / 1e6, mem_mb = 0, nodes = 0;
    double t_load[REPEAT], t_opens[REPEAT], t_lazy[REPEAT];
    int ok = 1;
    for (int i = 0; i <= REPEAT && ok; i++) { /* i = 0 warms the page cache */
        t0 = now_s();
        rc = trc_load(path, &t, &err);
        double dt = now_s() - t0;
        if (rc) {
            fprintf(stderr, "bench_trace_load: %s\n", err.msg);
            ok = 0;
            break;
        }
        mem_mb = (double)trc_bytes(t) / 1e6;
        nodes = (double)trc_get_meta(t)->n_nodes;
        if (trc_checksum(t) != sum_ref) {
            fprintf(stderr, "bench_trace_load: checksum changed across save and load\n");
            ok = 0;
        }
        trc_free(t);
        if (i > 0) t_load[i - 1] = dt;
    }
    /* the same file opened prompt by prompt (its index), every prompt read
     * once on this thread: open, then reads and validation per prompt */
    for (int i = 0; i <= REPEAT && ok; i++) {
        t0 = now_s();
        rc = trc_open(path, (size_t)64 << 20, &t, &err);
        double t_open = now_s() - t0;
        for (int32_t p = 0; !rc && p < trc_get_meta(t)->n_prompts; p++) {
            rc = trc_prompt_acquire(t, p, &err);
            if (!rc) trc_prompt_release(t, p);
        }
        double dt = now_s() - t0;
        if (rc) {
            fprintf(stderr, "bench_trace_load: %s\n", err.msg);
            ok = 0;
        } else if (trc_checksum(t) != sum_ref) {
            fprintf(stderr, "bench_trace_load: checksum changed when opened by prompt\n");
            ok = 0;
        }
        trc_free(t);
        if (i > 0) {
            t_lazy[i - 1] = dt;
            t_opens[i - 1] = t_open;
        }
    }
    unlink(path);
    rmdir(dir);
    if (!ok) return 1;
    double load = median(t_load, REPEAT), open = median(t_opens, REPEAT),
           lazy = median(t_lazy, REPEAT);
    printf("trace load (median [min, max] of %d): %.1f MB file, %.1f MB in memory\n", REPEAT,
           file_mb, mem_mb);
    printf("  trc_load       %7.3f s [%.3f, %.3f]  %8.1f MB/s of file  %8.1f MB/s in memory\n",
           load, t_load[0], t_load[REPEAT - 1], file_mb / load, mem_mb / load);
    printf("  trc_open        %7.4f s [%.4f, %.4f]  (index, offsets, tokens; no trees)\n", open,
           t_opens[0], t_opens[REPEAT - 1]);
    printf("  + every prompt %7.3f s [%.3f, %.3f]  %8.1f MB/s of file, one thread, 64 MiB cache\n",
           lazy, t_lazy[0], t_lazy[REPEAT - 1], file_mb / lazy);
    if (nodes > 0)
        printf("  memory per node %.1f bytes (%.0f nodes; file %.1f bytes per node)\n",
               mem_mb * 1e6 / nodes, nodes, file_mb * 1e6 / nodes);
    return 0;
}
