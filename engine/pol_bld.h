/*
 * pol_bld.h -- Big Little Decoder (pol_bld.c): the draft extends one chain
 * while its own top-1 probability stays at or above a fallback threshold,
 * then the target verifies the chain in one non-autoregressive pass.
 */
#ifndef POL_BLD_H
#define POL_BLD_H

#include "eng_policy.h"

typedef struct eng_bld_params {
    double fallback; /* alpha_FB, default 0.6 (BiLD's reference implementation) */
    int32_t max_len; /* draft tokens per cycle at most, default 10 (idem) */
    eng_unit unit;   /* draft unit, default CPU */
} eng_bld_params;

/* Parameter table (NULL-terminated) and constructor (eng_policy_desc.create). */
extern const eng_param_desc eng_bld_param_table[];
int eng_bld_create(const void *params, eng_policy *out);

#endif
