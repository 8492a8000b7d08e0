/*
 * test_rows.c -- the result rows without Lua (sim/out/rows.h): the fixed
 * columns' order, kinds and bounds; each cell as the files write it; the
 * param_/tag_ values' kinds and the label parser; the tree_nodes knob of every
 * tree policy and its edges; results.csv written for two rows, read back
 * line by line with exact reals; and policy labels (the policy_params
 * column) holding every value whole -- a list's sixth element included --,
 * fitting their buffer to the byte or refused, never cut
 * (sim_out_params_label), reals in the fewest digits that read back.
 */
#include "sim/out/rows.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../check.h"
#include "engine/pol_sequoia.h"
#include "sim/out/sim_strbuf.h"

static const char *col_name(int c)
{
    const char *name, *kind, *doc;
    return fs_row_column_info(c, &name, &kind, &doc) ? name : NULL;
}

static int col_index(const char *name)
{
    for (int c = 0; c < fs_row_columns(); c++)
        if (!strcmp(col_name(c), name)) return c;
    return -1;
}

/* The fixed columns: their order (a user-facing contract), count and bounds. */
static void test_columns(void)
{
    static const char *const first[] = {
        "policy",        "policy_params",  "device",  "target", "draft",        "trace",
        "dram_fraction", "max_new_tokens", "prompts", "tokens", "tokens_per_s", "ms_per_token"};
    int n = fs_row_columns();
    CHECK(n >= (int)(sizeof first / sizeof first[0]));
    for (size_t i = 0; i < sizeof first / sizeof first[0]; i++)
        CHECK(col_name((int)i) && !strcmp(col_name((int)i), first[i]));
    /* the last column: the newest, appended after tree_nodes */
    CHECK(col_name(n - 1) && !strcmp(col_name(n - 1), "tune_objective"));
    CHECK(col_name(n - 2) && !strcmp(col_name(n - 2), "tree_nodes"));
    CHECK(col_name(n) == NULL);
    CHECK(col_name(-1) == NULL);
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            CHECK(strcmp(col_name(a), col_name(b)) != 0);
    const char *name, *kind, *doc;
    CHECK(fs_row_column_info(col_index("prompts"), &name, &kind, &doc) && !strcmp(kind, "integer"));
    CHECK(fs_row_column_info(col_index("seed"), &name, &kind, &doc) && !strcmp(kind, "integer"));
    CHECK(fs_row_column_info(col_index("tree_nodes"), &name, &kind, &doc) &&
          !strcmp(kind, "number"));
    CHECK(fs_row_column_info(col_index("accepted_hist"), &name, &kind, &doc) &&
          !strcmp(kind, "text") && doc && *doc);
    CHECK_EQ_INT(fs_row_column_kind("tokens"), FS_COL_NUMBER);
    CHECK_EQ_INT(fs_row_column_kind("tree_nodes"), FS_COL_NUMBER);
    CHECK_EQ_INT(fs_row_column_kind("trace_checksum"), FS_COL_TEXT);
    CHECK_EQ_INT(fs_row_column_kind("version"), FS_COL_TEXT);
    CHECK_EQ_INT(fs_row_column_kind("param_k"), FS_COL_NONE);
    CHECK_EQ_INT(fs_row_column_kind("sim_wall_s"), FS_COL_NONE);
    CHECK_EQ_INT(fs_row_column_kind(""), FS_COL_NONE);
}

static void chain_row(fs_row *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->policy, sizeof r->policy, "chain");
    snprintf(r->policy_params, sizeof r->policy_params, "k=8,theta=0.090373524058708");
    snprintf(r->device, sizeof r->device, "oneplus12");
    snprintf(r->target, sizeof r->target, "qwen3-8b");
    snprintf(r->draft, sizeof r->draft, "eagle3");
    snprintf(r->trace, sizeof r->trace, "code");
    snprintf(r->tags, sizeof r->tags, "n=3\nstudy=a,b");
    r->dram_fraction = 0.25;
    r->max_new_tokens = 128;
    r->prompts = 3;
    r->seed = 42;
    r->trace_checksum = 0xdeadbeefULL;
    r->st.prompts = 3;
    r->st.tokens = 384;
    r->st.tokens_per_s = 0.1;
    r->st.ms_per_token = 1.0 / 3.0;
    r->st.accepted_hist[0] = 5;
    snprintf(r->accept, sizeof r->accept, "greedy");
    snprintf(r->runtime, sizeof r->runtime, "auto");
    snprintf(r->synth_tokens, sizeof r->synth_tokens, "offset");
    r->top_p = NAN;
    r->temperature = 1.0;
    r->tune_train = NAN;
}

