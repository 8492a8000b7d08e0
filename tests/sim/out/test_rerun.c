/*
 * test_rerun.c -- a run's script as recorded and what a rerun compares, in
 * plain C (sim/out/sim_rerun.h): the script's bytes read whole (a NUL inside
 * kept, 16 MiB less one byte taken, 16 MiB refused, a missing file and a
 * directory refused with their line); the hash against known values;
 * the recorded script's directory (absolute, relative to the project, gone);
 * a profile's values compared key by key for every kind of key (lists by
 * their count and elements only, six keys named then a count); two files
 * compared byte for byte with the first differing line; one parameter's
 * value as text (sim/out/sim_strbuf.h) at its boundaries.
 */
#define _XOPEN_SOURCE 700 /* realpath, symlink */
#include "sim/out/sim_rerun.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../check.h"
#include "sim/out/sim_strbuf.h"

static char tmp[64];

static void put_file(const char *name, const char *data, size_t len)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", tmp, name);
    FILE *f = fopen(p, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(data, 1, len, f) == len);
    fclose(f);
}

/* A file of size bytes (sparse: zeros). */
static void sized_file(const char *name, long size)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", tmp, name);
    FILE *f = fopen(p, "wb");
    CHECK(f != NULL && ftruncate(fileno(f), size) == 0);
    if (f) fclose(f);
}

static void test_script_read(void)
{
    char p[256], err[512] = "";
    size_t len = 99;
    put_file("s.lua", "print(1)\0x\n", 11);
    snprintf(p, sizeof p, "%s/s.lua", tmp);
    char *b = sim_out_script_read(p, &len, err, sizeof err);
    CHECK(b && len == 11 && memcmp(b, "print(1)\0x\n", 11) == 0 && b[11] == 0);
    free(b);
    put_file("empty.lua", "", 0);
    snprintf(p, sizeof p, "%s/empty.lua", tmp);
    b = sim_out_script_read(p, &len, err, sizeof err);
    CHECK(b && len == 0 && b[0] == 0);
    free(b);
    /* the size limit: one byte under it is read, 16 MiB is refused */
    sized_file("big.lua", (long)SIM_OUT_SCRIPT_MAX_BYTES - 1);
    snprintf(p, sizeof p, "%s/big.lua", tmp);
    b = sim_out_script_read(p, &len, err, sizeof err);
    CHECK(b && len == SIM_OUT_SCRIPT_MAX_BYTES - 1);
    free(b);
    sized_file("big.lua", (long)SIM_OUT_SCRIPT_MAX_BYTES);
    CHECK(sim_out_script_read(p, &len, err, sizeof err) == NULL);
    char want[512];
    snprintf(want, sizeof want, "%s: script larger than 16 MiB", p);
    CHECK(strcmp(err, want) == 0);
    snprintf(p, sizeof p, "%s/none.lua", tmp);
    CHECK(sim_out_script_read(p, &len, err, sizeof err) == NULL);
    snprintf(want, sizeof want, "%s: cannot open script: No such file or directory", p);
    CHECK(strcmp(err, want) == 0);
    CHECK(sim_out_script_read(tmp, &len, err, sizeof err) == NULL); /* a directory */
    snprintf(want, sizeof want, "%s: cannot read script", tmp);
    CHECK(strcmp(err, want) == 0);
}

static void test_script_hash(void)
{
    char h[20];
    sim_out_script_hash("", 0, h, sizeof h); /* the offset basis itself */
    CHECK(strcmp(h, "14650fb0739d0383") == 0);
    sim_out_script_hash("a", 1, h, sizeof h);
    CHECK(strcmp(h, "44bd8ad473cd9906") == 0);
    sim_out_script_hash("foobar", 6, h, sizeof h);
    CHECK(strcmp(h, "88fad7c0a8ff07f2") == 0);
    sim_out_script_hash("x8600", 5, h, sizeof h); /* leading zeros kept */
    CHECK(strcmp(h, "007cc982b659ecef") == 0);
    sim_out_script_hash("a\0b", 3, h, sizeof h); /* every byte counts, a NUL too */
    char h2[20];
    sim_out_script_hash("a\0c", 3, h2, sizeof h2);
    CHECK(strlen(h) == 16 && strcmp(h, h2) != 0);
}

