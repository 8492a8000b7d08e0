/*
 * pol_opt_tree.h -- OPT-Tree (pol_opt_tree.c): beam drafting with the
 * expected-acceptance stopping rule.
 */
#ifndef POL_OPT_TREE_H
#define POL_OPT_TREE_H

#include "eng_policy.h"

typedef struct eng_opt_tree_params {
    int32_t nodes;     /* n, default 60 */
    double delta;      /* δ, default 0.5 */
    int32_t max_depth; /* default 10 */
    eng_unit unit;     /* default NPU */
} eng_opt_tree_params;

/* Parameter table (NULL-terminated) and constructor (eng_policy_desc.create). */
extern const eng_param_desc eng_opt_tree_param_table[];
int eng_opt_tree_create(const void *params, eng_policy *out);

#endif