/* Each cell's kind and value as the files write it. */
static void test_cells(void)
{
    fs_rows_meta m = {"0123456789abcdef"};
    fs_row r;
    chain_row(&r);
    const char *s;
    int64_t i;
    double d;
    char buf[FS_ROW_CELL_CAP];
    CHECK_EQ_INT(fs_row_cell(&m, &r, -1, &s, &i, &d, buf, sizeof buf), 0);
    CHECK_EQ_INT(fs_row_cell(&m, &r, fs_row_columns(), &s, &i, &d, buf, sizeof buf), 0);
    CHECK_EQ_INT(fs_row_cell(&m, &r, fs_row_columns() - 1, &s, &i, &d, buf, sizeof buf),
                 FS_CELL_TEXT);
    CHECK(!strcmp(s, "none")); /* tune_objective of a row not tuned */
    CHECK_EQ_INT(fs_row_cell(&m, &r, 0, &s, &i, &d, buf, sizeof buf), FS_CELL_TEXT);
    CHECK(!strcmp(s, "chain"));
    CHECK_EQ_INT(fs_row_cell(&m, &r, col_index("tokens"), &s, &i, &d, buf, sizeof buf),
                 FS_CELL_INTEGER);
    CHECK_EQ_INT(i, 384);
    CHECK_EQ_INT(fs_row_cell(&m, &r, col_index("seed"), &s, &i, &d, buf, sizeof buf),
                 FS_CELL_INTEGER);
    CHECK_EQ_INT(i, 42);
    CHECK_EQ_INT(fs_row_cell(&m, &r, col_index("ms_per_token"), &s, &i, &d, buf, sizeof buf),
                 FS_CELL_NUMBER);
    CHECK(d == 1.0 / 3.0);
    CHECK_EQ_INT(fs_row_cell(&m, &r, col_index("trace_checksum"), &s, &i, &d, buf, sizeof buf),
                 FS_CELL_TEXT);
    CHECK(!strcmp(s, "00000000deadbeef"));
    CHECK_EQ_INT(fs_row_cell(&m, &r, col_index("script_hash"), &s, &i, &d, buf, sizeof buf),
                 FS_CELL_TEXT);
    CHECK(!strcmp(s, "0123456789abcdef"));
    CHECK_EQ_INT(fs_row_cell(&m, &r, col_index("version"), &s, &i, &d, buf, sizeof buf),
                 FS_CELL_TEXT);
    CHECK(!strcmp(s, FS_VERSION));
    /* accepted_hist: trailing empty bins trimmed, two kept at least */
    fs_row_cell(&m, &r, col_index("accepted_hist"), &s, &i, &d, buf, sizeof buf);
    CHECK(!strcmp(s, "5;0"));
    r.st.accepted_hist[2] = 7;
    fs_row_cell(&m, &r, col_index("accepted_hist"), &s, &i, &d, buf, sizeof buf);
    CHECK(!strcmp(s, "5;0;7"));
    r.st.accepted_hist[RP_HIST_BINS - 1] = 1; /* the last bin: nothing trimmed */
    fs_row_cell(&m, &r, col_index("accepted_hist"), &s, &i, &d, buf, sizeof buf);
    CHECK(!strncmp(s, "5;0;7;0;", 8) && !strcmp(s + strlen(s) - 4, ";0;1"));
    /* the policy without parameters says so */
    r.policy_params[0] = 0;
    fs_row_cell(&m, &r, 1, &s, &i, &d, buf, sizeof buf);
    CHECK(!strcmp(s, "none"));
    /* fs_row_get agrees with fs_row_cell */
    char text[64];
    chain_row(&r);
    CHECK_EQ_INT(fs_row_get(&m, &r, "ms_per_token", &d, text, sizeof text), FS_COL_NUMBER);
    CHECK(d == 1.0 / 3.0);
    CHECK_EQ_INT(fs_row_get(&m, &r, "prompts", &d, text, sizeof text), FS_COL_NUMBER);
    CHECK(d == 3.0);
    CHECK_EQ_INT(fs_row_get(&m, &r, "draft", &d, text, sizeof text), FS_COL_TEXT);
    CHECK(!strcmp(text, "eagle3"));
    CHECK_EQ_INT(fs_row_get(&m, &r, "param_k", &d, text, sizeof text), FS_COL_NONE);
}

