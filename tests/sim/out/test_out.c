/*
 * test_out.c -- the results table and its writers: table API errors, CSV
 * quoting and number formatting, a CSV + HDF5 round trip read back with the
 * HDF5 C API, byte-determinism of both files, and the failure paths of the
 * atomic commit (unwritable directory, rename failures) leaving neither results
 * files nor temporaries behind.
 *
 * Every test works under a fresh mkdtemp directory removed at the end.
 */
#include "sim/out/sim_out.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

static int failures, checks;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

static char base[64];

static char *path_of(const char *rel)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", base, rel);
    return buf[k];
}

static void rm_tree(const char *p)
{
    struct stat st;
    if (lstat(p, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(p);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char sub[1024];
            snprintf(sub, sizeof sub, "%s/%s", p, e->d_name);
            rm_tree(sub);
        }
        if (d) closedir(d);
        rmdir(p);
    } else {
        unlink(p);
    }
}

static char *slurp(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)len + 1);
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) {
        b[len] = '\0';
        *n = (size_t)len;
    }
    return b;
}

static int exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

/* Entries of dir (excluding . and ..), or -1 when it cannot be read. */
static int count_entries(const char *dir, int *temps)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    *temps = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        n++;
        if (!strncmp(e->d_name, ".results.", 9)) (*temps)++;
    }
    closedir(d);
    return n;
}

/* The index sim_out_add_column / sim_out_append_row stored, or -1 when the
 * call failed (and left the index alone). */
static int32_t add_col(sim_out_table *t, const char *name, sim_out_type type)
{
    int32_t c = -1;
    return sim_out_add_column(t, name, type, &c) == SIM_OK ? c : -1;
}

static int64_t add_row(sim_out_table *t)
{
    int64_t r = -1;
    return sim_out_append_row(t, &r) == SIM_OK ? r : -1;
}

/* run_id (int64), policy (string), tokens_per_s (double), note (string) */
static sim_out_table *make_table(void)
{
    sim_out_table *t = sim_out_create();
    CHECK(add_col(t, "run_id", SIM_OUT_INT64) == 0);
    CHECK(add_col(t, "policy", SIM_OUT_STRING) == 1);
    CHECK(add_col(t, "tokens_per_s", SIM_OUT_DOUBLE) == 2);
    CHECK(add_col(t, "note", SIM_OUT_STRING) == 3);
    CHECK(sim_out_set_attr(t, "flashspec_version", "0.1.0") == SIM_OK);
    CHECK(sim_out_set_attr(t, "script_hash", "sha256:abc") == SIM_OK);
    static const struct {
        int64_t id;
        const char *pol;
        double tps;
        const char *note;
    } rows[] = {
        {1, "flash_ar", 1.5, "plain"},
        {-2, "chain", 12.345678901234, "with,comma"},
        {9007199254740993LL, "chain", NAN, "say \"hi\""},
        {4, "lever", INFINITY, "two\nlines"},
        {5, "caf\xc3\xa9", -1e-300, ""},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int64_t r = add_row(t);
        CHECK(r == (int64_t)i);
        CHECK(sim_out_set_int64(t, r, 0, rows[i].id) == SIM_OK);
        CHECK(sim_out_set_string(t, r, 1, rows[i].pol) == SIM_OK);
        CHECK(sim_out_set_double(t, r, 2, rows[i].tps) == SIM_OK);
        CHECK(sim_out_set_string(t, r, 3, rows[i].note) == SIM_OK);
    }
    return t;
}

static const char expected_csv[] = "run_id,policy,tokens_per_s,note\n"
                                   "1,flash_ar,1.5,plain\n"
                                   "-2,chain,12.3456789,\"with,comma\"\n"
                                   "9007199254740993,chain,nan,\"say \"\"hi\"\"\"\n"
                                   "4,lever,inf,\"two\nlines\"\n"
                                   "5,caf\xc3\xa9,-1e-300,\n";

