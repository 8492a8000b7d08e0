/*
 * test_refcsv.c -- reference CSV (sim/fit/refcsv.h) over the simulator's
 * result rows (sim/fit/sim_fit_rows.h: the result columns): reading (comments, blank
 * lines, CR LF, quoted fields, true line numbers), every rejected input with its
 * status and one-line message naming the file and line, matching of key cells
 * against result rows (text, numeric, tree_nodes, empty = any) and the metric
 * expressions (precedence, associativity, unary minus, division by zero).
 *
 * Writes its inputs into a fresh directory under $TMPDIR (or /tmp), removed at
 * the end.
 */
#include "sim/fit/refcsv.h"
#include "sim/fit/sim_fit_rows.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../check.h"

static char dir[512];
static char path[600];
static fs_rows_meta meta; /* the result rows' run (zeroed) */
static fs_ref_cols cols;  /* the result columns (fs_ref_result_cols) */

/* Writes data[0..n) to dir/name and returns its path (static). */
static const char *put(const char *name, const char *data, size_t n)
{
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
        exit(2);
    }
    if (n) fwrite(data, 1, n, f);
    fclose(f);
    return path;
}

static int load(const char *data, fs_ref *r, char *err, size_t errlen)
{
    return fs_ref_load(put("r.csv", data, strlen(data)), &cols, r, err, errlen);
}

/* A rejected input: status want, one line holding where ("r.csv:LINE:") and
 * needle, and nothing kept. */
static void bad_at(int line_no, const char *data, int want, const char *where, const char *needle)
{
    fs_ref r;
    char err[1024] = "";
    int rc = load(data, &r, err, sizeof err);
    CHECK_EQ_INT(rc, want);
    CHECK(!where || strstr(err, where) != NULL);
    CHECK(strstr(err, needle) != NULL);
    CHECK(strchr(err, '\n') == NULL);
    CHECK(strstr(err, path) == err); /* starts with the file's path */
    CHECK(r.rows == NULL && r.n_rows == 0);
    if (rc != want || (where && !strstr(err, where)) || !strstr(err, needle))
        fprintf(stderr, "  (case at line %d: status %d, message '%s')\n", line_no, rc, err);
    fs_ref_free(&r);
}
#define BAD(data, want, where, needle) bad_at(__LINE__, data, want, where, needle)

#define HDR "target,policy,tree_nodes,metric,value,source\n"

/* ------------------------------------------------------------------ reading */

static void test_good_file(void)
{
    const char *csv =
        "# a comment with a lone \" quote, and a comma\n"                          /* 1 */
        "\n"                                                                        /* 2 */
        "target,policy,tree_nodes,metric,value,source,note\r\n"                     /* 3 */
        "qwen3-8b-q4_0,chain,9,tokens_per_s,1.5,\"Lever, Table 5\",\"a \"\"note\"\"\"\r\n"
        "  # an indented comment \"\n"                                             /* 5 */
        ",flash_ar,,ms_per_token, 1050 ,src,\"two\nlines\"\n"                       /* 6-7 */
        "qwen3-8b-q4_0,eagle2,16,verify_ms-flash_ms,817,src,\n"                     /* 8 */
        "qwen3-8b-q4_0,,, ( npu_ms + cpu_ms ) * 2 - -1 ,96.6,src,\n"                /* 9 */
        "\"#quoted\",chain,5,tokens_per_s,1,src,\n";                                /* 10 */
    fs_ref r;
    char err[512] = "";
    int rc = load(csv, &r, err, sizeof err);
    CHECK_EQ_INT(rc, SIM_OK);
    if (rc != SIM_OK) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    CHECK_EQ_INT(r.n_keys, 3);
    CHECK(!strcmp(r.key_names[0], "target") && !strcmp(r.key_names[1], "policy") &&
          !strcmp(r.key_names[2], "tree_nodes"));
    /* a first cell "#quoted" is a comment too (documented: lines starting with '#') */
    CHECK_EQ_INT(r.n_rows, 4);
    CHECK_EQ_INT(r.rows[0].line, 4);
    CHECK_EQ_INT(r.rows[1].line, 6);
    CHECK_EQ_INT(r.rows[2].line, 8);
    CHECK_EQ_INT(r.rows[3].line, 9);
    CHECK(!strcmp(r.rows[0].source, "Lever, Table 5"));
    CHECK(!strcmp(r.rows[0].note, "a \"note\""));
    CHECK(!strcmp(r.rows[1].note, "two\nlines"));
    CHECK(!strcmp(r.rows[1].keys[0], "") && !strcmp(r.rows[1].keys[2], ""));
    CHECK_NEAR(r.rows[1].value, 1050.0, 0);
    CHECK_NEAR(r.rows[3].value, 96.6, 0);
    CHECK(!strcmp(r.rows[3].metric, "( npu_ms + cpu_ms ) * 2 - -1"));
    CHECK(!strcmp(r.path, path));
    fs_ref_free(&r);
    CHECK(r.rows == NULL && r.n_rows == 0);
    fs_ref_free(&r); /* twice is harmless */
    fs_ref_free(NULL);
}

