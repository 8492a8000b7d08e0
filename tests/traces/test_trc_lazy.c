/*
 * test_trc_lazy.c -- traces opened prompt by prompt (trc_open): every tree of
 * a lazily opened trace equals the loaded one byte for byte, with the same
 * checksum and statistics, whatever the cache size and from several threads;
 * the cache stays within its capacity plus the prompts in use and drops least
 * recently used prompts; an unacquired prompt is refused; a damaged prompt
 * (invalid value, or valid values that do not match the index) fails only
 * that prompt, with the same message every time, while trc_load refuses the
 * whole file; a damaged index fails the open; a file without an index loads
 * whole; a lazy trace cannot be saved.
 *
 * usage: test_trc_lazy DATA_DIR BAD_DIR SCRATCH_DIR
 */
#include "trc.h"

#include "trc_check.h"

#include <dirent.h>
#include <hdf5.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static char scratch[1024];

static int same_tree(const trc_tree *a, const trc_tree *b)
{
    if (a->n != b->n || a->k != b->k || a->n_exit != b->n_exit) return 0;
    size_t n = (size_t)a->n, nk = n * (size_t)a->k, nek = nk * (size_t)a->n_exit;
    return !memcmp(a->parent, b->parent, n * 4) && !memcmp(a->token, b->token, n * 4) &&
           !memcmp(a->depth, b->depth, n) && !memcmp(a->first_child, b->first_child, n * 4) &&
           !memcmp(a->next_sibling, b->next_sibling, n * 4) &&
           !memcmp(a->draft_tok, b->draft_tok, nk * 4) &&
           !memcmp(a->draft_logp, b->draft_logp, nk * 4) &&
           !memcmp(a->tgt_tok, b->tgt_tok, nk * 4) && !memcmp(a->tgt_logp, b->tgt_logp, nk * 4) &&
           (!nek || !memcmp(a->exit_score, b->exit_score, nek * 4));
}

/* Every tree of prompt p of lazy (acquired here) equals the one of whole. */
static int same_prompt(const trc_trace *whole, const trc_trace *lazy, int32_t p)
{
    trc_err err;
    if (trc_prompt_acquire(lazy, p, &err) != TRC_OK) return 0;
    int ok = 1;
    int32_t L = trc_ref(whole, p, NULL);
    for (int32_t pos = 0; pos < L && ok; pos++) {
        trc_tree a, b;
        ok = trc_tree_get(whole, p, pos, &a) == TRC_OK &&
             trc_tree_get(lazy, p, pos, &b) == TRC_OK && same_tree(&a, &b);
    }
    trc_prompt_release(lazy, p);
    return ok;
}

typedef struct worker_arg {
    const trc_trace *whole, *lazy;
    unsigned seed;
    int bad;
} worker_arg;

static void *worker(void *p)
{
    worker_arg *w = p;
    int32_t P = trc_get_meta(w->whole)->n_prompts;
    for (int i = 0; i < 60; i++) {
        w->seed = w->seed * 1103515245u + 12345u;
        if (!same_prompt(w->whole, w->lazy, (int32_t)((w->seed >> 16) % (unsigned)P))) w->bad++;
    }
    return NULL;
}

/* Overwrites one value of a dataset in place (row, column of a 2-D one). */
static int poke(const char *path, const char *ds, hsize_t row, hsize_t col, double v)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t d = f < 0 ? -1 : H5Dopen2(f, ds, H5P_DEFAULT);
    hid_t fs = d < 0 ? -1 : H5Dget_space(d);
    int rank = fs < 0 ? 0 : H5Sget_simple_extent_ndims(fs);
    hsize_t start[2] = {row, col}, count[2] = {1, 1};
    hid_t ms = H5Screate_simple(1, count, NULL);
    int ok = fs >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
             rank >= 1 && H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, &v) >= 0;
    H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    if (d >= 0) H5Dclose(d);
    if (f >= 0) H5Fclose(f);
    return ok ? 0 : -1;
}

