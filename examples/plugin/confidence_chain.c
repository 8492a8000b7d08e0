/*
 * confidence_chain.c -- a native policy plug-in: a chain whose length
 * follows the draft's confidence.  Each cycle it drafts the draft's most
 * likely token, again and again, while the chain's cumulative draft
 * probability stays above `threshold` (and at most max_k tokens), so
 * confident stretches get long chains and doubtful ones short.
 *
 * One file, built against the installed libflashspec-engine:
 *   make            -> libconfidence_chain.so
 *   flashspec run --plugin ./libconfidence_chain.so my_study.lua
 * and in the script: flashspec.policy.confidence_chain { threshold = 0.3 }.
 */
#include <eng_policy.h> /* pkg-config --cflags adds its folder */

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

typedef struct cc_params {
    double threshold; /* stop when the chain's draft probability falls below */
    int32_t max_k;    /* longest chain */
    int32_t unit;     /* eng_unit */
} cc_params;

static const char *const units[] = {"cpu", "npu", NULL};

static const eng_param_desc cc_table[] = {
    {.name = "threshold", .type = ENG_PARAM_DOUBLE, .offset = offsetof(cc_params, threshold),
     .min = 0, .max = 1, .def = 0.3,
     .doc = "keep drafting while the chain's cumulative draft probability stays above this"},
    {.name = "max_k", .type = ENG_PARAM_INT, .offset = offsetof(cc_params, max_k), .min = 1,
     .max = 64, .def = 12, .doc = "longest chain"},
    {.name = "unit", .type = ENG_PARAM_ENUM, .offset = offsetof(cc_params, unit), .min = 0,
     .max = 1, .def = 0, .choices = units, .doc = "processor the draft runs on: cpu or npu"},
    {.name = NULL},
};

static int cc_build(void *self, eng_tree *t, eng_draft_oracle *draft, const eng_build_limits *lim)
{
    const cc_params *p = self;
    int32_t n = p->max_k;
    if (lim->remaining - 1 < n) n = lim->remaining - 1;
    if (lim->max_depth < n) n = lim->max_depth;
    if (lim->max_nodes - 1 < n) n = lim->max_nodes - 1;
    double floor_logp = p->threshold > 0 ? log(p->threshold) : -INFINITY;
    int32_t tip = 0;
    for (int32_t i = 0; i < n; i++) {
        int rc = draft->expand(draft->ctx, t, &tip, 1, (eng_unit)p->unit);
        if (rc != ENG_OK) return rc < 0 ? rc : ENG_E_ORACLE;
        int32_t cn = 0;
        const eng_cand *c = eng_tree_cands(t, tip, &cn);
        if (cn < 1) break;
        int32_t child = eng_tree_add(t, tip, c[0].tok, c[0].logp);
        if (child < 0) return child;
        tip = child;
        if (i > 0 && t->nodes[tip].cum_logq < floor_logp) break; /* at least one token */
    }
    return ENG_OK;
}

static void cc_destroy(void *self)
{
    free(self);
}

static const eng_policy_i cc_i = {.name = "confidence_chain", .build = cc_build,
                                  .destroy = cc_destroy};

static int cc_create(const void *params, eng_policy *out)
{
    cc_params *s = malloc(sizeof *s);
    if (!s) return ENG_E_NOMEM;
    *s = *(const cc_params *)params;
    out->i = &cc_i;
    out->self = s;
    return ENG_OK;
}

ENG_PLUGIN_DECLARE({
    .name = "confidence_chain",
    .doc = "chain drafted while its cumulative draft probability stays above a threshold",
    .params_size = sizeof(cc_params),
    .params = cc_table,
    .create = cc_create,
    .needs_draft = 1,
});
