/*
 * eng_policy.c -- the policy registry and the default verification plan.
 *
 * The registry is one const array in registration order: adding a policy is one
 * row here plus its own file.  Rows are never reordered or removed, so indices
 * and the order of --help listings stay stable.  Lookup is a linear scan: the
 * registry holds about ten rows.
 */
#include "eng_policy.h"

#include <string.h>

static const eng_policy_desc registry[] = {
    {"flash_ar", "no drafting: one target invocation per token", sizeof(eng_flash_ar_params),
     eng_flash_ar_param_table, eng_flash_ar_create, 0},
    {"chain", "Chain-SD: k draft top-1 tokens verified in one pass", sizeof(eng_chain_params),
     eng_chain_param_table, eng_chain_create, 1},
    {"adaptive_chain", "adaptive-k chain: k steered by a window of acceptance rates",
     sizeof(eng_adaptive_chain_params), eng_adaptive_chain_param_table, eng_adaptive_chain_create,
     1},
    {"specinfer", "SpecInfer static tree: top-k_d children at every depth d",
     sizeof(eng_specinfer_params), eng_specinfer_param_table, eng_specinfer_create, 1},
    {"eagle2", "EAGLE-2 dynamic tree: frontier expansion, global top-total_tokens re-rank",
     sizeof(eng_eagle2_params), eng_eagle2_param_table, eng_eagle2_create, 1},
    {"opt_tree", "OPT-Tree: beam drafting until expected acceptance stops growing by delta",
     sizeof(eng_opt_tree_params), eng_opt_tree_param_table, eng_opt_tree_create, 1},
    {"sequoia", "Sequoia: static tree from a DP over positional acceptance and verify cost",
     sizeof(eng_sequoia_params), eng_sequoia_param_table, eng_sequoia_create, 1},
    {"lever", "Lever: gain-cost tree, early-exit verification pruning, CPU-NPU hybrid",
     sizeof(eng_lever_params), eng_lever_param_table, eng_lever_create, 1},
    {"lyanna", "Lyanna: token-info sampling tree, re-sampling after rejection, fused verify",
     sizeof(eng_lyanna_params), eng_lyanna_param_table, eng_lyanna_create, 1},
    {"edgellm", "EdgeLLM: confidence-paced branches, adaptive fallback, provisional drafting",
     sizeof(eng_edgellm_params), eng_edgellm_param_table, eng_edgellm_create, 1},
};

const eng_policy_desc *eng_policy_registry(int32_t *count)
{
    if (count) *count = (int32_t)(sizeof registry / sizeof registry[0]);
    return registry;
}

const eng_policy_desc *eng_policy_lookup(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
        if (strcmp(registry[i].name, name) == 0) return &registry[i];
    return NULL;
}

/* A node takes part in verification when keep is NULL or keep[v] != 0; the root
 * always does.  Leaves are counted over that kept tree: a kept node none of whose
 * children is kept.  Each child link is visited once, so this is O(n). */
void eng_plan_default(const eng_tree *t, const uint8_t *keep, eng_verify_plan *plan)
{
    int32_t rows = 1, leaves = 0;
    for (int32_t v = 0; v < t->n_nodes; v++) {
        if (v > 0 && keep && !keep[v]) continue;
        if (v > 0) rows++;
        int32_t kept_child = 0;
        for (int32_t c = t->nodes[v].first_child; c != ENG_NO_NODE && !kept_child;
             c = t->nodes[c].next_sibling)
            kept_child = !keep || keep[c];
        leaves += !kept_child;
    }
    plan->rows = rows;
    plan->leaves = leaves;
    plan->exit_layer = -1;
    plan->rows_after_exit = rows;
    plan->proj = ENG_PROJ_EAGER_NPU;
    plan->overlap_gate = 0;
}

void eng_policy_destroy(eng_policy *p)
{
    if (!p) return;
    if (p->i && p->i->destroy) p->i->destroy(p->self);
    p->i = NULL;
    p->self = NULL;
}
