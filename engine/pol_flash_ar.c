/*
 * pol_flash_ar.c -- Flash-AR: plain autoregressive decoding.
 *
 * build leaves the root alone, so every cycle verifies one row and emits exactly
 * the target's token at the root (the bonus).  No draft calls, no state: self is
 * NULL and there is nothing to destroy.  Pruning and planning use the defaults.
 */
#include "pol_flash_ar.h"

const eng_param_desc eng_flash_ar_param_table[] = {
    {.name = NULL},
};

static int flash_ar_build(void *self, eng_tree *t, eng_draft_oracle *draft,
                          const eng_build_limits *lim)
{
    (void)self;
    (void)t;
    (void)draft;
    (void)lim;
    return ENG_OK;
}

static const eng_policy_i flash_ar_i = {
    .name = "flash_ar",
    .reset = NULL,
    .build = flash_ar_build,
    .prune = NULL,
    .plan = NULL,
    .observe = NULL,
    .destroy = NULL,
};

int eng_flash_ar_create(const void *params, eng_policy *out)
{
    if (!out) return ENG_E_ARG;
    /* no parameters: NULL params is accepted; any other is checked like
     * every policy's against its (empty) table */
    if (params && eng_params_check(eng_flash_ar_param_table, params)) return ENG_E_ARG;
    out->i = &flash_ar_i;
    out->self = NULL;
    return ENG_OK;
}

/* The registry row (engine/policies.def lists it). */
const eng_policy_desc eng_policy_flash_ar = {
    .name = "flash_ar",
    .doc = "no drafting: one target invocation per token",
    .params_size = sizeof(eng_flash_ar_params),
    .params = eng_flash_ar_param_table,
    .create = eng_flash_ar_create,
    .needs_draft = 0,
    .tree = {.rule = ENG_TREE_ONE_ROW, .fixed = 1},
};