/* param_/tag_ values: whole numbers that fit int64, other finite reals, text. */
static void test_value_kind(void)
{
    int64_t i = 0;
    double d = 0;
    CHECK_EQ_INT(fs_row_value_kind("8", &i, &d), 2);
    CHECK_EQ_INT(i, 8);
    CHECK_EQ_INT(fs_row_value_kind("-3", &i, &d), 2);
    CHECK(i == -3 && d == -3.0);
    CHECK_EQ_INT(fs_row_value_kind("9223372036854775807", &i, &d), 2);
    CHECK(i == INT64_MAX);
    /* one past int64: a real */
    CHECK_EQ_INT(fs_row_value_kind("9223372036854775808", &i, &d), 1);
    CHECK(d == 9223372036854775808.0);
    CHECK_EQ_INT(fs_row_value_kind("0.090373524058708", &i, &d), 1);
    CHECK(d == 0.090373524058708);
    CHECK_EQ_INT(fs_row_value_kind("", &i, &d), 0);
    CHECK_EQ_INT(fs_row_value_kind(" 1", &i, &d), 0);
    CHECK_EQ_INT(fs_row_value_kind("1x", &i, &d), 0);
    CHECK_EQ_INT(fs_row_value_kind("inf", &i, &d), 0);
    CHECK_EQ_INT(fs_row_value_kind("nan", &i, &d), 0);
    CHECK_EQ_INT(fs_row_value_kind("{4,2}", &i, &d), 0);
}

typedef struct pairs {
    char names[8][64], values[8][128];
    int n, stop_after;
} pairs;

static int take_pair(void *ctx, const char *name, const char *value)
{
    pairs *p = ctx;
    if (p->n < 8) {
        snprintf(p->names[p->n], sizeof p->names[0], "%s", name);
        snprintf(p->values[p->n], sizeof p->values[0], "%s", value);
    }
    p->n++;
    return p->stop_after && p->n >= p->stop_after;
}

/* Labels: quoted Lua strings unquoted, braced tables whole, non-identifiers
 * skipped; tags one per line; fn's nonzero answer stops. */
static void test_each_pair(void)
{
    pairs p = {0};
    fs_row_each_pair("k=8,widths={4,2,1},name=\"a,\\\"b\",1x=3,novalue,_z=q", 0, take_pair, &p);
    CHECK_EQ_INT(p.n, 4);
    CHECK(!strcmp(p.names[0], "k") && !strcmp(p.values[0], "8"));
    CHECK(!strcmp(p.names[1], "widths") && !strcmp(p.values[1], "{4,2,1}"));
    CHECK(!strcmp(p.names[2], "name") && !strcmp(p.values[2], "a,\"b"));
    CHECK(!strcmp(p.names[3], "_z") && !strcmp(p.values[3], "q"));
    memset(&p, 0, sizeof p);
    fs_row_each_pair("n=3\nstudy=a,b\n", 1, take_pair, &p);
    CHECK_EQ_INT(p.n, 2);
    CHECK(!strcmp(p.names[1], "study") && !strcmp(p.values[1], "a,b"));
    memset(&p, 0, sizeof p);
    p.stop_after = 1;
    fs_row_each_pair("a=1,b=2", 0, take_pair, &p);
    CHECK_EQ_INT(p.n, 1);
    memset(&p, 0, sizeof p);
    fs_row_each_pair("", 0, take_pair, &p);
    CHECK_EQ_INT(p.n, 0);
}

static double tree_nodes(const char *policy, const char *label)
{
    fs_rows_meta m = {"h"};
    fs_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.policy, sizeof r.policy, "%s", policy);
    snprintf(r.policy_params, sizeof r.policy_params, "%s", label);
    double d = -1;
    CHECK_EQ_INT(fs_row_get(&m, &r, "tree_nodes", &d, NULL, 0), FS_COL_NUMBER);
    return d;
}

/* The tree_nodes column of every built-in tree policy, read back from a
 * row's label through the size its descriptor states (engine/policies
 * tests the descriptors' rules themselves). */
