/*
 * pol_specinfer.c -- SpecInfer's static token tree (Miao et al.).
 *
 * An expansion configuration <k_1, ..., k_D> (`widths`): every node at depth
 * d - 1 gets its top-k_d draft candidates as children, whatever the draft's
 * confidence.  build works level by level: the nodes of level d - 1 occupy one
 * contiguous id range (levels are appended in order), and are expanded by ONE
 * batched oracle call (rows = level width) on the configured unit -- the way a
 * tree-attention draft forward runs a whole level; then each gets
 * min(k_d, |C_u|) children.  The deepest level is not expanded.  Depth is
 * capped by D, lim->max_depth and lim->remaining - 1; nodes by lim->max_nodes
 * and ENG_POL_MAX_NODES (a level that does not fit is cut in id order).
 *
 * Default <1,1,3,1,1,1,1,1>: the public implementation's configuration, 20
 * draft nodes, 3 leaves, depth 8.  State: a params copy plus an id scratch,
 * one malloc in create.
 */
#include "pol_specinfer.h"

#include <stddef.h>
#include <stdlib.h>

static const char *const unit_choices[] = {"cpu", "npu", NULL};
static const double default_widths[] = {1, 1, 3, 1, 1, 1, 1, 1};

const eng_param_desc eng_specinfer_param_table[] = {
    {.name = "widths", .type = ENG_PARAM_INT_LIST,
     .offset = offsetof(eng_specinfer_params, widths), .min = 1, .max = 64, .def = 1,
     .cap = ENG_POL_MAX_LIST, .count_offset = offsetof(eng_specinfer_params, n_widths),
     .def_list = default_widths, .def_count = 8,
     .doc = "children per node at each depth (expansion configuration)"},
    {.name = "unit", .type = ENG_PARAM_ENUM, .offset = offsetof(eng_specinfer_params, unit),
     .min = 0, .max = 1, .def = 1, .choices = unit_choices,
     .doc = "processor the draft runs on: cpu or npu"},
    {.name = NULL},
};

typedef struct si_state {
    eng_specinfer_params p;
    int32_t ids[ENG_POL_MAX_NODES];
} si_state;

static int si_build(void *self, eng_tree *t, eng_draft_oracle *draft, const eng_build_limits *lim)
{
    si_state *s = self;
    if (!t || !draft || !draft->expand || !lim) return ENG_E_ARG;
    int32_t depth = s->p.n_widths;
    if (lim->max_depth < depth) depth = lim->max_depth;
    if (lim->remaining - 1 < depth) depth = lim->remaining - 1;
    int32_t cap = lim->max_nodes < ENG_POL_MAX_NODES ? lim->max_nodes : ENG_POL_MAX_NODES;
    int32_t lo = 0, hi = t->n_nodes; /* the current level: ids [lo, hi) */
    for (int32_t d = 1; d <= depth && t->n_nodes < cap; d++) {
        int32_t n = hi - lo;
        for (int32_t i = 0; i < n; i++)
            s->ids[i] = lo + i;
        int rc = draft->expand(draft->ctx, t, s->ids, n, s->p.unit);
        if (rc != ENG_OK) return rc < 0 ? rc : ENG_E_ORACLE;
        int32_t w = s->p.widths[d - 1];
        for (int32_t u = lo; u < hi; u++) {
            int32_t cn = 0;
            const eng_cand *c = eng_tree_cands(t, u, &cn);
            for (int32_t j = 0; j < w && j < cn && t->n_nodes < cap; j++) {
                int32_t id = eng_tree_add(t, u, c[j].tok, c[j].logp);
                if (id < 0) return id;
            }
        }
        lo = hi;
        hi = t->n_nodes;
        if (lo == hi) break;
    }
    return ENG_OK;
}

static void si_destroy(void *self)
{
    free(self);
}

static const eng_policy_i si_i = {
    .name = "specinfer",
    .build = si_build,
    .destroy = si_destroy,
};

int eng_specinfer_create(const void *params, eng_policy *out)
{
    if (!params || !out) return ENG_E_ARG;
    const eng_specinfer_params *in = params;
    /* every value inside the range its table states (eng_param.h) */
    if (eng_params_check(eng_specinfer_param_table, params)) return ENG_E_ARG;
    /* beyond the table (which admits an empty list): at least one level */
    if (in->n_widths < 1) return ENG_E_ARG;
    si_state *s = malloc(sizeof *s);
    if (!s) return ENG_E_NOMEM;
    s->p = *in;
    out->i = &si_i;
    out->self = s;
    return ENG_OK;
}

/* The registry row (engine/policies.def lists it). */
const eng_policy_desc eng_policy_specinfer = {
    .name = "specinfer",
    .doc = "SpecInfer static tree: top-k_d children at every depth d",
    .params_size = sizeof(eng_specinfer_params),
    .params = eng_specinfer_param_table,
    .create = eng_specinfer_create,
    .needs_draft = 1,
    .tree = {.rule = ENG_TREE_WIDTHS, .fixed = 1, .param = "widths"},
};