static void test_script_dir(void)
{
    char out[512], p[256], want[256];
    snprintf(p, sizeof p, "%s/scripts", tmp);
    CHECK(mkdir(p, 0755) == 0);
    snprintf(p, sizeof p, "%s/scripts/a.lua", tmp); /* absolute, its directory there */
    sim_out_rerun_script_dir("/rec", p, "/nohome", out, sizeof out);
    snprintf(want, sizeof want, "%s/scripts", tmp);
    CHECK(strcmp(out, want) == 0);
    sim_out_rerun_script_dir("/rec", "scripts/a.lua", tmp, out, sizeof out); /* relative */
    CHECK(strcmp(out, want) == 0);
    sim_out_rerun_script_dir("/rec", "gone/a.lua", tmp, out, sizeof out); /* gone */
    CHECK(strcmp(out, "/rec") == 0);
    sim_out_rerun_script_dir("/rec", "a.lua", tmp, out, sizeof out); /* in the project */
    CHECK(strcmp(out, tmp) == 0);
    sim_out_rerun_script_dir("/rec", "a.lua", NULL, out, sizeof out); /* no project: "." */
    CHECK(strcmp(out, ".") == 0);
    sim_out_rerun_script_dir("/rec", NULL, tmp, out, sizeof out); /* none recorded */
    CHECK(strcmp(out, "/rec") == 0);
    put_file("plain", "x", 1);
    snprintf(p, sizeof p, "%s/plain/a.lua", tmp); /* a file, not a directory */
    sim_out_rerun_script_dir("/rec", p, NULL, out, sizeof out);
    CHECK(strcmp(out, "/rec") == 0);
}

/* ----------------------------------------------------------- profiles */

typedef struct prof {
    int32_t n, on, mode;
    double x;
    char name[8];
    double xs[4];
    int32_t n_xs;
    int32_t ks[3];
    int32_t n_ks;
} prof;

static const char *const modes[] = {"slow", "fast", NULL};
static const eng_param_desc keys[] = {
    {.name = "n", .type = ENG_PARAM_INT, .offset = offsetof(prof, n)},
    {.name = "on", .type = ENG_PARAM_BOOL, .offset = offsetof(prof, on)},
    {.name = "mode", .type = ENG_PARAM_ENUM, .offset = offsetof(prof, mode), .choices = modes},
    {.name = "x_gbps", .type = ENG_PARAM_DOUBLE, .offset = offsetof(prof, x)},
    {.name = "name", .type = ENG_PARAM_STRING, .offset = offsetof(prof, name), .cap = 8},
    {.name = "xs", .type = ENG_PARAM_DOUBLE_LIST, .offset = offsetof(prof, xs), .cap = 4,
     .count_offset = offsetof(prof, n_xs)},
    {.name = "ks", .type = ENG_PARAM_INT_LIST, .offset = offsetof(prof, ks), .cap = 3,
     .count_offset = offsetof(prof, n_ks)},
    {.name = NULL},
};

static prof base(void)
{
    prof p;
    memset(&p, 0, sizeof p);
    p = (prof){.n = 3, .on = 1, .mode = 1, .x = 4.5, .xs = {1, 2, 9, 9}, .n_xs = 2,
               .ks = {5, 6, 7}, .n_ks = 3};
    snprintf(p.name, sizeof p.name, "ufs4");
    return p;
}

