/*
 * pol_chain.h -- Chain-SD (pol_chain.c): k times the draft's top-1 token,
 * verified in one pass; and the chain drafting it shares with other policies.
 */
#ifndef POL_CHAIN_H
#define POL_CHAIN_H

#include "eng_policy.h"

typedef struct eng_chain_params {
    int32_t k;     /* chain length, default 8 (Lever's baseline) */
    eng_unit unit; /* draft unit, default CPU */
} eng_chain_params;

/* Parameter table (NULL-terminated) and constructor (eng_policy_desc.create). */
extern const eng_param_desc eng_chain_param_table[];
int eng_chain_create(const void *params, eng_policy *out);

/* Drafts a chain of the draft's top-1 tokens from the root, one expand call per
 * token on unit: min(k, remaining - 1, max_depth, max_nodes - 1) tokens (the
 * bonus token keeps the cycle within remaining).  Stops early when the draft
 * returns no candidate.  Shared by chain and adaptive_chain. */
int eng_chain_draft(eng_tree *t, eng_draft_oracle *draft, int32_t k, eng_unit unit,
                    const eng_build_limits *lim);

/* The same chain, also ended at the first top-1 token whose probability
 * exp(logp) is below min_conf (or NaN), that token left out: bld's fallback.
 * min_conf = -INFINITY checks nothing (eng_chain_draft). */
int eng_chain_draft_until(eng_tree *t, eng_draft_oracle *draft, int32_t k, eng_unit unit,
                          const eng_build_limits *lim, double min_conf);

#endif