static void test_limits_ok(void)
{
    /* 32 fields: metric, value, source and 29 key columns */
    static const char *keys[] = {"target", "policy", "policy_params", "device", "draft", "trace",
                                 "dram_fraction", "max_new_tokens", "prompts", "tokens",
                                 "tokens_per_s", "ms_per_token", "cycles", "tokens_per_cycle",
                                 "mean_accepted", "cycle_ms", "draft_ms", "flash_ms", "npu_ms",
                                 "cpu_ms", "kv_ms", "idle_ms", "verify_ms", "verify_rows",
                                 "dram_bytes", "resident_layers", "coverage", "seed",
                                 "waste_ms", "waste_frac", "token_mismatch", "top_p",
                                 "temperature"};
    char buf[4096];
    size_t at = 0;
    for (int i = 0; i < 29; i++) at += (size_t)snprintf(buf + at, sizeof buf - at, "%s,", keys[i]);
    at += (size_t)snprintf(buf + at, sizeof buf - at, "metric,value,source\n");
    for (int i = 0; i < 29; i++) at += (size_t)snprintf(buf + at, sizeof buf - at, ",");
    snprintf(buf + at, sizeof buf - at, "flash_ms,1,src\n");
    fs_ref r;
    char err[512] = "";
    CHECK_EQ_INT(load(buf, &r, err, sizeof err), SIM_OK);
    CHECK_EQ_INT(r.n_keys, 29);
    CHECK_EQ_INT(r.n_rows, 1);
    fs_ref_free(&r);

    /* 33 fields, all of them key columns: one field too many, rejected before
     * anything is stored (this overflowed the key tables once) */
    at = 0;
    for (int i = 0; i < 33; i++)
        at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s", i ? "," : "", keys[i]);
    snprintf(buf + at, sizeof buf - at, "\n");
    BAD(buf, SIM_DATA, "r.csv:1:", "more than 32 fields");
    /* 33 fields on a data row */
    at = (size_t)snprintf(buf, sizeof buf, HDR "x");
    for (int i = 0; i < 32; i++) at += (size_t)snprintf(buf + at, sizeof buf - at, ",x");
    snprintf(buf + at, sizeof buf - at, "\n");
    BAD(buf, SIM_DATA, "r.csv:2:", "more than 32 fields");

    /* FS_REF_MAX_ROWS rows load; one more does not */
    size_t cap = 64 + (size_t)(FS_REF_MAX_ROWS + 1) * 32;
    char *big = malloc(cap);
    CHECK(big != NULL);
    if (!big) return;
    at = (size_t)snprintf(big, cap, HDR);
    for (int i = 0; i < FS_REF_MAX_ROWS; i++)
        at += (size_t)snprintf(big + at, cap - at, "t,flash_ar,1,flash_ms,%d,s\n", i + 1);
    CHECK_EQ_INT(load(big, &r, err, sizeof err), SIM_OK);
    CHECK_EQ_INT(r.n_rows, FS_REF_MAX_ROWS);
    CHECK_EQ_INT(r.rows[FS_REF_MAX_ROWS - 1].line, FS_REF_MAX_ROWS + 1);
    fs_ref_free(&r);
    snprintf(big + at, cap - at, "t,flash_ar,1,flash_ms,1,s\n");
    BAD(big, SIM_DATA, "r.csv:10002:", "more than 10000 reference rows");
    free(big);

    /* larger than FS_REF_MAX_BYTES: refused by size, before reading */
    size_t n = (size_t)FS_REF_MAX_BYTES + 1;
    char *huge = malloc(n);
    CHECK(huge != NULL);
    if (!huge) return;
    memset(huge, '#', n);
    for (size_t i = 80; i < n; i += 81) huge[i] = '\n';
    const char *p = put("huge.csv", huge, n);
    char msg[512] = "";
    CHECK_EQ_INT(fs_ref_load(p, &cols, &r, msg, sizeof msg), SIM_DATA);
    CHECK(strstr(msg, "larger than") != NULL);
    free(huge);
    unlink(p);
}