static void test_param_diff(void)
{
    char msg[1536] = "untouched";
    prof a = base(), b = base();
    b.xs[3] = 1; /* past the count: not a value */
    CHECK_EQ_INT(sim_out_param_diff(keys, &a, &b, msg, sizeof msg), 0);
    CHECK(strcmp(msg, "untouched") == 0);
    b = base();
    b.x = 7;
    CHECK_EQ_INT(sim_out_param_diff(keys, &b, &a, msg, sizeof msg), 1);
    CHECK(strcmp(msg, "x_gbps 7 today, 4.5 in run.json") == 0);
    b = base();
    b.n = -2, b.on = 0, b.mode = 0, b.x = 0.1;
    snprintf(b.name, sizeof b.name, "emmc");
    CHECK_EQ_INT(sim_out_param_diff(keys, &b, &a, msg, sizeof msg), 5);
    CHECK(strcmp(msg, "n -2 today, 3 in run.json; on false today, true in run.json; mode "
                      "slow today, fast in run.json; x_gbps 0.1 today, 4.5 in "
                      "run.json; name 'emmc' today, 'ufs4' in run.json") == 0);
    /* lists: by count, then by element */
    b = base();
    b.n_xs = 3;
    CHECK_EQ_INT(sim_out_param_diff(keys, &b, &a, msg, sizeof msg), 1);
    CHECK(strcmp(msg, "xs {1,2,9} today, {1,2} in run.json") == 0);
    b = base();
    b.ks[2] = 8;
    CHECK_EQ_INT(sim_out_param_diff(keys, &b, &a, msg, sizeof msg), 1);
    CHECK(strcmp(msg, "ks {5,6,8} today, {5,6,7} in run.json") == 0);
    b = base();
    b.ks[2] = 8, b.n_ks = 2; /* the changed element past both counts */
    a.n_ks = 2;
    CHECK_EQ_INT(sim_out_param_diff(keys, &b, &a, msg, sizeof msg), 0);
    a = base();
    /* six keys named with their values; the seventh only counted */
    b = base();
    b.n = 1, b.on = 0, b.mode = 0, b.x = 1, b.name[0] = 0, b.n_xs = 0;
    CHECK_EQ_INT(sim_out_param_diff(keys, &b, &a, msg, sizeof msg), 6);
    CHECK(strstr(msg, "xs {} today, {1,2} in run.json") != NULL && strstr(msg, "more") == NULL);
    b.n_ks = 0;
    CHECK_EQ_INT(sim_out_param_diff(keys, &b, &a, msg, sizeof msg), 7);
    CHECK(strstr(msg, "ks") == NULL);
    size_t ml = strlen(msg);
    CHECK(ml > 8 && strcmp(msg + ml - 8, "; 1 more") == 0);
    /* a short buffer: cut, never overrun */
    char small[16];
    memset(small, 'z', sizeof small);
    CHECK_EQ_INT(sim_out_param_diff(keys, &b, &a, small, 12), 7);
    CHECK(strlen(small) == 11 && small[12] == 'z');
}

/* ---------------------------------------------------------- same file */