static double peek(const char *path, const char *ds, hsize_t row, hsize_t col)
{
    double v = NAN;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = f < 0 ? -1 : H5Dopen2(f, ds, H5P_DEFAULT);
    hid_t fs = d < 0 ? -1 : H5Dget_space(d);
    hsize_t start[2] = {row, col}, count[2] = {1, 1};
    hid_t ms = H5Screate_simple(1, count, NULL);
    if (fs >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0)
        H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, &v);
    H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    if (d >= 0) H5Dclose(d);
    if (f >= 0) H5Fclose(f);
    return v;
}

static int copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    int ok = a && b;
    char buf[65536];
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof buf, a)) > 0)
        ok = fwrite(buf, 1, n, b) == n;
    if (a) fclose(a);
    if (b && fclose(b) != 0) ok = 0;
    return ok ? 0 : -1;
}

/* First node row of prompt p, from a loaded trace. */
static int64_t first_row(const trc_trace *t, int32_t p)
{
    int64_t row = 0;
    for (int32_t q = 0; q < p; q++)
        for (int32_t pos = 0; pos < trc_ref(t, q, NULL); pos++) {
            trc_tree tr;
            trc_tree_get(t, q, pos, &tr);
            row += tr.n;
        }
    return row;
}

static void test_equal(const char *path)
{
    trc_trace *whole = NULL, *lazy = NULL, *tiny = NULL;
    trc_err err;
    CHECK_EQ_INT(trc_load(path, &whole, &err), TRC_OK);
    /* room for about two prompts */
    size_t cap = trc_bytes(whole) / 6;
    CHECK_EQ_INT(trc_open(path, cap, &lazy, &err), TRC_OK);
    CHECK_EQ_INT(trc_open(path, 0, &tiny, &err), TRC_OK);
    if (!whole || !lazy || !tiny) goto out;
    CHECK(trc_is_lazy(lazy) && !trc_is_lazy(whole));
    CHECK(trc_checksum(lazy) == trc_checksum(whole));
    CHECK(!memcmp(trc_get_meta(lazy), trc_get_meta(whole), sizeof(trc_meta)));
    const trc_stats *sl = trc_get_stats(lazy), *sw = trc_get_stats(whole);
    CHECK(sl && sw && !memcmp(sl, sw, sizeof *sl));
    CHECK(trc_bytes(lazy) < trc_bytes(whole));
    int32_t P = trc_get_meta(whole)->n_prompts;
    /* nothing acquired: refused */
    trc_tree tr;
    CHECK_EQ_INT(trc_tree_get(tiny, 0, 0, &tr), TRC_E_ARG);
    for (int round = 0; round < 2; round++)
        for (int32_t i = 0; i < P; i++) {
            int32_t p = round ? P - 1 - i : i;
            CHECK(same_prompt(whole, lazy, p));
            CHECK(same_prompt(whole, tiny, p));
        }
    trc_cache_info ci;
    trc_cache_get(lazy, &ci);
    CHECK(ci.capacity == cap);
    CHECK(ci.loads > P && ci.evictions > 0 && ci.hits > 0);
    CHECK(ci.bytes <= cap && ci.peak_bytes <= cap + cap); /* + the prompt in use */
    trc_cache_get(tiny, &ci);
    CHECK(ci.loads == 2 * P && ci.bytes == 0 && ci.failed == 0);
    CHECK_EQ_INT(trc_tree_get(tiny, 0, 0, &tr), TRC_E_ARG); /* dropped on release */
    /* nested acquisitions keep a prompt */
    CHECK_EQ_INT(trc_prompt_acquire(tiny, 1, &err), TRC_OK);
    CHECK_EQ_INT(trc_prompt_acquire(tiny, 1, &err), TRC_OK);
    trc_prompt_release(tiny, 1);
    CHECK_EQ_INT(trc_tree_get(tiny, 1, 0, &tr), TRC_OK);
    trc_prompt_release(tiny, 1);
    CHECK_EQ_INT(trc_prompt_acquire(tiny, P, &err), TRC_E_ARG);
    /* four threads over one cache */
    pthread_t th[4];
    worker_arg wa[4];
    for (int i = 0; i < 4; i++) {
        wa[i] = (worker_arg){whole, lazy, 17u * (unsigned)i + 1u, 0};
        pthread_create(&th[i], NULL, worker, &wa[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ_INT(wa[i].bad, 0);
    }
    char out[1100];
    fmt(out, sizeof out, "%s/lazy-save.h5", scratch);
    CHECK_EQ_INT(trc_save(lazy, out, &err), TRC_E_ARG);
    /* checked prompt by prompt (0 bytes: nothing fits) and whole */
    trc_trace *c1 = NULL, *c2 = NULL;
    CHECK_EQ_INT(trc_check(path, 0, &c1, &err), TRC_OK);
    CHECK_EQ_INT(trc_check(path, (size_t)1 << 30, &c2, &err), TRC_OK);
    CHECK(c1 && c2 && trc_is_lazy(c1) && !trc_is_lazy(c2));
    if (c1 && c2) {
        CHECK(trc_checksum(c1) == trc_checksum(whole) && trc_checksum(c2) == trc_checksum(whole));
        CHECK(!memcmp(trc_get_stats(c1), trc_get_stats(whole), sizeof(trc_stats)));
        CHECK(same_prompt(whole, c1, P - 1));
    }
    trc_free(c1);
    trc_free(c2);
out:
    trc_free(whole);
    trc_free(lazy);
    trc_free(tiny);
}

static void test_damage(const char *src)
{
    char bad[1100];
    fmt(bad, sizeof bad, "%s/lazy-damaged.h5", scratch);
    trc_trace *whole = NULL, *t = NULL;
    trc_err err;
    CHECK_EQ_INT(trc_load(src, &whole, &err), TRC_OK);
    if (!whole) return;
    int64_t r1 = first_row(whole, 1), r2 = first_row(whole, 2);
    /* an invalid value in prompt 1 */
    CHECK_EQ_INT(copy_file(src, bad), 0);
    CHECK_EQ_INT(poke(bad, "/nodes/draft_logp", (hsize_t)r1 + 3, 1, NAN), 0);
    CHECK_EQ_INT(trc_open(bad, 1 << 20, &t, &err), TRC_OK);
    if (t) {
        CHECK_EQ_INT(trc_prompt_acquire(t, 1, &err), TRC_E_DATA);
        CHECK_ERR(err, TRC_E_DATA, "/nodes/draft_logp", "prompt 1, pos 0");
        char first[512];
        snprintf(first, sizeof first, "%s", err.msg);
        CHECK_EQ_INT(trc_prompt_acquire(t, 1, &err), TRC_E_DATA);
        CHECK(!strcmp(first, err.msg));
        CHECK(same_prompt(whole, t, 0));
        CHECK(same_prompt(whole, t, 2));
        trc_cache_info ci;
        trc_cache_get(t, &ci);
        CHECK(ci.failed == 1);
        trc_free(t);
        t = NULL;
    }
    trc_trace *tw = NULL;
    CHECK_EQ_INT(trc_load(bad, &tw, &err), TRC_E_DATA);
    CHECK_ERR(err, TRC_E_DATA, "/nodes/draft_logp", "prompt 1");
    trc_free(tw);
    tw = NULL;
    CHECK_EQ_INT(trc_check(bad, 0, &tw, &err), TRC_E_DATA); /* prompt by prompt */
    CHECK_ERR(err, TRC_E_DATA, "/nodes/draft_logp", "prompt 1");
    trc_free(tw);
    tw = NULL;

    /* valid values that are not the ones the index recorded, in prompt 2 */
    CHECK_EQ_INT(copy_file(src, bad), 0);
    int K = trc_get_meta(whole)->k;
    double last = peek(bad, "/nodes/draft_logp", (hsize_t)r2 + 4, (hsize_t)K - 1);
    CHECK_EQ_INT(poke(bad, "/nodes/draft_logp", (hsize_t)r2 + 4, (hsize_t)K - 1, last - 1.0), 0);
    CHECK_EQ_INT(trc_open(bad, 1 << 20, &t, &err), TRC_OK);
    if (t) {
        CHECK_EQ_INT(trc_prompt_acquire(t, 2, &err), TRC_E_DATA);
        CHECK_ERR(err, TRC_E_DATA, "/index/prompt_hash", "prompt 2");
        CHECK(same_prompt(whole, t, 1));
        trc_free(t);
        t = NULL;
    }
    CHECK_EQ_INT(trc_load(bad, &tw, &err), TRC_E_DATA);
    CHECK_ERR(err, TRC_E_DATA, "/index/prompt_hash", "prompt 2");
    trc_free(tw);
    tw = NULL;
    CHECK_EQ_INT(trc_check(bad, 0, &tw, &err), TRC_E_DATA);
    CHECK_ERR(err, TRC_E_DATA, "/index/prompt_hash", "prompt 2");
    trc_free(tw);
    tw = NULL;

    /* a damaged index: the open fails, naming it */
    CHECK_EQ_INT(copy_file(src, bad), 0);
    CHECK_EQ_INT(poke(bad, "/index/counts", 0, 0, -5), 0);
    CHECK_EQ_INT(trc_open(bad, 1 << 20, &t, &err), TRC_E_DATA);
    CHECK_ERR(err, TRC_E_DATA, bad, "/index/counts");
    trc_free(t);
    t = NULL;
    CHECK_EQ_INT(copy_file(src, bad), 0);
    CHECK_EQ_INT(poke(bad, "/index/logp_sum", 1, 0, 1.0), 0);
    CHECK_EQ_INT(trc_open(bad, 1 << 20, &t, &err), TRC_E_DATA);
    CHECK_ERR(err, TRC_E_DATA, bad, "/index/logp_sum");
    trc_free(t);
    t = NULL;
    CHECK_EQ_INT(copy_file(src, bad), 0);
    CHECK_EQ_INT(poke(bad, "/index/logp_sum", 0, 0, -1e3), 0); /* plausible, but not the data's */
    CHECK_EQ_INT(trc_load(bad, &tw, &err), TRC_E_DATA);
    CHECK_ERR(err, TRC_E_DATA, bad, "statistics differ");
    trc_free(tw);
    tw = NULL;
    CHECK_EQ_INT(trc_check(bad, 0, &tw, &err), TRC_E_DATA);
    CHECK_ERR(err, TRC_E_DATA, bad, "statistics differ");
    trc_free(tw);
    tw = NULL;
    /* the checksum alone */
    CHECK_EQ_INT(copy_file(src, bad), 0);
    CHECK_EQ_INT(poke(bad, "/index/checksum", 0, 0, 12345), 0);
    CHECK_EQ_INT(trc_check(bad, 0, &tw, &err), TRC_E_DATA);
    CHECK_ERR(err, TRC_E_DATA, bad, "/index/checksum");
    trc_free(tw);
    tw = NULL;
    CHECK_EQ_INT(trc_load(bad, &tw, &err), TRC_E_DATA);
    CHECK_ERR(err, TRC_E_DATA, bad, "/index/checksum");
    trc_free(tw);
    unlink(bad);
    trc_free(whole);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s DATA_DIR BAD_DIR SCRATCH_DIR\n", argv[0]);
        return 2;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    fmt(scratch, sizeof scratch, "%s", argv[3]);
    char path[1100];
    /* a trace with several prompts and exit scores, written with its index */
    trc_synth_params sp;
    trc_synth_default_params(&sp);
    sp.prompts = 6;
    sp.output_len = 24;
    sp.prompt_len = 8;
    sp.max_nodes = 20;
    trc_trace *s = NULL;
    trc_err err;
    CHECK_EQ_INT(trc_synth(&sp, &s, &err), TRC_OK);
    fmt(path, sizeof path, "%s/lazy-src.h5", scratch);
    if (s) CHECK_EQ_INT(trc_save(s, path, &err), TRC_OK);
    trc_free(s);
    test_equal(path);
    test_damage(path);
    unlink(path);

    /* a file without an index (recorded by others): loaded whole when it
     * fits the cache, else read once prompt by prompt to make the index --
     * the same checksum, statistics and trees either way */
    char noidx[1100];
    fmt(noidx, sizeof noidx, "%s/real-code.h5", argv[1]);
    trc_trace *t = NULL, *w = NULL;
    CHECK_EQ_INT(trc_open(noidx, (size_t)1 << 30, &w, &err), TRC_OK);
    CHECK(w && !trc_is_lazy(w));
    CHECK_EQ_INT(trc_open(noidx, 64 << 10, &t, &err), TRC_OK);
    CHECK(t && trc_is_lazy(t));
    if (t && w) {
        CHECK(trc_checksum(t) == trc_checksum(w));
        const trc_stats *a = trc_get_stats(t), *b = trc_get_stats(w);
        CHECK(a && b && !memcmp(a, b, sizeof *a));
        for (int32_t p = 0; p < trc_get_meta(w)->n_prompts; p++)
            CHECK(same_prompt(w, t, p));
        trc_cache_info ci;
        trc_cache_get(t, &ci);
        CHECK(ci.peak_bytes <= ci.capacity + trc_bytes(w) / 2);
    }
    trc_free(t);
    trc_free(w);
    /* an index added to a file written by others: then opened prompt by
     * prompt, with the checksum, statistics and trees of the original */
    char added_path[1100];
    fmt(added_path, sizeof added_path, "%s/lazy-added.h5", scratch);
    CHECK_EQ_INT(copy_file(noidx, added_path), 0);
    int added = -1;
    CHECK_EQ_INT(trc_add_index(added_path, &added, &err), TRC_OK);
    CHECK_EQ_INT(added, 1);
    CHECK_EQ_INT(trc_add_index(added_path, &added, &err), TRC_OK);
    CHECK_EQ_INT(added, 0);
    trc_trace *orig = NULL, *ix = NULL;
    CHECK_EQ_INT(trc_load(noidx, &orig, &err), TRC_OK);
    CHECK_EQ_INT(trc_open(added_path, 1 << 20, &ix, &err), TRC_OK);
    if (orig && ix) {
        CHECK(trc_is_lazy(ix) && trc_checksum(ix) == trc_checksum(orig));
        CHECK(!memcmp(trc_get_stats(ix), trc_get_stats(orig), sizeof(trc_stats)));
        for (int32_t p = 0; p < trc_get_meta(orig)->n_prompts; p++)
            CHECK(same_prompt(orig, ix, p));
        trc_cache_info ci;
        trc_cache_get(ix, &ci);
        CHECK(ci.loads == trc_get_meta(orig)->n_prompts); /* no pass at open */
    }
    trc_free(orig);
    trc_free(ix);
    /* damaged data: nothing written */
    CHECK_EQ_INT(copy_file(noidx, added_path), 0);
    CHECK_EQ_INT(poke(added_path, "/nodes/draft_logp", 7, 0, NAN), 0);
    CHECK_EQ_INT(trc_add_index(added_path, &added, &err), TRC_E_DATA);
    CHECK(added == 0);
    hid_t hf = H5Fopen(added_path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(hf >= 0 && H5Lexists(hf, "index", H5P_DEFAULT) == 0 &&
          H5Lexists(hf, "index-partial", H5P_DEFAULT) == 0);
    if (hf >= 0) H5Fclose(hf);
    unlink(added_path);

    /* the bad-input corpus (files without an index): a streamed open fails
     * as a whole load does -- same code, one line naming the file */
    DIR *d = opendir(argv[2]);
    int seen = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 3, ".h5") != 0) continue;
        char bad[1100];
        fmt(bad, sizeof bad, "%s/%s", argv[2], e->d_name);
        trc_trace *x = NULL, *y = NULL;
        trc_err ex, ey;
        int cx = trc_load(bad, &x, &ex), cy = trc_open(bad, 0, &y, &ey);
        CHECK_EQ_INT(cy, cx);
        if (cx) CHECK_ERR(ey, cx, bad, NULL);
        trc_free(x);
        trc_free(y);
        seen++;
    }
    if (d) closedir(d);
    CHECK(seen >= 8);
    /* and bundled files with an index open lazily with the loaded checksum */
    fmt(path, sizeof path, "%s/synth-default.h5", argv[1]);
    trc_trace *a = NULL, *b = NULL;
    CHECK_EQ_INT(trc_open(path, 1 << 20, &a, &err), TRC_OK);
    CHECK_EQ_INT(trc_load(path, &b, &err), TRC_OK);
    CHECK(a && b && trc_is_lazy(a) && trc_checksum(a) == trc_checksum(b));
    trc_free(a);
    trc_free(b);
    return check_done("test_trc_lazy");
}
