/* test_plugin_desc.c -- the ABI 2 fields of a plug-in's descriptor: an ABI 1
 * descriptor adopted with them zero, the checks fs_plugin_check_desc makes
 * of them (each case), and what a runtime makes of a plug-in that states
 * a tree size or none. */
#include "sim/cli/plugin.h"
#include "sim/lua/api_impl.h"
#include "sim/sweep/sim_sweep_exec.h"

#include "../../check.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The descriptor's layout at ABI 1: up to needs_draft. */
typedef struct abi1_desc {
    const char *name;
    const char *doc;
    size_t params_size;
    const eng_param_desc *params;
    int (*create)(const void *params, eng_policy *out);
    int32_t needs_draft;
} abi1_desc;

typedef struct tp_params {
    int32_t k, on, alt;
    int32_t w[4];
    int32_t nw;
} tp_params;

static const double def_w[] = {2, 3};
static const eng_param_desc tp_table[] = {
    {.name = "k", .type = ENG_PARAM_INT, .offset = offsetof(tp_params, k), .min = 1, .max = 64,
     .def = 8, .doc = "k"},
    {.name = "on", .type = ENG_PARAM_BOOL, .offset = offsetof(tp_params, on), .min = 0, .max = 1,
     .def = 1, .doc = "on"},
    {.name = "alt", .type = ENG_PARAM_INT, .offset = offsetof(tp_params, alt), .min = 1,
     .max = 64, .def = 3, .doc = "alt"},
    {.name = "w", .type = ENG_PARAM_INT_LIST, .offset = offsetof(tp_params, w), .min = 1,
     .max = 8, .def = 1, .cap = 4, .count_offset = offsetof(tp_params, nw), .def_list = def_w,
     .def_count = 2, .doc = "w"},
    {.name = NULL},
};

static int tp_create(const void *params, eng_policy *out)
{
    (void)params;
    (void)out;
    return ENG_E_ARG;
}

static void test_adopt(void)
{
    static const abi1_desc old = {"old_policy", "an ABI 1 plug-in", sizeof(tp_params), tp_table,
                                  tp_create, 1};
    const eng_policy_desc *d = fs_plugin_adopt(1, &old);
    CHECK(d != NULL && (const void *)d != (const void *)&old);
    if (!d) return;
    CHECK(strcmp(d->name, "old_policy") == 0 && strcmp(d->doc, "an ABI 1 plug-in") == 0);
    CHECK(d->params_size == sizeof(tp_params) && d->params == tp_table && d->create == tp_create);
    CHECK_EQ_INT(d->needs_draft, 1);
    CHECK_EQ_INT(d->observes_outcome, 0);
    CHECK_EQ_INT(d->tree.rule, ENG_TREE_UNSTATED);
    CHECK_EQ_INT(d->tree.fixed, 0);
    CHECK(d->tree.param == NULL && d->tree.unless_off == NULL && d->tree.off_param == NULL);
    char why[256] = "";
    CHECK_EQ_INT(fs_plugin_check_desc(d, why, sizeof why), 0);
    /* a plug-in that states nothing: no tree size, not outcome-only */
    tp_params p;
    eng_params_defaults(d->params, &p);
    CHECK(isnan(sim_sweep_tree_cap(d, &p)) && isnan(eng_tree_nodes(d, &p)));
    CHECK_EQ_INT(eng_policy_observes_outcome(d), 0);
    /* the current ABI: the symbol itself; others refused */
    eng_policy_desc cur = {.name = "cur", .params = tp_table, .create = tp_create};
    CHECK(fs_plugin_adopt(ENG_POLICY_ABI, &cur) == &cur);
    CHECK(fs_plugin_adopt(0, &cur) == NULL);
    CHECK(fs_plugin_adopt(ENG_POLICY_ABI + 1, &cur) == NULL);
    CHECK(fs_plugin_adopt(1, NULL) == NULL);
    CHECK_EQ_INT(ENG_POLICY_ABI_MIN, 1);
    free((void *)d); /* an ABI 1 copy is the caller's (fs_plugin_load keeps it) */
}

/* fs_plugin_check_desc on d with tree t (and observes_outcome obs): 0, or 1
 * with why holding needle. */
static void check_tree(eng_tree_knob t, int32_t obs, const char *needle)
{
    eng_policy_desc d = {.name = "tp",
                         .params_size = sizeof(tp_params),
                         .params = tp_table,
                         .create = tp_create,
                         .observes_outcome = obs,
                         .tree = t};
    char why[256] = "";
    int rc = fs_plugin_check_desc(&d, why, sizeof why);
    CHECK_EQ_INT(rc, needle != NULL);
    if (needle && !strstr(why, needle)) {
        fprintf(stderr, "  want '%s' in '%s'\n", needle, why);
        CHECK(0);
    }
}