static void test_rejected(void)
{
    fs_ref r;
    char err[512] = "";
    /* files */
    snprintf(path, sizeof path, "%s/none.csv", dir);
    CHECK_EQ_INT(fs_ref_load(path, &cols, &r, err, sizeof err), SIM_MISSING);
    CHECK(strstr(err, "none.csv: cannot open reference file") != NULL);
    CHECK_EQ_INT(fs_ref_load(dir, &cols, &r, err, sizeof err), SIM_DATA);
    CHECK(strstr(err, "not a regular file") != NULL);
    snprintf(path, sizeof path, "%s/fifo.csv", dir);
    CHECK(mkfifo(path, 0600) == 0);
    CHECK_EQ_INT(fs_ref_load(path, &cols, &r, err, sizeof err), SIM_DATA); /* must not block */
    CHECK(strstr(err, "not a regular file") != NULL);
    unlink(path);
    CHECK_EQ_INT(fs_ref_load(put("nul.csv", HDR "a\0b\n", sizeof(HDR "a\0b\n") - 1), &cols, &r, err,
                             sizeof err),
                 SIM_DATA);
    CHECK(strstr(err, "NUL bytes") != NULL);

    /* structure */
    BAD("", SIM_DATA, "r.csv:1:", "empty file");
    BAD("# only\n\n# comments \"\n", SIM_DATA, "r.csv:1:", "empty file");
    BAD(HDR, SIM_DATA, NULL, "no reference rows");
    BAD("# c\npolcy,metric,value,source\n", SIM_DATA, "r.csv:2:",
        "unknown key column 'polcy'");
    BAD("target,value,source\n", SIM_DATA, "r.csv:1:", "missing column 'metric'");
    BAD("target,metric,source\n", SIM_DATA, "r.csv:1:", "missing column 'value'");
    BAD("target,metric,value,note\n", SIM_DATA, "r.csv:1:", "missing column 'source'");
    BAD("metric,value,source,note\n", SIM_DATA, "r.csv:1:", "no key column");
    BAD("target,metric,value,source,target\n", SIM_DATA, "r.csv:1:",
        "duplicate column 'target'");
    BAD(HDR "t,chain,9,flash_ms,1\n", SIM_DATA, "r.csv:2:", "5 fields, the header has 6");
    BAD(HDR "t,chain,9,flash_ms,1,s,x\n", SIM_DATA, "r.csv:2:",
        "7 fields, the header has 6");
    BAD(HDR "t,chain,9,flash_ms,1,s\nt,chain,9,flash_ms,1,\"s\n\n", SIM_DATA, "r.csv:3:",
        "unterminated quote");
    BAD(HDR "t,chain,nine,flash_ms,1,s\n", SIM_DATA, "r.csv:2:",
        "key 'tree_nodes': 'nine' is not a number");
    BAD(HDR "t,chain,9,flash_ms,1, \n", SIM_DATA, "r.csv:2:", "empty source");
    BAD("target,dram_fraction,metric,value,source\nt,1e999,flash_ms,1,s\n", SIM_DATA,
        "r.csv:2:", "is not a number");

    /* values */
    static const char *values[] = {"0", "-0", "-1", "nan", "inf", "", "1x", "1e999", "--1"};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
        char buf[256];
        snprintf(buf, sizeof buf, HDR "# c\nt,chain,9,flash_ms,%s,s\n", values[i]);
        BAD(buf, SIM_DATA, "r.csv:3:", "value must be a positive number");
    }

    /* metrics */
    static const struct {
        const char *metric, *needle;
    } metrics[] = {
        {"", "unexpected end"},
        {"flsh_ms", "unknown metric 'flsh_ms'"},
        {"policy", "unknown metric 'policy'"},     /* a text column */
        {"accepted_hist", "unknown metric"},        /* not a number either */
        {"verify_ms-", "unexpected end"},
        {"(flash_ms", "missing ')'"},
        {"flash_ms)", "unexpected character"},
        {"1 2", "unexpected character"},
        {"flash_ms $", "unexpected character"},
        {"flash_ms^2", "unexpected character"},
        {"1e999*flash_ms", "bad number"},
        {".", "bad number"},
        {"((((((((((((((((((flash_ms))))))))))))))))))", "nested too deeply"},
        {"----------------------------------flash_ms", "nested too deeply"},
        {"1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1",
         "expression too long"},
    };
    for (size_t i = 0; i < sizeof metrics / sizeof *metrics; i++) {
        char buf[512];
        snprintf(buf, sizeof buf, HDR "t,chain,9,flash_ms,1,s\nt,chain,9,\"%s\",1,s\n",
                 metrics[i].metric);
        BAD(buf, SIM_DATA, "r.csv:3:", metrics[i].needle);
    }
}