static void test_same_file(void)
{
    char a[256], b[256];
    long line = -1;
    snprintf(a, sizeof a, "%s/a.csv", tmp);
    snprintf(b, sizeof b, "%s/b.csv", tmp);
    put_file("a.csv", "x\ny\nz\n", 6);
    put_file("b.csv", "x\ny\nz\n", 6);
    CHECK_EQ_INT(sim_out_same_file(a, b, &line), 1);
    CHECK_EQ_INT(line, 0);
    put_file("b.csv", "x\ny\nZ\n", 6);
    CHECK_EQ_INT(sim_out_same_file(a, b, &line), 0);
    CHECK_EQ_INT(line, 3);
    put_file("b.csv", "X\ny\nz\n", 6);
    CHECK_EQ_INT(sim_out_same_file(a, b, &line), 0);
    CHECK_EQ_INT(line, 1);
    put_file("b.csv", "x\ny\n", 4); /* a's beginning: differs where b ends */
    CHECK_EQ_INT(sim_out_same_file(a, b, &line), 0);
    CHECK_EQ_INT(line, 3);
    CHECK_EQ_INT(sim_out_same_file(b, a, &line), 0);
    CHECK_EQ_INT(line, 3);
    CHECK_EQ_INT(sim_out_same_file(a, b, NULL), 0);
    put_file("b.csv", "", 0);
    put_file("c.csv", "", 0);
    char c[256];
    snprintf(c, sizeof c, "%s/c.csv", tmp);
    CHECK_EQ_INT(sim_out_same_file(b, c, &line), 1); /* both empty */
    snprintf(c, sizeof c, "%s/none.csv", tmp);
    line = -1;
    CHECK_EQ_INT(sim_out_same_file(a, c, &line), -1);
    CHECK_EQ_INT(line, 0);
    CHECK_EQ_INT(sim_out_same_file(c, a, NULL), -1);
}

/* sim_out_rerun_profile_path: an absolute path as is, a relative one under
 * home; resolved (a link followed) when the file exists, as it stands when
 * not; "" when the path or out is too long. */
static void test_profile_path(void)
{
    char p[256], out[PATH_MAX], want[PATH_MAX + 32], real[PATH_MAX];
    CHECK(realpath(tmp, real) != NULL);
    snprintf(p, sizeof p, "%s/cfg", tmp);
    CHECK(mkdir(p, 0755) == 0);
    put_file("cfg/d.lua", "x", 1);
    char link[300];
    snprintf(link, sizeof link, "%s/ln", tmp);
    CHECK(symlink("cfg", link) == 0);
    sim_out_rerun_profile_path("ln/d.lua", tmp, out, sizeof out); /* relative, resolved */
    snprintf(want, sizeof want, "%s/cfg/d.lua", real);
    CHECK(strcmp(out, want) == 0);
    snprintf(p, sizeof p, "%s/ln/d.lua", tmp);
    sim_out_rerun_profile_path(p, "/nohome", out, sizeof out); /* absolute, resolved */
    CHECK(strcmp(out, want) == 0);
    sim_out_rerun_profile_path("ln/gone.lua", tmp, out, sizeof out); /* not there: as is */
    snprintf(want, sizeof want, "%s/ln/gone.lua", tmp);
    CHECK(strcmp(out, want) == 0);
    sim_out_rerun_profile_path("/no/such.lua", tmp, out, sizeof out);
    CHECK(strcmp(out, "/no/such.lua") == 0);
    static char home[PATH_MAX];
    memset(home, 'h', PATH_MAX - 100);
    home[0] = '/';
    home[PATH_MAX - 100] = 0;
    sim_out_rerun_profile_path("a/b.lua", home, out, sizeof out); /* fits */
    CHECK(strlen(out) == PATH_MAX - 100 + 8);
    static char rel[200];
    memset(rel, 'r', sizeof rel - 1);
    sim_out_rerun_profile_path(rel, home, out, sizeof out); /* too long */
    CHECK(strcmp(out, "") == 0);
    char small[13] = "x"; /* "/no/such.lua": 12 bytes and its NUL */
    sim_out_rerun_profile_path("/no/such.lua", tmp, small, sizeof small);
    CHECK(strcmp(small, "/no/such.lua") == 0);
    sim_out_rerun_profile_path("/no/such.lua", tmp, small, sizeof small - 1);
    CHECK(strcmp(small, "") == 0);
}

/* sim_out_param_value: each kind, the separator, the digits, a list's count
 * held to its storage, an enum index without a choice, and the buffer's
 * edge: a text that fits exactly is whole, one byte less is refused. */
