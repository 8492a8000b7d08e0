/*
 * pol_sequoia.h -- Sequoia (pol_sequoia.c): a static tree from a DP over the
 * positional acceptance vector and the verification latency per tree size
 * (through calibrate).
 */
#ifndef POL_SEQUOIA_H
#define POL_SEQUOIA_H

#include "eng_policy.h"

typedef struct eng_sequoia_params {
    int32_t max_nodes;              /* largest tree considered, root included, default 64 */
    int32_t max_depth;              /* deepest level considered, default 8 */
    double prior[ENG_POL_MAX_LIST]; /* p[k] used until calibrate() provides one */
    int32_t n_prior;
    eng_unit unit; /* default NPU */
} eng_sequoia_params;

/* Parameter table (NULL-terminated) and constructor (eng_policy_desc.create). */
extern const eng_param_desc eng_sequoia_param_table[];
int eng_sequoia_create(const void *params, eng_policy *out);

/* Introspection for tests and tools: the chosen tree size (rows, root
 * included) and depth (levels below the root).  A policy nothing has
 * calibrated plans its shape from the prior here, as its first build would. */
int32_t eng_sequoia_shape(const eng_policy *p, int32_t *depth);

/* Sequoia's DP alone: best expected tokens per cycle (accepted + bonus) of a tree
 * of m nodes (root included) and at most l levels (root = level 1) under the
 * positional acceptance vector p[0..n_p).  scratch: eng_sequoia_dp_bytes(m, l,
 * n_p) bytes.  For tests (differential against exhaustive search) and tools. */
size_t eng_sequoia_dp_bytes(int32_t m, int32_t l, int32_t n_p);
double eng_sequoia_dp(const double *p, int32_t n_p, int32_t m, int32_t l, void *scratch);

#endif
