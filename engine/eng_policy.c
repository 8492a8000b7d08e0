/*
 * eng_policy.c -- the policy registry and the default verification plan.
 *
 * The registry is one const array in registration order: adding a policy is one
 * row here plus its own file.  Rows are never reordered or removed, so indices
 * and the order of --help listings stay stable.  Lookup is a linear scan: the
 * registry holds about ten rows.
 */
#include "eng_policy.h"

#include <math.h>
#include <string.h>

#define ENG_POLICY(name) extern const eng_policy_desc eng_policy_##name;
#include "policies.def"
#undef ENG_POLICY

static const eng_policy_desc *const registry[] = {
#define ENG_POLICY(name) &eng_policy_##name,
#include "policies.def"
#undef ENG_POLICY
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
    return d && d->observes_outcome == 1;
}

/* ---- the tree-size rule (eng_tree_knob) ---- */

int32_t eng_tree_rule_offset(int32_t rule)
{
    return rule == ENG_TREE_PLUS_ROOT ? 1 : rule == ENG_TREE_EQUAL ? 0 : -1;
}

const eng_param_desc *eng_tree_param_flag(const eng_policy_desc *d, int flag_on)
{
    if (!d || !d->params) return NULL;
    const eng_tree_knob *ts = &d->tree;
    int widths = ts->rule == ENG_TREE_WIDTHS;
    if (!widths && eng_tree_rule_offset(ts->rule) < 0) return NULL;
    const char *name = ts->unless_off && !flag_on ? ts->off_param : ts->param;
    const eng_param_desc *p = name ? eng_params_find(d->params, name) : NULL;
    if (!p || p->type != (widths ? ENG_PARAM_INT_LIST : ENG_PARAM_INT)) return NULL;
    return p;
}

/* The value of d's bool flag unless_off in params: 1 when there is none. */
static int tree_flag(const eng_policy_desc *d, const void *params)
{
    const eng_param_desc *f =
        d->tree.unless_off ? eng_params_find(d->params, d->tree.unless_off) : NULL;
    if (!f || f->type != ENG_PARAM_BOOL) return 1;
    int32_t on;
    memcpy(&on, (const char *)params + f->offset, sizeof on);
    return on != 0;
}

const eng_param_desc *eng_tree_param(const eng_policy_desc *d, const void *params)
{
    if (!d || (!params && d->tree.unless_off)) return NULL;
    return eng_tree_param_flag(d, params ? tree_flag(d, params) : 1);
}

double eng_tree_nodes_of(const eng_policy_desc *d, const double *v, int32_t n)
{
    if (!d) return NAN;
    if (d->tree.rule == ENG_TREE_ONE_ROW) return 1.0;
    if (!v || n < 1) return NAN;
    if (d->tree.rule == ENG_TREE_WIDTHS) { /* 1 + w1 + w1 w2 + ... */
        double nodes = 1.0, level = 1.0;
        for (int32_t i = 0; i < n; i++) {
            if (!(v[i] >= 1)) return NAN;
            level *= v[i];
            nodes += level;
        }
        return nodes;
    }
    int32_t off = eng_tree_rule_offset(d->tree.rule);
    return off < 0 ? NAN : v[0] + off;
}

double eng_tree_nodes(const eng_policy_desc *d, const void *params)
{
    if (d && d->tree.rule == ENG_TREE_ONE_ROW) return 1.0;
    const eng_param_desc *p = params ? eng_tree_param(d, params) : NULL;
    if (!p) return NAN;
    const char *f = (const char *)params + p->offset;
    double v[ENG_POL_MAX_NODES];
    int32_t n = 1;
    if (p->type == ENG_PARAM_INT_LIST) {
        memcpy(&n, (const char *)params + p->count_offset, sizeof n);
        if (n > p->cap) n = p->cap;
        if (n > ENG_POL_MAX_NODES) n = ENG_POL_MAX_NODES;
    }
    for (int32_t i = 0; i < n; i++) {
        int32_t x;
        memcpy(&x, f + (size_t)i * sizeof x, sizeof x);
        v[i] = x;
    }
    return eng_tree_nodes_of(d, v, n);
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