static void test_param_value(void)
{
    prof p = base();
    char out[64];
    const char *want[] = {"3", "true", "fast", "4.5", "ufs4", "1;2", "5;6;7"};
    for (int i = 0; i < 7; i++) {
        CHECK_EQ_INT(sim_out_param_value(&keys[i], &p, 1, ';', out, sizeof out), 0);
        CHECK(strcmp(out, want[i]) == 0);
    }
    p.x = 0.1;
    CHECK_EQ_INT(sim_out_param_value(&keys[3], &p, 6, '/', out, sizeof out), 0);
    CHECK(strcmp(out, "0.1") == 0);
    p.x = 5000;
    CHECK_EQ_INT(sim_out_param_value(&keys[3], &p, 1, '/', out, sizeof out), 0);
    CHECK(strcmp(out, "5e+03") == 0);
    CHECK_EQ_INT(sim_out_param_value(&keys[3], &p, 6, '/', out, sizeof out), 0);
    CHECK(strcmp(out, "5000") == 0);
    /* the exact writer of results.csv and labels: at least 6 digits */
    sim_out_fmt_exact(out, sizeof out, 5000);
    CHECK(strcmp(out, "5000") == 0);
    sim_out_fmt_exact(out, sizeof out, 123456);
    CHECK(strcmp(out, "123456") == 0);
    sim_out_fmt_exact(out, sizeof out, 0.1);
    CHECK(strcmp(out, "0.1") == 0);
    /* 0 digits: every whole digit below 1e16, else the fewest */
    const double xs[] = {5000, -2500, 123.5, 0.1, 1e20, 1e16, 9999999999999998.0, 1, 0.5};
    const char *ws[] = {"5000", "-2500", "123.5", "0.1", "1e+20", "1e+16", "9999999999999998",
                        "1", "0.5"};
    for (int i = 0; i < 9; i++) {
        p.x = xs[i];
        CHECK_EQ_INT(sim_out_param_value(&keys[3], &p, 0, '/', out, sizeof out), 0);
        if (strcmp(out, ws[i])) fprintf(stderr, "  %.17g -> %s\n", xs[i], out);
        CHECK(strcmp(out, ws[i]) == 0);
    }
    p = base();
    p.n_ks = 9; /* more than its storage: only the three it holds */
    CHECK_EQ_INT(sim_out_param_value(&keys[6], &p, 1, '/', out, sizeof out), 0);
    CHECK(strcmp(out, "5/6/7") == 0);
    p.n_ks = 0;
    CHECK_EQ_INT(sim_out_param_value(&keys[6], &p, 1, '/', out, sizeof out), 0);
    CHECK(strcmp(out, "") == 0);
    p.mode = 2; /* past the choices */
    CHECK_EQ_INT(sim_out_param_value(&keys[2], &p, 1, '/', out, sizeof out), 0);
    CHECK(strcmp(out, "2") == 0);
    p = base();
    CHECK_EQ_INT(sim_out_param_value(&keys[6], &p, 1, '/', out, 6), 0); /* "5/6/7" and NUL */
    CHECK(strcmp(out, "5/6/7") == 0);
    CHECK_EQ_INT(sim_out_param_value(&keys[6], &p, 1, '/', out, 5), -1);
    CHECK_EQ_INT(sim_out_param_value(&keys[4], &p, 1, '/', out, 5), 0); /* "ufs4" */
    CHECK(strcmp(out, "ufs4") == 0);
    CHECK_EQ_INT(sim_out_param_value(&keys[4], &p, 1, '/', out, 4), -1);
    CHECK_EQ_INT(sim_out_param_value(&keys[0], &p, 1, '/', out, 2), 0); /* "3" */
    CHECK_EQ_INT(sim_out_param_value(&keys[0], &p, 1, '/', out, 1), -1);
}

int main(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/fs_out_rerun_XXXXXX");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    test_script_read();
    test_script_hash();
    test_script_dir();
    test_param_diff();
    test_param_value();
    test_same_file();
    test_profile_path();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    CHECK(system(cmd) == 0);
    return check_done("out/rerun");
}