static void test_table_api(void)
{
    sim_out_table *t = sim_out_create();
    CHECK(t != NULL);
    CHECK(add_col(t, "a", SIM_OUT_INT64) == 0);
    CHECK(sim_out_add_column(t, "a", SIM_OUT_DOUBLE, NULL) == SIM_INTERNAL_ARG); /* duplicate */
    CHECK(sim_out_add_column(t, "", SIM_OUT_DOUBLE, NULL) == SIM_INTERNAL_ARG);
    CHECK(sim_out_add_column(t, "x/y", SIM_OUT_DOUBLE, NULL) == SIM_INTERNAL_ARG);
    CHECK(sim_out_add_column(t, ".", SIM_OUT_DOUBLE, NULL) == SIM_INTERNAL_ARG);
    CHECK(sim_out_add_column(t, "bad", (sim_out_type)7, NULL) == SIM_INTERNAL_ARG);
    CHECK(add_col(t, "b", SIM_OUT_DOUBLE) == 1);
    CHECK(add_col(t, "s", SIM_OUT_STRING) == 2);
    CHECK(sim_out_find_column(t, "s") == 2);
    CHECK(sim_out_find_column(t, "zz") == -1);
    int32_t kept = 41;
    CHECK(sim_out_add_column(t, "b", SIM_OUT_INT64, &kept) == SIM_INTERNAL_ARG && kept == 41);
    CHECK(sim_out_append_row(NULL, NULL) == SIM_INTERNAL_ARG);

    /* many rows: defaults, growth, setters */
    for (int64_t i = 0; i < 1000; i++)
        CHECK(add_row(t) == i);
    CHECK(sim_out_nrows(t) == 1000);
    CHECK(sim_out_add_column(t, "late", SIM_OUT_INT64, NULL) == SIM_INTERNAL_ARG); /* rows exist */
    const int64_t *a = sim_out_col_data(t, 0);
    const double *b = sim_out_col_data(t, 1);
    const char *const *s = sim_out_col_data(t, 2);
    CHECK(a && a[999] == 0);
    CHECK(b && isnan(b[0]) && isnan(b[999]));
    CHECK(s && s[500] && s[500][0] == '\0');
    CHECK(sim_out_set_double(t, 0, 0, 1.0) == SIM_INTERNAL_ARG); /* wrong type */
    CHECK(sim_out_set_int64(t, 1000, 0, 1) == SIM_INTERNAL_ARG); /* no such row */
    CHECK(sim_out_set_int64(t, -1, 0, 1) == SIM_INTERNAL_ARG);
    CHECK(sim_out_set_string(t, 0, 3, "x") == SIM_INTERNAL_ARG); /* no such column */
    char buf[8] = "abc";
    CHECK(sim_out_set_string(t, 7, 2, buf) == SIM_OK);
    buf[0] = 'z'; /* the table holds its own copy */
    s = sim_out_col_data(t, 2);
    CHECK(strcmp(s[7], "abc") == 0);
    CHECK(sim_out_set_string(t, 7, 2, NULL) == SIM_OK);
    s = sim_out_col_data(t, 2);
    CHECK(strcmp(s[7], "") == 0);

    CHECK(sim_out_set_attr(t, "seed", "1") == SIM_OK);
    CHECK(sim_out_set_attr(t, "trace", "t.h5") == SIM_OK);
    CHECK(sim_out_set_attr(t, "seed", "2") == SIM_OK); /* replaced, order kept */
    CHECK(sim_out_nattrs(t) == 2);
    CHECK(strcmp(sim_out_attr_key(t, 0), "seed") == 0);
    CHECK(strcmp(sim_out_attr_value(t, 0), "2") == 0);
    CHECK(strcmp(sim_out_get_attr(t, "trace"), "t.h5") == 0);
    CHECK(sim_out_get_attr(t, "nope") == NULL);
    CHECK(sim_out_attr_key(t, 2) == NULL);
    CHECK(sim_out_set_attr(t, "", "x") == SIM_INTERNAL_ARG);
    CHECK(sim_out_col_name(t, 3) == NULL);
    sim_out_destroy(t);
    sim_out_destroy(NULL);
}

