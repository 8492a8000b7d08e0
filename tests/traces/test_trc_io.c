/*
 * test_trc_io.c -- HDF5 reading and writing: save -> load round trips keep every
 * array and the checksum; saves are byte-reproducible; the bundled traces load
 * and regenerate byte-identically from their documented parameters; every file of
 * the bad-input corpus fails with its documented code and a one-line message
 * naming the file (and the dataset); 200 damaged copies of a bundled trace each
 * load or fail the same way, never crash; a missing input is TRC_E_MISSING; a
 * save that cannot complete is TRC_E_WRITE and leaves nothing behind;
 * trc_load_image reads what trc_load reads and fails the same way.
 *
 * usage: test_trc_io DATA_DIR BAD_DIR SCRATCH_DIR
 */
#include "trc.h"

#include "trc_check.h"
#include "trc_fixture.h"

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char scratch[1024];

static void path_in(char *out, size_t cap, const char *dir, const char *name)
{
    fmt(out, cap, "%s/%s", dir, name);
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static unsigned char *slurp(const char *p, size_t *len)
{
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
    *len = b && n >= 0 ? fread(b, 1, (size_t)n, f) : 0;
    fclose(f);
    return b;
}

static int same_bytes(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    unsigned char *x = slurp(a, &na), *y = slurp(b, &nb);
    int same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

/* No temporary left in dir (names "*.tmp<pid>-<n>"). */
static int no_leftovers(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int clean = 1;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp")) clean = 0;
    closedir(d);
    return clean;
}

static void check_same(const trc_trace *a, const trc_trace *b)
{
    const trc_meta *ma = trc_get_meta(a), *mb = trc_get_meta(b);
    CHECK(trc_checksum(a) == trc_checksum(b));
    CHECK_EQ_INT(ma->vocab, mb->vocab);
    CHECK_EQ_INT(ma->k, mb->k);
    CHECK_EQ_INT(ma->max_depth, mb->max_depth);
    CHECK_EQ_INT(ma->max_nodes, mb->max_nodes);
    CHECK_EQ_INT(ma->target_layers, mb->target_layers);
    CHECK_EQ_INT(ma->n_exit, mb->n_exit);
    CHECK(memcmp(ma->exit_layers, mb->exit_layers, sizeof ma->exit_layers) == 0);
    CHECK_EQ_INT(ma->n_prompts, mb->n_prompts);
    CHECK_EQ_INT(ma->n_trees, mb->n_trees);
    CHECK_EQ_INT(ma->n_nodes, mb->n_nodes);
    CHECK(strcmp(ma->target, mb->target) == 0 && strcmp(ma->draft, mb->draft) == 0);
    CHECK(strcmp(ma->tokenizer, mb->tokenizer) == 0 && strcmp(ma->source, mb->source) == 0);
    int bad = 0;
    for (int32_t p = 0; p < ma->n_prompts; p++) {
        const int32_t *x, *y;
        int32_t n = trc_prompt(a, p, &x);
        bad += n != trc_prompt(b, p, &y) || memcmp(x, y, (size_t)n * 4);
        int32_t L = trc_ref(a, p, &x);
        bad += L != trc_ref(b, p, &y) || memcmp(x, y, (size_t)L * 4);
        for (int32_t pos = 0; pos < L; pos++) {
            trc_tree s, t;
            trc_tree_get(a, p, pos, &s);
            trc_tree_get(b, p, pos, &t);
            size_t n4 = (size_t)s.n * 4, nk4 = n4 * (size_t)s.k;
            bad +=
                s.n != t.n || memcmp(s.parent, t.parent, n4) || memcmp(s.token, t.token, n4) ||
                memcmp(s.depth, t.depth, (size_t)s.n) || memcmp(s.first_child, t.first_child, n4) ||
                memcmp(s.next_sibling, t.next_sibling, n4) ||
                memcmp(s.draft_tok, t.draft_tok, nk4) || memcmp(s.draft_logp, t.draft_logp, nk4) ||
                memcmp(s.tgt_tok, t.tgt_tok, nk4) || memcmp(s.tgt_logp, t.tgt_logp, nk4) ||
                (s.n_exit && memcmp(s.exit_score, t.exit_score, nk4 * (size_t)s.n_exit));
        }
    }
    CHECK_EQ_INT(bad, 0);
}

static void roundtrip(const trc_trace *t, const char *name)
{
    char p1[1100], p2[1200];
    path_in(p1, sizeof p1, scratch, name);
    fmt(p2, sizeof p2, "%s.again", p1);
    trc_err err;
    CHECK_EQ_INT(trc_save(t, p1, &err), TRC_OK);
    CHECK_EQ_INT(trc_save(t, p2, &err), TRC_OK);
    CHECK(same_bytes(p1, p2)); /* reproducible bytes */
    trc_trace *u = NULL;
    CHECK_EQ_INT(trc_load(p1, &u, &err), TRC_OK);
    if (u) check_same(t, u);
    /* overwriting an existing file goes through the same atomic path */
    CHECK_EQ_INT(trc_save(u ? u : t, p1, &err), TRC_OK);
    CHECK(same_bytes(p1, p2));
    trc_free(u);
    unlink(p1);
    unlink(p2);
}

static void test_roundtrips(void)
{
    trc_synth_params p;
    trc_synth_default_params(&p);
    p.prompts = 3;
    p.output_len = 40;
    p.prompt_len = 5;
    p.k = 5;
    p.max_nodes = 20;
    p.n_exit = 3;
    p.exit_layers[0] = 6;
    p.exit_layers[1] = 12;
    p.exit_layers[2] = 30;
    trc_trace *t = NULL;
    trc_err err;
    CHECK_EQ_INT(trc_synth(&p, &t, &err), TRC_OK);
    if (t) roundtrip(t, "rt_synth.h5");
    trc_free(t);

    fix *f = malloc(sizeof *f);
    fix_init(f, 3, 2);
    f->meta.n_exit = 0; /* empty exit_layers and a [N, 0, K] exit_score */
    f->prompt_len = 0;  /* empty /prompts/tokens */
    CHECK_EQ_INT(fix_build(f, "fixture", &t, &err), TRC_OK);
    if (t) roundtrip(t, "rt_fixture.h5");
    trc_free(t);
    free(f);
}

static void test_bundled(const char *data)
{
    char small[1100], deflt[1100], regen[1100];
    path_in(small, sizeof small, data, "synth-small.h5");
    path_in(deflt, sizeof deflt, data, "synth-default.h5");
    path_in(regen, sizeof regen, scratch, "regen-small.h5");
    trc_trace *t = NULL, *u = NULL;
    trc_err err;
    CHECK_EQ_INT(trc_load(deflt, &t, &err), TRC_OK);
    trc_synth_params p;
    trc_synth_default_params(&p);
    p.max_nodes = 16; /* traces/data/make.sh */
    CHECK_EQ_INT(trc_synth(&p, &u, &err), TRC_OK);
    if (t && u) CHECK(trc_checksum(t) == trc_checksum(u));
    trc_free(t);
    trc_free(u);

    CHECK_EQ_INT(trc_load(small, &t, &err), TRC_OK);
    trc_synth_default_params(&p);
    p.prompts = 2;
    p.prompt_len = 16;
    p.output_len = 32;
    p.vocab = 32000;
    p.k = 4;
    p.max_depth = 4;
    p.max_nodes = 12;
    p.n_exit = 2;
    p.exit_layers[0] = 12;
    p.exit_layers[1] = 24;
    CHECK_EQ_INT(trc_synth(&p, &u, &err), TRC_OK);
    if (t && u) {
        CHECK(trc_checksum(t) == trc_checksum(u));
        CHECK_EQ_INT(trc_save(u, regen, &err), TRC_OK);
        CHECK(same_bytes(small, regen));
        unlink(regen);
    }
    trc_free(t);
    trc_free(u);
}

static void test_bad_inputs(const char *bad)
{
    static const struct {
        const char *file;
        int code;
        const char *names;
    } cases[] = {
        {"truncated.h5", TRC_E_FORMAT, NULL},
        {"not_hdf5.h5", TRC_E_FORMAT, "not an HDF5 file"},
        {"empty.h5", TRC_E_FORMAT, "not an HDF5 file"},
        {"wrong_version.h5", TRC_E_SCHEMA, "@version: schema version 2"},
        {"nan_logp.h5", TRC_E_DATA, "/nodes/draft_logp"},
        {"token_ge_vocab.h5", TRC_E_DATA, "/nodes/token"},
        {"bad_offsets.h5", TRC_E_DATA, "/trees/node_offset"},
        {"missing_dataset.h5", TRC_E_SCHEMA, "/nodes/target_logp: missing"},
        {"wrong_shape.h5", TRC_E_SCHEMA, "/nodes/draft_tok: shape"},
        {"wrong_type.h5", TRC_E_SCHEMA, "/nodes/parent: stored type"},
        {"broken_ref_path.h5", TRC_E_DATA, "reference path missing"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[1100];
        path_in(path, sizeof path, bad, cases[i].file);
        trc_trace *t = (trc_trace *)1;
        trc_err err;
        int rc = trc_load(path, &t, &err);
        CHECK_EQ_INT(rc, cases[i].code);
        CHECK(t == NULL);
        CHECK_ERR(err, cases[i].code, path, cases[i].names);
        CHECK(strncmp(err.msg, path, strlen(path)) == 0);
        if (rc != cases[i].code) fprintf(stderr, "  %s: %s\n", cases[i].file, err.msg);
    }

    char path[1100];
    trc_trace *t = (trc_trace *)1;
    trc_err err;
    path_in(path, sizeof path, bad, "no_such_file.h5");
    CHECK_EQ_INT(trc_load(path, &t, &err), TRC_E_MISSING);
    CHECK(t == NULL);
    CHECK_ERR(err, TRC_E_MISSING, path, "No such file");
    CHECK_EQ_INT(trc_load(bad, &t, &err), TRC_E_MISSING); /* a directory */
    CHECK_ERR(err, TRC_E_MISSING, bad, "directory");
    CHECK_EQ_INT(trc_load(NULL, &t, NULL), TRC_E_ARG);
}

/* Damaged copies of synth-small.h5 (fixed pseudo-random byte overwrites, half of
 * them in the first 4 KiB where the metadata lives): every load must end in a
 * status code with a one-line message naming the file -- no crash, no hang. */
static void test_corruption(const char *data)
{
    char src[1100], dst[1100];
    path_in(src, sizeof src, data, "synth-small.h5");
    path_in(dst, sizeof dst, scratch, "damaged.h5");
    size_t len = 0;
    unsigned char *orig = slurp(src, &len), *buf = malloc(len ? len : 1);
    if (!orig || !buf || len < 8192) {
        CHECK(!"cannot read synth-small.h5");
        free(orig);
        free(buf);
        return;
    }
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    int ok = 0, bad_code = 0, bad_msg = 0;
    for (int round = 0; round < 200; round++) {
        memcpy(buf, orig, len);
        int flips = 1 << (round % 4);
        for (int i = 0; i < flips; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            size_t pos = (size_t)(x >> 33) % (round % 2 ? len : 4096);
            buf[pos] = (unsigned char)(x >> 20);
        }
        FILE *f = fopen(dst, "wb");
        if (!f) break;
        fwrite(buf, 1, len, f);
        fclose(f);
        trc_trace *t = NULL;
        trc_err err;
        int rc = trc_load(dst, &t, &err);
        if (rc == TRC_OK) {
            ok++;
            trc_free(t);
            continue;
        }
        bad_code += !(rc == TRC_E_FORMAT || rc == TRC_E_SCHEMA || rc == TRC_E_DATA) || t;
        bad_msg += strncmp(err.msg, dst, strlen(dst)) != 0 || strchr(err.msg, '\n') != NULL;
    }
    CHECK_EQ_INT(bad_code, 0);
    CHECK_EQ_INT(bad_msg, 0);
    CHECK(ok < 200); /* the damage is noticed */
    unlink(dst);
    free(orig);
    free(buf);
}

static void test_write_failures(const char *data)
{
    trc_synth_params p;
    trc_synth_default_params(&p);
    p.prompts = 1;
    p.output_len = 8;
    trc_trace *t = NULL;
    trc_err err;
    CHECK_EQ_INT(trc_synth(&p, &t, &err), TRC_OK);
    if (!t) return;
    char path[1200];

    /* directory does not exist */
    path_in(path, sizeof path, scratch, "no_such_dir/out.h5");
    CHECK_EQ_INT(trc_save(t, path, &err), TRC_E_WRITE);
    CHECK_ERR(err, TRC_E_WRITE, path, "No such file");
    CHECK(!exists(path));

    /* parent is a regular file */
    char file_parent[1200];
    path_in(file_parent, sizeof file_parent, data, "synth-small.h5");
    path_in(path, sizeof path, file_parent, "out.h5");
    CHECK_EQ_INT(trc_save(t, path, &err), TRC_E_WRITE);
    CHECK_ERR(err, TRC_E_WRITE, path, NULL);

    /* the path is a directory: the temporary is written, the rename fails, and the
     * temporary must be gone */
    char sub[1200];
    path_in(sub, sizeof sub, scratch, "is_a_dir");
    mkdir(sub, 0755);
    path_in(path, sizeof path, sub, "inner");
    mkdir(path, 0755);
    CHECK_EQ_INT(trc_save(t, path, &err), TRC_E_WRITE);
    CHECK_ERR(err, TRC_E_WRITE, path, NULL);
    CHECK(no_leftovers(sub));
    rmdir(path);

    /* an unwritable directory (meaningful only without root's override) */
    if (geteuid() != 0) {
        chmod(sub, 0555);
        path_in(path, sizeof path, sub, "out.h5");
        CHECK_EQ_INT(trc_save(t, path, &err), TRC_E_WRITE);
        CHECK_ERR(err, TRC_E_WRITE, path, "ermission");
        CHECK(!exists(path));
        chmod(sub, 0755);
    }
    CHECK(no_leftovers(sub));
    CHECK(no_leftovers(scratch));
    rmdir(sub);
    trc_free(t);
}

/* trc_load_image reads exactly what trc_load reads, and fails the same way. */
static void test_image(const char *data, const char *bad)
{
    static const char *const names[] = {"synth-default.h5", "synth-small.h5"};
    for (int i = 0; i < 2; i++) {
        char path[1100];
        path_in(path, sizeof path, data, names[i]);
        size_t n = 0;
        unsigned char *img = slurp(path, &n);
        CHECK(img != NULL);
        if (!img) continue;
        trc_trace *t = NULL, *u = NULL;
        trc_err err;
        CHECK_EQ_INT(trc_load(path, &t, &err), TRC_OK);
        CHECK_EQ_INT(trc_load_image(img, n, "img.h5", &u, &err), TRC_OK);
        if (t && u) check_same(t, u);
        trc_free(u);
        /* a truncated image fails with a one-line message naming it */
        CHECK(trc_load_image(img, n / 2, "half.h5", &u, &err) == TRC_E_FORMAT);
        CHECK(u == NULL && strncmp(err.msg, "half.h5: ", 9) == 0 && !strchr(err.msg, '\n'));
        trc_free(t);
        free(img);
    }
    trc_trace *u = NULL;
    trc_err err;
    CHECK_EQ_INT(trc_load_image(NULL, 0, NULL, &u, &err), TRC_E_FORMAT);
    CHECK(strncmp(err.msg, "(image): ", 9) == 0);
    CHECK_EQ_INT(trc_load_image("not hdf5", 8, "x", &u, &err), TRC_E_FORMAT);
    DIR *d = opendir(bad);
    CHECK(d != NULL);
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".h5") != 0) continue;
        char path[1100];
        path_in(path, sizeof path, bad, e->d_name);
        size_t n = 0;
        unsigned char *img = slurp(path, &n);
        trc_trace *t = NULL;
        trc_err e1, e2;
        int r1 = trc_load(path, &t, &e1);
        int r2 = trc_load_image(img, n, path, &u, &e2);
        CHECK_EQ_INT(r2, r1);
        CHECK(strcmp(e1.msg, e2.msg) == 0);
        trc_free(t);
        trc_free(u);
        free(img);
    }
    if (d) closedir(d);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s DATA_DIR BAD_DIR SCRATCH_DIR\n", argv[0]);
        return 2;
    }
    fmt(scratch, sizeof scratch, "%s/trc_io_%ld", argv[3], (long)getpid());
    if (mkdir(scratch, 0755) != 0) {
        perror(scratch);
        return 2;
    }
    test_roundtrips();
    test_bundled(argv[1]);
    test_image(argv[1], argv[2]);
    test_bad_inputs(argv[2]);
    test_corruption(argv[1]);
    test_write_failures(argv[1]);
    CHECK(rmdir(scratch) == 0); /* everything cleaned up, nothing stray */
    return check_done("test_trc_io");
}