/* ---------------------------------------------------------- match and eval */

static fs_row row_of(const char *policy, const char *params, const char *target)
{
    fs_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.policy, sizeof r.policy, "%s", policy);
    snprintf(r.policy_params, sizeof r.policy_params, "%s", params);
    snprintf(r.target, sizeof r.target, "%s", target);
    snprintf(r.device, sizeof r.device, "oneplus12");
    snprintf(r.trace, sizeof r.trace, "w1");
    r.dram_fraction = 0.2;
    r.st.tokens = 128;
    r.st.tokens_per_s = 1.5;
    r.st.verify_ms = 900.0;
    r.st.flash_ms = 83.0;
    r.st.npu_ms = 40.0;
    r.st.cpu_ms = 8.0;
    r.st.waste_ms = 0.0;
    return r;
}

static void test_match(void)
{
    const char *csv = "target,policy,tree_nodes,dram_fraction,metric,value,source\n"
                      "qwen3-8b-q4_0,chain,9,,tokens_per_s,1,s\n"     /* 0 */
                      ",flash_ar,,,ms_per_token,1,s\n"                 /* 1: any target */
                      "qwen3-8b-q4_0,eagle2,16,,verify_ms,1,s\n"       /* 2 */
                      ",specinfer,9,,verify_ms,1,s\n"                  /* 3 */
                      ",,,0.2,flash_ms,1,s\n"                          /* 4: any policy */
                      ",,,0.21,flash_ms,1,s\n"                         /* 5 */
                      ",,1,,flash_ms,1,s\n";                           /* 6 */
    fs_ref r;
    char err[512] = "";
    int rc = load(csv, &r, err, sizeof err);
    CHECK_EQ_INT(rc, SIM_OK);
    if (rc != SIM_OK) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    fs_row chain8 = row_of("chain", "k=8,unit=cpu", "qwen3-8b-q4_0");
    fs_row chain4 = row_of("chain", "k=4,unit=cpu", "qwen3-8b-q4_0");
    fs_row chain8l = row_of("chain", "k=8,unit=cpu", "llama3.1-8b-q4_0");
    fs_row ar = row_of("flash_ar", "", "qwen3-4b-q4_0");
    fs_row e16 = row_of("eagle2", "top_k=8,depth=8,total_tokens=15,unit=npu", "qwen3-8b-q4_0");
    fs_row e60 = row_of("eagle2", "top_k=10,depth=6,total_tokens=60,unit=npu", "qwen3-8b-q4_0");
    fs_row si = row_of("specinfer", "widths=1/1/3/1,unit=npu", "qwen3-8b-q4_0");
    fs_row lever = row_of("lever", "n_max=64", "qwen3-8b-q4_0");
    CHECK(fs_ref_match(&r, 0, &cols, &chain8));
    CHECK(!fs_ref_match(&r, 0, &cols, &chain4));
    CHECK(!fs_ref_match(&r, 0, &cols, &chain8l));
    CHECK(!fs_ref_match(&r, 0, &cols, &ar));
    CHECK(fs_ref_match(&r, 1, &cols, &ar));
    CHECK(!fs_ref_match(&r, 1, &cols, &chain8));
    CHECK(fs_ref_match(&r, 2, &cols, &e16));
    CHECK(!fs_ref_match(&r, 2, &cols, &e60));
    CHECK(fs_ref_match(&r, 3, &cols, &si));
    CHECK(fs_ref_match(&r, 4, &cols, &lever) && fs_ref_match(&r, 4, &cols, &chain4));
    chain4.dram_fraction = 0.2 + 1e-12;
    CHECK(fs_ref_match(&r, 4, &cols, &chain4));
    CHECK(!fs_ref_match(&r, 5, &cols, &chain4));
    /* a policy whose tree size is not fixed never matches a tree_nodes key */
    CHECK(!fs_ref_match(&r, 6, &cols, &lever));
    CHECK(fs_ref_match(&r, 6, &cols, &ar));
    fs_ref_free(&r);

    /* tree sizes from parameter labels */
    CHECK_NEAR(fs_ref_tree_nodes("flash_ar", ""), 1.0, 0);
    CHECK_NEAR(fs_ref_tree_nodes("chain", "k=8,unit=cpu"), 9.0, 0);
    CHECK_NEAR(fs_ref_tree_nodes("chain", "unit=cpu,k=3"), 4.0, 0);
    CHECK_NEAR(fs_ref_tree_nodes("chain", "kk=3,k=5"), 6.0, 0);
    CHECK(isnan(fs_ref_tree_nodes("chain", "unit=cpu")));
    CHECK_NEAR(fs_ref_tree_nodes("eagle2", "top_k=10,depth=6,total_tokens=60,unit=npu"), 61.0, 0);
    CHECK_NEAR(fs_ref_tree_nodes("specinfer", "widths=1/1/3/1,unit=npu"), 9.0, 0);
    CHECK_NEAR(fs_ref_tree_nodes("specinfer", "widths=2/2"), 7.0, 0);
    CHECK(isnan(fs_ref_tree_nodes("lever", "n_max=64")));
    CHECK(isnan(fs_ref_tree_nodes("sequoia", "max_nodes=64")));
    CHECK(isnan(fs_ref_tree_nodes("edgellm", "max_tokens=32,fallback=false,budget=8")));
    CHECK(isnan(fs_ref_tree_nodes("no_such_policy", "k=8")));
    CHECK(isnan(fs_ref_tree_nodes("eagle2", "top_k=10")));
    CHECK_NEAR(fs_ref_tree_nodes("eagle2", "total_tokens=60/3"), 61.0, 0); /* one value */
}

