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

#define ENG_POLICY(name) extern const eng_policy_desc eng_policy_##name;
#define ENG_POLICY_OBSERVES_OUTCOME(name)
#include "policies.def"
#undef ENG_POLICY
#undef ENG_POLICY_OBSERVES_OUTCOME

static const eng_policy_desc *const registry[] = {
#define ENG_POLICY(name) &eng_policy_##name,
#define ENG_POLICY_OBSERVES_OUTCOME(name)
#include "policies.def"
#undef ENG_POLICY
#undef ENG_POLICY_OBSERVES_OUTCOME
};

/* The rows of policies.def's second list, then NULL (so that the array is
 * never empty, whatever the list holds). */
static const eng_policy_desc *const observes_outcome[] = {
#define ENG_POLICY(name)
#define ENG_POLICY_OBSERVES_OUTCOME(name) &eng_policy_##name,
#include "policies.def"
#undef ENG_POLICY
#undef ENG_POLICY_OBSERVES_OUTCOME
    NULL,
};

const eng_policy_desc *const *eng_policy_registry(int32_t *count)
{
    if (count) *count = (int32_t)(sizeof registry / sizeof registry[0]);
    return registry;
}

const eng_policy_desc *eng_policy_lookup(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
        if (strcmp(registry[i]->name, name) == 0) return registry[i];
    return NULL;
}

int eng_policy_observes_outcome(const eng_policy_desc *d)
{
    for (size_t i = 0; d && observes_outcome[i]; i++)
        if (observes_outcome[i] == d) return 1;
    return 0;
}

/* A node takes part in verification when keep is NULL or keep[v] != 0; the root
 * always does.  Leaves are counted over that kept tree: a kept node none of whose
 * children is kept.  Each child link is visited once, so this is O(n). */
void eng_plan_default(const eng_tree *t, const uint8_t *keep, eng_verify_plan *plan)
{
    int32_t rows = 1, leaves = 0;
    if (!keep) { /* every node verified: a leaf is a node without children */
        for (int32_t v = 0; v < t->n_nodes; v++)
            leaves += t->nodes[v].first_child == ENG_NO_NODE;
        rows = t->n_nodes;
    } else {
        for (int32_t v = 0; v < t->n_nodes; v++) {
            if (v > 0 && !keep[v]) continue;
            if (v > 0) rows++;
            int32_t kept_child = 0;
            for (int32_t c = t->nodes[v].first_child; c != ENG_NO_NODE && !kept_child;
                 c = t->nodes[c].next_sibling)
                kept_child = keep[c];
            leaves += !kept_child;
        }
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