static void test_quoting(void)
{
    sim_out_table *t = sim_out_create();
    CHECK(add_col(t, "plain", SIM_OUT_STRING) == 0);
    CHECK(add_col(t, "with,comma", SIM_OUT_STRING) == 1);
    CHECK(add_col(t, "q\"uote", SIM_OUT_DOUBLE) == 2);
    static const char *cells[][2] = {
        {"a b", "x"},        {"", "\"\""},        {"cr\rhere", "lf\nhere"},
        {" lead", "trail "}, {"semi;colon", "'"}, {"\"", "a,\"b\",c"},
    };
    static const double d[] = {0.1, -0.0, 1e21, 123456789012.0, 2.5e-7, -NAN};
    for (int i = 0; i < 6; i++) {
        int64_t r = add_row(t);
        sim_out_set_string(t, r, 0, cells[i][0]);
        sim_out_set_string(t, r, 1, cells[i][1]);
        sim_out_set_double(t, r, 2, d[i]);
    }
    char *csv = NULL;
    size_t n = 0;
    CHECK(sim_out_csv_format(t, &csv, &n) == SIM_OK);
    static const char want[] = "plain,\"with,comma\",\"q\"\"uote\"\n"
                               "a b,x,0.1\n"
                               ",\"\"\"\"\"\",-0.0\n"
                               "\"cr\rhere\",\"lf\nhere\",1e+21\n"
                               " lead,trail ,1.23456789e+11\n"
                               "semi;colon,',2.5e-07\n"
                               "\"\"\"\",\"a,\"\"b\"\",c\",nan\n";
    CHECK(csv && n == strlen(want) && memcmp(csv, want, n) == 0);
    if (csv && strcmp(csv, want) != 0) fprintf(stderr, "got:\n%s\nwant:\n%s\n", csv, want);
    /* a cell keeps what the CSV shows: 10 significant digits */
    const double *cell = sim_out_col_data(t, 2);
    CHECK(cell[3] == 123456789000.0 && cell[0] == 0.1 && signbit(cell[1]) && isnan(cell[5]));
    free(csv);
    sim_out_destroy(t);
}

/* An exact double column keeps every bit; its CSV cells carry the fewest
 * digits that read back (a plain column beside it keeps 10). */
static void test_exact(void)
{
    sim_out_table *t = sim_out_create();
    CHECK(add_col(t, "plain", SIM_OUT_DOUBLE) == 0);
    CHECK(add_col(t, "exact", SIM_OUT_DOUBLE) == 1);
    CHECK(add_col(t, "text", SIM_OUT_STRING) == 2);
    CHECK(sim_out_set_exact(t, 2) == SIM_INTERNAL_ARG); /* not a double column */
    CHECK(sim_out_set_exact(t, 7) == SIM_INTERNAL_ARG);
    CHECK(sim_out_set_exact(t, 1) == SIM_OK);
    CHECK(sim_out_col_exact(t, 1) && !sim_out_col_exact(t, 0));
    static const double d[] = {0.090373524058708, 0.1, 8.0, 1.0 / 3.0, NAN};
    for (int i = 0; i < 5; i++) {
        int64_t r = add_row(t);
        CHECK(sim_out_set_double(t, r, 0, d[i]) == SIM_OK);
        CHECK(sim_out_set_double(t, r, 1, d[i]) == SIM_OK);
    }
    CHECK(sim_out_set_exact(t, 0) == SIM_INTERNAL_ARG); /* rows exist */
    char *csv = NULL;
    size_t n = 0;
    CHECK(sim_out_csv_format(t, &csv, &n) == SIM_OK);
    static const char want[] = "plain,exact,text\n"
                               "0.09037352406,0.090373524058708,\n"
                               "0.1,0.1,\n"
                               "8.0,8.0,\n"
                               "0.3333333333,0.3333333333333333,\n"
                               "nan,nan,\n";
    CHECK(csv && n == strlen(want) && memcmp(csv, want, n) == 0);
    if (csv && strcmp(csv, want) != 0) fprintf(stderr, "got:\n%s\nwant:\n%s\n", csv, want);
    const double *exact = sim_out_col_data(t, 1), *plain = sim_out_col_data(t, 0);
    CHECK(exact[0] == d[0] && exact[3] == d[3] && plain[0] != d[0]);
    free(csv);
    sim_out_destroy(t);
}