static void test_eval(void)
{
    static const struct {
        const char *metric;
        double want; /* NAN: not evaluable */
    } cases[] = {
        {"verify_ms-flash_ms", 817.0},
        {"npu_ms+cpu_ms", 48.0},
        {" ( npu_ms + cpu_ms ) * 2 - -1 ", 97.0},
        {"1+2*3", 7.0},
        {"(1+2)*3", 9.0},
        {"2-3-4", -5.0},
        {"8/4/2", 1.0},
        {"-2*3", -6.0},
        {"-(2+3)", -5.0},
        {".5*tokens", 64.0},
        {"1e3*tokens_per_s", 1500.0},
        {"tokens_per_s", 1.5},
        {"waste_ms/(verify_ms-verify_ms)", NAN}, /* 0/0 */
        {"flash_ms/(verify_ms-verify_ms)", NAN}, /* division by zero */
    };
    char buf[2048];
    size_t at = (size_t)snprintf(buf, sizeof buf, "policy,metric,value,source\n");
    int n = (int)(sizeof cases / sizeof *cases);
    for (int i = 0; i < n; i++)
        at += (size_t)snprintf(buf + at, sizeof buf - at, "chain,\"%s\",1,s\n", cases[i].metric);
    fs_ref r;
    char err[512] = "";
    int rc = load(buf, &r, err, sizeof err);
    CHECK_EQ_INT(rc, SIM_OK);
    if (rc != SIM_OK) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    CHECK_EQ_INT(r.n_rows, n);
    fs_row row = row_of("chain", "k=8,unit=cpu", "qwen3-8b-q4_0");
    for (int i = 0; i < n && i < r.n_rows; i++) {
        double v = -12345.0;
        int e = fs_ref_eval(&r, i, &cols, &row, &v);
        if (isnan(cases[i].want)) {
            CHECK_EQ_INT(e, -1);
            CHECK_NEAR(v, -12345.0, 0); /* untouched */
        } else {
            CHECK_EQ_INT(e, 0);
            CHECK_NEAR(v, cases[i].want, 1e-12);
        }
        if ((e != 0) != isnan(cases[i].want) || (!e && fabs(v - cases[i].want) > 1e-12))
            fprintf(stderr, "  metric '%s': %d %g\n", cases[i].metric, e, v);
    }
    fs_ref_free(&r);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/test_refcsv.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "mkdtemp %s: %s\n", dir, strerror(errno));
        return 2;
    }
    cols = fs_ref_result_cols(&meta);
    test_good_file();
    test_limits_ok();
    test_rejected();
    test_match();
    test_eval();
    snprintf(path, sizeof path, "%s/r.csv", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/nul.csv", dir);
    unlink(path);
    rmdir(dir);
    return check_done("test_refcsv");
}