static void test_check(void)
{
    /* usable */
    check_tree((eng_tree_knob){0}, 0, NULL);
    check_tree((eng_tree_knob){0}, 1, NULL);
    check_tree((eng_tree_knob){ENG_TREE_ONE_ROW, 1, NULL, NULL, NULL}, 0, NULL);
    check_tree((eng_tree_knob){ENG_TREE_PLUS_ROOT, 0, "k", NULL, NULL}, 0, NULL);
    check_tree((eng_tree_knob){ENG_TREE_EQUAL, 1, "k", NULL, NULL}, 0, NULL);
    check_tree((eng_tree_knob){ENG_TREE_WIDTHS, 1, "w", NULL, NULL}, 0, NULL);
    check_tree((eng_tree_knob){ENG_TREE_PLUS_ROOT, 0, "k", "on", "alt"}, 0, NULL);
    /* each field out of bounds or naming the wrong row */
    check_tree((eng_tree_knob){0}, 2, "observes_outcome 0 or 1 (got 2)");
    check_tree((eng_tree_knob){0}, -1, "observes_outcome 0 or 1 (got -1)");
    check_tree((eng_tree_knob){ENG_TREE_WIDTHS + 1, 0, "k", NULL, NULL}, 0,
               "a known tree rule (got 5)");
    check_tree((eng_tree_knob){-1, 0, "k", NULL, NULL}, 0, "a known tree rule (got -1)");
    check_tree((eng_tree_knob){ENG_TREE_PLUS_ROOT, 2, "k", NULL, NULL}, 0,
               "tree.fixed 0 or 1 (got 2)");
    check_tree((eng_tree_knob){ENG_TREE_ONE_ROW, -1, NULL, NULL, NULL}, 0,
               "tree.fixed 0 or 1 (got -1)");
    check_tree((eng_tree_knob){ENG_TREE_PLUS_ROOT, 0, NULL, NULL, NULL}, 0,
               "tree.param) that names an integer parameter");
    check_tree((eng_tree_knob){ENG_TREE_EQUAL, 0, "no_such", NULL, NULL}, 0,
               "tree.param) that names an integer parameter");
    check_tree((eng_tree_knob){ENG_TREE_PLUS_ROOT, 0, "w", NULL, NULL}, 0,
               "tree.param) that names an integer parameter");
    check_tree((eng_tree_knob){ENG_TREE_WIDTHS, 0, "k", NULL, NULL}, 0,
               "tree.param) that names an integer-list parameter");
    check_tree((eng_tree_knob){ENG_TREE_PLUS_ROOT, 0, "k", "no_such", "alt"}, 0,
               "tree.unless_off) that names a bool parameter");
    check_tree((eng_tree_knob){ENG_TREE_PLUS_ROOT, 0, "k", "alt", "alt"}, 0,
               "tree.unless_off) that names a bool parameter");
    check_tree((eng_tree_knob){ENG_TREE_PLUS_ROOT, 0, "k", "on", NULL}, 0,
               "tree.off_param) that names an integer parameter");
    check_tree((eng_tree_knob){ENG_TREE_PLUS_ROOT, 0, "k", "on", "w"}, 0,
               "tree.off_param) that names an integer parameter");
}

/* A plug-in that states a tree size gets it read like a built-in policy's:
 * the cap, with the flag's alternative, and the widths rule. */
static void test_stated(void)
{
    eng_policy_desc d = {.name = "tp",
                         .params_size = sizeof(tp_params),
                         .params = tp_table,
                         .create = tp_create,
                         .tree = {ENG_TREE_PLUS_ROOT, 0, "k", "on", "alt"}};
    tp_params p;
    eng_params_defaults(tp_table, &p);
    CHECK_NEAR(sim_sweep_tree_cap(&d, &p), 9.0, 0);
    p.on = 0;
    CHECK_NEAR(sim_sweep_tree_cap(&d, &p), 4.0, 0);
    d.tree = (eng_tree_knob){ENG_TREE_WIDTHS, 1, "w", NULL, NULL};
    CHECK_NEAR(sim_sweep_tree_cap(&d, &p), 9.0, 0); /* 1 + 2 + 2 * 3 */
    d.tree = (eng_tree_knob){ENG_TREE_ONE_ROW, 1, NULL, NULL, NULL};
    CHECK(isnan(sim_sweep_tree_cap(&d, &p))); /* no parameter: no cap to set */
}

int main(void)
{
    test_adopt();
    test_check();
    test_stated();
    return check_done("test_plugin_desc");
}
