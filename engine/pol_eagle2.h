/*
 * pol_eagle2.h -- EAGLE-2 dynamic tree (pol_eagle2.c).
 */
#ifndef POL_EAGLE2_H
#define POL_EAGLE2_H

#include "eng_policy.h"

typedef struct eng_eagle2_params {
    int32_t top_k;        /* default 10 */
    int32_t depth;        /* draft steps after the root's, default 6 */
    int32_t total_tokens; /* nodes verified (root excluded), default 60 */
    eng_unit unit;        /* default NPU */
} eng_eagle2_params;

/* Parameter table (NULL-terminated) and constructor (eng_policy_desc.create). */
extern const eng_param_desc eng_eagle2_param_table[];
int eng_eagle2_create(const void *params, eng_policy *out);

#endif
