/*
 * pol_specinfer.h -- SpecInfer static tree (pol_specinfer.c): every node at
 * depth d - 1 gets its top widths[d-1] children.
 */
#ifndef POL_SPECINFER_H
#define POL_SPECINFER_H

#include "eng_policy.h"

typedef struct eng_specinfer_params {
    int32_t widths[ENG_POL_MAX_LIST];
    int32_t n_widths; /* default {1,1,3,1,1,1,1,1} */
    eng_unit unit;    /* default NPU */
} eng_specinfer_params;

/* Parameter table (NULL-terminated) and constructor (eng_policy_desc.create). */
extern const eng_param_desc eng_specinfer_param_table[];
int eng_specinfer_create(const void *params, eng_policy *out);

#endif
