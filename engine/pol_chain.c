/*
 * pol_chain.c -- Chain-SD (Leviathan et al.): a chain of draft top-1 tokens.
 *
 * build expands the current tip with the draft oracle (one node per call, on the
 * configured unit), appends the tip's top-1 candidate as its only child, and
 * repeats until the chain holds
 *     n = min(k, remaining - 1, max_depth, max_nodes - 1)
 * draft tokens.  remaining - 1 leaves room for the bonus token, so a cycle never
 * emits past the generation budget.  n <= 0 drafts nothing (a Flash-AR cycle).
 * The last tip is not expanded: its candidates would never be used.  A draft that
 * returns no candidate ends the chain early.  Verification uses the default plan.
 *
 * State: a copy of the params, malloc'ed in create, freed in destroy.  create
 * rejects params outside the table's ranges with ENG_E_ARG.
 */
#include "pol_chain.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

_Static_assert(sizeof(eng_unit) == sizeof(int32_t), "ENUM params are stored as int32_t");

static const char *const unit_choices[] = {"cpu", "npu", NULL};

const eng_param_desc eng_chain_param_table[] = {
    {.name = "k",
     .type = ENG_PARAM_INT,
     .offset = offsetof(eng_chain_params, k),
     .min = 1,
     .max = 64,
     .def = 8,
     .doc = "draft tokens per cycle (chain length); Lever's baseline is 8"},
    {.name = "unit",
     .type = ENG_PARAM_ENUM,
     .offset = offsetof(eng_chain_params, unit),
     .min = 0,
     .max = 1,
     .def = 0,
     .choices = unit_choices,
     .doc = "processor the draft runs on: cpu or npu"},
    {.name = NULL},
};

int eng_chain_draft(eng_tree *t, eng_draft_oracle *draft, int32_t k, eng_unit unit,
                    const eng_build_limits *lim)
{
    return eng_chain_draft_until(t, draft, k, unit, lim, -INFINITY);
}

int eng_chain_draft_until(eng_tree *t, eng_draft_oracle *draft, int32_t k, eng_unit unit,
                          const eng_build_limits *lim, double min_conf)
{
    if (!t || !draft || !draft->expand || !lim) return ENG_E_ARG;
    int32_t n = k;
    if (lim->remaining - 1 < n) n = lim->remaining - 1;
    if (lim->max_depth < n) n = lim->max_depth;
    if (lim->max_nodes - 1 < n) n = lim->max_nodes - 1;
    int32_t tip = 0;
    for (int32_t i = 0; i < n; i++) {
        int rc = draft->expand(draft->ctx, t, &tip, 1, unit);
        if (rc != ENG_OK) return rc < 0 ? rc : ENG_E_ORACLE;
        int32_t cn = 0;
        const eng_cand *c = eng_tree_cands(t, tip, &cn);
        if (cn < 1) break;
        if (min_conf > -INFINITY && !(exp((double)c[0].logp) >= min_conf)) break;
        int32_t child = eng_tree_add(t, tip, c[0].tok, c[0].logp);
        if (child < 0) return child;
        tip = child;
    }
    return ENG_OK;
}

static int chain_build(void *self, eng_tree *t, eng_draft_oracle *draft,
                       const eng_build_limits *lim)
{
    const eng_chain_params *p = self;
    return eng_chain_draft(t, draft, p->k, p->unit, lim);
}

static void chain_destroy(void *self)
{
    free(self);
}

static const eng_policy_i chain_i = {
    .name = "chain",
    .reset = NULL,
    .build = chain_build,
    .prune = NULL,
    .plan = NULL,
    .observe = NULL,
    .destroy = chain_destroy,
};

int eng_chain_create(const void *params, eng_policy *out)
{
    if (!params || !out) return ENG_E_ARG;
    const eng_chain_params *in = params;
    /* every value inside the range its table states (eng_param.h) */
    if (eng_params_check(eng_chain_param_table, params)) return ENG_E_ARG;
    eng_chain_params *self = malloc(sizeof *self);
    if (!self) return ENG_E_NOMEM;
    *self = *in;
    out->i = &chain_i;
    out->self = self;
    return ENG_OK;
}

/* The registry row (engine/policies.def lists it). */
const eng_policy_desc eng_policy_chain = {
    .name = "chain",
    .doc = "Chain-SD: k draft top-1 tokens verified in one pass",
    .params_size = sizeof(eng_chain_params),
    .params = eng_chain_param_table,
    .create = eng_chain_create,
    .needs_draft = 1,
    .tree = {.rule = ENG_TREE_PLUS_ROOT, .fixed = 1, .param = "k"},
};