static void test_tree_knob(void)
{
    CHECK(tree_nodes("flash_ar", "") == 1.0);
    CHECK(tree_nodes("adaptive_chain", "k_min=1,k_max=6") == 7.0);
    CHECK(tree_nodes("eagle2", "top_k=8,depth=8,total_tokens=15") == 16.0);
    CHECK(tree_nodes("opt_tree", "nodes=31") == 32.0);
    CHECK(tree_nodes("lever", "drafting=gain_cost,n_max=15") == 16.0);
    CHECK(tree_nodes("lyanna", "b=7") == 8.0);
    CHECK(tree_nodes("bld", "fallback=0.6,max_len=10") == 11.0);
    CHECK(tree_nodes("edgellm", "fallback=true,budget=8,max_tokens=32") == 33.0);
    CHECK(tree_nodes("edgellm", "fallback=false,budget=8,max_tokens=32") == 9.0);
    CHECK(tree_nodes("chain", "k=8") == 9.0);
    CHECK(tree_nodes("sequoia", "max_nodes=64") == 64.0);
    CHECK(tree_nodes("specinfer", "widths=4/2") == 13.0); /* 1 + 4 + 4 * 2 */
    CHECK(isnan(tree_nodes("specinfer", "widths=4/0")));
    CHECK(tree_nodes("edgellm", "max_tokens=32,budget=8") == 33.0);
    CHECK(tree_nodes("edgellm", "max_tokens=32,budget=8,fallback=false") == 9.0);
    CHECK(tree_nodes("flash_ar", "") == 1.0);
    CHECK(isnan(tree_nodes("chain", "theta=0.5")));
    CHECK(isnan(tree_nodes("chain", "k=8x")));
    /* a Lua policy's or plug-in's own tree_nodes parameter, a finite number */
    CHECK(tree_nodes("my_tree", "tree_nodes=7") == 7.0);
    CHECK(isnan(tree_nodes("my_tree", "tree_nodes=inf")));
    CHECK(isnan(tree_nodes("my_tree", "depth=3")));
}

/* Splits one CSV line (quoted fields with doubled quotes) into fields. */
static int split_csv(char *line, char **f, int cap)
{
    int n = 0;
    char *p = line;
    while (n < cap) {
        char *out = p;
        f[n++] = out;
        if (*p == '"') {
            p++;
            for (;;) {
                if (*p == '"' && p[1] == '"') {
                    *out++ = '"';
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else if (!*p) {
                    break;
                } else {
                    *out++ = *p++;
                }
            }
        } else {
            while (*p && *p != ',' && *p != '\n')
                *out++ = *p++;
        }
        int more = *p == ',';
        *out = 0;
        if (!more) break;
        p++;
    }
    return n;
}

static const char *field(char **names, char **values, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], name)) return values[i];
    return NULL;
}

#define FIELD_IS(name, want)                                                                       \
    do {                                                                                           \
        const char *got_ = field(names, values, nn, name);                                         \
        CHECK(got_ && !strcmp(got_, want));                                                        \
        if (got_ && strcmp(got_, want))                                                            \
            fprintf(stderr, "  %s: '%s', want '%s'\n", name, got_, want);                          \
    } while (0)

/* results.csv of two rows: the header in column order with the param_ and
 * tag_ columns after the fixed ones, and each cell's exact text. */
