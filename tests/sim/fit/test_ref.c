/*
 * test_ref.c -- the reference CSV (sim/fit/refcsv.h) over rows of the
 * caller's own kind: fs_ref_cols names their columns, the reader checks key
 * and metric columns against it, and matching, tree_nodes (from the policy
 * and policy_params text columns) and metrics read rows through it.  No Lua
 * (tests/sim/lua/test_refcsv.c covers the simulator's result rows).
 *
 * Writes its input into a fresh directory under $TMPDIR (or /tmp), removed at
 * the end.
 */
#include "sim/fit/refcsv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../check.h"

typedef struct row {
    const char *policy, *params;
    double speed;
} row;

static const int marker = 1; /* the context get is given */

static int kind(const char *name)
{
    if (!strcmp(name, "policy") || !strcmp(name, "policy_params")) return FS_REF_COL_TEXT;
    if (!strcmp(name, "speed")) return FS_REF_COL_NUMBER;
    return FS_REF_COL_NONE;
}

static int get(const void *ctx, const void *r, const char *name, double *num, char *text, size_t n)
{
    const row *w = r;
    CHECK(ctx == &marker); /* the context given is passed on */
    int k = kind(name);
    if (k == FS_REF_COL_TEXT && text)
        snprintf(text, n, "%s", !strcmp(name, "policy") ? w->policy : w->params);
    if (k == FS_REF_COL_NUMBER && num) *num = w->speed;
    return k;
}

int main(void)
{
    char dir[512], path[600], err[512] = "";
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/test_ref.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "mkdtemp %s: %s\n", dir, strerror(errno));
        return 2;
    }
    snprintf(path, sizeof path, "%s/r.csv", dir);
    FILE *f = fopen(path, "w");
    if (!f) return 2;
    fputs("# comment\npolicy,tree_nodes,speed,metric,value,source\n"
          "chain,9,,speed*2,4,s\n"             /* line 3 */
          ",1,2.5,speed-1,1.5,s\n"             /* line 4: flash_ar by its tree */
          "lever,,,(speed+1)/(speed-3),1,s\n", /* line 5 */
          f);
    fclose(f);
    fs_ref_cols cols = {.kind = kind, .get = get, .ctx = &marker};
    fs_ref r;
    int rc = fs_ref_load(path, &cols, &r, err, sizeof err);
    CHECK_EQ_INT(rc, SIM_OK);
    if (rc == SIM_OK) {
        CHECK_EQ_INT(r.n_rows, 3);
        CHECK_EQ_INT(r.rows[0].line, 3);
        row chain8 = {"chain", "k=8,unit=cpu", 2.0}, chain4 = {"chain", "k=4", 2.0};
        row ar = {"flash_ar", "none", 2.5}, lever = {"lever", "n_max=64", 3.0};
        CHECK(fs_ref_match(&r, 0, &cols, &chain8));
        CHECK(!fs_ref_match(&r, 0, &cols, &chain4));
        CHECK(fs_ref_match(&r, 1, &cols, &ar));
        CHECK(!fs_ref_match(&r, 1, &cols, &chain8)); /* speed 2 is not 2.5 */
        CHECK(fs_ref_match(&r, 2, &cols, &lever));
        double v = 0;
        CHECK_EQ_INT(fs_ref_eval(&r, 0, &cols, &chain8, &v), 0);
        CHECK_NEAR(v, 4.0, 0);
        CHECK_EQ_INT(fs_ref_eval(&r, 1, &cols, &ar, &v), 0);
        CHECK_NEAR(v, 1.5, 0);
        CHECK_EQ_INT(fs_ref_eval(&r, 2, &cols, &lever, &v), -1); /* 4 / 0 */
        fs_ref_free(&r);
    }
    /* the caller's columns decide what a key or a metric may name */
    f = fopen(path, "w");
    if (!f) return 2;
    fputs("policy,metric,value,source\nchain,policy,1,s\n", f);
    fclose(f);
    CHECK_EQ_INT(fs_ref_load(path, &cols, &r, err, sizeof err), SIM_DATA);
    CHECK(strstr(err, ":2: unknown metric 'policy'") != NULL);
    f = fopen(path, "w");
    if (!f) return 2;
    fputs("target,metric,value,source\nx,speed,1,s\n", f);
    fclose(f);
    CHECK_EQ_INT(fs_ref_load(path, &cols, &r, err, sizeof err), SIM_DATA);
    CHECK(strstr(err, ":1: unknown key column 'target'") != NULL);
    CHECK(isnan(fs_ref_tree_nodes("lever", "n_max=64")));
    unlink(path);
    rmdir(dir);
    return check_done("test_ref");
}