static int read_str_attr(hid_t obj, const char *name, char *out, size_t cap)
{
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0) return -1;
    hid_t ty = H5Aget_type(a);
    int ok = H5Tis_variable_str(ty) > 0 && H5Tget_cset(ty) == H5T_CSET_UTF8;
    hid_t mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, H5T_VARIABLE);
    H5Tset_cset(mt, H5T_CSET_UTF8);
    char *v = NULL;
    if (ok && H5Aread(a, mt, &v) >= 0 && v) {
        snprintf(out, cap, "%s", v);
        H5free_memory(v);
    } else {
        ok = 0;
    }
    H5Tclose(mt);
    H5Tclose(ty);
    H5Aclose(a);
    return ok ? 0 : -1;
}

static herr_t count_attr(hid_t loc, const char *name, const H5A_info_t *info, void *n)
{
    (void)loc;
    (void)name;
    (void)info;
    ++*(int *)n;
    return 0;
}

static void check_h5(const char *file, const sim_out_table *t)
{
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0);
    if (f < 0) return;
    char v[128];
    for (int32_t i = 0; i < sim_out_nattrs(t); i++)
        CHECK(read_str_attr(f, sim_out_attr_key(t, i), v, sizeof v) == 0 &&
              !strcmp(v, sim_out_attr_value(t, i)));
    hsize_t idx = 0;
    int nattrs = 0;
    CHECK(H5Aiterate2(f, H5_INDEX_NAME, H5_ITER_INC, &idx, count_attr, &nattrs) >= 0);
    CHECK(nattrs == sim_out_nattrs(t));
    hid_t g = H5Gopen2(f, "results", H5P_DEFAULT);
    CHECK(g >= 0);
    int32_t nc = sim_out_ncols(t);
    hsize_t nr = (hsize_t)sim_out_nrows(t);

    hid_t strt = H5Tcopy(H5T_C_S1);
    H5Tset_size(strt, H5T_VARIABLE);
    H5Tset_cset(strt, H5T_CSET_UTF8);

    /* attribute `columns` holds the column order */
    hid_t a = H5Aopen(g, "columns", H5P_DEFAULT);
    CHECK(a >= 0);
    hid_t as = H5Aget_space(a);
    hsize_t an = 0;
    H5Sget_simple_extent_dims(as, &an, NULL);
    CHECK(an == (hsize_t)nc);
    char *names[16] = {0};
    CHECK(H5Aread(a, strt, names) >= 0);
    for (int32_t c = 0; c < nc; c++)
        CHECK(names[c] && strcmp(names[c], sim_out_col_name(t, c)) == 0);
    H5Dvlen_reclaim(strt, as, H5P_DEFAULT, names);
    H5Sclose(as);
    H5Aclose(a);

    for (int32_t c = 0; c < nc; c++) {
        hid_t d = H5Dopen2(g, sim_out_col_name(t, c), H5P_DEFAULT);
        CHECK(d >= 0);
        hid_t sp = H5Dget_space(d);
        hsize_t dn = 0;
        CHECK(H5Sget_simple_extent_ndims(sp) == 1);
        H5Sget_simple_extent_dims(sp, &dn, NULL);
        CHECK(dn == nr);
        hid_t ty = H5Dget_type(d);
        const void *want = sim_out_col_data(t, c);
        if (sim_out_col_type(t, c) == SIM_OUT_INT64) {
            CHECK(H5Tequal(ty, H5T_STD_I64LE) > 0);
            int64_t got[16];
            CHECK(H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
            CHECK(nr == 0 || memcmp(got, want, nr * sizeof(int64_t)) == 0);
        } else if (sim_out_col_type(t, c) == SIM_OUT_DOUBLE) {
            CHECK(H5Tequal(ty, H5T_IEEE_F64LE) > 0);
            double got[16];
            CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
            CHECK(nr == 0 || memcmp(got, want, nr * sizeof(double)) == 0); /* bitwise: NaN too */
        } else {
            CHECK(H5Tis_variable_str(ty) > 0 && H5Tget_cset(ty) == H5T_CSET_UTF8);
            char *got[16] = {0};
            CHECK(H5Dread(d, strt, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
            const char *const *w = want;
            for (hsize_t r = 0; r < nr; r++)
                CHECK(got[r] && strcmp(got[r], w[r]) == 0);
            H5Dvlen_reclaim(strt, sp, H5P_DEFAULT, got);
        }
        H5Tclose(ty);
        H5Sclose(sp);
        H5Dclose(d);
    }
    H5Tclose(strt);
    H5Gclose(g);
    H5Fclose(f);
}

static void test_round_trip(void)
{
    sim_out_table *t = make_table();
    char err[512];
    char dir[512]; /* created with its parents */
    snprintf(dir, sizeof dir, "%s", path_of("rt/nested/out"));
    CHECK(sim_out_write(t, dir, err, sizeof err) == SIM_OK);
    CHECK(err[0] == '\0');
    size_t n = 0;
    char *csv = slurp(path_of("rt/nested/out/results.csv"), &n);
    CHECK(csv && n == sizeof expected_csv - 1 && memcmp(csv, expected_csv, n) == 0);
    free(csv);
    char *mem = NULL;
    CHECK(sim_out_csv_format(t, &mem, &n) == SIM_OK);
    CHECK(mem && n == sizeof expected_csv - 1 && memcmp(mem, expected_csv, n) == 0);
    free(mem);
    check_h5(path_of("rt/nested/out/results.h5"), t);
    int temps = -1;
    CHECK(count_entries(dir, &temps) == 2 && temps == 0);
    struct stat st;
    CHECK(stat(path_of("rt/nested/out/results.csv"), &st) == 0 && (st.st_mode & 0777) == 0644);

    /* rewriting replaces both files; still no temporaries */
    sim_out_table *e = sim_out_create();
    add_col(e, "only", SIM_OUT_INT64);
    CHECK(sim_out_write(e, dir, err, sizeof err) == SIM_OK);
    csv = slurp(path_of("rt/nested/out/results.csv"), &n);
    CHECK(csv && strcmp(csv, "only\n") == 0);
    free(csv);
    check_h5(path_of("rt/nested/out/results.h5"), e);
    CHECK(count_entries(dir, &temps) == 2 && temps == 0);
    sim_out_destroy(e);

    /* a table with no columns at all is still a valid pair of files */
    sim_out_table *z = sim_out_create();
    CHECK(sim_out_write(z, path_of("rt/empty"), err, sizeof err) == SIM_OK);
    csv = slurp(path_of("rt/empty/results.csv"), &n);
    CHECK(csv && strcmp(csv, "\n") == 0);
    free(csv);
    hid_t f = H5Fopen(path_of("rt/empty/results.h5"), H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0);
    if (f >= 0) H5Fclose(f);
    sim_out_destroy(z);
    sim_out_destroy(t);
}

static int same_bytes(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    char *x = slurp(a, &na), *y = slurp(b, &nb);
    int same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

static void test_determinism(void)
{
    sim_out_table *t = make_table();
    char err[512];
    CHECK(sim_out_write(t, path_of("det1"), err, sizeof err) == SIM_OK);
    sleep(1); /* any stored timestamp would now differ */
    CHECK(sim_out_write(t, path_of("det2"), err, sizeof err) == SIM_OK);
    CHECK(same_bytes(path_of("det1/results.csv"), path_of("det2/results.csv")));
    CHECK(same_bytes(path_of("det1/results.h5"), path_of("det2/results.h5")));
    /* and a fresh table built the same way */
    sim_out_table *u = make_table();
    CHECK(sim_out_write(u, path_of("det3"), err, sizeof err) == SIM_OK);
    CHECK(same_bytes(path_of("det1/results.h5"), path_of("det3/results.h5")));
    sim_out_destroy(u);
    sim_out_destroy(t);
}

static void test_failures(void)
{
    sim_out_table *t = make_table();
    char err[512];

    /* a directory path whose parent is a regular file (blocks even root) */
    FILE *f = fopen(path_of("plainfile"), "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    const char *bad = path_of("plainfile/sub/out");
    int rc = sim_out_write(t, bad, err, sizeof err);
    CHECK(rc == SIM_CANTCREATE);
    CHECK(strstr(err, path_of("plainfile")) != NULL);
    CHECK(strstr(err, strerror(ENOTDIR)) != NULL);
    CHECK(strchr(err, '\n') == NULL);
    CHECK(!exists(path_of("plainfile/sub")));
    /* the output directory itself is a regular file */
    rc = sim_out_write(t, path_of("plainfile"), err, sizeof err);
    CHECK(rc == SIM_CANTCREATE);
    CHECK(strstr(err, strerror(ENOTDIR)) != NULL);
    int temps = -1;
    CHECK(count_entries(base, &temps) >= 1 && temps == 0);

    /* results.h5 cannot be replaced (a directory holds the name): no results.csv
     * appears and the temporaries are gone */
    CHECK(mkdir(path_of("blockh5"), 0755) == 0);
    CHECK(mkdir(path_of("blockh5/results.h5"), 0755) == 0);
    CHECK(mkdir(path_of("blockh5/results.h5/x"), 0755) == 0);
    rc = sim_out_write(t, path_of("blockh5"), err, sizeof err);
    CHECK(rc == SIM_CANTCREATE);
    CHECK(strstr(err, path_of("blockh5/results.h5")) != NULL);
    CHECK(!exists(path_of("blockh5/results.csv")));
    CHECK(count_entries(path_of("blockh5"), &temps) == 1 && temps == 0);

    /* results.csv cannot be replaced: the already renamed results.h5 is removed */
    CHECK(mkdir(path_of("blockcsv"), 0755) == 0);
    CHECK(mkdir(path_of("blockcsv/results.csv"), 0755) == 0);
    CHECK(mkdir(path_of("blockcsv/results.csv/x"), 0755) == 0);
    rc = sim_out_write(t, path_of("blockcsv"), err, sizeof err);
    CHECK(rc == SIM_CANTCREATE);
    CHECK(strstr(err, path_of("blockcsv/results.csv")) != NULL);
    CHECK(!exists(path_of("blockcsv/results.h5")));
    CHECK(count_entries(path_of("blockcsv"), &temps) == 1 && temps == 0);

    /* argument errors */
    CHECK(sim_out_write(t, "", err, sizeof err) == SIM_INTERNAL_ARG);
    CHECK(sim_out_write(NULL, path_of("x"), err, sizeof err) == SIM_INTERNAL_ARG);
    CHECK(sim_out_write(t, NULL, NULL, 0) == SIM_INTERNAL_ARG);
    CHECK(!exists(path_of("x")));
    sim_out_destroy(t);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(base, sizeof base, "%s/fs-out-XXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    if (!mkdtemp(base)) {
        perror("mkdtemp");
        return 1;
    }
    test_table_api();
    test_quoting();
    test_exact();
    test_round_trip();
    test_determinism();
    test_failures();
    if (!getenv("FS_KEEP_TMP")) rm_tree(base);
    fprintf(stderr, "test_out: %s: %d checks, %d failed\n", base, checks, failures);
    return failures || checks == 0;
}