static void test_write_csv(void)
{
    char dir[] = "/tmp/fs-test-rows-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    fs_rows_meta m = {"0123456789abcdef"};
    fs_row rows[2];
    chain_row(&rows[0]);
    chain_row(&rows[1]);
    snprintf(rows[1].policy, sizeof rows[1].policy, "flash_ar");
    rows[1].policy_params[0] = 0;
    rows[1].tags[0] = 0;
    rows[1].st.tokens_per_s = 1e-300;
    char err[256] = "";
    CHECK_EQ_INT(fs_rows_write(&m, rows, 2, dir, err, sizeof err), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/results.csv", dir);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    static char head[8192], l1[8192], l2[8192];
    CHECK(f && fgets(head, sizeof head, f) && fgets(l1, sizeof l1, f) && fgets(l2, sizeof l2, f));
    CHECK(f && fgetc(f) == EOF);
    if (f) fclose(f);
    char *names[128], *values[128], *values2[128];
    int nn = split_csv(head, names, 128);
    int fixed = fs_row_columns();
    CHECK_EQ_INT(nn, fixed + 4);
    for (int c = 0; c < fixed && c < nn; c++)
        CHECK(!strcmp(names[c], col_name(c)));
    /* the param_ and tag_ columns, in order of first appearance */
    CHECK(nn == fixed + 4 && !strcmp(names[fixed], "param_k") &&
          !strcmp(names[fixed + 1], "param_theta") && !strcmp(names[fixed + 2], "tag_n") &&
          !strcmp(names[fixed + 3], "tag_study"));
    CHECK_EQ_INT(split_csv(l1, values, 128), nn);
    FIELD_IS("policy", "chain");
    FIELD_IS("policy_params", "k=8,theta=0.090373524058708");
    FIELD_IS("dram_fraction", "0.25");
    FIELD_IS("max_new_tokens", "128");
    FIELD_IS("tokens", "384");
    FIELD_IS("tokens_per_s", "0.1");
    FIELD_IS("ms_per_token", "0.3333333333"); /* fixed columns: ten digits */
    FIELD_IS("cycles", "0");
    FIELD_IS("idle_ms", "0.0"); /* a real reads back as one */
    FIELD_IS("seed", "42");
    FIELD_IS("trace_checksum", "00000000deadbeef");
    FIELD_IS("top_p", "nan");
    FIELD_IS("temperature", "1.0");
    FIELD_IS("accepted_hist", "5;0");
    FIELD_IS("tree_nodes", "9.0");
    FIELD_IS("tune_train", "nan");
    FIELD_IS("tune_objective", "none");
    FIELD_IS("script_hash", "0123456789abcdef");
    FIELD_IS("version", FS_VERSION);
    /* param_ numbers are exact: the fewest digits that read back */
    FIELD_IS("param_k", "8.0");
    FIELD_IS("param_theta", "0.090373524058708");
    FIELD_IS("tag_n", "3.0");
    FIELD_IS("tag_study", "a,b");
    CHECK_EQ_INT(split_csv(l2, values2, 128), nn);
    for (int i = 0; i < nn && i < 128; i++)
        values[i] = values2[i];
    FIELD_IS("policy", "flash_ar");
    FIELD_IS("policy_params", "none");
    FIELD_IS("tokens_per_s", "1e-300");
    FIELD_IS("tree_nodes", "1.0");
    FIELD_IS("param_k", "nan");
    FIELD_IS("tag_study", "");
    snprintf(path, sizeof path, "%s/results.csv", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/results.h5", dir);
    unlink(path);
    rmdir(dir);
}

/* ------------------------------------------------------------------ labels */

static void test_labels(void)
{
    eng_sequoia_params a, b;
    eng_params_defaults(eng_sequoia_param_table, &a);
    a.n_prior = ENG_POL_MAX_LIST;
    for (int i = 0; i < a.n_prior; i++)
        a.prior[i] = 0.123456789012345 + 1e-15 * i; /* 17 significant digits each */
    b = a;
    b.prior[5] += 0.1; /* the sixth value alone differs */
    char la[FS_LABEL_CAP], lb[FS_LABEL_CAP];
    CHECK_EQ_INT(sim_out_params_label(eng_sequoia_param_table, &a, la, sizeof la), 0);
    CHECK_EQ_INT(sim_out_params_label(eng_sequoia_param_table, &b, lb, sizeof lb), 0);
    CHECK(strcmp(la, lb) != 0);
    /* every element, each reading back exactly */
    const char *p = strstr(la, "prior=");
    CHECK(p != NULL);
    for (int i = 0; p && i < a.n_prior; i++) {
        char *end;
        double x = strtod(p + (i ? 1 : 6), &end);
        CHECK(x == a.prior[i]);
        p = end;
        CHECK(*p == (i + 1 < a.n_prior ? '/' : ','));
    }
    CHECK(strstr(la, ",unit=npu") != NULL);
    /* the buffer's edge: the label and its NUL fit to the byte, one less is
     * refused (and a refused label is never a usable prefix) */
    size_t need = strlen(la) + 1;
    char *buf = malloc(need);
    CHECK(buf && sim_out_params_label(eng_sequoia_param_table, &a, buf, need) == 0);
    CHECK(buf && strcmp(buf, la) == 0);
    CHECK(buf && sim_out_params_label(eng_sequoia_param_table, &a, buf, need - 1) == -1);
    CHECK(buf && sim_out_params_label(eng_sequoia_param_table, &a, buf, 7) == -1);
    free(buf);
    /* exact reals: the fewest digits that read back */
    char e[32];
    sim_out_fmt_exact(e, sizeof e, 0.1);
    CHECK(strcmp(e, "0.1") == 0);
    const double xs[] = {35.0 / 36.0, 0.1 + 0.2, 1000.0 / 3.0, 1e-300, 0.090373524058708};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        sim_out_fmt_exact(e, sizeof e, xs[i]);
        CHECK(strtod(e, NULL) == xs[i]);
    }
}

int main(void)
{
    test_columns();
    test_cells();
    test_value_kind();
    test_each_pair();
    test_tree_knob();
    test_write_csv();
    test_labels();
    return check_done("out/rows");
}
