/*
 * pol_bld.c -- Big Little Decoder (Kim et al., "Speculative Decoding with Big
 * Little Decoder", NeurIPS 2023, section 3: the fallback and rollback
 * policies, and Algorithm 1).
 *
 * build drafts one chain from the root.  Each step expands the current tip
 * with the draft oracle (one single-node call on the configured unit) and
 * reads the draft's confidence in its next token: the probability of the
 * tip's top-1 candidate, exp(c[0].logp).  Then
 *     confidence >= fallback  ->  the candidate becomes the tip's only child
 *                                 and drafting goes on
 *     confidence <  fallback  ->  drafting stops; the candidate is not added
 *                                 (BiLD's fallback: the target decides that
 *                                 position, here as the cycle's bonus token)
 * A confidence equal to fallback keeps drafting: BiLD falls back only below
 * the threshold (its reference implementation tests max p < alpha_FB).  A
 * NaN confidence stops.  The first step of a cycle obeys the same rule, so a
 * cycle whose first confidence is below fallback verifies the root alone
 * after one draft call (the reference implementation, too, discards the
 * small model's unconfident token right after a large-model pass).
 *
 * The chain holds at most
 *     n = min(max_len, remaining - 1, max_depth, max_nodes - 1)
 * tokens; at n the last tip is not expanded (BiLD's implementation likewise
 * hands over to the large model after a fixed number of small-model steps
 * without running one more).  A draft that returns no candidate ends the
 * chain.  Verification uses the default plan.
 *
 * Rollback: under greedy acceptance the walk keeps the chain up to the first
 * token that differs from the target's greedy token and emits the target's
 * token there -- BiLD's rollback with the strictest threshold.  BiLD's
 * relaxed rollback (keep a token the target merely finds likely enough) is
 * not a policy parameter: how far a token may differ from the target's is
 * the run's acceptance rule (greedy, top_p, sampling), the same for every
 * policy (docs/policies.md).
 *
 * State: a copy of the params, malloc'ed in create, freed in destroy.
 * create rejects params outside the table's ranges with ENG_E_ARG.
 */
#include "pol_bld.h"
#include "pol_chain.h"

#include <stddef.h>
#include <stdlib.h>

_Static_assert(sizeof(eng_unit) == sizeof(int32_t), "ENUM params are stored as int32_t");

#define BLD_MAX_LEN 64

static const char *const unit_choices[] = {"cpu", "npu", NULL};

#define P(f) offsetof(eng_bld_params, f)
const eng_param_desc eng_bld_param_table[] = {
    {.name = "fallback", .type = ENG_PARAM_DOUBLE, .offset = P(fallback), .min = 0, .max = 1,
     .def = 0.6,
     .doc = "drafting stops when the draft's top-1 probability is below this (BiLD's alpha_FB)"},
    {.name = "max_len", .type = ENG_PARAM_INT, .offset = P(max_len), .min = 1,
     .max = BLD_MAX_LEN, .def = 10, .doc = "draft tokens per cycle at most (chain length cap)"},
    {.name = "unit", .type = ENG_PARAM_ENUM, .offset = P(unit), .min = 0, .max = 1, .def = 0,
     .choices = unit_choices, .doc = "processor the draft runs on: cpu or npu"},
    {.name = NULL},
};
#undef P

static int bld_build(void *self, eng_tree *t, eng_draft_oracle *draft, const eng_build_limits *lim)
{
    const eng_bld_params *p = self;
    /* Chain-SD's chain, ended where the draft is unconfident: the target takes over */
    return eng_chain_draft_until(t, draft, p->max_len, p->unit, lim, p->fallback);
}

static void bld_destroy(void *self)
{
    free(self);
}

static const eng_policy_i bld_i = {
    .name = "bld",
    .build = bld_build,
    .destroy = bld_destroy,
};

int eng_bld_create(const void *params, eng_policy *out)
{
    if (!params || !out) return ENG_E_ARG;
    const eng_bld_params *in = params;
    /* every value inside the range its table states (eng_param.h) */
    if (eng_params_check(eng_bld_param_table, params)) return ENG_E_ARG;
    eng_bld_params *self = malloc(sizeof *self);
    if (!self) return ENG_E_NOMEM;
    *self = *in;
    out->i = &bld_i;
    out->self = self;
    return ENG_OK;
}

/* The registry row (engine/policies.def lists it). */
const eng_policy_desc eng_policy_bld = {
    .name = "bld",
    .doc = "Big Little Decoder: a draft chain until its confidence falls below fallback",
    .params_size = sizeof(eng_bld_params),
    .params = eng_bld_param_table,
    .create = eng_bld_create,
    .needs_draft = 1,
    .tree = {.rule = ENG_TREE_PLUS_ROOT, .fixed = 0, .param = "max_len"},
};
